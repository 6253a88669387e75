"""YAML command/http tools, --tools-module files, entry-point plugins, config validation."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from agentcli.config import Settings, load_settings
from agentcli.errors import ConfigError, ToolLoadError
from agentcli.tools import Tool, ToolSpec, custom, load_tools, registry, tool
from agentcli.tools.custom import load_plugins, module_specs
from agentcli.tools.yaml_tools import check_definitions, yaml_specs
from tests.tools.conftest import Handler, LocalServer

ECHO_ARGV = [sys.executable, "-c", "import sys, json; print(json.dumps(sys.argv[1:]))"]


def test_command_tool_metacharacters_stay_one_argument(tmp_path: Path) -> None:
    defs = check_definitions([{
        "name": "echo_args", "kind": "command", "description": "echo",
        "argv": [*ECHO_ARGV, "{text}", "--flag={text}"],
        "args": {"text": {"type": "string", "description": "what to echo"}},
    }])
    specs = yaml_specs(defs)
    with pytest.raises(ToolLoadError, match="dangerous"):
        load_tools(["echo_args"], specs=specs)
    root = tmp_path / "root"
    root.mkdir()
    [t] = load_tools(["echo_args"], specs=specs, allow=["echo_args"], files_root=str(root))
    evil = "a; touch pwned && $(touch pwned2) `touch pwned3` | cat > x"
    assert json.loads(t.run({"text": evil})) == [evil, f"--flag={evil}"]
    assert list(root.iterdir()) == []
    assert t.args_schema == {"type": "object", "required": ["text"],
                             "properties": {"text": {"type": "string",
                                                     "description": "what to echo"}}}


def test_command_tool_env_is_scrubbed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-123")
    specs = yaml_specs(check_definitions([{
        "name": "show_env", "kind": "command", "dangerous": False,
        "argv": [sys.executable, "-c", "import os; print(sorted(os.environ))"],
    }]))
    [t] = load_tools(["show_env"], specs=specs, files_root=str(tmp_path))
    assert "MY_SERVICE_TOKEN" not in t.run({})


def test_http_tool_url_template_and_env_headers(
    local_server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def weather(h: Handler) -> None:
        h.send_json({"path": h.path, "auth": h.headers.get("Authorization")})

    local_server.routes["/weather/Den%20Haag"] = weather
    monkeypatch.setenv("WEATHER_KEY", "k-1")
    specs = yaml_specs(check_definitions([{
        "name": "weather", "kind": "http", "url": local_server.url + "/weather/{city}",
        "headers": {"Authorization": "Bearer ${WEATHER_KEY}"}, "allow_private_network": True,
        "args": {"city": {"type": "string"}, "units": {"type": "string", "default": "metric"}},
    }]))
    [t] = load_tools(["weather"], specs=specs)
    assert not t.dangerous
    out = json.loads(t.run("Den Haag"))
    assert out == {"path": "/weather/Den%20Haag?units=metric", "auth": "Bearer k-1"}


def test_http_tool_state_placeholder_is_filled_and_url_encoded(local_server: LocalServer) -> None:
    local_server.routes["/u/Ada%20L%3F1"] = lambda h: h.send_json({"path": h.path})
    specs = yaml_specs(check_definitions([{
        "name": "profile", "kind": "http", "url": local_server.url + "/u/{state.user}",
        "allow_private_network": True, "args": {"q": {"type": "string"}},
    }]))
    [t] = load_tools(["profile"], specs=specs)
    assert [i.field for i in t.injected] == ["user"]
    assert set(t.args_schema["properties"]) == {"q"}
    out = json.loads(str(t.invoke({"q": "x"}, state={"user": "Ada L?1"})))
    assert out == {"path": "/u/Ada%20L%3F1?q=x"}  # the state value is not sent as a query
    from agentcli.errors import ToolInputError

    with pytest.raises(ToolInputError, match="holds a path separator"):
        t.invoke({"q": "x"}, state={"user": "Ada/1"})  # one segment, never two


def test_http_tool_missing_env_is_a_load_error() -> None:
    specs = yaml_specs(check_definitions([{
        "name": "needs_env", "kind": "http", "url": "https://api.example/x",
        "headers": {"X-Key": "${NOT_SET_ANYWHERE_123}"},
    }]))
    with pytest.raises(ToolLoadError, match="NOT_SET_ANYWHERE_123"):
        load_tools(["needs_env"], specs=specs)


def test_http_tool_refuses_private_address_by_default() -> None:
    from agentcli.errors import ToolInputError

    specs = yaml_specs(check_definitions([{"name": "meta", "kind": "http",
                                           "url": "http://169.254.169.254/{p}",
                                           "args": {"p": {"type": "string"}}}]))
    [t] = load_tools(["meta"], specs=specs)
    with pytest.raises(ToolInputError, match="metadata"):
        t.run("latest")


@pytest.mark.parametrize(("snippet", "message"), [
    ("- {name: x, kind: shell, argv: [ls]}", "kind must be command or http"),
    ("- {name: x, kind: command, argv: [ls, '{p}']}", "placeholders \\['p'\\]"),
    ("- {name: x, kind: http, url: 'ftp://x'}", "url must be"),
    ("- {name: x, kind: command, argv: [ls], shell: true}", "has \\['shell'\\]"),
])
def test_yaml_tools_validation_names_file_and_key(
    tmp_path: Path, snippet: str, message: str
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("yaml_tools:\n  " + snippet + "\n")
    with pytest.raises(ConfigError, match=f"c.yaml: 'yaml_tools' must be .*{message}"):
        load_settings(path, env={})


def test_policy_and_mcp_validation(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("tool_policy: {terminal: maybe}\n")
    with pytest.raises(ConfigError, match=r"'tool_policy'.*terminal"):
        load_settings(path, env={})
    path.write_text("mcp_servers: {fs: {args: [x]}}\n")
    with pytest.raises(ConfigError, match=r"'mcp_servers'.*command"):
        load_settings(path, env={})
    path.write_text("approve: auto\ntool_policy: {terminal: allow}\n")
    s = load_settings(path, env={})
    assert s.approve == "auto" and s.tool_policy == {"terminal": "allow"}


MODULE = '''
from agentcli import tool

@tool
def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()

@tool(dangerous=True)
def wipe(path: str) -> str:
    """Pretend to wipe."""
    return "wiped " + path
'''


def test_tools_module(tmp_path: Path) -> None:
    path = tmp_path / "my_tools.py"
    path.write_text(MODULE)
    specs = {s.name: s for s in module_specs(path)}
    assert sorted(specs) == ["shout", "wipe"]
    assert specs["shout"].source == "module" and specs["wipe"].dangerous
    assert "shout" not in registry()  # a module's tools belong to the config that names it
    config = Settings(tools_module=[str(path)])
    [shout] = load_tools(["shout"], config=config)
    assert shout.run("hi") == "HI"
    with pytest.raises(ToolLoadError, match="'wipe' is dangerous"):
        load_tools(["wipe"], config=config)


def test_tools_module_errors(tmp_path: Path) -> None:
    with pytest.raises(ToolLoadError, match="no such file"):
        module_specs(tmp_path / "nope.py")
    (tmp_path / "empty.py").write_text("x = 1\n")
    with pytest.raises(ToolLoadError, match="defines no tools"):
        module_specs(tmp_path / "empty.py")
    (tmp_path / "broken.py").write_text("raise RuntimeError('boom')\n")
    with pytest.raises(ToolLoadError, match="RuntimeError: boom"):
        module_specs(tmp_path / "broken.py")


class FakeEntryPoint:
    def __init__(self, name: str, obj: Any) -> None:
        self.name, self.obj = name, obj

    def load(self) -> Any:
        if isinstance(self.obj, BaseException):
            raise self.obj
        return self.obj


def test_plugins_belong_to_the_catalog_that_read_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plugin's tools and its warning are the catalog's: the built-in table is unchanged,
    and a catalog read when the plugin is gone has neither (no process-wide registry)."""
    import importlib.metadata

    from agentcli.tools.resolve import build_catalog

    @tool
    def greet(name: str) -> str:
        """Greet someone."""
        return f"hello {name}"

    spec = ToolSpec("plug_spec", lambda **_: Tool("plug_spec", "x", func=lambda s: s), "spec")
    eps = [FakeEntryPoint("good", [greet, spec]), FakeEntryPoint("fn", lambda: greet),
           FakeEntryPoint("bad", ImportError("no module named foo"))]
    with monkeypatch.context() as m:  # the plugin is installed for this catalog only
        m.setattr(custom, "_may_have_plugins", lambda: True)
        m.setattr(importlib.metadata, "entry_points",
                  lambda group: eps if group == "agentcli.tools" else [])
        found = load_plugins()
        assert [s.name for s in found.specs] == ["plug_spec", "greet"]
        assert found.warnings == [
            "plugin 'bad' failed to load: ImportError: no module named foo"]
        assert "greet" not in registry() and "plug_spec" not in registry()
        with_plugin = build_catalog()
        warned: list[str] = []
        [greeter] = custom_resolve(["greet"], warned)
    assert with_plugin.specs["greet"].source == "plugin"
    assert with_plugin.warnings == found.warnings and warned == found.warnings
    assert greeter.run("bo") == "hello bo"
    without = build_catalog()
    assert "greet" not in without.specs and without.warnings == []
    with pytest.raises(ToolLoadError, match="unknown tool 'greet'"):
        load_tools(["greet"])


def custom_resolve(names: list[str], warnings: list[str]) -> list[Tool]:
    from agentcli.tools.resolve import resolve_tools

    return resolve_tools(names, warnings=warnings)


def test_the_plugin_precheck_reads_the_entry_points_files_on_the_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``_may_have_plugins`` says maybe only where a distribution declares the group (or a
    zip on the path hides what it declares): otherwise importlib.metadata stays unloaded."""
    site = tmp_path / "site"
    for name, text in (("other-1.0.dist-info", "[console_scripts]\nx = y:z\n"),
                       ("noentry-2.0.dist-info", None), ("old-0.1.egg-info", "[pytest11]\n")):
        (site / name).mkdir(parents=True)
        if text is not None:
            (site / name / "entry_points.txt").write_text(text)
    (site / "metadata").mkdir()
    (site / "metadata" / "entry_points.txt").write_text("[agentcli.tools]\n")
    monkeypatch.setattr(sys, "path", [str(site), str(tmp_path / "gone"), "hook__path_hook__"])
    assert not custom._may_have_plugins()
    (site / "plug-0.1.egg-info").mkdir()
    (site / "plug-0.1.egg-info" / "entry_points.txt").write_text("[agentcli.tools]\nt = m:f\n")
    assert custom._may_have_plugins()
    (tmp_path / "lib.zip").write_bytes(b"PK")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "lib.zip")])
    assert custom._may_have_plugins()


def test_the_plugin_precheck_reads_the_path_again_only_when_a_folder_on_it_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run builds its catalog twice and a chat on every /tools: the folders are read once,
    and again when an install changed one of them."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.setattr(sys, "path", [str(site)])
    scans: list[str] = []
    real_scandir = os.scandir
    monkeypatch.setattr(custom.os, "scandir",
                        lambda path: scans.append(path) or real_scandir(path))
    assert not custom._may_have_plugins()
    assert not custom._may_have_plugins()
    assert scans == [str(site)]
    (site / "plug-0.1.dist-info").mkdir()
    (site / "plug-0.1.dist-info" / "entry_points.txt").write_text("[agentcli.tools]\nt = m:f\n")
    assert custom._may_have_plugins()
    assert scans == [str(site), str(site)]
