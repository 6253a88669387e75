"""`agent keys get NAME`; errors that name the command to fix them (`agent keys set`,
`agent models default`, `agent models list`); `models default custom/x` needs a base URL."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from agentcli.paths import user_config_file

SECRET = "sk-stored-secret-9191"


def cli(*args: str, stdin: str = "", extra_env: dict[str, str] | None = None) -> Any:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | (extra_env or {})
    return subprocess.run([sys.executable, "-m", "agentcli", *args], input=stdin,
                          capture_output=True, text=True, env=env, timeout=60)


def one_line(text: str) -> str:
    return " ".join(text.split())


def test_keys_get_prints_the_stored_key_to_a_pipe() -> None:
    assert cli("keys", "set", "openai", stdin=SECRET + "\n").returncode == 0
    for name in ("openai", "OPENAI_API_KEY", "OpenAI"):
        proc = cli("keys", "get", name)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == SECRET + "\n" and proc.stderr == ""


def test_keys_get_a_missing_key_says_how_to_store_it() -> None:
    proc = cli("keys", "get", "deepseek")
    assert proc.returncode == 2
    err = one_line(proc.stderr)
    assert "no stored key 'deepseek'" in err and "agent keys set deepseek" in err
    assert "Traceback" not in proc.stderr


def test_keys_get_refuses_a_terminal() -> None:
    import pty

    assert cli("keys", "set", "openai", stdin=SECRET + "\n").returncode == 0
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    try:
        proc = subprocess.run([sys.executable, "-m", "agentcli", "keys", "get", "openai"],
                              stdout=follower, stderr=subprocess.PIPE, text=True, env=env,
                              timeout=60)
    finally:
        os.close(follower)
        os.close(leader)
    assert proc.returncode == 2
    assert "not printing key openai to a terminal" in one_line(proc.stderr)
    assert SECRET not in proc.stderr


def test_a_missing_provider_key_says_agent_keys_set() -> None:
    proc = cli("run", "-q", "--no-log", "hi", "-m", "deepseek/chat")
    assert proc.returncode == 2
    assert "agent keys set deepseek" in one_line(proc.stderr)


def test_an_unknown_model_points_at_models_list_and_default() -> None:
    proc = cli("run", "-q", "--no-log", "hi", "-m", "opneai/gpt")
    assert proc.returncode == 2
    err = one_line(proc.stderr)
    assert "unknown provider 'opneai'" in err
    assert "agent models list" in err and "agent models default" in err
    alias = cli("run", "-q", "--no-log", "hi", "-m", "fast")
    assert alias.returncode == 2
    assert "agent aliases set fast" in one_line(alias.stderr)


def test_no_model_at_all_points_at_models_default() -> None:
    proc = cli("run", "-q", "--no-log", "tell me a joke")
    assert proc.returncode == 2
    assert "agent models default MODEL" in one_line(proc.stderr)


def test_models_default_custom_needs_a_base_url() -> None:
    proc = cli("models", "default", "custom/my-model")
    assert proc.returncode == 2
    err = one_line(proc.stderr)
    assert "needs a base URL" in err and "--base-url" in err
    assert not user_config_file().exists()
    ok = cli("models", "default", "custom/my-model", "--base-url", "http://127.0.0.1:8000/v1")
    assert ok.returncode == 0, ok.stderr
    text = user_config_file().read_text()
    assert 'model: "custom/my-model"' in text and "http://127.0.0.1:8000/v1" in text
    again = cli("models", "default", "custom/other")  # the saved base URL now counts
    assert again.returncode == 0, again.stderr


def test_models_default_custom_with_base_url_in_the_environment() -> None:
    proc = cli("models", "default", "custom/m", extra_env={"AGENT_BASE_URL": "http://127.0.0.1:1/v1"})
    assert proc.returncode == 0, proc.stderr
