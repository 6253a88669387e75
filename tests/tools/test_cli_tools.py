"""The CLI: agent tools list/show/call, and a two-tool run (wikipedia + llm-math)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcli.cli.app import app
from agentcli.tools import load_tools
from tests.tools.conftest import LocalServer, PlannedAgent

BUILTIN_COUNT = 26  # 25 tools + the requests_all group


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def test_tools_list_shows_every_builtin_with_flags() -> None:
    result = invoke("tools", "list", "--json")
    assert result.exit_code == 0, result.output
    rows = {r["name"]: r for r in json.loads(result.stdout)}
    assert len(rows) == BUILTIN_COUNT
    dangerous = {n for n, r in rows.items() if r["dangerous"]}
    assert dangerous == {"requests_all", "requests_get", "requests_post", "requests_put",
                         "requests_patch", "requests_delete", "terminal", "python_repl",
                         "write_file", "copy_file", "move_file", "file_delete"}
    assert rows["searx-search"]["needs"] == "searx_host"
    assert rows["ddg-search"]["needs"] == "pip extra [ddg]"
    assert rows["llm-math"]["needs_llm"] and {r["source"] for r in rows.values()} == {"built-in"}


def test_tools_list_shows_module_and_yaml_sources(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text("from agentcli import tool\n\n@tool\ndef shout(text: str) "
                                   "-> str:\n    \"\"\"Shout.\"\"\"\n    return text.upper()\n")
    (tmp_path / "c.yaml").write_text("yaml_tools:\n  - {name: hello, kind: command, "
                                     "argv: [echo, hello]}\n")
    result = invoke("tools", "list", "--json", "-c", str(tmp_path / "c.yaml"),
                    "--tools-module", str(tmp_path / "t.py"))
    rows = {r["name"]: r for r in json.loads(result.stdout)}
    assert rows["shout"]["source"] == "module" and rows["hello"]["source"] == "YAML"
    assert rows["hello"]["dangerous"]
    table = invoke("tools", "list", "-c", str(tmp_path / "c.yaml"))
    assert "hello" in table.stdout and "YAML" in table.stdout


def test_tools_show() -> None:
    result = invoke("tools", "show", "write_file")
    assert result.exit_code == 0
    assert "dangerous: yes - it changes files under the tool root" in result.stdout
    assert '"file_path"' in result.stdout
    assert invoke("tools", "show", "wikipedai").exit_code == 2


def test_tools_call_safe_and_dangerous(tmp_path: Path) -> None:
    assert invoke("tools", "call", "current_datetime", "").exit_code == 0
    refused = invoke("tools", "call", "terminal", "echo hi")
    assert refused.exit_code == 2 and "--allow terminal" in refused.stderr
    denied = invoke("tools", "call", "terminal", "echo hi", "--allow", "terminal")
    assert denied.exit_code == 1 and "no terminal to ask" in denied.stderr
    assert "hi" not in denied.stdout
    ok = invoke("tools", "call", "terminal", "echo hi", "--allow", "terminal", "--yes")
    assert ok.exit_code == 0 and ok.stdout.strip() == "hi"


def test_tools_call_policy_allow_and_bad_input(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("tool_policy: {terminal: allow}\nallow: [terminal]\n")
    assert invoke("tools", "call", "terminal", "echo ok", "-c", str(cfg)).stdout.strip() == "ok"
    cfg.write_text("tool_policy: {read_file: deny}\n")
    assert invoke("tools", "call", "read_file", "x", "-c", str(cfg)).exit_code == 1
    bad = invoke("tools", "call", "read_file", "../../etc/passwd")
    assert bad.exit_code == 1 and "outside the allowed root" in bad.stderr


def test_two_tool_run_wikipedia_and_llm_math(wiki_server: LocalServer) -> None:
    """The ReAct parser is on another branch, so a planned agent drives the real executor."""
    from agentcli.executor import AgentExecutor
    from agentcli.models.fake import FakeChatModel
    from agentcli.schema import AgentAction, AgentFinish

    tools = load_tools(["wikipedia", "llm-math"], llm=FakeChatModel(["```text\n330 * 2\n```"]),
                       wikipedia_base_url=wiki_server.url + "/w/api.php")

    def plan(steps: list[Any]) -> Any:
        if not steps:
            return AgentAction("wikipedia", "Eiffel Tower")
        if len(steps) == 1:
            assert "330 metres" in steps[0].observation
            return AgentAction("Calculator", "twice the height of 330 metres")
        return AgentFinish({"output": steps[1].observation}, "")

    agent = PlannedAgent.build(plan, tools)
    from tests.support.scripted import silent_model

    result = AgentExecutor(agent, tools, llm=silent_model(), return_intermediate_steps=True).invoke(
        "How tall would two Eiffel Towers be?")
    assert result.output == "Answer: 660"
    assert [s.action.tool for s in result.steps] == ["wikipedia", "Calculator"]


def test_calculator_without_a_model_on_an_expression() -> None:
    ok = invoke("tools", "call", "llm-math", "300 * 0.25")
    assert ok.exit_code == 0 and ok.stdout == "Answer: 75.0\n"
    words = invoke("tools", "call", "llm-math", "a quarter of three hundred")
    assert words.exit_code == 2
    assert "needs a language model for this input; pass --model" in " ".join(
        words.stderr.split())


def test_did_you_mean_uses_the_name_the_model_sees() -> None:
    for typo in ("calculater", "calculatr"):
        result = invoke("tools", "call", typo, "1+1")
        assert result.exit_code == 2
        assert "did you mean llm-math?" in result.stderr
    ok = invoke("tools", "call", "Calculator", "1+1")  # the display name is a name too
    assert ok.exit_code == 0 and ok.stdout == "Answer: 2\n"


def test_tools_show_calculator_as_the_model_sees_it() -> None:
    from agentcli.tools.calculator import DESCRIPTION

    result = invoke("tools", "show", "llm-math", "--json")
    assert result.exit_code == 0
    info = json.loads(result.stdout)
    assert info["model_name"] == "Calculator" and info["description"] == DESCRIPTION
    assert info["schema"]["properties"]["input"]["type"] == "string"
    text = invoke("tools", "show", "llm-math").stdout
    assert "the model sees it as Calculator; a tool-calling model calls the function " \
        "Calculator:" in " ".join(text.split()) and '"input"' in text
    assert info["function_name"] == "Calculator"
    assert " ".join(DESCRIPTION.split()) in " ".join(text.split())


def test_tools_show_names_the_function_a_tool_calling_model_calls(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text(
        "from agentcli import tool\n\n@tool(name='dyn.unlock')\n"
        "def unlock(code: str) -> str:\n    \"Unlocks.\"\n    return 'open'\n")
    result = invoke("tools", "show", "dyn.unlock", "--tools-module", str(tmp_path / "t.py"),
                    "--json")
    assert result.exit_code == 0, result.stderr
    info = json.loads(result.stdout)
    assert (info["model_name"], info["function_name"]) == ("dyn.unlock", "dyn__unlock")



@pytest.mark.parametrize(("tool", "settings", "message"), [
    ("requests_get", "{requests_headers: oops}", "requests_headers must be a mapping"),
    ("wikipedia", "{wikipedia_top_k: 0}", "wikipedia_top_k must be a positive number"),
    ("sleep", "{sleep_max: .inf}", "sleep_max must be a positive number"),
])
def test_bad_tool_settings_are_refused_at_load_time(
    tmp_path: Path, tool: str, settings: str, message: str
) -> None:
    """A family reads its settings when the tool is built: a bad value is one line and exit 2
    before the tool runs."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"tool_settings: {settings}\nallow: [{tool}]\n")
    result = invoke("tools", "call", tool, "x", "-c", str(cfg), "--yes")
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.stderr.split()) and "Traceback" not in result.stderr
