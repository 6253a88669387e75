"""Tools, the ``@tool`` decorator and ``load_tools``."""

from agentcli.tools.base import Tool, ToolNeeds, tool
from agentcli.tools.registry import ToolSpec, registry
from agentcli.tools.resolve import load_tools

__all__ = ["Tool", "ToolNeeds", "ToolSpec", "load_tools", "registry", "tool"]
