"""`agent logs`: the model column and filters, `logs show`, `logs path`, `logs on|off`, and
`--db` paths that do not exist. Output is piped and COLUMNS is unset."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcli.cli.app import app
from agentcli.cli.logs_cmd import parse_since
from agentcli.errors import ConfigError
from agentcli.outcome import run_record

runner = CliRunner()
ACTION = ('Thought: I need to compute.\nAction:\n```\n'
          '{"action": "Calculator", "action_input": "300 * 0.25"}\n```\n')


@pytest.fixture(autouse=True)
def _no_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)


def agent(*args: str, server: Any = None) -> Any:
    env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-t"} if server else None
    return runner.invoke(app, list(args), env=env)


def seed(server: Any, db: Path) -> None:
    server.add_reply(ACTION)
    server.add_reply("Final Answer: 75")
    assert agent("run", "What is 25% of 300?", "-m", "openai/alpha", "-q", "--db", str(db),
                 "--stats", server=server).exit_code == 0
    server.add_reply("Final Answer: hi")
    assert agent("run", "Greet me", "-m", "openai/beta", "-q", "--db", str(db),
                 server=server).exit_code == 0


def rows(stdout: str) -> list[list[str]]:
    return [line.split("\t") for line in stdout.splitlines()]


def test_list_has_a_model_column_and_filters(mock_server: Any, tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    seed(mock_server, db)
    table = rows(agent("logs", "--db", str(db)).stdout)
    assert table[0] == ["id", "when", "model", "session", "question", "answer", "steps",
                        "tokens", "secs"]
    assert [(r[2], r[4]) for r in table[1:]] == [("openai/beta", "Greet me"),
                                                 ("openai/alpha", "What is 25% of 300?")]
    assert table[2][6] == "1"  # one step
    only = rows(agent("logs", "-m", "openai/alpha", "--db", str(db)).stdout)[1:]
    assert [r[2] for r in only] == ["openai/alpha"]
    assert [r[2] for r in rows(agent("logs", "-m", "beta", "--db", str(db)).stdout)[1:]] == [
        "openai/beta"]
    assert len(rows(agent("logs", "list", "-n", "1", "--db", str(db)).stdout)) == 2
    assert len(rows(agent("logs", "--since", "1h", "--db", str(db)).stdout)) == 3
    assert len(rows(agent("logs", "--since", "2999-01-01", "--db", str(db)).stdout)) == 1
    found = rows(agent("logs", "-q", "75", "--db", str(db)).stdout)[1:]
    assert [r[4] for r in found] == ["What is 25% of 300?"]
    bad = agent("logs", "--since", "yesterday-ish", "--db", str(db))
    assert bad.exit_code == 2 and "--since 'yesterday-ish' is not a time" in bad.stderr
    lines = [json.loads(line) for line in agent("logs", "--jsonl", "--db", str(db)).stdout
             .splitlines()]
    assert lines[1]["meta"]["timings"]["model_calls"] == 2


def test_show_has_question_steps_answer_model_options_tokens_cost_timings(
        mock_server: Any, tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    seed(mock_server, db)
    text = agent("logs", "show", "1", "--db", str(db)).stdout
    for part in ("# Run 1", "**model:** openai/alpha", "**options:** temperature=0.0",
                 "What is 25% of 300?", "### Step 1: Calculator", "300 * 0.25",
                 "Answer: 75.0", "## Answer", "75", "**tokens:**", "**cost:**",
                 "in 2 call(s), tools", "*Thought:* I need to compute."):
        assert part in text, part
    assert "\x1b" not in text
    last = agent("logs", "show", "--db", str(db)).stdout
    assert last.startswith("# Run 2") and "openai/beta" in last
    data = json.loads(agent("logs", "show", "2", "--json", "--db", str(db)).stdout)
    assert data["answer"] == "hi" and data["meta"]["options"] == {"temperature": 0.0}
    missing = agent("logs", "show", "99", "--db", str(db))
    assert missing.exit_code == 2 and "no run with id 99" in missing.stderr


def test_show_neutralizes_control_characters(tmp_path: Path) -> None:
    from agentcli.schema import RunResult
    from agentcli.store import Store

    db = tmp_path / "a.db"
    store = Store(db)
    store.log_run(run_record("evil \x1b[31mred",
                             RunResult("answer \x1b]0;title\x07", (), "finished"),
                             model="m"))
    store.close()
    text = agent("logs", "show", "1", "--db", str(db)).stdout
    listed = agent("logs", "--db", str(db)).stdout
    for out in (text, listed):
        assert "\x1b" not in out and "\x07" not in out
        assert "\\x1b[31mred" in out


def test_path_and_missing_db_is_an_error_not_a_new_file(tmp_path: Path) -> None:
    nowhere = tmp_path / "nope.db"
    assert agent("logs", "path", "--db", str(nowhere)).stdout.strip() == str(nowhere)
    default = Path(os.environ["XDG_DATA_HOME"]) / "agentcli" / "agent.db"
    assert agent("logs", "path").stdout.strip() == str(default)
    for args in (["logs"], ["logs", "show", "1"], ["sessions", "list"],
                 ["sessions", "show", "x"]):
        result = agent(*args, "--db", str(nowhere))
        assert result.exit_code == 2, args
        assert f"no database at {nowhere}" in result.stderr
    assert not nowhere.exists()
    first = agent("logs")  # the default file not existing yet: nothing logged, nothing made
    assert first.exit_code == 0 and first.stdout.splitlines()[1:] == []
    assert not default.exists()


def test_logs_off_stops_logging_runs_and_on_resumes(mock_server: Any, tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    assert "run logging is off" in agent("logs", "off").stdout
    assert "run logging is off" in agent("logs", "status").stdout
    mock_server.add_reply("Final Answer: a")
    agent("run", "unlogged", "-m", "openai/x", "-q", "--db", str(db), server=mock_server)
    mock_server.add_reply("Final Answer: b")
    agent("run", "forced", "-m", "openai/x", "-q", "--db", str(db), "--log",
          server=mock_server)
    listed = agent("logs", "--db", str(db))
    assert [r[4] for r in rows(listed.stdout)[1:]] == ["forced"]
    assert "run logging is off" in listed.stderr
    assert agent("logs", "on").stdout.strip() == "run logging is on"
    mock_server.add_reply("Final Answer: c")
    agent("run", "logged", "-m", "openai/x", "-q", "--db", str(db), server=mock_server)
    mock_server.add_reply("Final Answer: d")
    agent("run", "not this", "-m", "openai/x", "-q", "--db", str(db), "--no-log",
          server=mock_server)
    assert [r[4] for r in rows(agent("logs", "--db", str(db)).stdout)[1:]] == ["logged",
                                                                                "forced"]


def test_parse_since() -> None:
    assert parse_since("2h", now=10_000.0) == 10_000.0 - 7200
    assert parse_since("1.5d", now=200_000.0) == 200_000.0 - 129_600
    assert parse_since("2w", now=2e6) == 2e6 - 1_209_600
    with pytest.raises(ConfigError):
        parse_since("soon")
