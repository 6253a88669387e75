"""How a server is told to constrain a reply to a JSON Schema, and which servers are local.

A request carries the schema through one of these mechanisms (``Preset.structured``):

* ``json_schema`` — OpenAI, LM Studio, Ollama (which maps it onto its own ``format``):
  ``response_format: {"type": "json_schema", "json_schema": {"name", "schema"}}``.
* ``llamacpp`` — llama.cpp's server and llama-cpp-python's:
  ``response_format: {"type": "json_object", "schema": ...}`` (turned into a grammar there).
* ``guided_json`` — vLLM: a top-level ``guided_json`` schema.

``structured_actions`` is ``on``, ``off`` or ``auto``; ``auto`` uses the preset's mechanism,
and for a custom base URL on this machine the llama.cpp one (the most common local server).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

_SCHEMA_NAME = "agent_action"  # OpenAI requires a name beside the schema
# Words in an error body that show the server objected to the schema field itself. A 400 or
# 422 is a refusal by definition, so looser words do; a 500 (llama-cpp-python answers an
# unsupported ``response_format`` that way) must name the field itself.
_FIELD_WORDS = ("response_format", "json_schema", "guided_json", "schema", "grammar", "format")
_FIELD_NAMES = ("response_format", "json_schema", "guided_json", "grammar")
# Statuses with which servers refuse a request field (data per preset: ``Preset.refusals``).
REFUSAL_STATUSES: tuple[int, ...] = (400, 422, 500)
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0"})


def is_local_url(base_url: str) -> bool:
    """True for a server on this machine (loopback), which usually serves one request at a time."""
    host = (urlsplit(base_url).hostname or "").lower()
    return host in _LOOPBACK or host.startswith("127.")


def choose_mechanism(
    mode: str, preset_mechanism: str | None, base_url: str
) -> str | None:
    """The mechanism to use for this model, or None when requests carry no schema."""
    if mode == "off":
        return None
    if preset_mechanism:
        return preset_mechanism
    if mode == "on" or is_local_url(base_url):
        return "llamacpp"  # unknown server: the llama.cpp form is the most widely accepted
    return None


def schema_fields(mechanism: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The request fields that carry ``schema`` for ``mechanism``."""
    if mechanism == "json_schema":
        return {"response_format": {
            "type": "json_schema",
            "json_schema": {"name": _SCHEMA_NAME, "schema": schema, "strict": False},
        }}
    if mechanism == "llamacpp":
        return {"response_format": {"type": "json_object", "schema": schema}}
    if mechanism == "guided_json":
        return {"guided_json": schema}
    raise ValueError(f"unknown structured-output mechanism {mechanism!r}")


def rejects_schema(
    status: int | None, message: str, statuses: tuple[int, ...] = REFUSAL_STATUSES
) -> bool:
    """Whether an error (status *and* body) says the server does not accept the schema field.

    The one place a refused request field is recognised; a refusal is never retried as is.
    """
    if status not in statuses:
        return False
    low = message.lower()
    words = _FIELD_NAMES if status >= 500 else _FIELD_WORDS
    return any(word in low for word in words)
