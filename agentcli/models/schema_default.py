"""A model seen through a default ``response_schema``: every request carries the action schema.

Interim seam until the agents put the schema in their own requests: ``runtime`` hands the
agent (not the tools, whose own model calls are free text) this wrapper around the model.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from agentcli.models.base import BaseChatModel, TokenSink
from agentcli.schema import ChatChunk, ChatResult, Message


class WithResponseSchema(BaseChatModel):
    """Adds ``response_schema=schema`` to each call unless the caller passes its own."""

    def __init__(self, inner: BaseChatModel, schema: dict[str, Any]) -> None:
        self.inner = inner
        self.schema = schema
        self.name = inner.name
        self.supports_tools = inner.supports_tools

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)  # model, provider, base_url... as the inner model

    def generate(
        self,
        messages: Sequence[Message],
        *,
        stop: Sequence[str] | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        on_token: TokenSink | None = None,
        **params: Any,
    ) -> ChatResult:
        """The inner model's completion, constrained to the schema."""
        params.setdefault("response_schema", self.schema)
        return self.inner.generate(messages, stop=stop, tools=tools, on_token=on_token, **params)

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
        params.setdefault("response_schema", self.schema)
        return await self.inner.agenerate(messages, stop=stop, tools=tools, on_token=on_token,
                                          **params)

    def stream(
        self,
        messages: Sequence[Message],
        *,
        stop: Sequence[str] | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        **params: Any,
    ) -> Iterator[ChatChunk]:
        """The inner model's stream, constrained to the schema."""
        params.setdefault("response_schema", self.schema)
        return self.inner.stream(messages, stop=stop, tools=tools, **params)

    def close(self) -> None:
        """Close the inner model."""
        self.inner.close()
