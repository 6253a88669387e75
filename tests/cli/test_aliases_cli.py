"""`agent aliases set | list | remove` in the user config; `run -m ALIAS` and chat
`/model ALIAS` accept the same aliases; completion offers them and not test doubles."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from agentcli.outcome import run_record
from agentcli.paths import user_config_file


def cli(*args: str, stdin: str = "") -> Any:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.run([sys.executable, "-m", "agentcli", *args], input=stdin,
                          capture_output=True, text=True, env=env, timeout=60)


def script(tmp_path: Path, name: str, *replies: str) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(list(replies)))
    return f"fake:{path}"


def test_set_list_remove_keep_the_rest_of_the_config() -> None:
    path = user_config_file()
    path.parent.mkdir(parents=True)
    path.write_text("# mine\naliases:\n  old: openai/gpt-4o\n  # a comment\nmax_iterations: 7\n")
    proc = cli("aliases", "set", "fast", "openai/gpt-4o-mini")
    assert proc.returncode == 0, proc.stderr
    assert "fast -> openai/gpt-4o-mini" in proc.stderr and str(path) in proc.stderr
    data = yaml.safe_load(path.read_text())
    assert data == {"aliases": {"old": "openai/gpt-4o", "fast": "openai/gpt-4o-mini"},
                    "max_iterations": 7}
    assert path.read_text().startswith("# mine\n")
    listed = cli("aliases", "list")
    assert listed.stdout == "fast\topenai/gpt-4o-mini\nold\topenai/gpt-4o\n"
    assert json.loads(cli("aliases", "list", "--json").stdout)["fast"] == "openai/gpt-4o-mini"
    assert cli("aliases", "remove", "old").returncode == 0
    assert cli("aliases", "list").stdout == "fast\topenai/gpt-4o-mini\n"
    assert yaml.safe_load(path.read_text())["max_iterations"] == 7
    assert not list(path.parent.glob(".config-*"))  # the temp file was renamed or removed


def test_bad_aliases_are_refused_with_one_line() -> None:
    for args, message in [(("set", "a/b", "openai/x"), "must be one word"),
                          (("set", "x", "nosuch/model"), "unknown provider 'nosuch'"),
                          (("set", "x", "gpt4"), "must be written provider/model"),
                          (("remove", "nothere"), "no alias 'nothere'"),
                          (("set", "meta", "http://169.254.169.254/latest/meta-data"),
                           "169.254.169.254, a cloud metadata address"),
                          (("set", "lan", "custom/http://10.0.0.7:8000/v1"),
                           "10.0.0.7, a private address"),
                          (("set", "url", "http://[::ffff:127.0.0.1]:9/v1"),
                           "a loopback address"),
                          (("set", "x", "ftp:thing"), "must be written provider/model")]:
        proc = cli("aliases", *args)
        assert proc.returncode == 2, args
        assert message in " ".join(proc.stderr.split())
        assert "Traceback" not in proc.stderr
    assert not user_config_file().exists()


def test_the_default_model_alias_cannot_be_removed() -> None:
    assert cli("aliases", "set", "fast", "openai/gpt-4o-mini").returncode == 0
    assert cli("models", "default", "fast").returncode == 0
    proc = cli("aliases", "remove", "fast")
    assert proc.returncode == 2 and "agent models default" in proc.stderr


def test_run_and_chat_model_accept_the_same_alias(tmp_path: Path) -> None:
    first = script(tmp_path, "a.json", "Final Answer: from a", "Final Answer: from a again")
    second = script(tmp_path, "b.json", "Final Answer: from b")
    assert cli("aliases", "set", "bee", second).returncode == 0
    proc = cli("run", "-q", "--no-log", "hi", "-m", "bee")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "from b\n"
    second = script(tmp_path, "b.json", "Final Answer: from b")  # the same file, fresh replies
    chat = cli("chat", "-m", first, "--db", str(tmp_path / "c.db"), "--memory", "none",
               stdin="one\n/model bee\ntwo\n")
    assert chat.returncode == 0, chat.stderr
    out = " ".join((chat.stdout + chat.stderr).split())
    assert "model: bee (fake:" in out
    assert out.index("from a") < out.index("model: bee") < out.index("from b")
    assert "unknown" not in out


def test_chat_model_unknown_alias_is_a_message_not_a_crash(tmp_path: Path) -> None:
    first = script(tmp_path, "a.json", "Final Answer: from a")
    chat = cli("chat", "-m", first, "--db", str(tmp_path / "c.db"), "--memory", "none",
               stdin="/model nope\none\n")
    assert chat.returncode == 0, chat.stderr
    out = " ".join((chat.stdout + chat.stderr).split())
    assert "unknown model alias 'nope'" in out and "from a" in out


def test_completion_offers_aliases_not_test_doubles(tmp_path: Path) -> None:
    from test_completion import complete

    from agentcli.schema import RunResult
    from agentcli.store import Store

    db = tmp_path / "a.db"
    store = Store(db)
    store.log_run(run_record("q", RunResult("a", (), "finished"), model="replay:/tmp/x.json"))
    store.close()
    assert cli("aliases", "set", "fast", "openai/gpt-4o-mini").returncode == 0
    models, _ = complete("agent run -m ", db)
    assert "fast" in models and "openai/" in models
    assert not [m for m in models if m.startswith(("replay:", "fake:"))]
    assert complete("agent run -m fa", db)[0] == ["fast"]
