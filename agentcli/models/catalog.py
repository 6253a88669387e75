"""What models are available: each preset's endpoint, its key, and what ``GET /models`` reports.

An endpoint is queried when it is configured: its key is set, its base URL variable is set,
it is the ``base_url`` setting, or it lives on this machine (Ollama, vLLM, LM Studio). Answers
are cached for a day in the data dir (``models.json``); ``refresh`` ignores the cache.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, field
from pathlib import Path
from typing import Any

from agentcli.files import write_atomic
from agentcli.models.presets import CUSTOM, PRESETS
from agentcli.models.structured import is_local_url
from agentcli.paths import data_dir
from agentcli.records import record

CACHE_SECONDS = 24 * 3600
TIMEOUT_SECONDS = 2.0


@record(frozen=False)
class Endpoint:
    """One provider endpoint and what it reported (the key itself is never kept here)."""

    provider: str
    base_url: str
    key_env: str | None
    key: str  # "set", "missing" or "not needed"
    key_source: str | None = None  # "environment" or "keys file"
    configured: bool = False
    status: str = "not queried"
    models: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The endpoint as JSON-ready data."""
        return asdict(self)


def endpoints(
    env: Mapping[str, str], *, stored: set[str] | None = None, base_url: str | None = None,
    owner: str | None = None,
) -> list[tuple[Endpoint, str | None]]:
    """Every preset's endpoint (and the ``base_url`` setting as ``custom``) with its key;
    the provider ``owner`` (the one ``base_url`` was set for) is shown going there."""
    stored = stored or set()
    out: list[tuple[Endpoint, str | None]] = []
    for preset in PRESETS.values():
        url_override = (env.get(preset.base_url_env) or "").strip() if preset.base_url_env else ""
        if base_url and preset.name == owner:
            url_override = base_url
        url = url_override or preset.base_url
        secret = (env.get(preset.key_env) or "").strip() if preset.key_env else ""
        if preset.key_env is None:
            key, source = "not needed", None
        elif secret:
            key, source = "set", "keys file" if preset.key_env in stored else "environment"
        else:
            key, source = ("missing" if preset.key_required else "not needed"), None
        configured = bool(secret) or bool(url_override) or is_local_url(url)
        endpoint = Endpoint(preset.name, url.rstrip("/"), preset.key_env, key, source,
                            configured)
        out.append((endpoint, secret or None))
    if base_url:
        out.append((Endpoint(CUSTOM, base_url.rstrip("/"), None, "not needed", None, True),
                    None))
    return out


def fetch_models(url: str, api_key: str | None) -> list[str]:
    """The model ids ``GET {url}/models`` lists; raises RuntimeError with a short reason."""
    import httpx

    timeout = TIMEOUT_SECONDS  # read at the call (a test shortens it)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        reply = httpx.get(f"{url}/models", headers=headers, timeout=timeout)
    except httpx.TimeoutException:
        raise RuntimeError(f"no answer within {timeout:g} s") from None
    except httpx.HTTPError as err:
        reason = "connection refused" if "refused" in str(err).lower() else type(err).__name__
        raise RuntimeError(reason) from None
    if reply.status_code != 200:
        raise RuntimeError(f"HTTP {reply.status_code}")
    try:
        data = reply.json().get("data")
        ids = [str(m["id"]) for m in data if isinstance(m, dict) and m.get("id")]
    except (ValueError, AttributeError, TypeError, KeyError):
        raise RuntimeError("the reply is not a model list") from None
    return sorted(ids)


class ModelCache:
    """Model lists by endpoint URL in one JSON file, each valid for a day."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.clock = clock
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            self.data: dict[str, Any] = data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            self.data = {}  # a missing or damaged cache is only a slower listing

    def get(self, url: str) -> list[str] | None:
        """The cached list for ``url`` when it is less than a day old."""
        entry = self.data.get(url)
        if not isinstance(entry, dict) or not isinstance(entry.get("models"), list):
            return None
        if self.clock() - float(entry.get("fetched", 0)) > CACHE_SECONDS:
            return None
        return [str(m) for m in entry["models"]]

    def put(self, url: str, models: list[str]) -> None:
        """Remember ``models`` for ``url`` (saved by :meth:`save`)."""
        self.data[url] = {"fetched": self.clock(), "models": models}

    def save(self) -> None:
        """Write the cache atomically."""
        write_atomic(self.path, json.dumps(self.data, indent=1, sort_keys=True))


def list_endpoints(
    env: Mapping[str, str],
    *,
    stored: set[str] | None = None,
    base_url: str | None = None,
    owner: str | None = None,
    refresh: bool = False,
    cache_path: Path | None = None,
) -> list[Endpoint]:
    """Every endpoint, the configured ones queried (concurrently) or read from the cache."""
    cache = ModelCache(cache_path or data_dir(env) / "models.json")
    pairs = endpoints(env, stored=stored, base_url=base_url, owner=owner)
    to_fetch: list[tuple[Endpoint, str | None]] = []
    for endpoint, secret in pairs:
        if not endpoint.configured:
            endpoint.status = "not queried: no key or base URL set"
            continue
        cached = None if refresh else cache.get(endpoint.base_url)
        if cached is not None:
            endpoint.models, endpoint.status = cached, "cached"
        else:
            to_fetch.append((endpoint, secret))

    def query(pair: tuple[Endpoint, str | None]) -> None:
        endpoint, secret = pair
        try:
            endpoint.models = fetch_models(endpoint.base_url, secret)
            endpoint.status = "ok"
        except RuntimeError as err:
            endpoint.status = f"unreachable: {err}"

    if to_fetch:
        with ThreadPoolExecutor(max_workers=min(8, len(to_fetch))) as pool:
            list(pool.map(query, to_fetch))
        for endpoint, _ in to_fetch:
            if endpoint.status == "ok":
                cache.put(endpoint.base_url, endpoint.models)
        with contextlib.suppress(OSError):  # an unwritable data dir costs the next query only
            cache.save()
    return [endpoint for endpoint, _ in pairs]
