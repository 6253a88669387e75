"""agentcli: a ReAct agent shell. Public API (imported lazily so start-up stays fast)."""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "AgentExecutor": "agentcli.executor",
    "Approval": "agentcli.executor",
    "create_agent": "agentcli.create",
    "AgentState": "agentcli.state",
    "Command": "agentcli.state",
    "OmitFromInput": "agentcli.state",
    "OmitFromOutput": "agentcli.state",
    "PrivateStateAttr": "agentcli.state",
    "InjectedState": "agentcli.tools.inject",
    "InjectedToolCallId": "agentcli.tools.inject",
    "AgentMiddleware": "agentcli.middleware",
    "AgentType": "agentcli.agents",
    "initialize_agent": "agentcli.create",
    "load_tools": "agentcli.tools",
    "tool": "agentcli.tools",
    "Tool": "agentcli.tools",
    "get_model": "agentcli.models",
    "FakeChatModel": "agentcli.models.fake",
    "BaseCallbackHandler": "agentcli.callbacks",
    "AgentAction": "agentcli.schema",
    "AgentFinish": "agentcli.schema",
    "AgentStep": "agentcli.schema",
    "RunResult": "agentcli.schema",
}

__all__ = [*sorted(_EXPORTS), "__version__"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'agentcli' has no attribute {name!r}")
