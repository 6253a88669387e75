"""terminal and python_repl: output, timeouts, caps, working directory, scrubbed env."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agentcli.errors import ToolInputError
from agentcli.tools import load_tools
from agentcli.tools.sandbox import scrubbed_env


def _one(name: str, **settings: object) -> object:
    [t] = load_tools([name], allow=[name], **settings)
    return t


def test_scrubbed_env_drops_secrets() -> None:
    env = {"PATH": "/bin", "OPENAI_API_KEY": "sk", "MY_TOKEN": "t", "DB_PASSWORD": "p",
           "GITHUB_TOKEN": "g", "AWS_SECRET_ACCESS_KEY": "a", "HOME": "/h", "X_API_URL": "u",
           "DASHSCOPE_BASE_URL": "d", "LANG": "C"}
    assert scrubbed_env(env) == {"PATH": "/bin", "HOME": "/h", "LANG": "C"}


def test_terminal_runs_in_root_without_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    monkeypatch.setenv("SERVICE_TOKEN", "tok-secret-value")
    (tmp_path / "marker.txt").write_text("hi")
    term = _one("terminal", files_root=str(tmp_path))
    out = term.run("pwd; ls; env")  # type: ignore[attr-defined]
    assert str(tmp_path) in out and "marker.txt" in out
    assert "sk-secret-value" not in out and "tok-secret-value" not in out


def test_terminal_exit_status_and_cap(tmp_path: Path) -> None:
    term = _one("terminal", files_root=str(tmp_path), terminal_max_output=50)
    assert term.run("echo bad >&2; exit 3").startswith("[exit status 3]\nbad")  # type: ignore[attr-defined]
    out = term.run("yes | head -c 10000")  # type: ignore[attr-defined]
    assert "output cut at 50" in out


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


def test_terminal_timeout_kills_the_group(tmp_path: Path) -> None:
    term = _one("terminal", files_root=str(tmp_path), terminal_timeout=0.5)
    marker = "317.123"  # a sleep length no other process uses
    errors: list[BaseException] = []

    def call() -> None:
        try:
            term.run(f"sleep {marker} & sleep {marker}")  # type: ignore[attr-defined]
        except BaseException as err:
            errors.append(err)

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(timeout=120)  # generous: the sleeps would keep it busy for 317 s
    assert not worker.is_alive() and len(errors) == 1
    assert isinstance(errors[0], ToolInputError) and "timed out" in str(errors[0])
    alive = [p for p in Path("/proc").glob("[0-9]*") if _cmdline(p) == f"sleep {marker}"]
    assert alive == []  # the background sleep was killed with its group


def test_python_repl_keeps_state_and_shows_last_value(tmp_path: Path) -> None:
    repl = _one("python_repl", files_root=str(tmp_path))
    try:
        assert repl.run("x = 20\nprint('hi')") == "hi\n"  # type: ignore[attr-defined]
        assert repl.run("x * 2 + 2") == "42\n"  # type: ignore[attr-defined]
        assert repl.run("```python\nimport os\nos.getcwd()\n```") == repr(str(tmp_path)) + "\n"  # type: ignore[attr-defined]
        assert "ZeroDivisionError" in repl.run("1/0")  # type: ignore[attr-defined]
    finally:
        repl.func.__self__.close()  # type: ignore[attr-defined]


def test_python_repl_env_is_scrubbed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    repl = _one("python_repl", files_root=str(tmp_path))
    try:
        out = repl.run("import os\nsorted(os.environ)")  # type: ignore[attr-defined]
        assert "ANTHROPIC_API_KEY" not in out
    finally:
        repl.func.__self__.close()  # type: ignore[attr-defined]


def test_python_repl_timeout_restarts(tmp_path: Path) -> None:
    repl = _one("python_repl", files_root=str(tmp_path), python_timeout=0.5)
    try:
        repl.run("y = 1")  # type: ignore[attr-defined]
        with pytest.raises(ToolInputError, match="restarted"):
            repl.run("while True: pass")  # type: ignore[attr-defined]
        assert "NameError" in repl.run("y")  # type: ignore[attr-defined]
        assert repl.run("1 + 1") == "2\n"  # type: ignore[attr-defined]
    finally:
        repl.func.__self__.close()  # type: ignore[attr-defined]


def test_python_repl_output_cap(tmp_path: Path) -> None:
    repl = _one("python_repl", files_root=str(tmp_path), python_max_output=100)
    try:
        assert "output cut at 100" in repl.run("print('a' * 5000)")  # type: ignore[attr-defined]
    finally:
        repl.func.__self__.close()  # type: ignore[attr-defined]
