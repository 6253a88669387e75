"""Saved templates: `agent run --save NAME`, `-T NAME`, `-p KEY VALUE`, and
`agent templates list | show | edit | path`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from agentcli.saved_templates import templates_dir


def cli(*args: str, stdin: str = "", extra_env: dict[str, str] | None = None) -> Any:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | (extra_env or {})
    return subprocess.run([sys.executable, "-m", "agentcli", *args], input=stdin,
                          capture_output=True, text=True, env=env, timeout=60)


def one_line(text: str) -> str:
    return " ".join(text.split())


def sent(server: Any) -> tuple[str, str]:
    """(system text, last user text) of the last request the mock server received."""
    messages = server.requests[-1].body["messages"]
    system = "\n".join(m["content"] for m in messages if m["role"] == "system")
    user = [m["content"] for m in messages if m["role"] == "user"][-1]
    return system, user


def save_translate() -> Any:
    return cli("run", "--save", "tr", "Translate to $lang: $input", "-s",
               "You translate into $lang.", "-m", "openai/mock", "-o", "temperature", "0.2",
               "-p", "lang", "French", "-a", "chat-zero-shot-react-description")


def test_save_writes_the_template_and_runs_nothing() -> None:
    proc = save_translate()
    assert proc.returncode == 0, proc.stderr
    path = templates_dir() / "tr.yaml"
    assert f"saved template tr in {path}" in one_line(proc.stderr) and proc.stdout == ""
    data = yaml.safe_load(path.read_text())
    assert data == {"prompt": "Translate to $lang: $input", "system": "You translate into $lang.",
                    "model": "openai/mock", "options": {"temperature": "0.2"},
                    "agent": "chat-zero-shot-react-description", "defaults": {"lang": "French"}}
    assert not list(path.parent.glob(".*.tmp"))


def test_template_fills_input_params_and_flags_win(mock_server: Any) -> None:
    assert save_translate().returncode == 0
    env = {"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-t"}
    mock_server.add_reply("Final Answer: bonjour")
    proc = cli("-T", "tr", "hello", "-q", "--no-log", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "bonjour\n"
    system, user = sent(mock_server)
    assert "Translate to French: hello" in user and "You translate into French." in system
    body = mock_server.requests[-1].body
    assert body["temperature"] == 0.2 and body["model"] == "mock"
    mock_server.add_reply("Final Answer: hallo")
    proc = cli("run", "--template", "tr", "hello", "-p", "lang", "German", "-o", "temperature",
               "0.7", "-q", "--no-log", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    system, user = sent(mock_server)
    assert "Translate to German: hello" in user and "into German." in system
    assert mock_server.requests[-1].body["temperature"] == 0.7


def test_template_takes_piped_input_and_appends_without_input(mock_server: Any) -> None:
    env = {"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-t"}
    saved = cli("run", "--save", "sum", "Summarize in one line:", "-m", "openai/mock")
    assert saved.returncode == 0
    mock_server.add_reply("Final Answer: short")
    proc = cli("run", "-T", "sum", "-q", "--no-log", stdin="a long text\n", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    assert sent(mock_server)[1].endswith("Summarize in one line:\n\na long text")


def test_missing_parameter_and_unknown_template_are_one_line_errors() -> None:
    assert cli("run", "--save", "p", "Say $word", "-m", "openai/mock").returncode == 0
    proc = cli("run", "-T", "p", "x")
    assert proc.returncode == 2
    assert "template p needs parameter 'word'; pass -p word VALUE" in one_line(proc.stderr)
    proc = cli("run", "-T", "nope", "x")
    assert proc.returncode == 2
    assert "no template 'nope' (templates: p)" in one_line(proc.stderr)
    bad = cli("run", "--save", "../evil", "x")
    assert bad.returncode == 2 and "template name" in bad.stderr
    assert "Traceback" not in proc.stderr + bad.stderr


def test_list_show_path() -> None:
    assert save_translate().returncode == 0
    listed = cli("templates", "list")
    assert listed.stdout == "tr\tTranslate to $lang: $input\n"
    shown = cli("templates", "show", "tr")
    assert yaml.safe_load(shown.stdout)["defaults"] == {"lang": "French"}
    assert cli("templates", "path").stdout.strip() == str(templates_dir())


def test_edit_runs_the_editor_and_checks_the_result(tmp_path: Path) -> None:
    editor = tmp_path / "ed.py"
    editor.write_text("import sys\nopen(sys.argv[1], 'a').write('system: Be terse.\\n')\n")
    proc = cli("templates", "edit", "new1", extra_env={"EDITOR": f"{sys.executable} {editor}"})
    assert proc.returncode == 0, proc.stderr
    data = yaml.safe_load((templates_dir() / "new1.yaml").read_text())
    assert data == {"prompt": "$input\n", "system": "Be terse."}
    editor.write_text("import sys\nopen(sys.argv[1], 'a').write('colour: red\\n')\n")
    bad = cli("templates", "edit", "new1", extra_env={"EDITOR": f"{sys.executable} {editor}"})
    assert bad.returncode == 2 and "unknown key 'colour'" in one_line(bad.stderr)


def test_help_says_which_flag_is_the_template() -> None:
    text = one_line(cli("run", "--help").stdout)
    assert "--template" in text and "-T" in text and "here -t is --tools" in text


def test_run_without_a_question_or_template_says_so() -> None:
    proc = cli("run")
    assert proc.returncode == 2
    assert "QUESTION is missing" in one_line(proc.stderr) and "-T NAME" in proc.stderr


def test_completion_offers_template_names() -> None:
    from test_completion import complete

    assert save_translate().returncode == 0
    assert complete("agent run -T t")[0] == ["tr"]
    assert complete("agent templates show ")[0] == ["tr"]


def test_save_from_a_template_keeps_what_it_had_plus_the_flags(mock_server: Any) -> None:
    assert save_translate().returncode == 0
    proc = cli("run", "-T", "tr", "--save", "tr-de", "-p", "lang", "German", "-o", "seed", "7")
    assert proc.returncode == 0, proc.stderr
    data = yaml.safe_load((templates_dir() / "tr-de.yaml").read_text())
    assert data == {"prompt": "Translate to $lang: $input", "system": "You translate into $lang.",
                    "model": "openai/mock", "options": {"temperature": "0.2", "seed": "7"},
                    "agent": "chat-zero-shot-react-description", "defaults": {"lang": "German"}}
    env = {"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-t"}
    mock_server.add_reply("Final Answer: hallo")
    used = cli("-T", "tr-de", "hello", "-q", "--no-log", extra_env=env)
    assert used.returncode == 0, used.stderr
    system, user = sent(mock_server)
    assert "You translate into German." in system and user.endswith("Translate to German: hello")
    missing = cli("run", "-T", "nope", "--save", "x")
    assert missing.returncode == 2 and "no template 'nope'" in missing.stderr
