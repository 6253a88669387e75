"""Start-up does only the work the command needs (issue 23): python-dotenv loads only when
there is a .env file; Typer is shown only the command the line names."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.cli import app as cli_app
from agentcli.cli.startup import command_name, listing_only, only_the_named_command
from agentcli.project_files import find_env_file
from tests.cli.test_lazy_imports import probe


def test_env_file_is_found_from_a_subdirectory_and_a_directory_named_env_is_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deep = tmp_path / "a" / "b"
    (deep / ".env").mkdir(parents=True)  # a directory, not a file: skipped
    monkeypatch.chdir(deep)
    assert find_env_file() in ("", str(Path("/.env")))  # nothing between here and /
    (tmp_path / ".env").write_text("X=1\n")
    assert find_env_file() == str(tmp_path / ".env")


def test_no_env_file_no_dotenv_import(tmp_path: Path) -> None:
    _, _, modules = probe("tools", "list")
    assert "dotenv" not in modules


def test_a_env_file_in_a_parent_directory_still_sets_keys(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("AGENT_STARTUP_PROBE_API_KEY=from-dotenv-file\n")
    work = tmp_path / "sub"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "AGENT_STARTUP_PROBE_API_KEY"}
    code = ("import os, sys; sys.argv=['agent','tools','list']\n"
            "from agentcli.cli import app\n"
            "print(app._env().get('AGENT_STARTUP_PROBE_API_KEY'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=work, env=env, text=True,
                         capture_output=True, timeout=60)
    assert out.stdout.strip() == "from-dotenv-file", out.stderr


def test_a_named_command_is_the_only_one_typer_builds_and_all_come_back() -> None:
    before = (list(cli_app.app.registered_commands), list(cli_app.app.registered_groups))
    with only_the_named_command(cli_app.app, ["agent", "--debug", "tools", "list"]):
        assert [g.name for g in cli_app.app.registered_groups] == ["tools"]
        assert cli_app.app.registered_commands == []
    with only_the_named_command(cli_app.app, ["agent", "run", "q"]):
        assert [command_name(c) for c in cli_app.app.registered_commands] == ["run"]
    for line in (["agent", "--help"], ["agent", "What is 2+2?"], ["agent", "runn"]):
        with only_the_named_command(cli_app.app, line):
            assert len(cli_app.app.registered_commands) == len(before[0])
            assert len(cli_app.app.registered_groups) == len(before[1])
    assert (cli_app.app.registered_commands, cli_app.app.registered_groups) == before


def test_top_level_help_is_the_same_when_commands_are_only_listed() -> None:
    from typer.testing import CliRunner

    runner = CliRunner()
    full = runner.invoke(cli_app.app, ["--help"], prog_name="agent")
    before = list(cli_app.app.registered_commands)
    with listing_only(cli_app.app):
        assert all(c.callback.__code__.co_argcount == 0
                   for c in cli_app.app.registered_commands if c.callback)
        listed = runner.invoke(cli_app.app, ["--help"], prog_name="agent")
    assert full.exit_code == listed.exit_code == 0
    assert listed.output == full.output and "tools" in full.output and "chat" in full.output
    assert cli_app.app.registered_commands == before
    again = runner.invoke(cli_app.app, ["tools", "list"], prog_name="agent")
    assert again.exit_code == 0 and "terminal" in again.output  # the real commands are back


def test_agent_help_through_the_front_door() -> None:
    out = subprocess.run([sys.executable, "-m", "agentcli", "--help"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0
    assert "Usage: agent [OPTIONS] COMMAND" in out.stdout and "batch" in out.stdout


def test_the_process_ends_without_collecting_what_the_imports_built() -> None:
    # Shutdown would walk every object of the imports in its garbage collections (~40 ms of
    # a seed run): the entry point freezes them as the process ends, after the command's own
    # output, and the collector waits for 100k new objects while start-up builds its ~50k.
    code = ("import atexit, gc, sys\nsys.argv = ['agent', 'tools', 'list']\n"
            "from agentcli.__main__ import main\n"
            "frozen_before = gc.get_freeze_count()\n"
            "runs = lambda: gc.get_stats()[0]['collections']\n"
            "runs_before = runs()\n"
            "atexit.register(lambda: sys.stderr.write(\n"
            "    f'\\nFROZEN {frozen_before} {gc.get_freeze_count()} '\n"
            "    f'{gc.get_threshold()[0]} {runs() - runs_before}'))\n"
            "main()\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, stdin=subprocess.DEVNULL)
    assert "terminal" in out.stdout and out.returncode == 0, out.stderr[-2000:]
    before, after, threshold, collections = out.stderr.rsplit("FROZEN ", 1)[1].split()
    assert before == "0" and int(after) > 10_000
    assert threshold == "100000" and collections == "0"


# The entry point with an exit handler and, optionally, a (non-daemon) thread still writing
# when the command is over.
_ENDING = """
import atexit, sys, threading, time
atexit.register(lambda: print("HANDLER RAN"))
if "--late-thread" in sys.argv:
    sys.argv.remove("--late-thread")
    def late():  # still running when the command is over, whatever the machine's speed
        main = threading.main_thread().ident
        while True:
            frame, names = sys._current_frames().get(main), set()
            while frame is not None:
                names.add(frame.f_code.co_name)
                frame = frame.f_back
            if names & {"_end", "_shutdown"}:  # agentcli ending it, or the interpreter
                break
            time.sleep(0.01)
        time.sleep(0.2)
        print("THREAD DONE")
    threading.Thread(target=late).start()
sys.argv = ["agent", *sys.argv[1:]]
from agentcli.__main__ import main
main()
"""


@pytest.mark.parametrize(("args", "status", "said"), [
    (["tools", "list"], 0, "terminal"),
    (["run", "q", "--tools", "no_such_tool"], 2, "no_such_tool"),  # a one-line error, status 2
])
def test_the_process_ends_itself_with_its_status_after_the_exit_handlers(
        args: list[str], status: int, said: str) -> None:
    proc = subprocess.run([sys.executable, "-c", _ENDING, *args], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == status, proc.stderr[-2000:]
    assert said in proc.stdout + proc.stderr
    assert proc.stdout.rstrip().endswith("HANDLER RAN")  # exit handlers run, output flushed


def test_a_thread_still_running_is_waited_for_as_the_interpreter_would() -> None:
    proc = subprocess.run([sys.executable, "-c", _ENDING, "--late-thread", "tools", "list"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.rstrip().splitlines()[-2:] == ["THREAD DONE", "HANDLER RAN"]


def test_the_agent_script_is_the_entry_point_that_ends_the_process() -> None:
    import tomllib

    pyproject = Path(__file__).parents[2] / "pyproject.toml"
    scripts = tomllib.loads(pyproject.read_text())["project"]["scripts"]
    assert scripts["agent"] == "agentcli.__main__:main"


def test_command_annotations_are_objects_not_strings_for_typer_to_evaluate() -> None:
    import inspect

    for command in (cli_app.run, cli_app.tools_list, cli_app.chat, cli_app.batch):
        annotations = [p.annotation for p in inspect.signature(command).parameters.values()]
        assert annotations and not any(isinstance(a, str) for a in annotations), command
