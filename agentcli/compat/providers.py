"""LangChain's provider classes as agentcli models: ``ChatTongyi``, ``ChatOpenAI``, ``OpenAI``.

Each takes the constructor arguments LangChain's does and maps them onto one agentcli model
(``provider/model``, keys and URLs from the environment as the CLI reads them); the arguments
and what each becomes are listed once, in ``docs/langchain.md`` ("Models"). ``streaming=True``
sends the agent's tokens to handlers (``on_llm_new_token``) in compat's ``AgentExecutor``.
"""

from __future__ import annotations

import weakref
from typing import Any

from agentcli.models import get_model
from agentcli.models.base import BaseChatModel

_BODY = ("top_p", "max_tokens", "n", "seed", "stop", "presence_penalty", "frequency_penalty")
_KEYS = ("api_key", "openai_api_key", "dashscope_api_key")
_URLS = ("base_url", "openai_api_base")
_ACCEPTED = (*_BODY, *_KEYS, *_URLS, "model_kwargs", "max_retries", "timeout",
             "request_timeout", "default_headers", "streaming")


# LangChain's ChatTongyi defaults: nucleus sampling at 0.8, ten retries
_TONGYI_DEFAULTS = {"top_p": 0.8, "max_retries": 10}
# models built with streaming=True: compat's AgentExecutor streams their tokens to handlers
STREAMING: weakref.WeakSet[BaseChatModel] = weakref.WeakSet()


def ChatTongyi(*, temperature: float | None = None, model: str = "qwen-turbo",
               **options: Any) -> BaseChatModel:
    """Qwen through DashScope's OpenAI-compatible mode (``DASHSCOPE_API_KEY``,
    ``DASHSCOPE_BASE_URL``), like LangChain's ``ChatTongyi`` (its defaults: ``top_p`` 0.8,
    ``max_retries`` 10, no ``max_tokens``)."""
    given = {k: v for k, v in options.items() if v is not None}
    return _chat_model("dashscope", model, temperature, {**_TONGYI_DEFAULTS, **given})


def ChatOpenAI(*, temperature: float | None = None, model: str = "gpt-4o-mini",
               **options: Any) -> BaseChatModel:
    """An OpenAI chat model (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``)."""
    return _chat_model("openai", model, temperature, options)


OpenAI = ChatOpenAI  # LangChain's OpenAI(): agentcli speaks the chat API only


def _chat_model(provider: str, model: str, temperature: float | None,
                options: dict[str, Any]) -> BaseChatModel:
    unknown = sorted(set(options) - {*_ACCEPTED, "model_name"})
    if unknown:
        raise TypeError(f"unknown option(s) {unknown}; accepted: temperature, model, "
                        "model_name, " + ", ".join(_ACCEPTED))
    name = str(options.pop("model_name", None) or model)
    kwargs: dict[str, Any] = {}
    key = next((options[k] for k in _KEYS if options.get(k)), None)
    url = next((options[k] for k in _URLS if options.get(k)), None)
    if key is not None:
        kwargs["api_key"] = str(getattr(key, "get_secret_value", lambda: key)())
    if url is not None:
        kwargs["base_url"] = str(url)
    body = {k: options[k] for k in _BODY if options.get(k) is not None}
    body.update(options.get("model_kwargs") or {})
    if body:
        kwargs["options"] = body
    if options.get("max_retries") is not None:
        kwargs["max_retries"] = int(options["max_retries"])
    timeout = options.get("timeout") or options.get("request_timeout")
    if timeout is not None:
        kwargs["timeout"] = float(timeout)
    if options.get("default_headers"):
        kwargs["extra_headers"] = dict(options["default_headers"])
    # a reply is as long as the server allows unless max_tokens is given (also on a local one)
    built = get_model(f"{provider}/{name}", temperature=temperature, local_max_tokens=None,
                      **kwargs)
    if options.get("streaming"):
        STREAMING.add(built)
    return built
