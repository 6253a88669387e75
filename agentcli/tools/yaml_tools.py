"""Tools declared in YAML (``yaml_tools:``): ``command`` tools and ``http`` tools.

Command tools fill an argv template: each ``{arg}`` is replaced inside its own argv item and
the program runs without a shell, so ``; rm -rf ~`` stays one literal argument. HTTP tools
fill a URL template (values URL-encoded), send the other arguments as query or JSON body,
and expand ``${ENV_VAR}`` in headers at call time. Both may use ``{state.NAME}``: the run state
field NAME, filled by the executor (the model never sees or sets it).
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Literal, TypedDict, cast
from urllib.parse import quote

from agentcli.errors import ToolInputError, ToolLoadError
from agentcli.tools.base import Tool
from agentcli.tools.inject import Injection
from agentcli.tools.net import fetch
from agentcli.tools.registry import ToolSpec
from agentcli.tools.sandbox import bool_setting, tool_root

_PLACEHOLDER = re.compile(r"\{((?:state\.)?\w+)\}")
_STATE = "state."
_ENV = re.compile(r"\$\{(\w+)\}")
_TYPES = {"string", "integer", "number", "boolean"}


class Definition(TypedDict, total=False):
    """One checked ``yaml_tools`` item (``check_definitions`` has checked every key)."""

    name: str
    description: str
    kind: Literal["command", "http"]
    argv: list[str]
    args: dict[str, dict[str, object]]  # name -> {type, description, default}
    method: str
    url: str
    headers: dict[str, object]
    dangerous: bool
    timeout: float
    allow_private_network: bool


_KEYS = frozenset(Definition.__annotations__)


def _check_one(i: int, d: object) -> dict[str, object]:
    where = f"item {i + 1}"
    if not isinstance(d, dict):
        raise ValueError(f"a list of tool definitions ({where} is not a mapping)")
    name = d.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[\w.-]+", name):
        raise ValueError(f"a list of tool definitions ({where}: 'name' must be a word)")
    where = f"tool {name!r}"

    def bad(what: str) -> ValueError:
        return ValueError(f"valid definitions ({where}: {what})")

    unknown = sorted(set(d) - _KEYS)
    if unknown:
        raise ValueError(f"tool definitions with keys {sorted(_KEYS)} ({where} has {unknown})")
    timeout = d.get("timeout", 30)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not (
            0 < timeout < float("inf")):  # also refuses nan
        raise bad("timeout must be a positive number of seconds")
    kind = d.get("kind")
    args = d.get("args") or {}
    if not isinstance(args, dict) or not all(
        isinstance(a, dict) and a.get("type", "string") in _TYPES for a in args.values()
    ):
        raise bad("args must map names to {type: string|integer|number|boolean, description}")
    if kind == "command":
        argv = d.get("argv")
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            raise bad("argv must be a list of strings")
        used = {m for a in argv for m in _PLACEHOLDER.findall(a)}
    elif kind == "http":
        if not isinstance(d.get("url"), str) or not d["url"].startswith(("http://", "https://")):
            raise bad("url must be an http(s) URL template")
        if str(d.get("method", "GET")).upper() not in {"GET", "POST", "PUT", "PATCH", "DELETE"}:
            raise bad("method must be an HTTP verb")
        if not isinstance(d.get("headers") or {}, dict):
            raise bad("headers must be a mapping")
        used = set(_PLACEHOLDER.findall(d["url"]))
    else:
        raise bad("kind must be command or http")
    missing = sorted(u for u in used - set(args) if not u.startswith(_STATE))
    if missing:
        raise bad(f"placeholders {missing} are not in args")
    return dict(d)


def check_definitions(value: object) -> list[dict[str, object]]:
    """Validate the ``yaml_tools`` list (errors name the tool and the key)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError("a list of tool definitions")
    return [_check_one(i, d) for i, d in enumerate(value)]


def _schema(d: Definition) -> dict[str, object]:
    props = {k: {"type": v.get("type", "string"),
                 **({"description": v["description"]} if "description" in v else {})}
             for k, v in (d.get("args") or {}).items()}
    required = [k for k, v in (d.get("args") or {}).items() if "default" not in v]
    return {"type": "object", "properties": props, "required": required}


def _state_fields(d: Definition) -> tuple[Injection, ...]:
    """The ``{state.NAME}`` placeholders of a definition, as injected state fields."""
    templates = d["argv"] if d["kind"] == "command" else [d["url"]]
    names = sorted({m for t in templates for m in _PLACEHOLDER.findall(t) if m.startswith(_STATE)})
    return tuple(Injection(name, "field", name.removeprefix(_STATE)) for name in names)


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _fill(template: str, values: Mapping[str, object], quote_values: bool = False) -> str:
    def sub(m: re.Match[str]) -> str:
        text = _text(values[m.group(1)])
        return quote(text, safe="") if quote_values else text

    return _PLACEHOLDER.sub(sub, template)


def _fill_url(tool: str, template: str, values: Mapping[str, object]) -> str:
    """The URL with its placeholders filled (URL-encoded). A value filled into the path is one
    segment, never more: it may not hold ``/`` or ``\\``, nor make its segment ``.``, ``..`` or
    empty, so ``--state p=..`` or a model's ``../admin`` cannot climb out of the path."""
    start = template.index("://") + 3
    path_at = template.find("/", start)
    ends = [i for i in (template.find("?", start), template.find("#", start)) if i >= 0]
    path_end = min(ends, default=len(template))
    if path_at < 0 or path_at > path_end:
        return _fill(template, values, quote_values=True)
    segments = []
    for segment in template[path_at:path_end].split("/"):
        keys = _PLACEHOLDER.findall(segment)
        for key in keys:
            if "/" in _text(values[key]) or "\\" in _text(values[key]):
                raise ToolInputError(_escape(tool, key, values[key], "holds a path separator"))
        filled = _fill(segment, values, quote_values=True)
        if keys and filled in ("", ".", ".."):
            raise ToolInputError(_escape(tool, keys[0], values[keys[0]],
                                         f"makes the path segment {filled!r}"))
        segments.append(filled)
    return (_fill(template[:path_at], values, quote_values=True) + "/".join(segments)
            + _fill(template[path_end:], values, quote_values=True))


def _escape(tool: str, key: str, value: object, why: str) -> str:
    return (f"{tool}: the value {_text(value)[:80]!r} for {{{key}}} {why}, which would change "
            "the URL path; give one path segment (a name, not a path)")


def _with_defaults(d: Definition, kwargs: dict[str, object]) -> dict[str, object]:
    out = {k: v["default"] for k, v in (d.get("args") or {}).items() if "default" in v}
    return out | kwargs


def _command_tool(d: Definition, settings: Mapping[str, object]) -> Tool:
    cwd = tool_root(settings)
    timeout = float(d.get("timeout", 30))

    def run(**kwargs: object) -> str:
        values = _with_defaults(d, kwargs)
        argv = [_fill(item, values) for item in d["argv"]]
        try:
            from agentcli.tools.processes import run_bounded  # lazily: listing tools

            return run_bounded(argv, cwd=cwd, timeout=timeout, what=f"{d['name']} command",
                               max_output=20_000, trim=True)
        except FileNotFoundError:
            raise ToolInputError(f"{d['name']}: program {argv[0]!r} not found") from None

    return Tool(d["name"], d.get("description") or f"Runs {d['argv'][0]}", func=run,
                args_schema=_schema(d), injected=_state_fields(d))


def _expand_headers(d: Definition) -> dict[str, str]:
    headers = {}
    for key, raw in (d.get("headers") or {}).items():
        def env(m: re.Match[str], key: str = key) -> str:
            if m.group(1) not in os.environ:
                raise ToolLoadError(f"yaml tool {d['name']!r}: header {key} needs the "
                                    f"environment variable {m.group(1)}")
            return os.environ[m.group(1)]

        headers[str(key)] = _ENV.sub(env, str(raw))
    return headers


def _http_tool(d: Definition, settings: Mapping[str, object]) -> Tool:
    _expand_headers(d)  # fail at load time when a variable is missing
    method = str(d.get("method", "GET")).upper()
    in_url = set(_PLACEHOLDER.findall(d["url"]))
    allow_private = bool(d.get("allow_private_network")) or bool_setting(
        settings, "allow_private_network")

    def run(**kwargs: object) -> str:
        values = _with_defaults(d, kwargs)
        rest = {k: v for k, v in values.items() if k not in in_url and not k.startswith(_STATE)}
        url = _fill_url(d["name"], d["url"], values)
        in_query = method in ("GET", "DELETE")
        if in_query and rest:
            import httpx  # lazily: listing tools

            # merged, not passed as params=, which would drop a query the template has
            url = str(httpx.URL(url).copy_merge_params(cast("dict[str, str]", rest)))
        resp = fetch(method, url,
                     headers=_expand_headers(d), allow_private=allow_private,
                     timeout=float(d.get("timeout", 15)), json_body=None if in_query else rest)
        prefix = f"HTTP {resp.status}\n" if resp.status >= 400 else ""
        return prefix + resp.text + ("\n...[response cut]" if resp.truncated else "")

    return Tool(d["name"], d.get("description") or f"{method} {d['url']}", func=run,
                args_schema=_schema(d), injected=_state_fields(d))


def _build(d: Definition, llm: object = None, **settings: object) -> Tool:
    return _command_tool(d, settings) if d["kind"] == "command" else _http_tool(d, settings)


def yaml_specs(definitions: Iterable[Mapping[str, object]]) -> list[ToolSpec]:
    """A tool spec (source ``YAML``) for each definition ``check_definitions`` checked."""
    specs = []
    for checked in definitions:
        d = cast(Definition, checked)
        kind = d["kind"]
        dangerous = bool(d.get("dangerous", kind == "command" or
                               str(d.get("method", "GET")).upper() != "GET"))
        reason = (f"it runs {d['argv'][0]} with arguments the model picks" if kind == "command"
                  else f"it sends {d.get('method', 'GET')} requests to {d['url']}")
        specs.append(ToolSpec(d["name"], functools.partial(_build, d),
                              d.get("description") or f"{kind} tool", dangerous=dangerous,
                              danger_reason=reason if dangerous else "", source="YAML"))
    return specs
