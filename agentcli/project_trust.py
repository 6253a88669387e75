"""Project files (``.env``, ``.mcp.json``) get the trust of the project's code, not yours.

A ``.env`` found above the working directory and a ``.mcp.json`` in it come with the project
you cloned. What each variable of a project ``.env`` may do is its trust class
(:data:`agentcli.config.TrustClass`): the row of the settings table for a setting,
:data:`agentcli.config.OTHER_VARIABLES` for the rest, ``trust`` for anything unknown.
``free`` variables load; ``trust`` ones load once you trust the file (``agent trust``, or "y"
on a terminal); ``never`` ones are ignored with one line on stderr. A ``.mcp.json``'s servers
all need trust.

Trust is kept per file in one store, keyed on the path as found (never resolved: a symlink
cannot borrow another project's trust) and the SHA-256 of the content, so a changed file is
asked about again; a "no" is kept the same way. Project files are read only when they are
regular files you own, not symlinks, at most :data:`MAX_INPUT_FILE_BYTES`. Your own
environment and ``~/.config/agentcli`` are not project files and stay fully trusted.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import field

from agentcli.config import FIELDS, OTHER_VARIABLES, TrustClass
from agentcli.errors import ConfigError
from agentcli.files import MAX_INPUT_FILE_BYTES
from agentcli.project_files import find_env_file, read_project_file, set_trust, trust_state
from agentcli.records import record
from agentcli.tools.registry import registry

_CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_OTEL_ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
_OTEL_SWITCHES = (*_OTEL_ENDPOINTS, "OTEL_TRACES_EXPORTER", "AGENT_OTEL")  # export on when set
_NEVER = "a project file may never set it; set it in your own environment or config"
# A project .env longer than this is refused before it is parsed: parsing and putenv() grow
# with it (30,000 lines cost seconds of CPU at every command), and no project needs as many.
MAX_ENV_LINES = 1_000
_LISTED = 10  # names shown in one warning line; the rest are counted


def _listed(names: list[str]) -> str:
    """``names`` joined for one line: the first :data:`_LISTED`, then how many more."""
    more = len(names) - _LISTED
    return ", ".join(names[:_LISTED]) + (f" and {more:,} more" if more > 0 else "")


# --- a project .env -----------------------------------------------------------------------

def trust_class(name: str) -> TrustClass:
    """What a project ``.env`` may do with the variable ``name``."""
    from agentcli.models.presets import PRESETS

    for spec in FIELDS.values():
        if spec.env == name:
            return spec.trust
    if name in OTHER_VARIABLES:
        return OTHER_VARIABLES[name][0]
    for preset in PRESETS.values():
        if name == preset.base_url_env:
            return "own-key"
        if name == preset.key_env:
            return "free"
    return "free" if name.endswith("_API_KEY") else "trust"


def _base_url_class(name: str, values: Mapping[str, str | None], environ: Mapping[str, str]
                    ) -> tuple[TrustClass, str]:
    """What the base URL ``name`` from this file may do, and why when it may not load freely:
    free only with the key of its provider from the same file; a provider that takes no key
    (custom/, a local server) would get your questions, so its endpoint needs trust; with
    your key it is never loaded."""
    from agentcli.models.presets import CUSTOM, PRESETS

    if name == "AGENT_BASE_URL":  # serves the model set with it
        model = values.get("AGENT_MODEL") if "AGENT_MODEL" not in environ else None
        provider = (model or "").partition("/")[0].strip().lower()
        preset = PRESETS.get(provider)
        if preset is None and provider != CUSTOM:
            return "never", ("a project file may set it only with AGENT_MODEL=provider/model "
                             "in the same file")
    else:
        preset = next(p for p in PRESETS.values() if p.base_url_env == name)
    if preset is None or preset.key_env is None:
        return "trust", ""
    if values.get(preset.key_env) and preset.key_env not in environ:
        return "free", ""
    if _have_key(preset.key_env, environ):
        return "never", (f"your {preset.name} key ({preset.key_env}, from your environment or "
                         "keys file) would be sent to the host it names; a project may point a "
                         "provider elsewhere only with a key it supplies itself")
    return "never", (f"a project may point {preset.name} elsewhere only with a key it supplies "
                     f"itself ({preset.key_env} in the same file), so that your key, once you "
                     "set one, is never sent to the host it names")


def _have_key(variable: str, environ: Mapping[str, str]) -> bool:
    """Whether you hold the key ``variable``: in your environment or the keys file."""
    from agentcli.keys import stored_key

    if environ.get(variable):
        return True
    try:
        return bool(stored_key(variable, environ))
    except ConfigError:  # none stored (or an unreadable file: no key reaches anyone)
        return False


def _tool_names(value: str) -> tuple[list[str], list[str], list[str]]:
    """AGENT_TOOLS split into (safe built-ins, others, dangerous ones)."""
    specs = registry()
    safe, other, dangerous = [], [], []
    for name in filter(None, (n.strip() for n in value.split(","))):
        spec = specs.get(name)
        if spec is None:
            other.append(name)
        elif spec.dangerous or any(
                specs[m].dangerous for m in spec.members if m in specs):
            dangerous.append(name)
        else:
            safe.append(name)
    return safe, other, dangerous


@record(frozen=False)
class ProjectEnv:
    """A project ``.env`` sorted by trust class (variables you set yourself left out)."""

    path: str
    data: bytes
    values: dict[str, str]  # every value in the file: all are secrets to redact
    free: dict[str, str] = field(default_factory=dict)
    needs_trust: dict[str, str] = field(default_factory=dict)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (what, why)


def _expand(path: str, raw: Iterable[tuple[str, str | None]]
            ) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The file's values with each ``${NAME}`` (or ``${NAME:-default}``) replaced by the value
    the same file gave NAME above it, never by your environment (python-dotenv's own
    interpolation reads ``os.environ``, which would hand the project your keys); and one
    (what, why) naming the references to names the file does not define, which expand to
    their default or ''. Expanded values past :data:`MAX_INPUT_FILE_BYTES` in all (a chain
    of ``${A}${A}`` doubles at each line) refuse the file."""
    from dotenv.variables import Literal, Variable, parse_variables

    values: dict[str, str] = {}
    unknown: list[str] = []
    size = 0
    for name, value in raw:  # in order: a name set again sees its value from above
        if value is None:
            continue
        pieces = []
        for atom in parse_variables(value) if "${" in value else [Literal(value)]:
            if isinstance(atom, Variable) and atom.name not in values:
                unknown.append(f"${{{atom.name}}} in {name}")
            pieces.append(atom.resolve(values))
            size += len(pieces[-1])
            if size > MAX_INPUT_FILE_BYTES:
                raise ConfigError(f"{path}: its ${{...}} expansions grow past "
                                  f"{MAX_INPUT_FILE_BYTES // 1024} KiB; a project .env that "
                                  "big is refused")
        values[name] = "".join(pieces)
    why = "a project file expands only names it defines above; it reads nothing of your environment"
    return values, [(_listed(unknown), why)] if unknown else []


def _check_text(path: str, data: bytes) -> None:
    """Refuse a ``.env`` no environment could hold (a NUL byte) or too long to parse cheaply."""
    if b"\0" in data:
        line = data[:data.index(b"\0")].count(b"\n") + 1
        raise ConfigError(f"{path} holds a NUL byte (line {line}), which no environment "
                          "variable can; remove it")
    lines = data.count(b"\n") + (not data.endswith(b"\n"))
    if lines > MAX_ENV_LINES:
        raise ConfigError(f"{path} has {lines:,} lines; a project .env longer than "
                          f"{MAX_ENV_LINES:,} lines is refused (set what you need in your "
                          "own environment)")


def read_env(path: str, environ: Mapping[str, str]) -> ProjectEnv:
    """Read and sort the project ``.env`` at ``path``; ``environ`` is your own environment."""
    from dotenv.parser import parse_stream

    data = read_project_file(path)
    _check_text(path, data)
    bindings = parse_stream(io.StringIO(data.decode("utf-8", "replace")))
    values, unknown = _expand(path, ((b.key, b.value) for b in bindings if b.key is not None))
    out = ProjectEnv(path, data, values, refused=unknown)
    for name, value in values.items():
        if name in environ:
            continue  # yours wins
        if not name or "=" in name:
            out.refused.append((repr(name), "no environment variable can have that name"))
            continue
        kind = trust_class(name)
        if kind == "safe-only":
            safe, other, dangerous = _tool_names(value)
            out.refused += [(f"{t} in {name}", "it is a dangerous tool, which a project file "
                             "may never add; name it with --tools yourself") for t in dangerous]
            if safe:
                out.free[name] = ",".join(safe)
            if other:
                out.needs_trust[name] = ",".join(safe + other)
            continue
        why = _NEVER
        if kind == "own-key":
            kind, why = _base_url_class(name, values, environ)
        if kind == "never":
            out.refused.append((name, why))
        else:
            (out.free if kind == "free" else out.needs_trust)[name] = value
    if "AGENT_BASE_URL" in out.needs_trust and "AGENT_MODEL" in out.free:
        # the pair: a model whose endpoint waits for trust waits with it (yours stays)
        out.needs_trust["AGENT_MODEL"] = out.free.pop("AGENT_MODEL")
    capture = environ.get(_CAPTURE) or out.free.get(_CAPTURE) or out.needs_trust.get(_CAPTURE)
    if (capture or "").strip().lower() in ("1", "true", "yes", "on"):
        for name in _OTEL_ENDPOINTS:
            if out.needs_trust.pop(name, None) is not None:
                out.refused.append((name, "content capture is on, so it would export your "
                                    "prompts and replies to the collector it names"))
    return out


def _otel_missing(accepted: dict[str, str], found: str) -> list[str]:
    """Take out of ``accepted`` what would switch OpenTelemetry export on when its packages
    are not installed: a project's wish for traces is not a reason to stop every run (your
    own is, with the install hint: agentcli/otel_export.py). One line naming them."""
    import importlib.util

    from agentcli.otel_export import INSTALL_HINT

    asks = [n for n in _OTEL_SWITCHES if (accepted.get(n) or "").strip().lower()
            not in ("", "0", "false", "no", "off", "none")]
    if not asks:
        return []
    try:
        if importlib.util.find_spec("opentelemetry.sdk") is not None:
            return []
    except (ImportError, ValueError):
        pass
    for name in asks:
        del accepted[name]
    return [f"{_listed(asks)} in {found} {'was' if len(asks) == 1 else 'were'} not loaded: "
            f"OpenTelemetry export needs the optional packages: {INSTALL_HINT}"]


def project_env(environ: Mapping[str, str],
                ask: Callable[[ProjectEnv], bool] | None = None,
                ) -> tuple[ProjectEnv | None, dict[str, str], list[str]]:
    """The project ``.env`` (if any), the variables it may set now, and one line per thing
    ignored. ``ask`` (on a terminal) is asked once per file content when something needs
    trust; its answer is kept. What a file you trusted may never set was listed by ``agent
    trust`` and is not repeated at every command. A file that cannot be read is a line, not
    a failure."""
    found = find_env_file()
    if not found:
        return None, {}, []
    try:
        env = read_env(found, environ)
    except ConfigError as err:
        return None, {}, [f"{err}; it was not loaded"]
    state = trust_state(found, env.data, environ)
    lines = [] if state == "trusted" else [
        f"{what} in {found} was ignored: {why}" for what, why in env.refused]
    accepted = dict(env.free)
    if env.needs_trust:
        if state == "unknown" and ask is not None:
            answer = ask(env)
            set_trust(found, answer, environ)
            state = "trusted" if answer else "declined"
        if state == "trusted":
            accepted.update(env.needs_trust)
        else:
            said = ("you said no to this file" if state == "declined"
                    else "the file is not trusted")
            lines.append(f"{_listed(sorted(env.needs_trust))} in {found} "
                         f"{'was' if len(env.needs_trust) == 1 else 'were'} not loaded: "
                         f"{said}; read it, then run `agent trust "
                         f"{os.path.dirname(found)}`")
    return env, accepted, lines + _otel_missing(accepted, found)
