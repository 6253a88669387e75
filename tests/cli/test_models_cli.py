"""`agent models list | default` against the local mock server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcli.cli.app import app
from agentcli.models.catalog import CACHE_SECONDS, ModelCache
from agentcli.paths import data_dir, user_config_file
from tests.support.mock_server import MockOpenAIServer

runner = CliRunner()
CLOSED = "http://127.0.0.1:9/v1"  # the discard port: nothing listens


@pytest.fixture(autouse=True)
def _local_presets_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    for name in ("VLLM_BASE_URL", "LMSTUDIO_BASE_URL", "OLLAMA_BASE_URL"):
        monkeypatch.setenv(name, CLOSED)


@pytest.fixture
def server() -> Iterator[MockOpenAIServer]:
    with MockOpenAIServer(models=("mock-b", "mock-a")) as srv:
        yield srv


def agent(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> Any:
    return runner.invoke(app, list(args), env=env, input=stdin, catch_exceptions=False)


def model_gets(server: MockOpenAIServer) -> list[Any]:
    return [r for r in server.requests if r.path.rstrip("/").endswith("/models")]


def test_list_piped_shows_the_servers_models_and_the_key(server: MockOpenAIServer) -> None:
    env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-list-secret"}
    result = agent("models", "list", env=env)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "model\tprovider\turl\tkey\tstatus\tdefault"
    url = server.base_url.rstrip("/")
    assert f"openai/mock-a\topenai\t{url}\tset (environment)\tok: 2 models\t" in lines
    assert f"openai/mock-b\topenai\t{url}\tset (environment)\tok: 2 models\t" in lines
    assert any(line.startswith("dashscope/*\tdashscope\thttps://") and
               "\tmissing\tnot queried" in line for line in lines)
    assert any(line.startswith("vllm/*\tvllm\thttp://") and "\tnot needed\tunreachable" in line
               for line in lines)
    assert "sk-list-secret" not in result.stdout + result.stderr
    [get] = model_gets(server)
    assert get.headers.get("Authorization") == "Bearer sk-list-secret"


def test_list_is_cached_for_a_day_and_refresh_asks_again(server: MockOpenAIServer) -> None:
    env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-x"}
    assert agent("models", "list", env=env).exit_code == 0
    again = agent("models", "list", "--json", env=env)
    openai = next(p for p in json.loads(again.stdout)["providers"] if p["provider"] == "openai")
    assert openai["status"] == "cached" and openai["models"] == ["mock-a", "mock-b"]
    assert len(model_gets(server)) == 1
    assert (data_dir() / "models.json").is_file()
    assert agent("models", "list", "--refresh", env=env).exit_code == 0
    assert len(model_gets(server)) == 2


def test_cache_entries_expire_after_a_day(tmp_path: Any) -> None:
    now = [1_000_000.0]
    cache = ModelCache(tmp_path / "m.json", clock=lambda: now[0])
    cache.put("http://x/v1", ["a"])
    cache.save()
    reread = ModelCache(tmp_path / "m.json", clock=lambda: now[0])
    assert reread.get("http://x/v1") == ["a"]
    now[0] += CACHE_SECONDS + 1
    assert reread.get("http://x/v1") is None


def test_list_json_marks_stored_keys_and_custom_base_url(server: MockOpenAIServer) -> None:
    assert agent("keys", "set", "deepseek", stdin="sk-deep\n").exit_code == 0
    env = {"DEEPSEEK_BASE_URL": server.base_url}
    result = agent("models", "list", "--json", "--base-url", server.base_url, env=env)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    by_name = {p["provider"]: p for p in data["providers"]}
    assert by_name["deepseek"]["key"] == "set"
    assert by_name["deepseek"]["key_source"] == "keys file"
    assert by_name["custom"]["models"] == ["mock-a", "mock-b"]
    assert by_name["openai"]["key"] == "missing" and by_name["openai"]["models"] == []
    assert "sk-deep" not in result.stdout


def test_default_set_show_and_use(server: MockOpenAIServer) -> None:
    assert agent("models", "default").stdout == "(none)\n"
    result = agent("models", "default", "openai/mock-a")
    assert result.exit_code == 0, result.stderr
    assert str(user_config_file()) in result.stderr
    assert agent("models", "default").stdout == "openai/mock-a\n"
    server.add_reply("Final Answer: 75")
    env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-x"}
    run = agent("run", "hi", "-q", env=env)
    assert run.exit_code == 0, run.stderr
    assert server.requests[-1].body["model"] == "mock-a"
    listed = agent("models", "list", env=env).stdout
    url = server.base_url.rstrip("/")
    assert f"openai/mock-a\topenai\t{url}\tset (environment)\tok: 2 models\tyes" in listed


def test_default_keeps_the_rest_of_the_user_config() -> None:
    path = user_config_file()
    path.parent.mkdir(parents=True)
    path.write_text("# mine\naliases:\n  q: dashscope/qwen-turbo\nmodel: openai/old\n")
    assert agent("models", "default", "q").exit_code == 0
    assert path.read_text() == "# mine\naliases:\n  q: dashscope/qwen-turbo\nmodel: \"q\"\n"
    assert agent("models", "list", "--json").exit_code == 0


@pytest.mark.parametrize(
    ("name", "message"),
    [("qq", "unknown model alias 'qq'"), ("openia/gpt", "unknown provider 'openia'")],
)
def test_default_rejects_bad_names_exit_2(name: str, message: str) -> None:
    result = agent("models", "default", name)
    assert result.exit_code == 2
    assert message in " ".join(result.stderr.split())
    assert not user_config_file().exists()


def test_list_in_a_terminal_is_a_table_with_aliases(server: MockOpenAIServer) -> None:
    path = user_config_file()
    path.parent.mkdir(parents=True)
    path.write_text("aliases:\n  q: openai/mock-a\n")
    env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-x", "FORCE_COLOR": "1",
           "TERM": "xterm-256color"}
    result = agent("models", "list", env=env)
    assert result.exit_code == 0, result.stderr
    assert "\x1b[" in result.stdout and "Models" in result.stdout  # Rich, not tab rows
    alias = next(line for line in result.stdout.splitlines() if line.startswith("│ q "))
    assert "openai/mock-a" in alias and "alias" in alias  # the alias row names its target
    assert "\t" not in result.stdout


def test_a_silent_endpoint_is_reported_not_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from agentcli.models import catalog

    monkeypatch.setattr(catalog, "TIMEOUT_SECONDS", 0.2)  # the real limit is 2 s
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        result = agent("models", "list", "--json", env={"OPENAI_BASE_URL": url,
                                                        "OPENAI_API_KEY": "sk-x"})
    assert result.exit_code == 0, result.stderr
    openai = next(p for p in json.loads(result.stdout)["providers"] if p["provider"] == "openai")
    assert openai["status"] == "unreachable: no answer within 0.2 s"
    assert openai["models"] == []
