"""`sessions export -o` says what it wrote; a YAML command tool's observation drops the
command's trailing newline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def cli(*args: str, stdin: str = "", cwd: Path | None = None) -> Any:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.run([sys.executable, "-m", "agentcli", *args], input=stdin,
                          capture_output=True, text=True, env=env, timeout=60, cwd=cwd)


def test_sessions_export_to_a_file_prints_what_it_wrote(tmp_path: Path) -> None:
    script = tmp_path / "r.json"
    script.write_text(json.dumps(["Final Answer: first reply"]))
    db = str(tmp_path / "a.db")
    chat = cli("chat", "-s", "work", "-m", f"fake:{script}", "--db", db, stdin="hello\n")
    assert chat.returncode == 0, chat.stderr
    out = tmp_path / "s.md"
    proc = cli("sessions", "export", "work", "-o", str(out), "--db", db)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert f"wrote session work (1 turns, Markdown) to {out}" in " ".join(proc.stderr.split())
    assert "first reply" in out.read_text()
    as_json = cli("sessions", "export", "work", "--json", "-o", str(tmp_path / "s.json"),
                  "--db", db)
    assert "JSON" in as_json.stderr
    assert json.loads((tmp_path / "s.json").read_text())["name"] == "work"


def test_yaml_command_tool_observation_drops_one_trailing_newline(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("yaml_tools:\n"
                      "  - {name: hello, kind: command, dangerous: false, argv: [echo, hello]}\n"
                      f"  - {{name: two, kind: command, dangerous: false, argv: [{sys.executable}"
                      ", -c, \"print('a'); print()\"]}\n")
    script = tmp_path / "r.json"
    script.write_text(json.dumps(["Action: hello\nAction Input: {}",
                                  "Action: two\nAction Input: {}", "Final Answer: done"]))
    proc = cli("run", "x", "-m", f"fake:{script}", "-t", "hello,two", "-c", str(config),
               "--json", "--no-log")
    assert proc.returncode == 0, proc.stderr
    observations = [s["observation"] for s in json.loads(proc.stdout)["steps"]]
    assert observations == ["hello", "a\n"]  # only the last newline goes
