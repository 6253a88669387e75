"""`agent "question"` runs like `agent run "question"`; `agent run -c TEXT` points at -C;
`agent --help` prints each command's whole summary."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def cli(*args: str, stdin: str = "", cwd: Path | None = None) -> Any:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.run([sys.executable, "-m", "agentcli", *args], input=stdin,
                          capture_output=True, text=True, env=env, timeout=60, cwd=cwd)


def test_bare_question_runs_the_demo_like_run() -> None:
    proc = cli("What is 25% of 300?", "-q")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "75\n"
    same = cli("run", "-q", "What is 25% of 300?")
    assert same.stdout == proc.stdout


@pytest.mark.parametrize("lead", [[], ["--debug"]])
def test_bare_question_takes_run_flags_before_it(tmp_path: Path, lead: list[str]) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(["Final Answer: from the fake model"]))
    proc = cli(*lead, "-m", f"fake:{script}", "--no-log", "say hi", "-q")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "from the fake model\n"


def test_a_single_word_question_is_asked(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(["Final Answer: hello back"]))
    proc = cli("hello", "-m", f"fake:{script}", "-q", "--no-log")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "hello back\n"


@pytest.mark.parametrize("typo,command", [("serv", "serve"), ("chta", "chat"),
                                          ("sesions", "sessions")])
def test_a_mistyped_command_is_still_an_error_with_a_suggestion(typo: str, command: str) -> None:
    proc = cli(typo)
    assert proc.returncode == 2
    err = " ".join(proc.stderr.split())
    assert f"No such command '{typo}'" in err and f"'{command}'" in err
    assert f"agent run '{typo}'" in err
    assert "Traceback" not in proc.stderr


def test_help_and_subcommands_still_work() -> None:
    proc = cli("--help")
    assert proc.returncode == 0
    assert 'agent "QUESTION"' in " ".join(proc.stdout.split())
    assert cli().returncode in (0, 2)  # no arguments: the help, as before
    listed = cli("agents", "list", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout)


def test_help_prints_whole_command_summaries() -> None:
    proc = cli("--help")
    text = " ".join(proc.stdout.split())
    assert "Answer one question with the agent loop, printing the " \
           "Thought/Action/Observation trace." in text
    assert "..." not in proc.stdout.split("Commands:")[1]


def test_run_dash_c_with_a_question_points_at_continue() -> None:
    proc = cli("run", "-c", "and double it?")
    assert proc.returncode == 2
    err = " ".join(proc.stderr.split())
    assert err.startswith("error: -c is --config")
    assert "-C (--continue)" in err and "Missing argument" not in err


def test_run_dash_c_with_a_config_file_still_reads_it(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(["Final Answer: configured"]))
    config = tmp_path / "conf"  # no .yaml suffix: an existing file is a config
    config.write_text(f"model: fake:{script}\n")
    proc = cli("run", "-c", str(config), "-q", "--no-log", "hi")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "configured\n"


def test_completion_still_offers_command_names() -> None:
    from test_completion import complete

    words, _ = complete("agent se")
    assert {"serve", "sessions"} <= {w.split()[0] for w in words if w}


def test_bare_dash_c_also_points_at_continue() -> None:
    proc = cli("-c", "and double it?")
    assert proc.returncode == 2
    assert "-C (--continue)" in " ".join(proc.stderr.split())


def test_completing_after_run_dash_c_prints_no_error() -> None:
    from test_completion import complete

    words, _ = complete("agent run -c notafile --ag")
    assert words == ["--agent"]


@pytest.mark.parametrize("command", [[], ["run"], ["--debug"]])
def test_piped_text_with_no_question_is_the_question(mock_server: Any,
                                                     command: list[str]) -> None:
    """``echo q | agent``, as ``llm`` does: stdin is the prompt when no question is given."""
    mock_server.add_reply("Final Answer: piped and answered")
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env.update(OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="sk-test",
               AGENT_MODEL="openai/any")
    proc = subprocess.run([sys.executable, "-m", "agentcli", *command],
                          input="What is in the pipe?\n", capture_output=True, text=True,
                          env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("piped and answered")
    [request] = [r for r in mock_server.requests if r.path.endswith("/chat/completions")]
    assert request.body["messages"][-1]["content"].endswith("What is in the pipe?")


def test_nothing_piped_and_no_question_is_still_help_or_a_clear_error() -> None:
    with open(os.devnull) as devnull:  # not a pipe: a bare `agent` shows its help
        bare = subprocess.run([sys.executable, "-m", "agentcli"], stdin=devnull,
                              capture_output=True, text=True, timeout=60)
    assert "Usage: agent [OPTIONS] COMMAND" in bare.stdout + bare.stderr
    empty = cli("run", stdin="")  # a pipe with nothing in it
    assert empty.returncode == 2
    assert empty.stderr.startswith("error: QUESTION is missing") and "Traceback" not in \
        empty.stderr
