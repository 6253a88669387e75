"""Fan events out to every handler; a failing handler is logged and never breaks a run."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import field, replace
from typing import TYPE_CHECKING, Any, cast

from agentcli.callbacks.base import BaseCallbackHandler, legacy_form
from agentcli.callbacks.run_ids import CallIds
from agentcli.records import record

if TYPE_CHECKING:
    from agentcli.events import RunEvent
    from agentcli.middleware import AgentMiddleware

log = logging.getLogger("agentcli.callbacks")

# LangChain's opt-out flags on a handler, and the hooks (and the events they carry) each mutes
_IGNORES = {"ignore_llm": "on_llm_", "ignore_agent": "on_agent_", "ignore_chain": "on_chain_",
            "ignore_chat_model": "on_llm_start"}


def _ignores(handler: BaseCallbackHandler, hook: str, args: tuple[object, ...]) -> bool:
    """Whether the handler opted out of this hook (``ignore_llm = True`` and the like)."""
    if not (getattr(handler, "ignore_llm", False) or getattr(handler, "ignore_agent", False)
            or getattr(handler, "ignore_chain", False)
            or getattr(handler, "ignore_chat_model", False)):
        return False  # the usual case, at every event and handler (_IGNORES' flags, unrolled)
    muted = [prefix for flag, prefix in _IGNORES.items() if getattr(handler, flag, False)]
    form = legacy_form(cast("RunEvent", args[0])) if hook == "on_event" and args else None
    return (form[0] if form else hook).startswith(tuple(muted))


class CallbackManager:
    """Calls each hook on every handler, isolating handler failures.

    Every event carries ``run_id`` (this manager's run) and ``parent_run_id``, and the ids of
    the chain, model call or tool call it belongs to (:mod:`agentcli.callbacks.run_ids`), so
    a trace can be rebuilt as a tree.
    """

    def __init__(
        self,
        handlers: Iterable[BaseCallbackHandler] = (),
        *,
        run_id: str | None = None,
        parent_run_id: str | None = None,
    ) -> None:
        self.handlers: list[BaseCallbackHandler] = list(handlers)
        self.run_id = run_id or uuid.uuid4().hex
        self.parent_run_id = parent_run_id
        self._ids: CallIds | None = None  # the calls of the run this manager serves

    def emit(self, hook: str, *args: object, **kw: object) -> None:
        """Call ``hook`` (an ``on_*`` method of the handler base) on every handler."""
        kw.setdefault("run_id", self.run_id)
        kw.setdefault("parent_run_id", self.parent_run_id)
        for handler in self.handlers:
            if _ignores(handler, hook, args):
                continue
            try:
                getattr(handler, hook)(*args, **kw)
            except Exception:
                log.warning(
                    "callback handler %s failed in %s", type(handler).__name__, hook, exc_info=True
                )

    def dispatch(self, event: RunEvent) -> None:
        """Send one run event to every handler's ``on_event`` (whose default calls the
        LangChain-style ``on_*`` hook that carries it: the one adapter, in the handler base)."""
        if not self.handlers:  # the usual batch item or subprocess run: nobody listens
            return
        if self._ids is None:
            self._ids = CallIds(self.run_id, self.parent_run_id)
        own, parent = self._ids.of(event)
        self.emit("on_event", event, call_run_id=own, call_parent_run_id=parent)


def handlers_of(
    callbacks: CallbackManager | Iterable[BaseCallbackHandler] | None,
) -> list[BaseCallbackHandler]:
    """The handlers in None, a list of handlers or a manager (LangChain passes either)."""
    if isinstance(callbacks, CallbackManager):
        return list(callbacks.handlers)
    return list(callbacks or ())


# LangChain's run config; an agent run has no graph to recurse in and nothing configurable,
# so ``recursion_limit`` and ``configurable`` are accepted and have no effect
RUN_CONFIG_KEYS = ("callbacks", "tags", "metadata", "run_name", "run_id", "max_concurrency",
                   "recursion_limit", "configurable", "middleware")


@record
class RunConfig:
    """A run's own handlers, tags, metadata and name: ``invoke(q, config={...})``."""

    callbacks: tuple[BaseCallbackHandler, ...] = ()
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    run_name: str = ""
    run_id: str | None = None  # the run's id (else a new one)
    max_concurrency: int | None = None  # for ``batch``
    # this run's own middleware, after the executor's (a conversation's summary memory)
    middleware: tuple[AgentMiddleware, ...] = ()

    @classmethod
    def of(cls, config: RunConfig | Mapping[str, Any] | Iterable[BaseCallbackHandler]
           | CallbackManager | None) -> RunConfig:
        """From LangChain's config mapping, or from handlers (a list or a manager)."""
        if isinstance(config, RunConfig):
            return config
        if not isinstance(config, Mapping):  # handlers, or None
            return cls(tuple(handlers_of(config)))
        unknown = sorted(set(config) - set(RUN_CONFIG_KEYS))
        if unknown:
            raise TypeError(f"unknown run config key(s) {unknown}; accepted: "
                            + ", ".join(RUN_CONFIG_KEYS))
        run_id, most = config.get("run_id"), config.get("max_concurrency")
        return cls(tuple(handlers_of(config.get("callbacks"))), tuple(config.get("tags") or ()),
                   dict(config.get("metadata") or {}), str(config.get("run_name") or ""),
                   str(run_id) if run_id else None, int(most) if most else None,
                   tuple(config.get("middleware") or ()))

    def adding(self, callbacks: RunConfig | Mapping[str, Any] | Iterable[BaseCallbackHandler]
               | CallbackManager | None) -> RunConfig:
        """This config with more handlers (``invoke(q, callbacks=[...])`` beside ``config``)."""
        more = RunConfig.of(callbacks).callbacks
        return replace(self, callbacks=(*self.callbacks, *more)) if more else self
