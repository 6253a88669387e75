"""`agent keys set | list | path`, the 0600 keys file, and where stored keys rank."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcli.cli.app import app
from agentcli.errors import ConfigError
from agentcli.keys import read_keys
from agentcli.paths import keys_file

runner = CliRunner()


def stored_key_values() -> list[str]:
    """Every stored key value; [] when the file is absent or refused."""
    try:
        return [v for v in read_keys().values() if v]
    except ConfigError:
        return []
SECRET = "sk-stored-secret-4242"


@pytest.fixture(autouse=True)
def _no_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)


def agent(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> Any:
    return runner.invoke(app, list(args), input=stdin, env=env, catch_exceptions=False)


def cli(*args: str, stdin: str = "", extra_env: dict[str, str] | None = None) -> Any:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | (extra_env or {})
    return subprocess.run([sys.executable, "-m", "agentcli", *args], input=stdin,
                          capture_output=True, text=True, env=env, timeout=60)


def test_set_list_path_and_file_mode() -> None:
    result = agent("keys", "set", "openai", stdin=SECRET + "\n")
    assert result.exit_code == 0, result.stderr
    assert SECRET not in result.stdout + result.stderr
    path = keys_file()
    assert "OPENAI_API_KEY" in result.stderr and str(path) in result.stderr
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == {"openai": SECRET}
    assert agent("keys", "set", "SERPAPI_API_KEY", stdin="serp-1\n").exit_code == 0
    listed = agent("keys", "list")
    assert listed.stdout == "SERPAPI_API_KEY\nopenai\n"
    assert SECRET not in listed.stdout
    assert agent("keys", "path").stdout == f"{path}\n"
    assert sorted(stored_key_values()) == sorted([SECRET, "serp-1"])
    assert not list(path.parent.glob(".keys-*"))  # no temporary file left behind


@pytest.mark.parametrize(
    ("name", "message"),
    [("opnai", "unknown key name 'opnai' (did you mean 'openai'?)"),
     ("ollama", "ollama takes no API key")],
)
def test_bad_key_names_exit_2(name: str, message: str) -> None:
    result = agent("keys", "set", name, stdin="x\n")
    assert result.exit_code == 2
    assert message in " ".join(result.stderr.split())
    assert not keys_file().exists()


def test_empty_key_is_refused() -> None:
    result = agent("keys", "set", "openai", stdin="\n")
    assert result.exit_code == 2 and "the key is empty" in result.stderr


def test_shared_keys_file_is_refused_one_line_exit_2(mock_server: Any) -> None:
    assert agent("keys", "set", "openai", stdin=SECRET).exit_code == 0
    keys_file().chmod(0o644)
    for args in (["keys", "list"], ["run", "hi", "-m", "openai/m"]):
        result = agent(*args, env={"OPENAI_BASE_URL": mock_server.base_url})
        assert result.exit_code == 2, args
        err = " ".join(result.stderr.split())
        assert "readable by other users (mode 0644)" in err and "chmod 600" in err
        assert SECRET not in result.stdout + result.stderr
    assert mock_server.requests == []
    assert stored_key_values() == []
    assert agent("keys", "set", "openai", stdin=SECRET).exit_code == 2  # no silent rewrite
    keys_file().chmod(0o600)
    assert agent("keys", "list").stdout == "openai\n"


def test_stored_key_is_used_last(mock_server: Any, tmp_path: Path) -> None:
    """keys file < .env < environment, checked on the Authorization header the server saw."""
    assert cli("keys", "set", "openai", stdin=SECRET + "\n").returncode == 0
    base = {"OPENAI_BASE_URL": mock_server.base_url}

    def auth_of_run(extra: dict[str, str]) -> str:
        mock_server.add_reply("Final Answer: 75")
        proc = cli("run", "hi", "-m", "openai/m", "-q", extra_env=base | extra)
        assert proc.returncode == 0, proc.stderr
        assert SECRET not in proc.stdout + proc.stderr
        return str(mock_server.requests[-1].headers.get("Authorization"))

    assert auth_of_run({}) == f"Bearer {SECRET}"
    Path(".env").write_text("OPENAI_API_KEY=sk-from-dotenv\n")
    assert auth_of_run({}) == "Bearer sk-from-dotenv"
    assert auth_of_run({"OPENAI_API_KEY": "sk-from-env"}) == "Bearer sk-from-env"


def test_stored_keys_are_known_to_the_redactor() -> None:
    from agentcli.keys import apply_stored_keys
    from agentcli.redact import redact

    odd = "plain0stored0value0xyz"  # no key-like shape: only the remembered value can match
    assert agent("keys", "set", "dashscope", stdin=odd + "\n").exit_code == 0
    env = apply_stored_keys({"DASHSCOPE_API_KEY": "shadowing-env-value"})
    assert env["DASHSCOPE_API_KEY"] == "shadowing-env-value"  # the environment wins
    assert redact(f"the key is {odd}") == "the key is ***"  # and the stored one is still hidden
