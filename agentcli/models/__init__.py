"""Chat models: the protocol, and ``get_model`` which resolves a model name to a provider.

Names: ``provider/model`` (see :mod:`agentcli.models.presets`), ``replay:FILE`` (answer from a
cassette) and ``fake:FILE`` (a JSON list of scripted replies). HTTP code is imported only
when a real provider is built.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentcli.errors import ConfigError
from agentcli.models.base import BaseChatModel

# httpx imports its own command-line client when click, rich and pygments are installed (they
# are, for our CLI): ~30 ms and a few MiB on every run. A None entry makes that import fail,
# and httpx then falls back to a stub ``httpx.main``, which we never call. The figure is the
# bench row bench/httpx_main.py: a seed run is 26-27 ms and 4.3-4.5 MiB lighter with this.
if "httpx" not in sys.modules:
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]


def get_model(
    spec: str,
    *,
    env: Mapping[str, str] | None = None,
    base_url: str | None = None,
    record: str | Path | None = None,
    **options: Any,
) -> BaseChatModel:
    """Build a model from its name; ``record`` wraps it to save a cassette."""
    spec = spec.strip()
    model: BaseChatModel
    if spec.startswith("replay:"):
        from agentcli.models.replay import ReplayChatModel

        model = ReplayChatModel(spec.removeprefix("replay:"))
    elif spec.startswith("fake:"):
        from agentcli.models.fake import FakeChatModel

        path = Path(spec.removeprefix("fake:"))
        try:
            replies = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise ConfigError(f"fake model script {path}: {err}") from None
        if not isinstance(replies, list) or not all(isinstance(r, str) for r in replies):
            raise ConfigError(f"fake model script {path} must be a JSON list of strings")
        model = FakeChatModel(replies, name=f"fake:{path.name}")
    else:
        from agentcli.models.presets import create_model

        model = create_model(spec, env=env, base_url=base_url, **options)
    if record is not None:
        from agentcli.models.replay import RecordingChatModel

        model = RecordingChatModel(model, record)
    return model


__all__ = ["BaseChatModel", "get_model"]
