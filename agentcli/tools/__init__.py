"""Tools, the ``@tool`` decorator and ``load_tools``."""

from agentcli.tools.base import Tool, ToolNeeds, tool
from agentcli.tools.registry import ToolSpec, register_tool, registry
from agentcli.tools.resolve import load_tools

__all__ = ["Tool", "ToolNeeds", "ToolSpec", "load_tools", "register_tool", "registry", "tool"]
