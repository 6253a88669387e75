"""Custom tools: Python files (``--tools-module``), installed plugins (entry-point group
``agentcli.tools``), YAML tools and MCP servers, all registered like the built-ins."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentcli.errors import ToolLoadError
from agentcli.tools.base import Tool
from agentcli.tools.registry import ToolSpec, load_tools, register_tool, registry

ENTRY_POINT_GROUP = "agentcli.tools"
warnings_seen: list[str] = []  # one line per broken plugin; the CLI prints them
state_schemas: list[type] = []  # `state_schema = MyState` in a --tools-module file
_plugins_loaded = False


def _spec_for(obj: Tool | ToolSpec, source: str) -> ToolSpec:
    if isinstance(obj, ToolSpec):
        return replace(obj, source=source)

    def factory(llm: Any = None, _t: Tool = obj, **_: Any) -> Tool:
        return _t

    summary = obj.description.split(". ")[0][:120]
    return ToolSpec(obj.name, factory, summary, dangerous=obj.dangerous,
                    danger_reason=obj.danger_reason, source=source)


def _flatten(obj: Any) -> list[Tool | ToolSpec]:
    if isinstance(obj, (Tool, ToolSpec)):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [x for item in obj for x in _flatten(item)]
    if callable(obj):
        return _flatten(obj())
    raise TypeError(f"expected a Tool, a ToolSpec or a list of them, got {type(obj).__name__}")


def load_plugins(entry_points: Callable[..., Any] | None = None) -> list[str]:
    """Register tools from installed plugins once; a broken plugin becomes a warning line."""
    global _plugins_loaded
    if _plugins_loaded and entry_points is None:
        return []
    _plugins_loaded = True
    if entry_points is None:
        from importlib.metadata import entry_points as found_entry_points

        entry_points = found_entry_points
    names = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            for item in _flatten(ep.load()):
                spec = _spec_for(item, "plugin")
                register_tool(spec, replace=True)
                names.append(spec.name)
        except Exception as err:  # a plugin's bug must not break the CLI
            warnings_seen.append(f"plugin {ep.name!r} failed to load: {type(err).__name__}: {err}")
    return names


def load_module(path: str | Path) -> list[str]:
    """Import a Python file and register every module-level Tool/ToolSpec (source ``module``)."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise ToolLoadError(f"--tools-module {file}: no such file")
    mod_name = f"agentcli_user_tools_{abs(hash(str(file.resolve())))}"
    spec = importlib.util.spec_from_file_location(mod_name, file)
    if spec is None or spec.loader is None:
        raise ToolLoadError(f"--tools-module {file}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as err:
        raise ToolLoadError(f"--tools-module {file} raised {type(err).__name__}: {err}") from None
    declared = getattr(module, "state_schema", None)
    if isinstance(declared, type) and declared not in state_schemas:
        state_schemas.append(declared)
    found = [v for k, v in vars(module).items()
             if not k.startswith("_") and isinstance(v, (Tool, ToolSpec))]
    if not found:
        raise ToolLoadError(f"--tools-module {file} defines no tools; decorate functions "
                            "with @tool (from agentcli import tool)")
    names = []
    for item in found:
        spec_ = _spec_for(item, "module")
        register_tool(spec_, replace=True)
        names.append(spec_.name)
    return names


def prepare_registry(settings: Any, *, start_mcp: bool = True) -> list[str]:
    """Register plugins, modules, YAML tools and MCP servers from ``settings``; return the
    names of module tools (they are loaded without being named in ``--tools``)."""
    from agentcli.tools.yaml_tools import register_yaml_tools

    registry()
    load_plugins()
    register_yaml_tools(list(getattr(settings, "yaml_tools", []) or []))
    module_tools = [n for p in getattr(settings, "tools_module", []) or [] for n in load_module(p)]
    servers = getattr(settings, "mcp_servers", {}) or {}
    if servers and start_mcp:
        from agentcli.tools.mcp_tools import register_mcp_servers

        register_mcp_servers(servers)
    return module_tools


def load_configured_tools(
    settings: Any, llm: Any = None, extras: Mapping[str, Any] | None = None
) -> list[Tool]:
    """Everything ``agent run`` loads: named tools plus module tools, with the policy gate."""
    from agentcli.approval import gate_by_policy

    module_tools = prepare_registry(settings)
    names = list(settings.tools) + [n for n in module_tools if n not in settings.tools]
    tools = load_tools(names, llm=llm, allow_dangerous_tools=settings.allow_dangerous_tools,
                       allow=settings.allow, **{**settings.tool_settings, **(extras or {})})
    gate_by_policy(tools, settings.tool_policy)
    return tools
