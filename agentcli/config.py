"""Settings: built-in defaults <- YAML file <- environment (.env) <- command-line flags.

Every value is checked in one table (:data:`FIELDS`); errors name the source (file, env
variable or flag), the key and what is allowed.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping
from dataclasses import field, fields, replace
from pathlib import Path
from typing import Any, Literal

from agentcli import config_values as cv  # the value checks of the table below
from agentcli.config_values import Check
from agentcli.errors import ConfigError
from agentcli.files import read_small_text
from agentcli.paths import user_config_file
from agentcli.records import record

# What a project's .env may do with a setting (agentcli/project_trust.py applies it):
# free: set it; trust: set it once the file is trusted (`agent trust`); never: ignored;
# safe-only: names of safe built-in tools are free, dangerous ones never, others need trust;
# own-key: a base URL, only with the key of its provider from the same file (never yours);
# for a provider that takes no key (custom/, a local server) it needs trust.
TrustClass = Literal["free", "trust", "never", "safe-only", "own-key"]


def _mcp_servers(value: object) -> object:
    """The ``mcp_servers`` check, the MCP client's own (loaded only when a config sets some)."""
    from agentcli.mcp.config import check_servers

    return check_servers(value)


@record
class Field:
    """One setting: how to check it, its environment variable, a help line, and what a
    project's ``.env`` may do with that variable."""

    check: Check
    env: str | None
    help: str
    trust: TrustClass = "free"


def _setting(check: Check, env: str | None, help: str, default: Any = None,
             *, factory: Callable[[], Any] | None = None, trust: TrustClass = "free") -> Any:
    """A :class:`Settings` field carrying its :class:`Field` (the one settings table)."""
    meta = {"field": Field(check, env, help, trust)}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


CHAT_AGENT = "chat-conversational-react-description"  # `agent chat` when `agent` is unset
MEMORY_KINDS = ("auto", "none", "buffer", "window", "tokens", "summary")  # --memory


@record
class Settings:
    """The effective settings of one command; each field is one row of the settings table.

    ``configs/default.yaml`` and ``.env.example`` are generated from these rows
    (``python -m agentcli.config_docs --write``); a test checks they match.
    """

    model: str | None = _setting(
        cv.str_or_none, "AGENT_MODEL",
        "provider/model (e.g. openai/gpt-4o-mini, dashscope/qwen-turbo, ollama/qwen2.5) or an "
        "alias; null: a local Ollama if one runs, else the offline demo")
    base_url: str | None = _setting(
        cv.str_or_none, "AGENT_BASE_URL",
        "OpenAI-compatible endpoint for the model set with it (its provider and custom/ only)",
        trust="own-key")
    aliases: dict[str, str] = _setting(
        cv.aliases, None, "short model names: {q: dashscope/qwen-turbo}", factory=dict)
    model_options: dict[str, Any] = _setting(
        cv.model_options, None,
        "request body options: temperature, top_p, max_tokens, seed, frequency_penalty, "
        "presence_penalty; other body fields as extra.NAME", factory=dict)
    agent: str | None = _setting(
        cv.str_or_none, "AGENT_TYPE",
        "agent type (see `agent agents list`); null: chat-zero-shot-react-description for "
        f"run and batch, {CHAT_AGENT} for chat")
    system: str | None = _setting(
        cv.str_or_none, "AGENT_SYSTEM", "instructions added to the agent type's system prompt")
    prompt_file: str | None = _setting(
        cv.str_or_none, "AGENT_PROMPT_FILE",
        "a template file replacing the agent type's prompt (see `agent prompts show`)",
        trust="trust")
    tools: list[str] = _setting(
        cv.name_list, "AGENT_TOOLS", "tool names to load", factory=lambda: ["llm-math"],
        trust="safe-only")
    allow: list[str] = _setting(
        cv.name_list, "AGENT_ALLOW", "dangerous tools allowed by name", factory=list, trust="never")
    allow_dangerous_tools: bool = _setting(
        cv.boolean, "AGENT_ALLOW_DANGEROUS_TOOLS", "allow every dangerous tool", False,
        trust="never")
    max_iterations: int | None = _setting(
        cv.positive_int_or_none, "AGENT_MAX_ITERATIONS", "step limit", 15)
    max_execution_time: float | None = _setting(
        cv.positive_float_or_none, "AGENT_MAX_TIME", "time limit in seconds")
    early_stopping_method: str = _setting(
        cv.choice("auto", "force", "generate"), "AGENT_EARLY_STOPPING",
        "at a limit: auto (after a stall or the step limit, ask once for the answer when a tool "
        "already gave something useful), force (stop) or generate (always ask)", "auto")
    handle_parsing_errors: bool | str = _setting(
        cv.parsing_errors, "AGENT_HANDLE_PARSING_ERRORS",
        "send parse errors back to the model: true, false or the text to send", True)
    max_observation_chars: int = _setting(
        cv.int_range(200, 10_000_000), None, "observation size cap", 8_000)
    temperature: float = _setting(
        cv.float_range(0.0, 2.0), "AGENT_TEMPERATURE", "sampling temperature (0.0 - 2.0)", 0.0)
    request_timeout: float = _setting(
        cv.float_range(0.1, 86_400), "AGENT_TIMEOUT", "total seconds for one model response", 600.0)
    read_timeout: float = _setting(
        cv.float_range(0.1, 3600), "AGENT_READ_TIMEOUT", "seconds the model may send nothing", 60.0)
    max_retries: int = _setting(
        cv.int_range(0, 20), "AGENT_MAX_RETRIES", "retries on 429 / 5xx / timeouts", 3)
    verbose: bool = _setting(
        cv.boolean, "AGENT_VERBOSE", "print the Thought/Action/Observation trace", True)
    stream: bool = _setting(cv.boolean, "AGENT_STREAM", "stream tokens from the model", False)
    tool_settings: dict[str, Any] = _setting(
        cv.mapping, None, "settings passed to tools (base URLs, limits)", factory=dict)
    tool_policy: dict[str, str] = _setting(
        cv.tool_policy, None, "per dangerous tool: allow, ask (default) or deny", factory=dict)
    approve: str = _setting(
        cv.choice("ask", "auto"), "AGENT_APPROVE",
        "dangerous calls: ask before each, or auto (run them)", "ask", trust="never")
    tools_module: list[str] = _setting(
        cv.name_list, "AGENT_TOOLS_MODULE", "Python files defining @tool tools", factory=list,
        trust="never")
    yaml_tools: list[dict[str, Any]] = _setting(
        cv.yaml_tools, None, "command and http tools declared in YAML", factory=list)
    mcp_servers: dict[str, dict[str, Any]] = _setting(
        _mcp_servers, None, "MCP servers: {name: {command, args} | {url, headers}}", factory=dict)
    retry: dict[str, float] = _setting(
        cv.retry, None, "retries: {attempts, backoff_base, backoff_max} (seconds); attempts "
        "overrides max_retries", factory=dict)
    fallback_models: list[str] = _setting(
        cv.name_list, "AGENT_FALLBACK_MODELS", "models tried in order when the model fails",
        factory=list)
    cache: bool = _setting(cv.boolean, "AGENT_CACHE", "cache model responses in SQLite", False)
    cache_path: str | None = _setting(
        cv.str_or_none, "AGENT_CACHE_PATH",
        "response cache file (default $XDG_CACHE_HOME/agentcli/responses.sqlite)", trust="trust")
    max_tokens: int | None = _setting(
        cv.positive_int_or_none, "AGENT_MAX_TOKENS",
        "token budget per run, stops like the iteration limit (per request: "
        "model_options.max_tokens)")
    max_cost: float | None = _setting(
        cv.positive_float_or_none, "AGENT_MAX_COST", "USD budget per run (needs a price)")
    prices: str | None = _setting(
        cv.str_or_none, "AGENT_PRICES", "YAML price table layered on the built-in one",
        trust="trust")
    self_ask_tool: str | None = _setting(
        cv.str_or_none, "AGENT_SELF_ASK_TOOL", "the search tool of self-ask-with-search")
    profile: str | None = _setting(
        cv.str_or_none, "AGENT_PROFILE", "profile to apply from `profiles:`", trust="trust")
    profiles: dict[str, Any] = _setting(
        cv.mapping, None, "named groups of settings", factory=dict)
    memory: str = _setting(
        cv.choice(*MEMORY_KINDS), "AGENT_MEMORY",
        "chat memory: auto (the latest turns within memory_max_tokens, when the agent type "
        "reads memory), none, buffer, window, tokens or summary", "auto")
    memory_k: int = _setting(
        cv.int_range(1, 1000), "AGENT_MEMORY_K", "turns kept by window memory", 5)
    memory_max_tokens: int = _setting(
        cv.int_range(50, 1_000_000), "AGENT_MEMORY_MAX_TOKENS",
        "token budget of tokens memory (and of auto)", 4_000)
    db_path: str | None = _setting(
        cv.str_or_none, "AGENT_DB",
        "SQLite file for sessions and run logs (default $XDG_DATA_HOME/agentcli/agent.db)",
        trust="trust")
    state: dict[str, Any] = _setting(
        cv.mapping, None, "run state fields: {name: {type, default, input, output}}",
        factory=dict)
    stall_limit: int | None = _setting(
        cv.positive_int_or_none, "AGENT_STALL_LIMIT",
        "stop after this many identical replies in a row (null: never)", 3)
    structured_actions: str = _setting(
        cv.choice("auto", "on", "off"), "AGENT_STRUCTURED_ACTIONS",
        "constrain action blobs with a JSON Schema (auto: where the server supports it)", "auto")
    tool_media: str = _setting(
        cv.choice("auto", "on", "off"), "AGENT_TOOL_MEDIA",
        "send images/audio that tools return to the model (auto: for vision models)", "auto")
    local_max_tokens: int | None = _setting(
        cv.positive_int_or_none, "AGENT_LOCAL_MAX_TOKENS",
        "reply cap per request to a local server (null: none)", 1024)
    prompt_style: str = _setting(
        cv.choice("auto", "full", "compact"), "AGENT_PROMPT_STYLE",
        "prompt variant (auto: compact for small local models)", "auto")
    compact_below_b: float = _setting(
        cv.float_range(0.0, 1000.0), None,
        "auto prompt_style: compact below this model size (billions of parameters)", 4.0)
    markdown: bool | None = _setting(
        cv.bool_or_none, "AGENT_MARKDOWN", "render answers as Markdown (null: by content)")
    otel: bool | None = _setting(
        cv.bool_or_none, "AGENT_OTEL",
        "export OpenTelemetry traces and GenAI metrics (null: when an OTEL_* endpoint or "
        "exporter is set, or under opentelemetry-instrument)")
    sources: dict[str, str] = field(default_factory=dict, compare=False)
    # the provider ``base_url`` was set for (that of the model in force where it was set);
    # None: set with no model, so it serves only custom/ models and the default one
    base_url_owner: str | None = field(default=None, compare=False)

    def base_url_for(self, model: str | None) -> str | None:
        """The base URL a request to ``model`` goes to: the setting only for the provider it
        was set for (and custom/ models), so a provider's key never goes to another's host."""
        owned = _provider(model) in ("custom", self.base_url_owner) or (
            model is None and self.base_url_owner is None)
        return self.base_url if owned else None


def _provider(model: str | None) -> str | None:
    return model.strip().partition("/")[0] if model else None


FIELDS: dict[str, Field] = {
    f.name: f.metadata["field"] for f in fields(Settings) if "field" in f.metadata
}
# Variables read outside the settings table: what a project's .env may do with each (see
# TrustClass; settings carry theirs in their row) and what it does. The XDG_* ones are the
# directories (agentcli/paths.py).
OTHER_VARIABLES: dict[str, tuple[TrustClass, str]] = {
    "AGENT_CONFIG": ("never", "path of a YAML config file (read over the user config)"),
    "OPENBLAS_NUM_THREADS": (
        "free", "left alone when set; else the Calculator loads numexpr on one thread"),
    "AGENT_REALMODEL_CACHE": (
        "trust", "where tests/realmodel installs llama.cpp and SmolLM2 (tests only)"),
    "AGENT_SERVE_TOKEN": ("never", "bearer token `agent serve` requires (unset: a new one is "
                          "generated and printed at start)"),
    "FORCE_TERMINAL": (
        "free", "draw tables for a terminal even when stdout is piped (as Rich does)"),
    # where your traces go: trust, and never while content capture is on (project_trust.py)
    "OTEL_EXPORTER_OTLP_ENDPOINT": (
        "trust", "OpenTelemetry collector (OTLP); set: traces are exported"),
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": (
        "trust", "full OTLP traces URL (over the one above)"),
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": ("trust", "full OTLP metrics URL (GenAI metrics)"),
    "OTEL_EXPORTER_OTLP_PROTOCOL": (
        "free", "http/protobuf (default) or grpc (needs its exporter)"),
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": (
        "free", "as OTEL_EXPORTER_OTLP_PROTOCOL, for traces"),
    "OTEL_EXPORTER_OTLP_TIMEOUT": (
        "free", "milliseconds per export, retries included (default: 500)"),
    "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": ("free", "as OTEL_EXPORTER_OTLP_TIMEOUT, for traces"),
    "OTEL_TRACES_EXPORTER": (
        "trust", "otlp (default), console (stderr), none; set: traces are exported"),
    "OTEL_METRICS_EXPORTER": (
        "trust", "otlp, console, none (default: as OTEL_TRACES_EXPORTER)"),
    "OTEL_SERVICE_NAME": ("free", "service.name of exported spans (default agentcli)"),
    "OTEL_SDK_DISABLED": ("free", "true: no OpenTelemetry export, whatever else says"),
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": (
        "trust", "true: spans carry prompts, replies and tool text (redacted)"),
    "AGENT_TRUST_PROJECT_MCP": (
        "never", "1: trust the working directory's .mcp.json for this process"),
    "VISUAL": ("never", "the editor `agent templates edit` opens (else EDITOR)"),
    "EDITOR": ("never", "the editor `agent templates edit` opens when VISUAL is unset"),
    "XDG_CONFIG_HOME": (
        "never", "user config and stored keys: $XDG_CONFIG_HOME/agentcli (~/.config)"),
    "XDG_DATA_HOME": (
        "never", "sessions, run logs, model list cache: $XDG_DATA_HOME/agentcli"),
    "XDG_CACHE_HOME": ("never", "response cache: $XDG_CACHE_HOME/agentcli (~/.cache)"),
}
# Settings whose mapping values merge key by key across layers instead of replacing.
_MERGED = frozenset({"aliases", "model_options"})


def _checked(key: str, value: object, where: str) -> object:
    from agentcli.models.options import OptionError

    spec = FIELDS.get(key)
    if spec is None:
        close = difflib.get_close_matches(key, list(FIELDS), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(
            f"{where}: unknown key {key!r}{hint}; allowed keys: {', '.join(FIELDS)}"
        )
    try:
        return spec.check(value)
    except OptionError as err:
        raise ConfigError(f"{where}: {err}") from None
    except ValueError as err:
        raise ConfigError(f"{where}: {key!r} must be {err}, got {value!r}") from None


def resolve_alias(name: str, aliases: Mapping[str, str]) -> str:
    """``name`` itself when it is ``provider/model`` or ``kind:...``, else its alias target."""
    name = name.strip()
    if "/" in name or ":" in name:
        return name
    if name in aliases:
        return aliases[name]
    close = difflib.get_close_matches(name, list(aliases), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    known = ", ".join(sorted(aliases)) or "none defined"
    raise ConfigError(
        f"unknown model alias {name!r}{hint}; aliases: {known}; write provider/model "
        "(e.g. openai/gpt-4o-mini; agent models list shows them), or add one with "
        f"agent aliases set {name} PROVIDER/MODEL"
    )


def read_yaml(path: Path) -> dict[str, object]:
    """Read a YAML mapping; errors name the file and the line."""
    from agentcli.yaml_loader import load_mapping

    text = read_small_text(path, "config file", "check --config or $AGENT_CONFIG")
    return load_mapping(text, str(path), "fix the YAML syntax (a mapping of key: value)")


def config_files(config_path: str | Path | None, env: Mapping[str, str]) -> list[Path]:
    """The YAML files read, lowest precedence first: the user config, then --config (else
    ``$AGENT_CONFIG``)."""
    user = user_config_file(env)
    chosen = config_path or env.get("AGENT_CONFIG")
    chosen = Path(chosen).expanduser() if chosen else None
    files = [user] if user.is_file() else []
    if chosen is not None and (not files or chosen.resolve() != user.resolve()):
        files.append(chosen)
    return files


def load_settings(
    config_path: str | Path | None = None,
    *,
    flags: Mapping[str, object] | None = None,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """Merge defaults, the user config, a YAML file, the environment and flags.

    ``None`` flags are ignored. ``aliases`` and ``model_options`` merge key by key across
    layers; every other key is replaced by the layer above. Model aliases are resolved last.
    """
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    owner: str | None = None  # the model in force where base_url was last set

    def apply(layer: Mapping[str, object], label: str) -> None:
        nonlocal owner
        for key, value in layer.items():
            if key in _MERGED and isinstance(values.get(key), dict) and isinstance(value, dict):
                value = {**values[key], **value}
            values[key], sources[key] = value, label
        if "base_url" in layer:
            owner = values.get("model")

    def checked(data: Mapping[str, object], where: str) -> dict[str, object]:
        return {str(k): _checked(str(k), v, where) for k, v in data.items()}

    files = config_files(config_path, env)
    path = files[-1] if files else None
    for source in files:
        data = read_yaml(source)
        if "mcpServers" in data:  # the key other MCP clients use
            from agentcli.mcp.config import merge_config_keys

            data = merge_config_keys(data, str(source))
        apply(checked(data, str(source)), str(source))
    env_values = {key: _checked(key, env[spec.env], f"environment {spec.env}")
                  for key, spec in FIELDS.items() if spec.env and env.get(spec.env, "") != ""}
    flag_values = {k: _checked(k, v, "-o/--option" if k == "model_options"
                               else f"--{k.replace('_', '-')}")
                   for k, v in (flags or {}).items() if v is not None}
    profile = flag_values.get("profile") or env_values.get("profile") or values.get("profile")
    if profile:
        profiles = values.get("profiles", {})
        if profile not in profiles:
            known = ", ".join(profiles) or "none defined"
            raise ConfigError(f"unknown profile {profile!r} (profiles in the config: {known})")
        if not isinstance(profiles[profile], dict):
            raise ConfigError(f"{path}: profile {profile!r} must be a mapping of settings")
        for key in ("profiles", "profile"):
            if key in profiles[profile]:
                raise ConfigError(f"{path}: profile {profile!r} cannot set {key!r}")
        apply(checked(profiles[profile], f"{path}: profiles.{profile}"), f"profile {profile}")
    apply(env_values, "environment")
    apply(flag_values, "flag")
    aliases = values.get("aliases", {})
    if values.get("model"):
        values["model"] = resolve_alias(values["model"], aliases)
    if values.get("fallback_models"):
        values["fallback_models"] = [resolve_alias(m, aliases) for m in values["fallback_models"]]
    if sources.get("base_url") == "flag":  # given with this command: for its model
        owner = values.get("model")
    bound = _provider(resolve_alias(owner, aliases)) if owner else None
    return replace(Settings(), **values, sources=sources, base_url_owner=bound)
