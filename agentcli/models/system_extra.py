"""A model wrapper adding the user's ``--system`` text to every request.

Interim seam: once the agents build requests as data, the executor should call
:func:`agentcli.agents.prompts.apply_system` on each request instead, and this wrapper goes.
It wraps outermost (over cache and fallback) so cache keys see the text actually sent.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from agentcli.agents.prompts import apply_system
from agentcli.models.base import BaseChatModel, TokenSink
from agentcli.schema import ChatChunk, ChatResult, Message


class SystemPromptModel(BaseChatModel):
    """Delegates to ``inner`` with ``extra`` added to the system prompt."""

    def __init__(self, inner: BaseChatModel, extra: str) -> None:
        self.inner = inner
        self.extra = extra
        self.name = inner.name
        self.supports_tools = inner.supports_tools

    def generate(
        self,
        messages: Sequence[Message],
        *,
        stop: Sequence[str] | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        on_token: TokenSink | None = None,
        **params: Any,
    ) -> ChatResult:
        """Generate with the extra instructions in place."""
        return self.inner.generate(apply_system(messages, self.extra), stop=stop, tools=tools,
                                   on_token=on_token, **params)

    async def agenerate(
        self,
        messages: Sequence[Message],
        *,
        stop: Sequence[str] | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        on_token: TokenSink | None = None,
        **params: Any,
    ) -> ChatResult:
        """Async twin of :meth:`generate`."""
        return await self.inner.agenerate(apply_system(messages, self.extra), stop=stop,
                                          tools=tools, on_token=on_token, **params)

    def stream(
        self,
        messages: Sequence[Message],
        *,
        stop: Sequence[str] | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        **params: Any,
    ) -> Iterator[ChatChunk]:
        """Stream with the extra instructions in place."""
        yield from self.inner.stream(apply_system(messages, self.extra), stop=stop, tools=tools,
                                     **params)

    def close(self) -> None:
        """Close the wrapped model."""
        self.inner.close()
