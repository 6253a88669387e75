"""agentcli's keys file never reaches a model as context: `-f`/`-A` refuse it under any name,
symlink or hard link; an attachment is judged by its bytes, not its name; a `-f` glob does
not follow a symlinked directory out of its tree. Real `agent` entry point on the mock server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

KEY = "sk-secret-0123456789abcdef"


def cli(*args: str, env: dict[str, str], cwd: Path) -> Any:
    full = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | env
    return subprocess.run([sys.executable, "-m", "agentcli", "run", "-m", "openai/mock", "-q",
                           "--no-log", *args], capture_output=True, text=True, env=full,
                          timeout=60, cwd=cwd, stdin=subprocess.DEVNULL)


@pytest.fixture
def setup(mock_server: Any, tmp_path: Path) -> tuple[dict[str, str], Path]:
    keys = Path(os.environ["XDG_CONFIG_HOME"]) / "agentcli" / "keys.json"
    keys.parent.mkdir(parents=True, exist_ok=True)
    keys.write_text(f'{{"openai": "{KEY}"}}')
    keys.chmod(0o600)
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").symlink_to(keys)
    (work / "shot.png").symlink_to(keys)
    os.link(keys, work / "hard.txt")
    return {"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-t"}, work


@pytest.mark.parametrize("args", [("-f", "notes.txt"), ("-f", "hard.txt"), ("-f", "*.txt"),
                                  ("-A", "shot.png")])
def test_the_keys_file_is_refused_under_any_name(setup: Any, mock_server: Any,
                                                 args: tuple[str, str]) -> None:
    env, work = setup
    proc = cli(*args, "summarise", env=env, cwd=work)
    assert proc.returncode == 2, proc.stderr
    assert "agentcli's secret file" in proc.stderr and KEY not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert mock_server.requests == []


def test_an_attachment_is_judged_by_its_content(setup: Any, mock_server: Any) -> None:
    env, work = setup
    (work / "fake.png").write_text("not a picture at all")
    proc = cli("-A", "fake.png", "what is it?", env=env, cwd=work)
    assert proc.returncode == 2 and "by its content" in proc.stderr
    assert mock_server.requests == []


def test_a_glob_does_not_follow_a_symlinked_directory_out_of_its_tree(
        setup: Any, mock_server: Any, tmp_path: Path) -> None:
    env, work = setup
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.txt").write_text("outside the tree")
    tree = work / "dir"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "mine.txt").write_text("inside the tree")
    (tree / "escape").symlink_to(outside, target_is_directory=True)
    mock_server.add_reply("Final Answer: ok")
    proc = cli("-f", "dir/**/*.txt", "read", env=env, cwd=work)
    assert proc.returncode == 0, proc.stderr
    sent = str(mock_server.requests[-1].body["messages"])
    assert "inside the tree" in sent and "outside the tree" not in sent
