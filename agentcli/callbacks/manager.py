"""Fan events out to every handler; a failing handler is logged and never breaks a run."""

from __future__ import annotations

import contextvars
import logging
import uuid
from collections.abc import Iterable
from typing import Any

from agentcli.callbacks.base import BaseCallbackHandler

log = logging.getLogger("agentcli.callbacks")

_HOOKS = tuple(name for name in vars(BaseCallbackHandler) if name.startswith("on_"))


class CallbackManager:
    """Calls each hook on every handler, isolating handler failures.

    Every event carries ``run_id`` (this manager's run) and ``parent_run_id`` so a trace can
    be rebuilt as a tree.
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
        self.failures = 0

    def add_handler(self, handler: BaseCallbackHandler) -> None:
        """Add one more handler."""
        self.handlers.append(handler)

    def child(self) -> CallbackManager:
        """A manager for a nested run (a tool's own model call) sharing these handlers."""
        return CallbackManager(self.handlers, parent_run_id=self.run_id)

    def emit(self, hook: str, *args: Any, **kw: Any) -> None:
        """Call ``hook`` on every handler that has it."""
        if hook not in _HOOKS:
            raise AttributeError(f"unknown callback hook {hook!r}")
        kw.setdefault("run_id", self.run_id)
        kw.setdefault("parent_run_id", self.parent_run_id)
        for handler in self.handlers:
            try:
                getattr(handler, hook)(*args, **kw)
            except Exception:
                self.failures += 1
                log.warning(
                    "callback handler %s failed in %s", type(handler).__name__, hook, exc_info=True
                )

    def __getattr__(self, name: str) -> Any:
        if name in _HOOKS:
            return lambda *args, **kw: self.emit(name, *args, **kw)
        raise AttributeError(name)


def ensure_manager(
    callbacks: CallbackManager | Iterable[BaseCallbackHandler] | None,
) -> CallbackManager:
    """Turn None, a list of handlers or a manager into a manager."""
    if isinstance(callbacks, CallbackManager):
        return callbacks
    return CallbackManager(callbacks or ())


_current: contextvars.ContextVar[CallbackManager | None] = contextvars.ContextVar(
    "agentcli_callbacks", default=None
)


def current_manager() -> CallbackManager:
    """The manager of the run in progress (tools use it to trace their own model calls)."""
    manager = _current.get()
    return manager.child() if manager is not None else CallbackManager()


def set_current_manager(manager: CallbackManager | None) -> contextvars.Token[Any]:
    """Make ``manager`` the one tools see; returns a token for ``reset_current_manager``."""
    return _current.set(manager)


def reset_current_manager(token: contextvars.Token[Any]) -> None:
    """Undo :func:`set_current_manager`."""
    _current.reset(token)
