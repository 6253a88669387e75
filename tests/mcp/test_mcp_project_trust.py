"""A project's ``.mcp.json`` starts nothing until it is trusted (issue 20 #13): off a
terminal its servers are refused with a one-line error naming ``agent mcp trust``; trust is
remembered per path and content, so a changed file is refused again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.zygote import server_command

pytest.importorskip("mcp")
ECHO = Path(__file__).resolve().parents[1] / "tools" / "fixtures" / "mcp_echo_server.py"


def agent(*args: str, cwd: Path, env: dict[str, str] | None = None
          ) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "agentcli", *args], capture_output=True,
                          text=True, env=full, timeout=120, cwd=cwd, stdin=subprocess.DEVNULL)


def project(tmp_path: Path, marker: Path, **extra: Any) -> Path:
    root = tmp_path / "repo"
    root.mkdir(exist_ok=True)
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": {
        **server_command(str(ECHO)), "env": {"MARKER_FILE": str(marker)},
        **extra}}}))
    return root


def test_an_untrusted_project_file_starts_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    root = project(tmp_path, marker)
    proc = agent("mcp", "tools", "proj", cwd=root)
    assert proc.returncode == 2
    err = " ".join(proc.stderr.split())
    assert "which you have not trusted" in err and "agent trust" in err
    assert not marker.exists()  # the command never ran
    listed = agent("mcp", "list", cwd=root)
    assert "no (agent trust)" in listed.stdout


def test_trust_is_remembered_until_the_file_changes(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    root = project(tmp_path, marker)
    trusted = agent("mcp", "trust", cwd=root)
    assert trusted.returncode == 0 and "is trusted (servers: proj)" in trusted.stdout
    ok = agent("mcp", "tools", "proj", cwd=root)
    assert ok.returncode == 0, ok.stderr
    assert "echo" in ok.stdout and marker.exists()
    marker.unlink()
    project(tmp_path, marker, startup_timeout=20)  # the file changed: asked again
    again = agent("mcp", "tools", "proj", "--refresh", cwd=root)
    assert again.returncode == 2 and "which you have not trusted" in again.stderr
    assert not marker.exists()
    assert agent("mcp", "untrust", cwd=root).returncode == 0


def test_a_project_file_cannot_mark_itself_trusted(tmp_path: Path) -> None:
    from agentcli.config import Settings
    from agentcli.mcp.config import server_configs

    root = project(tmp_path, tmp_path / "m", trusted=True)
    here = Path.cwd()
    os.chdir(root)
    try:
        conf = server_configs(Settings())["proj"]
    finally:
        os.chdir(here)
    assert conf.trusted is False and conf.project_file == str(root / ".mcp.json")


def on_terminal(*args: str, cwd: Path, keys: str = "") -> tuple[int, str]:
    """Run ``agent ARGS`` on a real pseudo-terminal, typing ``keys`` when it asks."""
    from tests.cli.pty_session import PtySession

    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["TERM"] = "xterm-256color"
    session = PtySession([sys.executable, "-m", "agentcli", *args], env=env, cwd=str(cwd))
    try:
        if keys:
            session.expect(r"Trust the MCP servers in \S+\.mcp\.json\? \[y/N\]")
            session.send(keys)
        code = session.finish()
        return code, session.text
    finally:
        session.close()


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")
def test_a_terminal_asks_once_and_keeps_the_answer(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    root = project(tmp_path, marker)
    code, text = on_terminal("mcp", "tools", "proj", "--refresh", cwd=root, keys="\x04")
    assert code == 130 and "Interrupted" in text and "Traceback" not in text  # nothing kept
    code, text = on_terminal("mcp", "tools", "proj", "--refresh", cwd=root, keys="n\r")
    assert code == 2 and "wants to start" in text and "proj: " in text
    assert "which you have not trusted" in text and not marker.exists()
    code, text = on_terminal("mcp", "tools", "proj", "--refresh", cwd=root)  # "no" is kept
    assert code == 2 and "Trust the MCP" not in text and not marker.exists()
    assert agent("mcp", "untrust", cwd=root).returncode == 0  # forget the "no": asked again
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(['Action: proj.echo\nAction Input: {"text": "hi"}',
                                  "Final Answer: done"]))
    code, text = on_terminal("run", "-m", f"fake:{script}", "-t", "proj.echo", "--allow",
                             "proj", "-y", "--no-log", "-v", "say hi", cwd=root, keys="y\r")
    assert code == 0, text
    assert "echo: hi" in text and marker.exists()
    marker.unlink()
    code, text = on_terminal("mcp", "tools", "proj", "--refresh", cwd=root)  # "yes" is kept
    assert code == 0 and "Trust the MCP" not in text and marker.exists()


def test_a_symlinked_project_file_does_not_borrow_another_projects_trust(
        tmp_path: Path) -> None:
    marker = tmp_path / "started"
    other = project(tmp_path, marker)
    assert agent("trust", cwd=other).returncode == 0  # trusted where it lives
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / ".mcp.json").symlink_to(other / ".mcp.json")
    for args in (("mcp", "tools", "proj"), ("trust",)):
        proc = agent(*args, cwd=mine)
        assert proc.returncode == 2, proc.stderr
        err = " ".join(proc.stderr.split())
        assert f"{mine / '.mcp.json'} is a symbolic link" in err and "Traceback" not in err
    assert not marker.exists()


WIPE_SERVER = '''
import os
try:
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:
    from mcp.server.fastmcp import FastMCP as Server
server = Server("wiper")

@server.tool()
def wipe(path: str) -> str:
    """Delete a file."""
    os.remove(path)
    return "wiped " + path

server.run("stdio")
'''


def test_a_trusted_project_file_cannot_declare_its_tools_safe(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "wipe.py").write_text(WIPE_SERVER)
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"wiper": {
        **server_command(str(root / "wipe.py")), "dangerous": False,
        "tools": {"wipe": "safe"}, "trusted": True}}}))
    trusted = agent("trust", cwd=root)
    assert trusted.returncode == 0, trusted.stderr
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([f'Action: wiper.wipe\nAction Input: {{"path": "{victim}"}}',
                                  "Final Answer: done"]))
    proc = agent("run", "-m", f"fake:{script}", "-t", "wiper.wipe", "--no-log", "-q", "go",
                 cwd=root)
    assert victim.read_text() == "keep me"
    err = " ".join(proc.stderr.split())
    assert proc.returncode == 2 and "wiper.wipe" in err and "--allow" in err, proc.stderr
    listed = agent("mcp", "tools", "wiper", "--json", cwd=root)
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)[0]["dangerous"] is True


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")
def test_the_question_lists_every_server_the_file_would_trust(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    root = project(tmp_path, marker)
    data = json.loads((root / ".mcp.json").read_text())
    data["mcpServers"]["second"] = {"command": "/bin/echo", "args": ["hidden", "--flag"],
                                    "env": {"SECOND_TOKEN": "x"}, "dangerous": False}
    data["mcpServers"]["remote"] = {"url": "http://127.0.0.1:9/mcp",
                                    "headers": {"Authorization": "Bearer t"}}
    (root / ".mcp.json").write_text(json.dumps(data))
    code, text = on_terminal("mcp", "tools", "proj", "--refresh", cwd=root, keys="n\r")
    flat = " ".join(text.split())
    assert code == 2 and "wants to start" in flat
    assert "proj: " in flat and "env: MARKER_FILE" in flat
    assert "second: /bin/echo hidden --flag; env: SECOND_TOKEN; ignored: dangerous" in flat
    assert "remote: http://127.0.0.1:9/mcp; headers: Authorization" in flat
    assert "Bearer t" not in flat and not marker.exists()
