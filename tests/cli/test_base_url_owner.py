"""A ``base_url`` in a config file belongs to the provider of the model it was set with: a
request to another provider goes to that provider's own host, with its key (issue 20 #12)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from typer.testing import CliRunner

from agentcli.cli.app import app
from agentcli.paths import user_config_file
from tests.support.mock_server import MockOpenAIServer

runner = CliRunner()
KEY = "sk-openai-only-4242"


@pytest.fixture
def local() -> Iterator[MockOpenAIServer]:
    with MockOpenAIServer(models=("tiny",)) as srv:
        yield srv


def agent(*args: str, env: dict[str, str]) -> Any:
    return runner.invoke(app, list(args), env=env, catch_exceptions=False)


def write_user_config(text: str) -> None:
    path = user_config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_user_config_base_url_does_not_take_another_providers_key(
        mock_server: Any, local: MockOpenAIServer) -> None:
    write_user_config(f"model: llamacpp/tiny\nbase_url: {local.base_url}\n")
    env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": mock_server.base_url}  # "OpenAI's host"
    mock_server.add_reply("Final Answer: from openai")
    local.add_reply("Final Answer: from local")

    other = agent("run", "q", "-m", "openai/gpt-4o-mini", "-q", env=env)
    assert other.exit_code == 0, other.stderr
    assert other.stdout.strip() == "from openai"
    assert [r.body["model"] for r in mock_server.requests] == ["gpt-4o-mini"]
    assert local.requests == []  # the local server never saw the OpenAI request or its key

    own = agent("run", "q", "-q", env=env)  # the config's own model goes to its base_url
    assert own.stdout.strip() == "from local" and own.exit_code == 0
    [sent] = local.requests
    assert KEY not in json.dumps(sent.headers)

    listed = json.loads(agent("models", "list", "--json", env=env).stdout)
    where = {p["provider"]: p["base_url"] for p in listed["providers"]}
    assert where["llamacpp"] == local.base_url.rstrip("/")
    assert where["openai"] == mock_server.base_url.rstrip("/")


def test_a_base_url_flag_serves_the_model_named_with_it(mock_server: Any,
                                                        local: MockOpenAIServer) -> None:
    write_user_config(f"model: llamacpp/tiny\nbase_url: {local.base_url}\n")
    mock_server.add_reply("Final Answer: flagged")
    result = agent("run", "q", "-m", "custom/anything", "--base-url", mock_server.base_url,
                   "-q", env={})
    assert result.stdout.strip() == "flagged" and local.requests == []
