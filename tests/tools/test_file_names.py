"""File tools and a small model's file names (issue 39 item 4): a phrase naming exactly one
listed file reads it and says so; anything else lists the files that exist (bounded); the
root confinement is as strict as for an exact path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentcli.errors import ToolInputError
from agentcli.tools import Tool, load_tools
from agentcli.tools.file_names import list_files, named_in


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sales.txt").write_text("10\n20\n")
    (root / "sub" / "notes.md").write_text("a note")
    (root / ".env").write_text("KEY=hidden")
    (tmp_path / "secret.txt").write_text("top secret")
    return root


def tools(root: Path) -> dict[str, Tool]:
    names = ["read_file", "copy_file", "move_file", "file_delete"]
    return {t.name: t for t in load_tools(names, allow_dangerous_tools=True,
                                          files_root=str(root))}


@pytest.mark.parametrize("phrase", ["Total of sales.txt", 'the file "sales.txt".',
                                    "SALES.TXT totals", "./sales.txt please"])
def test_a_phrase_naming_one_file_reads_it_and_says_so(root: Path, phrase: str) -> None:
    out = tools(root)["read_file"].run(phrase)
    assert out == f"read sales.txt (named in {phrase!r})\n10\n20\n"


def test_an_exact_name_reads_without_a_note(root: Path) -> None:
    read = tools(root)["read_file"]
    assert read.run("sales.txt") == "10\n20\n"
    assert read.run("sub/notes.md") == "a note"
    assert read.run("what is in notes.md") == (
        "read sub/notes.md (named in 'what is in notes.md')\na note")


@pytest.mark.parametrize("phrase", ["data.csv", "old_sales.txt", "sales.txt.bak",
                                    "Total of sales"])
def test_no_match_lists_the_files_that_exist(root: Path, phrase: str) -> None:
    with pytest.raises(ToolInputError) as err:
        tools(root)["read_file"].run(phrase)
    assert str(err.value) == (f"no such file: {phrase!r}; the files under the root are: "
                              "sales.txt, sub/notes.md; send one of these names")


def test_several_matches_are_refused_with_their_names(root: Path) -> None:
    with pytest.raises(ToolInputError, match=r"names 2 files \(sales.txt, sub/notes.md\)"):
        tools(root)["read_file"].run("sales.txt and notes.md")


def test_the_longer_name_wins_over_one_inside_it(root: Path) -> None:
    (root / "q1 sales.txt").write_text("q1")
    assert tools(root)["read_file"].run("read q1 sales.txt").endswith("\nq1")


def test_the_listing_is_bounded(tmp_path: Path) -> None:
    for n in range(45):
        (tmp_path / f"f{n:02}.txt").write_text("")
    with pytest.raises(ToolInputError) as err:
        tools(tmp_path)["read_file"].run("nothing here")
    text = str(err.value)
    assert "f00.txt, f01.txt" in text and "f19.txt and 25 more" in text
    assert "f20.txt" not in text


def test_an_empty_root_says_so(tmp_path: Path) -> None:
    with pytest.raises(ToolInputError, match="there are no files under the root"):
        tools(tmp_path)["read_file"].run("sales.txt")


def test_no_escape_through_the_match(root: Path, tmp_path: Path) -> None:
    """Only files listed under the root can match: a symlink leading out, a folder behind a
    symlink, ``..`` and absolute paths are refused or never listed."""
    os.symlink(tmp_path / "secret.txt", root / "link.txt")
    os.symlink(tmp_path, root / "outdir")
    listing = list_files(root)
    assert listing.files == ["sales.txt", "sub/notes.md"]
    read = tools(root)["read_file"]
    for phrase in ["Total of link.txt", "Total of secret.txt", "outdir/secret.txt please",
                   "Total of ../secret.txt"]:
        with pytest.raises(ToolInputError) as err:
            read.run(phrase)
        assert "top secret" not in str(err.value) and "link.txt," not in str(err.value)
    for path in ["../secret.txt", str(tmp_path / "secret.txt"), "link.txt"]:
        with pytest.raises(ToolInputError, match="outside the allowed root"):
            read.run(path)


def test_hidden_files_are_not_matched_or_listed(root: Path) -> None:
    with pytest.raises(ToolInputError) as err:
        tools(root)["read_file"].run("read the .env file")
    assert ".env" not in str(err.value).split(";")[1]
    assert tools(root)["read_file"].run(".env") == "KEY=hidden"  # the exact name still reads


def test_tools_that_change_files_act_only_on_exact_names(root: Path) -> None:
    t = tools(root)
    for name, arg in [("file_delete", "Total of sales.txt"),
                      ("copy_file", {"source_path": "Total of sales.txt",
                                     "destination_path": "b.txt"}),
                      ("move_file", {"source_path": "Total of sales.txt",
                                     "destination_path": "b.txt"})]:
        with pytest.raises(ToolInputError, match=r"the files under the root are: sales\.txt"):
            t[name].run(arg)
    assert (root / "sales.txt").exists() and not (root / "b.txt").exists()


def test_named_in_is_by_whole_names() -> None:
    from agentcli.tools.file_names import Listing

    listing = Listing(["a.txt", "data/a.txt", "b.csv"], cut=False)
    assert named_in("sum of data/a.txt", listing) == ["data/a.txt"]
    assert named_in("sum of a.txt", listing) == ["a.txt", "data/a.txt"]  # both called a.txt
    assert named_in("xa.txt b.csvx", listing) == []


# --- through the front door: the real `agent run`, scripted replies from the mock server ---

def _blob(tool: str, tool_input: str) -> str:
    return (f"Thought: I need the file.\nAction:\n```json\n"
            f'{{"action": "{tool}", "action_input": "{tool_input}"}}\n```\n')


def _run(server: Any, cwd: Path, question: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test",
               AGENT_DB=str(cwd.parent / "a.db"))
    return subprocess.run(
        [sys.executable, "-m", "agentcli", "run", "-m", "openai/small", "--json",
         "--tools", "read_file,llm-math", question], env=env, capture_output=True, text=True,
        timeout=120, stdin=subprocess.DEVNULL, cwd=cwd)


def _sent(server: Any) -> str:
    return json.dumps([r.body for r in server.requests if r.path.endswith("/chat/completions")])


def test_agent_run_reads_the_file_a_phrase_names(mock_server: Any, root: Path) -> None:
    mock_server.add_reply(_blob("read_file", "Total of sales.txt"))
    mock_server.add_reply("Thought: 10 + 20 is 30.\nFinal Answer: 30")
    proc = _run(mock_server, root, "What is the total of sales.txt?")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["answer"] == "30"
    [step] = out["steps"]
    assert step["tool"] == "read_file"
    assert step["observation"] == "read sales.txt (named in 'Total of sales.txt')\n10\n20\n"
    assert "read sales.txt (named in 'Total of sales.txt')" in _sent(mock_server)


def test_agent_run_tells_the_model_which_files_exist(mock_server: Any, root: Path) -> None:
    mock_server.add_reply(_blob("read_file", "report.csv"))  # an invented name
    mock_server.add_reply(_blob("read_file", "sales.txt"))
    mock_server.add_reply("Final Answer: 30")
    proc = _run(mock_server, root, "What is the total of the sales?")
    assert proc.returncode == 0, proc.stderr
    first, second = json.loads(proc.stdout)["steps"]
    listed = ("no such file: 'report.csv'; the files under the root are: sales.txt, "
              "sub/notes.md; send one of these names")
    assert listed in first["observation"]
    assert second["observation"] == "10\n20\n"
    assert listed in _sent(mock_server)  # the model was told


def test_agent_run_never_reads_out_of_the_root_through_a_phrase(
    mock_server: Any, root: Path, tmp_path: Path
) -> None:
    os.symlink(tmp_path / "secret.txt", root / "link.txt")
    for phrase in ["Total of link.txt", "Total of ../secret.txt", "secret.txt"]:
        mock_server.add_reply(_blob("read_file", phrase))
    mock_server.add_reply("Final Answer: nothing readable")
    proc = _run(mock_server, root, "What does the secret say?")
    assert proc.returncode == 0, proc.stderr
    steps = json.loads(proc.stdout)["steps"]
    assert len(steps) == 3
    assert all("the files under the root are: sales.txt, sub/notes.md;" in s["observation"]
               for s in steps)
    assert "top secret" not in proc.stdout + proc.stderr + _sent(mock_server)
