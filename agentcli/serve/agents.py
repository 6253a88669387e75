"""The agents ``agent serve`` offers: the configured one and one per config profile.

Each is built once, at start-up, through the same factory ``agent run`` uses
(:func:`agentcli.runtime.build_model` / :func:`~agentcli.runtime.build_executor`), and shared
by every request: the executor keeps no per-run state, so each request is its own run with its
own deadline, budget and output schema (a ``response_format`` is an input of the run, never a
reason to build another executor). Dangerous tools are never auto-approved here: there is
nobody to ask, so a call is denied unless the profile's ``tool_policy`` allows that tool.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.config import CHAT_AGENT, Settings, load_settings
from agentcli.errors import ConfigError
from agentcli.records import record
from agentcli.runtime import build_executor, build_model
from agentcli.session import reads_memory
from agentcli.tools.resolve import check_names

if TYPE_CHECKING:
    from agentcli.executor import AgentExecutor
    from agentcli.middleware import Approval, Approver
    from agentcli.models.base import BaseChatModel
    from agentcli.tools.base import Tool, ToolInput

DEFAULT_NAME = "agent"  # the model id of the configured agent (no profile named)
DEFAULT_DEADLINE = 300.0  # seconds per request when no max_execution_time is configured


@record(frozen=False)
class ServedAgent:
    """One model id of the endpoint: its settings, model and executor."""

    name: str
    settings: Settings
    llm: BaseChatModel
    executor: AgentExecutor
    uses_memory: bool
    warnings: list[str] = field(default_factory=list)  # what tool loading went on without

    @property
    def agent_type(self) -> str:
        """The agent type (always set: serve defaults it like ``agent chat``)."""
        return self.settings.agent or ""

    def describe(self) -> dict[str, Any]:
        """The ``/v1/models`` entry."""
        return {"id": self.name, "object": "model", "created": 0, "owned_by": "agentcli",
                "agent_type": self.agent_type, "model": self.llm.name,
                "tools": [t.name for t in self.executor.tools]}


def serve_settings(settings: Settings) -> Settings:
    """What serving changes: a memory-reading chat agent by default, a deadline always,
    no auto-approval (``approve: auto`` would run dangerous calls nobody sees), and the
    model's tokens streamed (a streamed request passes the answer's on as they come)."""
    if not settings.model:
        raise ConfigError("agent serve needs a model: pass --model provider/model or set "
                          "`model:` in the config")
    return replace(settings, agent=settings.agent or CHAT_AGENT, approve="ask", stream=True,
                   max_execution_time=settings.max_execution_time or DEFAULT_DEADLINE)


def policy_approver(policy: Mapping[str, str]) -> Approver:
    """Nobody can be asked: a dangerous call runs only when ``tool_policy`` allows its tool."""
    from agentcli.middleware import Approval

    allowed = {name for name, rule in policy.items() if rule == "allow"}

    def approve(tool: Tool, tool_input: ToolInput) -> Approval:
        if tool.name in allowed:
            return Approval(True, f"tool_policy allows {tool.name}")
        return Approval(False, f"agent serve runs {tool.name} only when the config's "
                        f"tool_policy says {tool.name}: allow")

    return approve


def _served(name: str, settings: Settings, env: Mapping[str, str]) -> ServedAgent:
    """Build one served agent; config problems raise :class:`ConfigError` now, not per request."""
    settings = serve_settings(settings)
    check_names(settings.tools, settings)
    llm = build_model(settings, env)
    warned: list[str] = []
    try:
        executor = build_executor(settings, llm, approver=policy_approver(settings.tool_policy),
                                  warnings=warned)
    except BaseException:
        llm.close()
        raise
    return ServedAgent(name, settings, llm, executor,
                       reads_memory(settings, settings.agent or ""), warned)


def build_agents(config: Path | None, flags: Mapping[str, Any], env: Mapping[str, str]
                 ) -> dict[str, ServedAgent]:
    """The configured agent (model id ``agent``, or the ``--profile`` name) and every other
    profile of the config, by model id; command-line flags apply to each."""
    base = load_settings(config, flags=dict(flags), env=env)
    first = base.profile or DEFAULT_NAME
    names = [first, *(p for p in base.profiles if p != first)]
    agents: dict[str, ServedAgent] = {}
    try:
        for name in names:
            settings = base if name == first else load_settings(
                config, flags={**flags, "profile": name}, env=env)
            agents[name] = _served(name, settings, env)
    except BaseException:
        close_agents(agents)
        raise
    return agents


def close_agents(agents: Mapping[str, ServedAgent]) -> None:
    """Release every agent's model client."""
    for served in agents.values():
        served.llm.close()
