"""Every tool source reaches `agent run` and `agent chat`: entry-point plugins, --tools-module,
YAML tools and MCP servers, resolved lazily by name (only the MCP servers named start)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from tests.support.zygote import server_command

FIXTURES = Path(__file__).parent.parent / "tools" / "fixtures"
ECHO_SERVER = str(FIXTURES / "mcp_echo_server.py")


def blob(tool: str, tool_input: Any) -> str:
    """A chat-agent reply that calls ``tool`` (the JSON-blob format)."""
    payload = json.dumps({"action": tool, "action_input": tool_input})
    return f"Thought: use {tool}.\nAction:\n```json\n{payload}\n```"


def agent(*args: str, env: dict[str, str] | None = None, stdin: str = "",
          cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real entry point in a subprocess, stdout and stderr piped."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "agentcli", *args], capture_output=True,
                          text=True, env=full, input=stdin, timeout=120, cwd=cwd)


def mcp_conf(marker: Path, **extra: Any) -> dict[str, Any]:
    """An ``mcp_servers`` entry for the echo server that records each start in ``marker``."""
    return {**server_command(ECHO_SERVER), "env": {"MARKER_FILE": str(marker)}, "trusted": True,
            **extra}


def starts(marker: Path) -> int:
    """How many times the server behind ``marker`` was spawned."""
    return len(marker.read_text().splitlines()) if marker.exists() else 0


@pytest.fixture
def sources(tmp_path: Path) -> dict[str, Any]:
    """A config with a YAML tool and an MCP server, a tools module and an installed plugin."""
    plugins = tmp_path / "site"
    (plugins / "fakeplug-0.1.dist-info").mkdir(parents=True)
    (plugins / "fakeplug-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: fakeplug\nVersion: 0.1\n")
    (plugins / "fakeplug-0.1.dist-info" / "entry_points.txt").write_text(
        "[agentcli.tools]\nfake = fakeplug:TOOLS\n")
    (plugins / "fakeplug.py").write_text(
        "from agentcli import tool\n\n@tool\ndef plug_echo(text: str) -> str:\n"
        '    """Echo from a plugin."""\n    return "plug: " + text\n\nTOOLS = [plug_echo]\n')
    module = tmp_path / "my_tools.py"
    module.write_text("from agentcli import tool\n\n@tool\ndef mod_echo(text: str) -> str:\n"
                      '    """Echo from a module."""\n    return "mod: " + text\n')
    config = tmp_path / "mcp.yaml"
    config.write_text(json.dumps({
        "yaml_tools": [{"name": "yaml_echo", "kind": "command", "dangerous": False,
                        "argv": [sys.executable, "-c", "import sys; print('yaml:', sys.argv[1])",
                                 "{text}"],
                        "args": {"text": {"type": "string"}}}],
        "mcp_servers": {"ev": mcp_conf(tmp_path / "ev.marker"),
                        "other": mcp_conf(tmp_path / "other.marker")},
    }))
    return {"config": config, "module": module, "env": {"PYTHONPATH": str(plugins)},
            "ev": tmp_path / "ev.marker", "other": tmp_path / "other.marker"}


CASES = [("plug_echo", "plug: hi"), ("mod_echo", "mod: hi"), ("yaml_echo", "yaml: hi"),
         ("ev.echo", "echo: hi")]


def _model_env(mock_server: Any) -> dict[str, str]:
    return {"OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "sk-test"}


@pytest.mark.parametrize(("tool", "expected"), CASES)
def test_agent_run_uses_every_source(
    mock_server: Any, sources: dict[str, Any], tool: str, expected: str
) -> None:
    mock_server.add_reply(blob(tool, {"text": "hi"}))
    mock_server.add_reply("Final Answer: done")
    proc = agent("run", "say hi", "-m", "openai/any", "-c", str(sources["config"]),
                 "--tools-module", str(sources["module"]), "-t", tool,
                 env={**sources["env"], **_model_env(mock_server)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "done"
    assert f"Observation: {expected}" in proc.stderr
    assert expected in json.dumps(mock_server.requests[1].body)
    assert starts(sources["ev"]) == (1 if tool == "ev.echo" else 0)  # only when named
    assert starts(sources["other"]) == 0


@pytest.mark.parametrize(("tool", "expected"), CASES)
def test_agent_chat_uses_every_source(
    mock_server: Any, sources: dict[str, Any], tool: str, expected: str, tmp_path: Path
) -> None:
    mock_server.add_reply(blob(tool, {"text": "hi"}))
    mock_server.add_reply("Final Answer: done")
    proc = agent("chat", "-m", "openai/any", "-c", str(sources["config"]), "--no-stream",
                 "--tools-module", str(sources["module"]), "-t", tool, "--db",
                 str(tmp_path / "a.db"), env={**sources["env"], **_model_env(mock_server)},
                 stdin="say hi\n/tools\n")
    assert proc.returncode == 0, proc.stderr
    assert expected in json.dumps(mock_server.requests[1].body)
    assert "done" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_mcp_tool_from_config_end_to_end_in_chat(mock_server: Any, tmp_path: Path) -> None:
    marker = tmp_path / "ev.marker"
    config = tmp_path / "mcp.yaml"
    config.write_text(json.dumps({"tools": ["ev.echo"], "mcp_servers": {"ev": mcp_conf(marker)}}))
    mock_server.add_reply(blob("ev.echo", {"text": "from chat"}))
    mock_server.add_reply("Final Answer: the server said it")
    proc = agent("chat", "-m", "openai/any", "-c", str(config), "--no-stream", "-v",
                 "--db", str(tmp_path / "a.db"), env=_model_env(mock_server),
                 stdin="say hi\n/tools add ev.shout\n/tools\n/tools add ev.nope\n")
    assert proc.returncode == 0, proc.stderr
    assert "Observation: echo: from chat" in proc.stdout
    assert "the server said it" in proc.stdout
    listed = proc.stdout.split("you> /tools\n")[1]
    assert "ev.echo" in listed and "ev.shout" in listed  # /tools add takes MCP tools too
    assert "error: MCP server 'ev' has no tool 'nope'" in " ".join(proc.stdout.split())
    assert starts(marker) == 1  # one chat, one server process


def test_server_name_loads_all_its_tools(mock_server: Any, sources: dict[str, Any]) -> None:
    mock_server.add_reply(blob("ev.shout", {"text": "hi"}))
    mock_server.add_reply("Final Answer: HI")
    proc = agent("run", "shout", "-m", "openai/any", "-c", str(sources["config"]), "-t", "ev",
                 env=_model_env(mock_server))
    assert proc.returncode == 0, proc.stderr
    system = mock_server.requests[0].body["messages"][0]["content"]
    assert "ev.echo" in system and "ev.shout" in system
    assert "Observation: HI" in proc.stderr
    assert starts(sources["ev"]) == 1 and starts(sources["other"]) == 0


def test_display_name_and_registry_name_both_resolve(mock_server: Any) -> None:
    for name in ("Calculator", "llm-math"):
        mock_server.add_reply(blob("Calculator", "6*7"))
        mock_server.add_reply("Final Answer: 42")
        proc = agent("run", "6 times 7?", "-m", "openai/any", "-t", name,
                     env=_model_env(mock_server))
        assert proc.returncode == 0, proc.stderr
        assert "Observation: Answer: 42" in proc.stderr


def test_unrelated_tools_and_tools_list_start_no_server(
    mock_server: Any, sources: dict[str, Any]
) -> None:
    mock_server.add_reply("Final Answer: nothing to do")
    proc = agent("run", "hello", "-m", "openai/any", "-c", str(sources["config"]),
                 "-t", "yaml_echo", env=_model_env(mock_server))
    assert proc.returncode == 0, proc.stderr
    listed = agent("tools", "list", "-c", str(sources["config"]))
    assert listed.returncode == 0, listed.stderr
    assert "not started yet" in listed.stdout
    assert starts(sources["ev"]) == 0 and starts(sources["other"]) == 0


def test_tools_list_caches_per_server_config(sources: dict[str, Any], tmp_path: Path) -> None:
    config = str(sources["config"])
    first = agent("tools", "list", "-c", config, "--all", "--json")
    assert first.returncode == 0, first.stderr
    rows = {r["name"]: r for r in json.loads(first.stdout)}
    assert rows["ev"]["members"] == ["ev.echo", "ev.shout"]
    assert rows["ev.echo"]["source"] == "MCP" and not rows["ev.echo"]["dangerous"]
    assert starts(sources["ev"]) == 1 and starts(sources["other"]) == 1
    again = agent("tools", "list", "-c", config)  # from the cache: no server starts
    assert "ev.shout" in again.stdout and "other.echo" in again.stdout
    assert starts(sources["ev"]) == 1
    agent("tools", "list", "-c", config, "--all")  # --all starts only servers never listed
    assert starts(sources["ev"]) == 1
    agent("tools", "list", "-c", config, "--refresh")
    assert starts(sources["ev"]) == 2 and starts(sources["other"]) == 2
    changed = tmp_path / "changed.yaml"  # another config for the same name misses the cache
    changed.write_text(json.dumps({"mcp_servers": {"ev": mcp_conf(sources["ev"], timeout=20)}}))
    assert "not started yet" in agent("tools", "list", "-c", str(changed)).stdout


def test_tools_show_and_call_mcp_tool(sources: dict[str, Any]) -> None:
    config = str(sources["config"])
    shown = agent("tools", "show", "ev.echo", "-c", config)
    assert shown.returncode == 0, shown.stderr
    assert "Echo the text back." in shown.stdout and '"text"' in shown.stdout
    started = starts(sources["ev"])
    again = agent("tools", "show", "ev.echo", "-c", config)  # the cached list: no start
    assert again.stdout == shown.stdout and starts(sources["ev"]) == started
    called = agent("tools", "call", "ev.echo", '{"text": "direct"}', "-c", config)
    assert called.returncode == 0, called.stderr
    assert called.stdout.strip() == "echo: direct"
    assert starts(sources["other"]) == 0


@pytest.mark.parametrize(("args", "message"), [
    (["-t", "nosrv.echo"], "unknown tool 'nosrv.echo': no MCP server 'nosrv' is configured "
                           "(configured: ev, other)"),
    (["-t", "ev.ecko"], "MCP server 'ev' has no tool 'ecko'; did you mean "),
    (["-t", "yaml_echi"], "unknown tool 'yaml_echi'; did you mean yaml_echo"),
])
def test_bad_names_are_one_line_exit_2(
    sources: dict[str, Any], mock_server: Any, args: list[str], message: str
) -> None:
    proc = agent("run", "q", "-m", "openai/any", "-c", str(sources["config"]), *args,
                 env=_model_env(mock_server))
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and message in " ".join(proc.stderr.split())
    assert "Traceback" not in proc.stderr
    assert mock_server.requests == []
    assert starts(sources["other"]) == 0


@pytest.mark.parametrize(("yaml_tools", "message"), [
    ([{"name": "terminal", "kind": "command", "argv": ["true"]}],
     "tool name 'terminal' is defined twice, as a built-in tool and as a YAML tool"),
    ([{"name": "a.b", "kind": "command", "argv": ["true"], "dangerous": False},
      {"name": "a__b", "kind": "command", "argv": ["true"], "dangerous": False}],
     "tools 'a.b' and 'a__b' both become 'a__b' when sent to the model"),
])
def test_duplicates_and_wire_name_collisions_exit_2(
    tmp_path: Path, yaml_tools: list[dict[str, Any]], message: str
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(json.dumps({"yaml_tools": yaml_tools}))
    names = ",".join(t["name"] for t in yaml_tools)
    for command in (["run", "q", "-m", "openai/any"], ["chat", "-m", "openai/any"]):
        proc = agent(*command, "-c", str(config), "-t", names, "--allow-dangerous-tools",
                     env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "x"})
        assert proc.returncode == 2, proc.stderr
        assert message in " ".join(proc.stderr.split())
        assert "Traceback" not in proc.stderr


def test_allow_server_opts_in_its_dangerous_tools(mock_server: Any, tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    marker = tmp_path / "m"
    config.write_text(json.dumps({"mcp_servers": {"ev": mcp_conf(marker, dangerous=True)}}))
    env = _model_env(mock_server)
    refused = agent("run", "q", "-m", "openai/any", "-c", str(config), "-t", "ev.echo", env=env)
    assert refused.returncode == 2
    assert "--allow ev" in refused.stderr and "'ev.echo'" in refused.stderr
    mock_server.add_reply(blob("ev.echo", {"text": "ok"}))
    mock_server.add_reply("Final Answer: fine")
    allowed = agent("run", "q", "-m", "openai/any", "-c", str(config), "-t", "ev.echo",
                    "--allow", "ev", "--yes", env=env)
    assert allowed.returncode == 0, allowed.stderr
    assert "Observation: echo: ok" in allowed.stderr
    chat_refused = agent("chat", "-m", "openai/any", "-c", str(config), "-t", "ev",
                         "--db", str(tmp_path / "a.db"), env=env, stdin="")
    assert chat_refused.returncode == 2 and "--allow ev" in chat_refused.stderr
    mock_server.add_reply(blob("ev.shout", {"text": "ok"}))
    mock_server.add_reply("Final Answer: fine")
    chat = agent("chat", "-m", "openai/any", "-c", str(config), "-t", "ev", "--allow", "ev",
                 "--yes", "--no-stream", "-v", "--db", str(tmp_path / "a.db"), env=env,
                 stdin="shout\n")
    assert chat.returncode == 0, chat.stderr
    assert "Observation: OK" in chat.stdout


def test_refused_tools_add_in_chat_leaves_tools_unchanged(
    mock_server: Any, tmp_path: Path
) -> None:
    proc = agent("chat", "-m", "openai/any", "-t", "current_datetime", "--db",
                 str(tmp_path / "a.db"), env=_model_env(mock_server),
                 stdin="/tools add terminal\n/tools\n/tools add sleep\n/tools\n"
                       "/tools allow terminal\n/tools\n")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    said = " ".join(out.split())
    assert "WARNING: terminal is dangerous: it runs" in said
    assert "type /tools allow terminal (each call still asks before it runs)" in said
    assert "--allow" not in said  # something to do here, not a flag for next time
    after_refusal, after_add, after_allow = out.split("you> /tools\n")[1:4]
    assert "current_datetime" in after_refusal and "terminal" not in after_refusal
    assert "sleep" in after_add and "current_datetime" in after_add
    assert "terminal" in after_allow


def test_chat_allow_dangerous_tools_flag(mock_server: Any, tmp_path: Path) -> None:
    proc = agent("chat", "-m", "openai/any", "-t", "terminal", "--allow-dangerous-tools",
                 "--db", str(tmp_path / "a.db"), env=_model_env(mock_server), stdin="/tools\n")
    assert proc.returncode == 0, proc.stderr
    assert "terminal" in proc.stdout


def test_tool_calling_sends_sanitized_names(mock_server: Any, sources: dict[str, Any]) -> None:
    mock_server.add_reply("nothing to call")
    proc = agent("run", "q", "-m", "openai/any", "-a", "tool-calling", "-c",
                 str(sources["config"]), "-t", "ev.echo,yaml_echo", env=_model_env(mock_server))
    assert proc.returncode == 0, proc.stderr
    names = [t["function"]["name"] for t in mock_server.requests[0].body["tools"]]
    assert names == ["ev__echo", "yaml_echo"]


def test_tool_calling_maps_sanitized_name_back(mock_server: Any, sources: dict[str, Any]) -> None:
    mock_server.add_reply(tool_calls=[{"name": "ev__echo", "arguments": {"text": "yo"}}])
    mock_server.add_reply("done")
    proc = agent("run", "q", "-m", "openai/any", "-a", "tool-calling", "-c",
                 str(sources["config"]), "-t", "ev.echo", env=_model_env(mock_server))
    assert proc.returncode == 0, proc.stderr
    assert "echo: yo" in json.dumps(mock_server.requests[1].body)
    assert "ev.echo" in proc.stderr  # the trace shows the readable name


def test_agent_batch_uses_module_and_mcp_tools(
    mock_server: Any, sources: dict[str, Any], tmp_path: Path
) -> None:
    mock_server.add_reply(blob("mod_echo", {"text": "hi"}))
    mock_server.add_reply("Final Answer: done")
    questions = tmp_path / "in.jsonl"
    questions.write_text(json.dumps({"id": "1", "input": "say hi"}) + "\n")
    out = tmp_path / "out.jsonl"
    proc = agent("batch", str(questions), "--out", str(out), "-j", "1", "-m", "openai/any",
                 "-c", str(sources["config"]), "--tools-module", str(sources["module"]),
                 "-t", "ev.echo", env=_model_env(mock_server))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["answer"] == "done"
    assert "mod: hi" in json.dumps(mock_server.requests[1].body)
    system = mock_server.requests[0].body["messages"][0]["content"]
    assert "ev.echo" in system and "mod_echo" in system
    assert starts(sources["ev"]) == 1 and starts(sources["other"]) == 0


def test_broken_server_is_one_warning_in_tools_list(
    mock_server: Any, sources: dict[str, Any], tmp_path: Path
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(json.dumps({"mcp_servers": {
        "ev": mcp_conf(sources["ev"]), "broken": {"command": str(tmp_path / "no-such-server"),
                                                  "timeout": 10}}}))
    listed = agent("tools", "list", "-c", str(config), "--all")
    assert listed.returncode == 0, listed.stderr
    assert "ev.echo" in listed.stdout and "failed to start" in listed.stdout
    warnings = [line for line in listed.stderr.splitlines() if line.strip()]
    assert len(warnings) == 1 and warnings[0].startswith("warning: MCP server 'broken'")
    assert "Traceback" not in listed.stderr
    mock_server.add_reply(blob("current_datetime", ""))
    mock_server.add_reply("Final Answer: it is now")
    ran = agent("run", "time?", "-m", "openai/any", "-c", str(config), "-t", "current_datetime",
                env=_model_env(mock_server))  # the broken server is never started
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "it is now"


# trusted: whether its tools are dangerous is then the server's to say, so it is started (an
# untrusted server's tools are refused by the gate before any start)
BROKEN = {"command": sys.executable, "trusted": True,
          "args": ["-c", "import sys; print('cannot open the database', file=sys.stderr); "
                         "sys.exit(3)"]}


def test_a_server_that_does_not_start_leaves_the_other_tools_working(
    mock_server: Any, tmp_path: Path
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(json.dumps({"mcp_servers": {"db": BROKEN}}))
    mock_server.add_reply(blob("Calculator", "6*7"))
    mock_server.add_reply("Final Answer: 42")
    proc = agent("run", "6 times 7?", "-m", "openai/any", "-c", str(config),
                 "-t", "db.query,Calculator", env=_model_env(mock_server), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "42"
    [line] = [x for x in proc.stderr.splitlines() if "did not start" in x]
    assert line.startswith("warning: MCP server 'db' did not start")
    assert "cannot open the database" in line and "continuing without its tools" in line
    system = mock_server.requests[0].body["messages"][0]["content"]
    assert "Calculator" in system and "db.query" not in system
    alone = agent("run", "query it", "-m", "openai/any", "-c", str(config), "-t", "db.query",
                  env=_model_env(mock_server), cwd=tmp_path)
    assert alone.returncode == 2 and "Traceback" not in alone.stderr
    assert "MCP server 'db' did not start" in alone.stderr
    assert len(mock_server.requests) == 2  # nothing left to work with: no model call


def test_a_broken_plugin_is_reported_by_agent_run(mock_server: Any, tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "badplug-0.1.dist-info").mkdir(parents=True)
    (site / "badplug-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: badplug\nVersion: 0.1\n")
    (site / "badplug-0.1.dist-info" / "entry_points.txt").write_text(
        "[agentcli.tools]\nbad = badplug_missing_module:TOOLS\n")
    mock_server.add_reply("Final Answer: fine")
    proc = agent("run", "q", "-m", "openai/any", env={**_model_env(mock_server),
                                                      "PYTHONPATH": str(site)}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "warning: plugin 'bad' failed to load: ModuleNotFoundError" in proc.stderr
