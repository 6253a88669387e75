"""Shell completion: which values each option and argument completes to.

Typer serves ``agent --install-completion`` / ``--show-completion``; the shell then runs
``agent`` with ``_AGENT_COMPLETE`` set, and the callbacks below answer. They must be cheap:
they read registries and the SQLite file (read-only), never call a model or start an MCP
server. :func:`attach_completions` wires them to every command's options and arguments by
flag name (and, for arguments, by command group), so a command added later completes too.
"""

from __future__ import annotations

import inspect
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path

import typer
from typer.models import ArgumentInfo, OptionInfo

from agentcli.agents import agent_names
from agentcli.config import MEMORY_KINDS
from agentcli.models.presets import CUSTOM, PRESETS
from agentcli.store import default_db_path
from agentcli.tools.registry import registry

Completer = Callable[..., list[str]]
SHELLS = ("bash", "zsh", "fish")


def _matching(values: Iterable[str], incomplete: str) -> list[str]:
    """The values starting with ``incomplete``, each once, in their order."""
    return list(dict.fromkeys(v for v in values if v.startswith(incomplete)))


def _last_item(incomplete: str, values: Iterable[str]) -> list[str]:
    """Complete the last name of a comma-separated list, keeping the ones before it."""
    head, _, tail = incomplete.rpartition(",")
    prefix = head + "," if head else ""
    done = set(head.split(",")) if head else set()
    return [prefix + v for v in _matching(values, tail) if v not in done]


def tool_names() -> list[str]:
    """Every registered tool and group name (built-ins and installed plugins; no MCP)."""
    return sorted(registry())


def complete_tools(incomplete: str) -> list[str]:
    """Tool names, for ``--tools a,b`` and ``--allow a,b`` too."""
    return _last_item(incomplete, tool_names())


def _read(ctx: typer.Context | None, sql: str) -> list[str]:
    """Rows of a query on the store (``--db`` if the line has it), read-only; nothing when
    the file is absent or odd."""
    given = ctx.params.get("db") if ctx is not None else None
    path = Path(str(given)).expanduser() if given else default_db_path()
    if not path.is_file():
        return []
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.5)
        try:
            return [str(r[0]) for r in db.execute(sql) if r[0] is not None]
        finally:
            db.close()
    except sqlite3.Error:
        return []


def _aliases() -> list[str]:
    """The user's model aliases (the user config and $AGENT_CONFIG); none if it is unreadable."""
    try:
        from agentcli.config import load_settings

        return sorted(load_settings(None).aliases)
    except Exception:  # a broken config: complete what else there is
        return []


def complete_models(ctx: typer.Context, incomplete: str) -> list[str]:
    """Models used before (from the run log), the user's aliases, then ``provider/``
    prefixes; never the test doubles (``replay:``, ``fake:``) a log may hold."""
    used = _read(ctx, "SELECT model FROM runs GROUP BY model ORDER BY MAX(id) DESC LIMIT 50")
    used = [m for m in used if "/" in m.split(":", 1)[0] or ":" not in m]
    prefixes = [f"{name}/" for name in sorted([*PRESETS, CUSTOM])]
    return _matching([*used, *_aliases(), *prefixes], incomplete)


def complete_sessions(ctx: typer.Context, incomplete: str) -> list[str]:
    """Saved chat session (thread) names, most recently used first."""
    return _matching(_read(ctx, "SELECT name FROM sessions ORDER BY updated DESC"), incomplete)


def complete_runs(ctx: typer.Context, incomplete: str) -> list[str]:
    """Recent run ids."""
    return _matching(_read(ctx, "SELECT id FROM runs ORDER BY id DESC LIMIT 30"), incomplete)


def _template_names() -> list[str]:
    """Saved run templates (``agent run --save``)."""
    from agentcli.saved_templates import template_names

    return template_names()


def _one_of(names: Callable[[], Iterable[str]]) -> Completer:
    """Complete one name of those ``names()`` gives at the time of asking."""
    def complete(incomplete: str) -> list[str]:
        return _matching(names(), incomplete)

    return complete


def _choices(*values: str) -> Completer:
    return _one_of(lambda: values)


complete_tool, complete_agents = _one_of(tool_names), _one_of(agent_names)
complete_templates, complete_aliases = _one_of(_template_names), _one_of(_aliases)


OPTION_COMPLETERS: dict[str, Completer] = {
    "--model": complete_models,
    "--tools": complete_tools,
    "--allow": complete_tools,
    "--agent": complete_agents,
    "--session": complete_sessions,
    "--thread": complete_sessions,
    "--memory": _choices(*MEMORY_KINDS),
    "--early-stopping": _choices("force", "generate"),
    "--template": complete_templates,
}
# Arguments complete by the group of their command: `agent tools show <TAB>` -> tool names.
ARGUMENT_COMPLETERS: dict[str, Completer] = {
    "tools": complete_tool,
    "sessions": complete_sessions,
    "logs": complete_runs,
    "models": complete_models,
    "prompts": complete_agents,
    "completion": _choices(*SHELLS),
    "templates": complete_templates,
    "aliases": complete_aliases,
}


def _attach(callback: Callable[..., object] | None, group: str) -> None:
    if callback is None:
        return
    for param in inspect.signature(callback).parameters.values():
        info = param.default
        if isinstance(info, OptionInfo) and info.autocompletion is None:
            names = [d for decl in info.param_decls or () for d in decl.split("/")]
            found = next((OPTION_COMPLETERS[n] for n in names if n in OPTION_COMPLETERS), None)
            info.autocompletion = found
        elif isinstance(info, ArgumentInfo) and info.autocompletion is None:
            info.autocompletion = ARGUMENT_COMPLETERS.get(group)


def attach_completions(app: typer.Typer, group: str = "") -> None:
    """Give every option and argument of ``app`` (recursively) its completion callback."""
    if app.registered_callback is not None:
        _attach(app.registered_callback.callback, group)
    for command in app.registered_commands:
        _attach(command.callback, group or str(command.name or ""))
    for sub in app.registered_groups:
        if sub.typer_instance is not None:
            attach_completions(sub.typer_instance, str(sub.name or group))


def completion_script(shell: str) -> str:
    """The completion script ``agent --show-completion`` prints, for the named shell."""
    # Typer's one private import here: its public ``--show-completion`` only prints the script
    # of the shell it detects, and Typer has no public function taking the shell by name.
    from typer._completion_shared import get_completion_script

    return get_completion_script(prog_name="agent", complete_var="_AGENT_COMPLETE", shell=shell)
