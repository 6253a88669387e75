"""``agent plugins`` (what is installed and what each registers) and ``agent install`` /
``agent uninstall`` (pip, into the environment agent runs in, as ``llm install`` does)."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer

from agentcli.errors import ConfigError
from agentcli.textsafe import safe_line


def plugins(json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List installed plugins (entry point group agentcli.tools) and the tools each registers."""
    rows = installed_plugins()
    if json_out:
        print(json.dumps(rows, indent=2))
        return
    if not rows:
        print("no plugins installed (agent install NAME adds one)")
        return

    for row in rows:
        what = (", ".join(row["tools"]) or "-") if row["error"] is None \
            else f"failed to load: {row['error']}"
        print(safe_line(f"{row['package']} {row['version']}  [{row['entry_point']}]  {what}"))


def installed_plugins() -> list[dict[str, Any]]:
    """One row per ``agentcli.tools`` entry point: its package, version and tool names."""
    from importlib.metadata import entry_points

    from agentcli.tools.custom import ENTRY_POINT_GROUP, flatten_plugin, load_failure

    rows = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        dist = getattr(ep, "dist", None)
        row: dict[str, Any] = {"package": getattr(dist, "name", "?"),
                               "version": getattr(dist, "version", "?"),
                               "entry_point": ep.name, "tools": [], "error": None}
        try:
            row["tools"] = [item.name for item in flatten_plugin(ep.load())]
        except KeyboardInterrupt:
            raise
        except BaseException as err:  # a broken plugin (even sys.exit) is listed, never fatal
            row["error"] = load_failure(err)
        rows.append(row)
    return sorted(rows, key=lambda r: (str(r["package"]), str(r["entry_point"])))


def install(
    packages: list[str] | None = typer.Argument(None, help="Packages, as pip takes them."),
    upgrade: bool = typer.Option(False, "--upgrade", "-U", help="Upgrade if installed."),
    editable: str | None = typer.Option(None, "--editable", "-e", help="A local project path."),
) -> None:
    """Install plugins (or any package) into the environment agent runs in, with pip."""
    if not packages and not editable:
        raise ConfigError("name a package to install, or -e PATH for a local project")
    _check_names([*(packages or []), *([editable] if editable else [])])
    args = ["install", *(["--upgrade"] if upgrade else []), *(packages or []),
            *(["--editable", editable] if editable else [])]
    raise typer.Exit(_pip(args))


def uninstall(
    packages: list[str] = typer.Argument(..., help="Packages to remove."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Uninstall packages from the environment agent runs in."""
    _check_names(packages)
    raise typer.Exit(_pip(["uninstall", *(["--yes"] if yes else []), *packages]))


def _check_names(names: list[str]) -> None:
    """Refuse a name pip would read as an option (``--index-url=...`` after ``--``)."""
    for name in names:
        if name.startswith("-"):
            raise ConfigError(f"{name!r} is not a package name: pip options are not "
                              "passed through (set PIP_* variables, or run pip itself)")


def _pip(args: list[str]) -> int:
    """Run pip of this interpreter; its exit status, or 2 with a hint when pip is missing."""
    import subprocess

    try:
        return subprocess.call([sys.executable, "-m", "pip", *args])
    except OSError as err:
        typer.echo(f"error: could not run pip ({err}); install pip into this environment",
                   err=True)
        return 2
