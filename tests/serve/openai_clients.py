"""OpenAI clients for the serve tests, each closed after its test (see conftest.py): a socket
left to the garbage collector is a ResourceWarning, which this suite treats as an error."""

from __future__ import annotations

from typing import Any

import openai

_open: list[openai.OpenAI] = []


def client(served: Any, key: str | None = None) -> openai.OpenAI:
    """An OpenAI client for the served agent (with the token it printed, unless ``key``)."""
    made = openai.OpenAI(base_url=served.url, api_key=key or served.token or "unused",
                         max_retries=0, timeout=60)
    _open.append(made)
    return made


def close_all() -> None:
    """Close the clients made so far."""
    while _open:
        _open.pop().close()
