"""Settings: built-in defaults <- YAML file <- environment (.env) <- command-line flags.

Every value is checked in one table (:data:`FIELDS`); errors name the source (file, env
variable or flag), the key and what is allowed.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from agentcli.errors import ConfigError

Check = Callable[[Any], Any]


def _positive_int_or_none(v: Any) -> int | None:
    if v is None or (isinstance(v, str) and v.strip().lower() in {"none", "null", ""}):
        return None
    text = v.strip() if isinstance(v, str) else v
    if isinstance(text, str) and text.isdigit():
        text = int(text)
    if isinstance(text, bool) or not isinstance(text, int) or text <= 0:
        raise ValueError("a positive integer or null")
    return text


def _positive_float_or_none(v: Any) -> float | None:
    if v is None or (isinstance(v, str) and v.strip().lower() in {"none", "null", ""}):
        return None
    if isinstance(v, bool):
        raise ValueError("a positive number of seconds or null")
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise ValueError("a positive number of seconds or null") from None
    if f <= 0:
        raise ValueError("a positive number of seconds or null")
    return f


def _float_range(lo: float, hi: float) -> Check:
    def check(v: Any) -> float:
        if isinstance(v, bool):
            raise ValueError(f"a number from {lo} to {hi}")
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise ValueError(f"a number from {lo} to {hi}") from None
        if not lo <= f <= hi:
            raise ValueError(f"a number from {lo} to {hi}")
        return f

    return check


def _int_range(lo: int, hi: int) -> Check:
    def check(v: Any) -> int:
        if isinstance(v, bool) or (isinstance(v, str) and not v.strip().lstrip("-").isdigit()):
            raise ValueError(f"an integer from {lo} to {hi}")
        try:
            n = int(v)
        except (TypeError, ValueError):
            raise ValueError(f"an integer from {lo} to {hi}") from None
        if not lo <= n <= hi:
            raise ValueError(f"an integer from {lo} to {hi}")
        return n

    return check


def _bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in {"1", "true", "yes", "on"}:
        return True
    if isinstance(v, str) and v.strip().lower() in {"0", "false", "no", "off"}:
        return False
    raise ValueError("true or false")


def _bool_or_none(v: Any) -> bool | None:
    if v is None or (isinstance(v, str) and v.strip().lower() in {"none", "null", "auto", ""}):
        return None
    return _bool(v)


def _choice(*options: str) -> Check:
    def check(v: Any) -> str:
        if not isinstance(v, str) or v not in options:
            raise ValueError("one of " + ", ".join(options))
        return v

    return check


def _str_or_none(v: Any) -> str | None:
    if v is None:
        return None
    if not isinstance(v, str) or not v.strip():
        raise ValueError("a non-empty string or null")
    return v.strip()


def _name_list(v: Any) -> list[str]:
    if isinstance(v, str):
        return [s.strip() for s in v.split(",") if s.strip()]
    if isinstance(v, list) and all(isinstance(s, str) for s in v):
        return [s.strip() for s in v if s.strip()]
    raise ValueError("a list of names (or a comma-separated string)")


def _parsing_errors(v: Any) -> bool | str:
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        low = v.strip().lower()
        if low in {"true", "false"}:
            return low == "true"
        if v.strip():
            return v
    raise ValueError("true, false, or the text to send back to the model")


def _mapping(v: Any) -> dict[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise ValueError("a mapping of key: value")
    return dict(v)


def _tool_policy(v: Any) -> dict[str, str]:
    table = _mapping(v)
    for name, policy in table.items():
        if policy not in ("allow", "ask", "deny"):
            raise ValueError(f"a mapping of tool: allow|ask|deny (tool {name!r} has {policy!r})")
    return {str(k): str(p) for k, p in table.items()}


def _yaml_tools(v: Any) -> list[dict[str, Any]]:
    from agentcli.tools.yaml_tools import check_definitions

    return check_definitions(v)


def _mcp_servers(v: Any) -> dict[str, dict[str, Any]]:
    from agentcli.tools.mcp_tools import check_servers

    return check_servers(v)


def _path_list(v: Any) -> list[str]:
    return _name_list(v)


def _retry(v: Any) -> dict[str, float]:
    allowed = {"attempts", "backoff_base", "backoff_max"}
    if v is None:
        return {}
    if not isinstance(v, dict) or set(v) - allowed:
        raise ValueError("a mapping with attempts, backoff_base and/or backoff_max")
    out: dict[str, float] = {}
    for key, raw in v.items():
        if isinstance(raw, bool) or not isinstance(raw, int | float) or raw < 0:
            raise ValueError(f"a mapping whose {key} is a number >= 0")
        out[key] = int(raw) if key == "attempts" else float(raw)
    if out.get("attempts", 0) > 20:
        raise ValueError("a mapping whose attempts is at most 20")
    return out


@dataclass(frozen=True)
class Field:
    """One setting: how to check it, its environment variable, and a help line."""

    check: Check
    env: str | None
    help: str


FIELDS: dict[str, Field] = {
    "model": Field(_str_or_none, "AGENT_MODEL", "provider/model, e.g. openai/gpt-4o-mini"),
    "base_url": Field(_str_or_none, "AGENT_BASE_URL", "OpenAI-compatible endpoint override"),
    "agent": Field(_str_or_none, "AGENT_TYPE", "agent type (see `agent agents list`)"),
    "tools": Field(_name_list, "AGENT_TOOLS", "tool names to load"),
    "allow": Field(_name_list, "AGENT_ALLOW", "dangerous tools allowed by name"),
    "allow_dangerous_tools": Field(_bool, "AGENT_ALLOW_DANGEROUS_TOOLS", "allow every tool"),
    "max_iterations": Field(_positive_int_or_none, "AGENT_MAX_ITERATIONS", "step limit"),
    "max_execution_time": Field(_positive_float_or_none, "AGENT_MAX_TIME", "seconds limit"),
    "early_stopping_method": Field(
        _choice("force", "generate"), "AGENT_EARLY_STOPPING", "what to do at a limit"
    ),
    "handle_parsing_errors": Field(
        _parsing_errors, "AGENT_HANDLE_PARSING_ERRORS", "send parse errors back to the model"
    ),
    "max_observation_chars": Field(_int_range(200, 10_000_000), None, "observation size cap"),
    "temperature": Field(_float_range(0.0, 2.0), "AGENT_TEMPERATURE", "sampling temperature"),
    "request_timeout": Field(_float_range(0.1, 3600), "AGENT_TIMEOUT", "model read timeout (s)"),
    "max_retries": Field(_int_range(0, 20), "AGENT_MAX_RETRIES", "retries on 429/5xx/timeouts"),
    "verbose": Field(_bool, "AGENT_VERBOSE", "print the Thought/Action/Observation trace"),
    "stream": Field(_bool, "AGENT_STREAM", "stream tokens from the model"),
    "tool_settings": Field(_mapping, None, "settings passed to tools (base URLs, limits)"),
    "tool_policy": Field(_tool_policy, None, "per dangerous tool: allow, ask (default) or deny"),
    "approve": Field(_choice("ask", "auto"), "AGENT_APPROVE", "ask before dangerous calls; auto"),
    "tools_module": Field(_path_list, "AGENT_TOOLS_MODULE", "Python files defining @tool tools"),
    "yaml_tools": Field(_yaml_tools, None, "command and http tools declared in YAML"),
    "mcp_servers": Field(_mcp_servers, None, "MCP servers over stdio: {name: {command, args}}"),
    "retry": Field(_retry, None, "retries: {attempts, backoff_base, backoff_max} (seconds)"),
    "fallback_models": Field(_name_list, "AGENT_FALLBACK_MODELS", "models to try on failure"),
    "cache": Field(_bool, "AGENT_CACHE", "cache model responses in SQLite"),
    "cache_path": Field(_str_or_none, "AGENT_CACHE_PATH", "response cache file"),
    "max_tokens": Field(_positive_int_or_none, "AGENT_MAX_TOKENS", "token budget per run"),
    "max_cost": Field(_positive_float_or_none, "AGENT_MAX_COST", "USD budget per run"),
    "prices": Field(_str_or_none, "AGENT_PRICES", "YAML price table layered on the built-in"),
    "self_ask_tool": Field(
        _str_or_none, "AGENT_SELF_ASK_TOOL", "the search tool of self-ask-with-search"
    ),
    "profile": Field(_str_or_none, "AGENT_PROFILE", "profile to apply from `profiles:`"),
    "memory": Field(
        _choice("auto", "none", "buffer", "window", "tokens", "summary"), "AGENT_MEMORY",
        "chat memory kind (auto: buffer when the agent type can use memory)",
    ),
    "memory_k": Field(_int_range(1, 1000), "AGENT_MEMORY_K", "turns kept by window memory"),
    "memory_max_tokens": Field(
        _int_range(50, 1_000_000), "AGENT_MEMORY_MAX_TOKENS", "token budget of tokens memory"
    ),
    "db_path": Field(_str_or_none, "AGENT_DB", "SQLite file for sessions and run logs"),
    "structured_actions": Field(
        _choice("auto", "on", "off"), "AGENT_STRUCTURED_ACTIONS",
        "constrain action blobs with a JSON Schema (auto: where the server supports it)",
    ),
    "local_max_tokens": Field(
        _positive_int_or_none, "AGENT_LOCAL_MAX_TOKENS", "reply cap per request to a local server"
    ),
    "prompt_style": Field(
        _choice("auto", "full", "compact"), "AGENT_PROMPT_STYLE",
        "prompt variant (auto: compact for small local models)",
    ),
    "compact_below_b": Field(
        _float_range(0.0, 1000.0), None, "auto prompt_style: compact below this size (billions)"
    ),
    "markdown": Field(_bool_or_none, "AGENT_MARKDOWN", "render answers as Markdown (null: auto)"),
    "profiles": Field(_mapping, None, "named groups of settings"),
}


@dataclass(frozen=True)
class Settings:
    """The effective settings of one command."""

    model: str | None = None
    base_url: str | None = None
    agent: str | None = "chat-zero-shot-react-description"
    tools: list[str] = field(default_factory=lambda: ["llm-math"])
    allow: list[str] = field(default_factory=list)
    allow_dangerous_tools: bool = False
    max_iterations: int | None = 15
    max_execution_time: float | None = None
    early_stopping_method: str = "force"
    handle_parsing_errors: bool | str = True
    max_observation_chars: int = 8_000
    temperature: float = 0.0
    request_timeout: float = 60.0
    max_retries: int = 3
    verbose: bool = True
    stream: bool = False
    tool_settings: dict[str, Any] = field(default_factory=dict)
    tool_policy: dict[str, str] = field(default_factory=dict)
    approve: str = "ask"
    tools_module: list[str] = field(default_factory=list)
    yaml_tools: list[dict[str, Any]] = field(default_factory=list)
    mcp_servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    retry: dict[str, float] = field(default_factory=dict)
    fallback_models: list[str] = field(default_factory=list)
    cache: bool = False
    cache_path: str | None = None
    max_tokens: int | None = None
    max_cost: float | None = None
    prices: str | None = None
    self_ask_tool: str | None = None
    profile: str | None = None
    profiles: dict[str, Any] = field(default_factory=dict)
    memory: str = "auto"
    memory_k: int = 5
    memory_max_tokens: int = 2_000
    db_path: str | None = None
    structured_actions: str = "auto"
    local_max_tokens: int | None = 1024
    prompt_style: str = "auto"
    compact_below_b: float = 4.0
    markdown: bool | None = None
    sources: dict[str, str] = field(default_factory=dict, compare=False)


def _checked(key: str, value: Any, where: str) -> Any:
    spec = FIELDS.get(key)
    if spec is None:
        close = difflib.get_close_matches(key, list(FIELDS), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(
            f"{where}: unknown key {key!r}{hint}; allowed keys: {', '.join(FIELDS)}"
        )
    try:
        return spec.check(value)
    except ValueError as err:
        raise ConfigError(f"{where}: {key!r} must be {err}, got {value!r}") from None


def read_yaml(path: Path) -> dict[str, Any]:
    """Read a YAML mapping; errors name the file and the line."""
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"config file {path} does not exist; check --config or $AGENT_CONFIG"
        ) from None
    except OSError as err:
        raise ConfigError(f"cannot read config file {path}: {err.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or "invalid YAML"
        raise ConfigError(f"{path}{where}: {problem}; fix the YAML syntax") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of key: value")
    return data


def default_config_path(env: Mapping[str, str]) -> Path | None:
    """``$AGENT_CONFIG``, else ``~/.config/agentcli/config.yaml`` if it exists."""
    if env.get("AGENT_CONFIG"):
        return Path(env["AGENT_CONFIG"]).expanduser()
    base = Path(env.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    candidate = base / "agentcli" / "config.yaml"
    return candidate if candidate.is_file() else None


def load_settings(
    config_path: str | Path | None = None,
    *,
    flags: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """Merge defaults, a YAML file, the environment and flags (None flags are ignored)."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    path = Path(config_path).expanduser() if config_path else default_config_path(env)
    file_data: dict[str, Any] = read_yaml(path) if path is not None else {}
    for key, raw in file_data.items():
        values[key] = _checked(str(key), raw, str(path))
        sources[key] = str(path)
    env_values: dict[str, Any] = {}
    for key, spec in FIELDS.items():
        if spec.env and env.get(spec.env, "") != "":
            env_values[key] = _checked(key, env[spec.env], f"environment {spec.env}")
    flag_values = {
        k: _checked(k, v, f"--{k.replace('_', '-')}")
        for k, v in (flags or {}).items() if v is not None
    }
    profile = flag_values.get("profile") or env_values.get("profile") or values.get("profile")
    if profile:
        profiles = values.get("profiles", {})
        if profile not in profiles:
            known = ", ".join(profiles) or "none defined"
            raise ConfigError(f"unknown profile {profile!r} (profiles in the config: {known})")
        if not isinstance(profiles[profile], dict):
            raise ConfigError(f"{path}: profile {profile!r} must be a mapping of settings")
        for key, raw in profiles[profile].items():
            if key in ("profiles", "profile"):
                raise ConfigError(f"{path}: profile {profile!r} cannot set {key!r}")
            values[key] = _checked(str(key), raw, f"{path}: profiles.{profile}")
            sources[key] = f"profile {profile}"
    for layer, label in ((env_values, "environment"), (flag_values, "flag")):
        for key, value in layer.items():
            values[key] = value
            sources[key] = label
    names = {f.name for f in fields(Settings)}
    return replace(Settings(), **{k: v for k, v in values.items() if k in names}, sources=sources)
