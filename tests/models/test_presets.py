"""Provider presets and create_model: names, base URLs, keys and clear ConfigErrors."""

from __future__ import annotations

import pytest

from agentcli.errors import ConfigError
from agentcli.models import presets
from agentcli.models.openai_compat import OpenAICompatModel
from agentcli.models.presets import PRESETS, Preset, create_model, get_preset, with_presets
from agentcli.schema import user
from tests.support.mock_server import MockOpenAIServer

EXPECTED = {
    "openai": ("https://api.openai.com/v1", "OPENAI_API_KEY", "OPENAI_BASE_URL", True),
    "dashscope": ("https://dashscope.aliyuncs.com/compatible-mode/v1", "DASHSCOPE_API_KEY",
                  "DASHSCOPE_BASE_URL", True),
    "deepseek": ("https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL", True),
    "ollama": ("http://127.0.0.1:11434/v1", None, "OLLAMA_BASE_URL", False),
    "vllm": ("http://127.0.0.1:8000/v1", "VLLM_API_KEY", "VLLM_BASE_URL", False),
    "lmstudio": ("http://127.0.0.1:1234/v1", None, "LMSTUDIO_BASE_URL", False),
    "openrouter": ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", "OPENROUTER_BASE_URL",
                   True),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_builtin_presets(name: str) -> None:
    preset = get_preset(name)
    assert (preset.base_url, preset.key_env, preset.base_url_env,
            preset.key_required) == EXPECTED[name]


def test_create_model_uses_preset_and_key_from_env() -> None:
    model = create_model("dashscope/qwen-turbo", env={"DASHSCOPE_API_KEY": "sk-d"})
    assert isinstance(model, OpenAICompatModel)
    assert model.name == "dashscope/qwen-turbo" and model.provider == "dashscope"
    assert model.base_url == EXPECTED["dashscope"][0]
    assert model._api_key == "sk-d"


def test_model_part_may_contain_slashes() -> None:
    model = create_model("openrouter/meta-llama/llama-3-8b", env={"OPENROUTER_API_KEY": "k"})
    assert model.model == "meta-llama/llama-3-8b"
    assert model.name == "openrouter/meta-llama/llama-3-8b"


def test_local_presets_need_no_key() -> None:
    model = create_model("ollama/qwen2.5", env={})
    assert model.base_url == "http://127.0.0.1:11434/v1" and model._api_key is None
    assert create_model("vllm/m", env={"VLLM_API_KEY": "v"})._api_key == "v"
    assert create_model("lmstudio/m", env={}).url == "http://127.0.0.1:1234/v1/chat/completions"


def test_base_url_precedence_argument_then_env_then_preset() -> None:
    env = {"OLLAMA_BASE_URL": "http://gpu-box:11434/v1"}
    assert create_model("ollama/m", env=env).base_url == "http://gpu-box:11434/v1"
    explicit = create_model("ollama/m", env=env, base_url="http://other:1/v1/")
    assert explicit.base_url == "http://other:1/v1"


def test_explicit_key_beats_env_and_options_pass_through() -> None:
    model = create_model("openai/gpt-4o-mini", env={"OPENAI_API_KEY": "env"}, api_key="arg",
                         temperature=0.1, max_retries=0)
    assert model._api_key == "arg" and model.temperature == 0.1 and model.max_retries == 0


def test_provider_name_is_case_insensitive() -> None:
    assert create_model("Ollama/qwen2.5", env={}).provider == "ollama"


def test_missing_key_says_what_to_do() -> None:
    with pytest.raises(ConfigError) as info:
        create_model("dashscope/qwen-turbo", env={"DASHSCOPE_API_KEY": "  "})
    assert str(info.value) == (
        "DASHSCOPE_API_KEY is not set; store it with agent keys set dashscope, "
        "put it in .env or the environment, or use --model ollama/..."
    )


def test_unknown_provider_lists_known_and_a_close_match() -> None:
    with pytest.raises(ConfigError) as info:
        create_model("dashscop/qwen", env={})
    message = str(info.value)
    assert message.startswith("unknown provider 'dashscop'; did you mean 'dashscope'?")
    for name in EXPECTED:
        assert name in message
    assert "\n" not in message


@pytest.mark.parametrize("spec", ["gpt-4o", "/gpt-4o", "openai/", "openai/ "])
def test_malformed_specs(spec: str) -> None:
    with pytest.raises(ConfigError, match=r"provider/model|names no model"):
        create_model(spec, env={"OPENAI_API_KEY": "k"})


def test_custom_needs_a_base_url() -> None:
    with pytest.raises(ConfigError, match="needs a base URL"):
        create_model("custom/my-model", env={})
    model = create_model("custom/my-model", env={}, base_url="http://127.0.0.1:9999/v1")
    assert model.name == "custom/my-model" and model._api_key is None


def test_bad_base_url_and_bad_option() -> None:
    with pytest.raises(ConfigError, match="must start with http"):
        create_model("ollama/m", env={"OLLAMA_BASE_URL": "localhost:11434"})
    with pytest.raises(ConfigError, match="bad option"):
        create_model("ollama/m", env={}, temprature=0.3)


def test_a_table_with_more_presets_belongs_to_its_owner_only() -> None:
    """Two callers in one process: one adds a provider to its own table, the other (and the
    built-in table) never sees it; nothing process-wide changes."""
    acme = with_presets(Preset("acme", "http://127.0.0.1:7000/v1", "ACME_KEY", "ACME_URL", True))
    model = create_model("acme/rocket", env={"ACME_KEY": "a"}, presets=acme)
    assert model.base_url == "http://127.0.0.1:7000/v1" and model.provider == "acme"
    other = with_presets(Preset("acme", "http://elsewhere/v1"))
    assert get_preset("acme", other).base_url == "http://elsewhere/v1"
    assert get_preset("acme", acme).base_url == "http://127.0.0.1:7000/v1"
    with pytest.raises(ConfigError, match="unknown provider 'acme'"):
        create_model("acme/rocket", env={"ACME_KEY": "a"})
    assert "acme" not in PRESETS
    with pytest.raises(TypeError):
        PRESETS["acme"] = Preset("acme", "http://x/v1")  # type: ignore[index]
    with pytest.raises(ConfigError, match="already in the table"):
        with_presets(Preset("acme", "http://elsewhere/v1"), base=acme)
    assert get_preset("acme", with_presets(Preset("acme", "http://elsewhere/v1"), base=acme,
                                           replace=True)).base_url == "http://elsewhere/v1"
    with pytest.raises(ConfigError, match="invalid preset name"):
        with_presets(Preset("custom", "http://x/v1"))


def test_presets_module_does_not_import_httpx_at_import_time() -> None:
    assert "httpx" not in presets.__dict__


def test_created_model_talks_to_the_mock_server() -> None:
    with MockOpenAIServer() as srv:
        srv.add_reply("pong")
        model = create_model("vllm/mock-model", env={"VLLM_BASE_URL": srv.base_url})
        assert model.generate([user("ping")]).text == "pong"
        assert "Authorization" not in srv.requests[0].headers
