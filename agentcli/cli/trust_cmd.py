"""``agent trust [DIR]``: trust a project's ``.env`` and ``.mcp.json`` as they are now; the
question asked once on a terminal; the loading of a project ``.env`` at start-up."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from agentcli.errors import ConfigError
from agentcli.textsafe import safe_text

if TYPE_CHECKING:
    from agentcli.project_trust import ProjectEnv


def _err(line: str) -> None:
    typer.echo(safe_text(line), err=True)


def _on_terminal() -> bool:
    import sys

    return sys.stdin is not None and sys.stdin.isatty() and sys.stderr.isatty()


def _confirm(question: str) -> bool:
    try:
        return typer.confirm(safe_text(question), default=False, err=True)
    except typer.Abort:  # Ctrl-C or Ctrl-D: no answer, nothing kept
        raise KeyboardInterrupt from None


def _ask_env(env: ProjectEnv) -> bool:
    from agentcli.mcp.text import clean

    _err(f"{env.path} (from this project) wants to set:")
    for name, value in sorted(env.needs_trust.items()):
        _err(f"  {name}={clean(value, 200)}")
    return _confirm(f"Trust {env.path}?")


_said: set[str] = set()  # warnings already printed by this process


def load_project_env() -> None:
    """Put what the project's ``.env`` may set into ``os.environ`` (yours wins), asking on a
    terminal when part of it needs trust; one warning line on stderr per thing ignored."""
    from agentcli.project_files import find_env_file

    if not find_env_file():
        return  # no project .env: its rules are not even imported
    from agentcli.project_trust import project_env
    from agentcli.redact import remember_env

    env, accepted, lines = project_env(os.environ, _ask_env if _on_terminal() else None)
    if env is not None:
        remember_env(env.values)  # a value yours shadows, or one ignored, is still a secret
    for name, value in accepted.items():
        os.environ.setdefault(name, value)
    for line in lines:
        if line not in _said:
            _said.add(line)
            _err(f"warning: {line}")


def describe_servers(servers: dict[str, object]) -> list[str]:
    """One line per server of a ``.mcp.json``: all it asks to run or reach, and the danger
    settings that are ignored (only your own config can mark a tool safe)."""
    from agentcli.mcp.text import clean

    lines = []
    for name, conf in servers.items():
        conf = conf if isinstance(conf, dict) else {}
        what = " ".join([str(conf.get("command", "")), *map(str, conf.get("args") or [])])
        parts = [what.strip() or str(conf.get("url", ""))]
        for key in ("env", "headers"):
            if isinstance(conf.get(key), dict) and conf[key]:
                parts.append(f"{key}: {', '.join(map(str, conf[key]))}")
        if conf.get("cwd"):
            parts.append(f"cwd: {conf['cwd']}")
        ignored = sorted(k for k in ("dangerous", "roots", "tools", "trusted") if k in conf)
        if ignored:
            parts.append(f"ignored: {', '.join(ignored)} (only your config marks tools safe "
                         "or declares roots)")
        lines.append(clean(f"  {name}: " + "; ".join(parts), 2_000))
    return lines


def ask_mcp_trust(path: Path) -> None:
    """Ask on a terminal whether to trust the ``.mcp.json`` at ``path``, listing every server
    in it (a "y" trusts them all), unless it is trusted or declined as it is now; keep the
    answer."""
    from agentcli.mcp.config import project_servers
    from agentcli.project_files import set_trust, trust_state

    servers = project_servers(path.parent)  # a broken or linked file is refused here

    if not servers or not _on_terminal() or trust_state(path) != "unknown":
        return
    _err(f"{path} (from this project) wants to start:")
    for line in describe_servers(servers):
        _err(line)
    set_trust(path, _confirm(f"Trust the MCP servers in {path}?"))


def set_project_trust(directory: Path, trusted: bool | None, only_mcp: bool = False) -> None:
    """Trust (or forget) the ``.env`` that loads in ``directory`` and its ``.mcp.json``."""
    from agentcli.mcp.config import project_servers
    from agentcli.paths import MCP_PROJECT_FILE
    from agentcli.project_files import find_env_file, set_trust
    from agentcli.project_trust import read_env

    directory = Path(os.path.abspath(directory.expanduser()))
    if not directory.is_dir():
        raise ConfigError(f"{directory} is not a directory")
    verb = "trusted" if trusted else "no longer trusted"
    done = []
    mcp = directory / MCP_PROJECT_FILE
    if os.path.lexists(mcp):
        servers = project_servers(directory)  # a broken or linked file is refused here
        set_trust(mcp, trusted)
        done.append(f"{os.path.abspath(mcp)} is {verb}"
                    + (f" (servers: {', '.join(servers)})" if trusted else ""))
        done += describe_servers(servers) if trusted else []
    found = "" if only_mcp else find_env_file(directory)
    if found:
        env = read_env(found, os.environ)  # refused (linked, FIFO, not yours) here
        set_trust(found, trusted)
        names = ", ".join(sorted(env.needs_trust)) or "nothing that needs trust"
        done.append(f"{found} is {verb}" + (f" (sets: {names})" if trusted else ""))
        if trusted:  # said once here, not again at every command
            done += [f"  still ignored: {what}: {why}" for what, why in env.refused]
    if not done:
        what = MCP_PROJECT_FILE if only_mcp else f"{MCP_PROJECT_FILE} or .env"
        raise ConfigError(f"no {what} in {os.path.abspath(directory)}")
    for line in done:
        print(safe_text(line))


def trust(
    directory: Path = typer.Argument(Path("."), help="The project directory."),
    forget: bool = typer.Option(False, "--forget", help="Forget the trust (and a no)."),
) -> None:
    """Trust the project's .env and .mcp.json as they are now (asked again if they change).

    What a project file may never set stays ignored (docs/security.md)."""
    set_project_trust(directory, None if forget else True)
