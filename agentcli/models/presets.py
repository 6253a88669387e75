"""Provider presets (name, base URL, key variable) and ``create_model("provider/model")``.

:data:`PRESETS` is a read-only table of the built-in presets. More providers make a new table
(:func:`with_presets`) that its owner passes to :func:`create_model`: nothing registers into
a process-wide table, so two callers in one process never see each other's presets.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from agentcli.errors import ConfigError
from agentcli.models.structured import REFUSAL_STATUSES, is_local_url
from agentcli.records import record

if TYPE_CHECKING:
    from agentcli.models.openai_compat import OpenAICompatModel

CUSTOM = "custom"  # "custom/<model>" talks to any base_url given explicitly


@record
class Preset:
    """An OpenAI-compatible provider: where it lives and which variable holds its key."""

    name: str
    base_url: str
    key_env: str | None = None
    base_url_env: str | None = None
    key_required: bool = False
    structured: str | None = None  # how a JSON Schema reaches it (models/structured.py)
    local: bool = False  # a single-slot server on the user's machine
    # statuses with which it refuses a request field it does not support (llama.cpp: 500)
    refusals: tuple[int, ...] = REFUSAL_STATUSES


def with_presets(*presets: Preset, base: Mapping[str, Preset] | None = None,
                 replace: bool = False) -> Mapping[str, Preset]:
    """A new read-only table: ``base`` (the built-ins by default) plus ``presets``; a name
    already in it needs ``replace=True``."""
    table = dict(PRESETS if base is None else base)
    for preset in presets:
        name = preset.name.lower()
        if not name or "/" in name or name == CUSTOM:
            raise ConfigError(f"invalid preset name {preset.name!r}")
        if name in table and table[name] != preset and not replace:
            raise ConfigError(f"preset {name!r} is already in the table; pass replace=True")
        table[name] = preset
    return MappingProxyType(table)


def get_preset(name: str, presets: Mapping[str, Preset] | None = None) -> Preset:
    """The preset called ``name`` in ``presets`` (the built-ins by default); a ConfigError
    lists the known ones otherwise."""
    table = PRESETS if presets is None else presets
    preset = table.get(name.lower())
    if preset is None:
        known = sorted([*table, CUSTOM])
        close = difflib.get_close_matches(name.lower(), known, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ConfigError(
            f"unknown provider {name!r}; {hint}known providers: {', '.join(known)}; "
            "see agent models list, and set one with agent models default PROVIDER/MODEL"
        )
    return preset


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``provider/model`` (the model may itself contain slashes)."""
    provider, sep, model = spec.strip().partition("/")
    if not sep or not provider:
        raise ConfigError(
            f"model {spec!r} must be written provider/model, e.g. openai/gpt-4o-mini "
            "or ollama/qwen2.5"
        )
    if not model.strip("/ "):
        raise ConfigError(
            f"model {spec!r} names no model after {provider + '/'!r}; "
            f"e.g. {provider}/<model name>"
        )
    return provider.lower(), model


def create_model(
    spec: str,
    *,
    env: Mapping[str, str] | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    presets: Mapping[str, Preset] | None = None,
    **options: Any,
) -> OpenAICompatModel:
    """Build a model from ``provider/model`` (a provider of ``presets``, the built-ins by
    default); explicit arguments beat the environment."""
    env = os.environ if env is None else env
    provider, model = parse_spec(spec)
    base_url = (base_url or "").strip() or None
    api_key = (api_key or "").strip() or None
    if provider == CUSTOM and base_url is None:
        raise ConfigError(
            f"model {spec!r} needs a base URL for the custom provider, "
            "e.g. --base-url http://127.0.0.1:8000/v1"
        )
    preset = Preset(CUSTOM, "") if provider == CUSTOM else get_preset(provider, presets)
    from_env = (env.get(preset.base_url_env) or "").strip() if preset.base_url_env else ""
    url = base_url or from_env or preset.base_url
    if api_key is None and preset.key_env:
        api_key = (env.get(preset.key_env) or "").strip() or None
    if api_key is None and preset.key_required:
        raise ConfigError(
            f"{preset.key_env} is not set; store it with agent keys set {preset.name}, "
            "put it in .env or the environment, or use --model ollama/..."
        )
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"base URL {url!r} for {provider} must start with http:// or https://")
    from agentcli.models.openai_compat import OpenAICompatModel  # httpx only when needed

    try:
        options.setdefault("structured_mechanism", preset.structured)
        options.setdefault("refusal_statuses", preset.refusals)
        options.setdefault("local", preset.local or is_local_url(url))
        return OpenAICompatModel(model, base_url=url, api_key=api_key, provider=provider,
                                 **options)
    except TypeError as err:
        raise ConfigError(f"bad option for model {spec!r}: {err}") from None


_BUILTINS = (
    Preset("openai", "https://api.openai.com/v1", "OPENAI_API_KEY", "OPENAI_BASE_URL", True,
           structured="json_schema"),
    Preset("dashscope", "https://dashscope.aliyuncs.com/compatible-mode/v1",
           "DASHSCOPE_API_KEY", "DASHSCOPE_BASE_URL", True),
    Preset("deepseek", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL",
           True),
    Preset("ollama", "http://127.0.0.1:11434/v1", None, "OLLAMA_BASE_URL", False,
           structured="json_schema", local=True),
    Preset("vllm", "http://127.0.0.1:8000/v1", "VLLM_API_KEY", "VLLM_BASE_URL", False,
           structured="guided_json", local=True),
    Preset("lmstudio", "http://127.0.0.1:1234/v1", None, "LMSTUDIO_BASE_URL", False,
           structured="json_schema", local=True),
    Preset("llamacpp", "http://127.0.0.1:8080/v1", None, "LLAMACPP_BASE_URL", False,
           structured="llamacpp", local=True),
    Preset("openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY",
           "OPENROUTER_BASE_URL", True),
)
PRESETS: Mapping[str, Preset] = MappingProxyType({p.name: p for p in _BUILTINS})
