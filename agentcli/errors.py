"""The exception tree. Who must act decides where an error belongs.

    AgentCliError                  base of every error we raise on purpose
    ├── ConfigError                the user must fix a flag, a config file or an env variable
    │   └── ToolLoadError          a tool cannot load: unknown, dangerous, missing a need
    ├── ProviderError              the model server failed (status, message; never the key)
    │   ├── ModelOutputError       the server answered 200 with a body we cannot use
    │   └── ReplayMissError        a replay cassette has no answer for this request
    ├── OutputParserError          the model's text could not be parsed (carries the raw text)
    ├── DeadlineExceeded           the run's max_execution_time passed while something waited
    ├── SessionConflictError       another chat wrote the session's memory first (retry merges)
    └── ToolInputError             a tool refused its input (becomes an observation)

Errors caused by the model (bad output, unknown tool, failing tool) become observations
inside the run; the others propagate to the CLI, which prints one line and exits.
Exceptions never print themselves.
"""

from __future__ import annotations

from agentcli import exit_codes


class AgentCliError(Exception):
    """Base class of every error agentcli raises on purpose."""

    exit_code: int = exit_codes.INTERNAL


class ConfigError(AgentCliError):
    """Bad configuration, flag or environment value; the message says how to fix it."""

    exit_code = exit_codes.USAGE


class ToolLoadError(ConfigError):
    """A tool could not be loaded by name."""


class ServerStartError(ToolLoadError):
    """An MCP server did not start: its tools are missing, the other tools still work."""


class ProviderError(AgentCliError):
    """The model provider failed: HTTP status, connection error or timeout."""

    exit_code = exit_codes.PROVIDER

    def __init__(self, message: str, *, provider: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.provider = provider
        self.status = status


class ModelOutputError(ProviderError):
    """The provider answered, but the body is not a usable chat completion."""


class ReplayMissError(ProviderError):
    """A replay cassette holds no recorded answer for the request."""


class OutputParserError(AgentCliError):
    """The model's reply could not be parsed into an action or a final answer."""

    def __init__(self, message: str, *, llm_output: str = "", observation: str | None = None):
        super().__init__(message)
        self.llm_output = llm_output
        # What to tell the model when the executor sends the error back as an observation.
        self.observation = observation or message


class DeadlineExceeded(AgentCliError):
    """The run deadline (``max_execution_time``) passed during a model call, retry or tool.

    The executor turns it into the stop reason ``max_execution_time`` (exit 3); it is never a
    provider failure, so fallbacks and retries do not catch it.
    """

    exit_code = exit_codes.LIMIT


class SessionConflictError(AgentCliError):
    """Another writer changed a session's memory since it was read (optimistic concurrency)."""


class ToolInputError(AgentCliError):
    """A tool refused its input; the message is written for the model to read."""

