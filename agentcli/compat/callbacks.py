"""LangChain's callback managers: ``CallbackManager.configure``, and the ``run_manager`` an
``AgentExecutor._call`` (:class:`CallbackManagerForChainRun`) and a ``BaseTool._run``
(:class:`CallbackManagerForToolRun`) receive."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.callbacks.manager import CallbackManager as _Manager
from agentcli.callbacks.manager import RunConfig, handlers_of
from agentcli.callbacks.stdout import TOOL_SAYS, StdOutCallbackHandler, colored
from agentcli.events import Notice, current_emitter
from agentcli.executor import Answer
from agentcli.textsafe import safe_text

Handlers = _Manager | BaseCallbackHandler | Sequence[BaseCallbackHandler] | None


class CallbackManagerForChainRun:
    """What ``_call`` receives as ``run_manager``: ``on_text`` (printed when verbose) and
    the run's config."""

    def __init__(self, manager: _Manager, config: RunConfig, verbose: bool,
                 response_format: Answer = None) -> None:
        self.manager = manager
        self.config = config
        self.verbose = verbose
        self.response_format = response_format  # the run's output schema (None: the executor's)
        self.run_id = manager.run_id

    def on_text(self, text: str, color: str | None = None, end: str = "", **kw: object) -> None:
        """Tell the handlers; print it (in ``color``) when the executor is verbose."""
        self.manager.emit("on_text", text, color=color, **kw)
        if self.verbose:
            print(colored(safe_text(text), color), end=end, file=sys.stdout, flush=True)


class CallbackManager(_Manager):
    """agentcli's callback manager with LangChain's ``configure``."""

    tags: list[str]
    metadata: dict[str, Any]

    @classmethod
    def configure(cls, inheritable_callbacks: Handlers = None, local_callbacks: Handlers = None,
                  verbose: bool = False, inheritable_tags: list[str] | None = None,
                  local_tags: list[str] | None = None,
                  inheritable_metadata: dict[str, Any] | None = None,
                  local_metadata: dict[str, Any] | None = None, *, callbacks: Handlers = None,
                  tags: list[str] | None = None,
                  metadata: dict[str, Any] | None = None) -> CallbackManager:
        """A manager over the given handlers (``callbacks`` is the older name of
        ``inheritable_callbacks``), with LangChain's stdout handler when ``verbose``; its
        ``tags`` and ``metadata`` are for the caller to read (a run takes them in ``config``)."""
        handlers = [*_handlers(callbacks), *_handlers(inheritable_callbacks),
                    *_handlers(local_callbacks)]
        if verbose and not any(isinstance(h, StdOutCallbackHandler) for h in handlers):
            handlers.append(StdOutCallbackHandler())
        manager = cls(handlers)
        manager.tags = [*(tags or ()), *(inheritable_tags or ()), *(local_tags or ())]
        manager.metadata = {**(metadata or {}), **(inheritable_metadata or {}),
                            **(local_metadata or {})}
        return manager


def _handlers(given: Handlers) -> list[BaseCallbackHandler]:
    """LangChain passes one handler, a list of them or a manager."""
    return [given] if isinstance(given, BaseCallbackHandler) else handlers_of(given)


class CallbackManagerForLLMRun:
    """``run_manager`` in a LangChain-style model's ``_generate``: ``on_llm_new_token`` streams
    a token to the run (its handlers' ``on_llm_new_token``, when the run streams tokens)."""

    def __init__(self, on_token: Callable[[str], None] | None = None) -> None:
        self.on_token = on_token
        self.streamed = False  # the model sent its tokens itself

    def on_llm_new_token(self, token: str, **kw: Any) -> None:
        """One token of the reply."""
        self.streamed = True
        if self.on_token is not None:
            self.on_token(str(token))


class CallbackManagerForToolRun:
    """``run_manager`` in a ``BaseTool._run``: what the tool says (``on_text``) reaches the
    run's handlers (and the verbose trace, which prints it) and the tool's own."""

    def __init__(self, tool: str, handlers: Sequence[BaseCallbackHandler] = ()) -> None:
        self.tool = tool
        self.handlers = list(handlers)

    def on_text(self, text: str, **kw: Any) -> None:
        """Tell the run in progress and the tool's own handlers."""
        said = Notice(TOOL_SAYS, str(text), {**kw, "tool": self.tool})
        emit = current_emitter()
        if emit is not None:
            emit(said)
        _Manager(self.handlers).dispatch(said)

    def get_child(self, tag: str | None = None) -> list[BaseCallbackHandler]:
        """Handlers for a chain the tool runs (its model calls are the run's already)."""
        return list(self.handlers)
