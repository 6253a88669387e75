"""A scripted fake chat model for tests and demos: replies from a list or a function."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from agentcli.errors import ProviderError
from agentcli.models.base import BaseChatModel, TokenSink, cut_at_stop
from agentcli.records import record
from agentcli.schema import ChatRequest, ChatResult, Message, Usage

Reply = str | ChatResult | BaseException
ReplyFn = Callable[[list[Message]], Reply]


@record
class FakeRequest:
    """One request the fake model received."""

    messages: list[Message]
    stop: list[str] | None
    tools: list[dict[str, Any]] | None
    params: dict[str, Any]


class FakeChatModel(BaseChatModel):
    """Answers from a script; records every request in ``requests``.

    ``replies`` is a list consumed in order (a ``ChatResult`` carries native tool calls, an
    exception is raised) or a function of the messages. Running out of replies is an error.
    """

    def __init__(
        self, replies: Sequence[Reply] | ReplyFn, *, name: str = "fake", supports_tools: bool = True
    ) -> None:
        self._replies: list[Reply] | None = None if callable(replies) else list(replies)
        self._fn: ReplyFn | None = replies if callable(replies) else None
        self.name = name
        self.supports_tools = supports_tools
        self.requests: list[FakeRequest] = []

    def _next(self, messages: list[Message]) -> Reply:
        if self._fn is not None:
            return self._fn(messages)
        assert self._replies is not None
        if not self._replies:
            raise ProviderError(
                f"fake model {self.name!r} has no scripted reply left "
                f"(request {len(self.requests)})",
                provider="fake",
            )
        return self._replies.pop(0)

    async def arequest(self, request: ChatRequest, on_token: TokenSink | None = None
                       ) -> ChatResult:
        """Return the next scripted reply, cut at the first stop string."""
        msgs, stop = list(request.messages), list(request.stop) or None
        self.requests.append(FakeRequest(msgs, stop, list(request.tools) or None,
                                         request.params()))
        reply = self._next(msgs)
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, str):
            text, _ = cut_at_stop(reply, stop)
            prompt_chars = sum(len(m.content) for m in msgs)
            reply = ChatResult(
                text, finish_reason="stop", model=self.name,
                usage=Usage(max(1, prompt_chars // 4), max(1, len(text) // 4)),
            )
        if on_token is not None:
            for token in re.findall(r"\S+\s*|\s+", reply.text):
                on_token(token)
        return reply
