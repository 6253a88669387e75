"""A stand-in model for running a tool directly without one (``agent tools call``).

It lets a tool that needs a model load; the tool works as long as it does not call it (the
Calculator on a plain expression). A call raises one clear ConfigError naming the fix.
"""

from __future__ import annotations

from agentcli.errors import ConfigError
from agentcli.models.base import BaseChatModel, TokenSink
from agentcli.schema import ChatRequest, ChatResult


class UnconfiguredModel(BaseChatModel):
    """Raises on every call: no model is configured for ``tool``."""

    name = "none"

    def __init__(self, tool: str) -> None:
        self.tool = tool

    async def arequest(self, request: ChatRequest, on_token: TokenSink | None = None
                       ) -> ChatResult:
        """Refuse: say which tool needed a model and how to give it one."""
        raise ConfigError(f"tool {self.tool!r} needs a language model for this input; "
                          "pass --model provider/model (or set AGENT_MODEL)")
