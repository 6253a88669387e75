"""Callback handlers and the manager that fans events out to them."""

from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.callbacks.manager import CallbackManager, ensure_manager

__all__ = ["BaseCallbackHandler", "CallbackManager", "ensure_manager"]
