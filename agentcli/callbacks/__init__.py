"""Callback handlers and the manager that fans events out to them."""

from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.callbacks.manager import CallbackManager

__all__ = ["BaseCallbackHandler", "CallbackManager"]
