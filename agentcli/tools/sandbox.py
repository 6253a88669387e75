"""Shared limits for tools that run things: a scrubbed environment, output caps, a root."""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

from agentcli.errors import ToolInputError, ToolLoadError
from agentcli.redact import is_secret_name

_PROVIDER_PREFIXES = ("OPENAI_", "ANTHROPIC_", "DASHSCOPE_", "DEEPSEEK_", "OPENROUTER_",
                      "AWS_", "AZURE_", "GOOGLE_", "GCP_", "HF_", "HUGGINGFACE", "GITHUB_",
                      "AGENT_")


def hide_own_environment() -> None:
    """Keep the programs this process starts from reading its secrets in
    ``/proc/PID/environ`` (``cat /proc/$PPID/environ`` would undo the scrubbed environment).

    Two layers, Linux only: the values of secret-looking variables are blanked in this
    process's original environment block, which is what that file shows (the values were
    read into memory at start-up); and the process is marked not dumpable, which hands its
    ``/proc`` files to root, as ssh-agent does.
    """
    global _hidden
    if _hidden or not sys.platform.startswith("linux"):
        return
    _hidden = True
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    with contextlib.suppress(OSError, ValueError, IndexError):
        _blank_secrets_in_environ_block(ctypes)


def _blank_secrets_in_environ_block(ctypes: ModuleType) -> None:
    stat = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
    start, end = int(stat[50 - 3]), int(stat[51 - 3])  # fields 50, 51: env_start, env_end
    block = ctypes.string_at(start, end - start)
    if block != Path("/proc/self/environ").read_bytes():
        return  # not the layout expected: touch nothing
    offset = 0
    for entry in block.split(b"\0"):
        name, eq, value = entry.partition(b"=")
        key = name.decode("utf-8", "replace")
        if eq and value and (is_secret_name(key) or key.upper().startswith(_PROVIDER_PREFIXES)):
            real = os.environ.get(key)
            if real is not None:  # the live environment (getenv, env=None children) keeps it
                os.putenv(key, real)  # in a fresh copy, outside the block
            ctypes.memmove(start + offset + len(name) + 1, b"*" * len(value), len(value))
        offset += len(entry) + 1


_hidden = False  # set once per process: what children can read never comes back


def scrubbed_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment minus anything that looks like a secret or a provider setting, for a
    child process (which, from now on, cannot read this process's environment either)."""
    hide_own_environment()
    source = os.environ if env is None else env
    return {
        k: v for k, v in source.items()
        if not is_secret_name(k) and not k.upper().startswith(_PROVIDER_PREFIXES)
    }


def cap_output(text: str, limit: int) -> str:
    """Cut ``text`` to ``limit`` characters with a visible marker."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n...[output cut at {limit:,} of {len(text):,} characters]"


def tool_root(settings: Mapping[str, object], key: str = "files_root") -> Path:
    """The directory tools are confined to (default: the current directory)."""
    raw = settings.get(key) or settings.get("files_root") or os.getcwd()
    root = Path(str(raw)).expanduser().resolve()
    if not root.is_dir():
        raise ToolLoadError(f"tool_settings {key}: {root} is not a directory")
    return root


_PATH_MAX, _NAME_MAX = 4096, 255  # Linux limits: longer paths fail in the OS anyway


def confined(root: Path, path: str) -> Path:
    """``path`` resolved inside ``root``; ``..``, outside absolute paths and escaping
    symlinks are refused."""
    if not isinstance(path, str) or not path.strip():
        raise ToolInputError("a path is required")
    shown = path if len(path) <= 200 else f"{path[:200]}... ({len(path):,} characters)"
    if len(path) > _PATH_MAX or any(len(part) > _NAME_MAX for part in path.split("/")):
        raise ToolInputError(f"refused: the path {shown!r} is too long (at most {_PATH_MAX:,} "
                             f"characters, {_NAME_MAX} per file or folder name)")
    if "\0" in path:
        raise ToolInputError(f"refused: the path {shown!r} contains a NUL character")
    try:
        candidate = Path(path.strip()).expanduser()
        if not candidate.is_absolute():
            candidate = root / candidate
        resolved = candidate.resolve()
    except (OSError, RuntimeError) as err:  # RuntimeError: a symlink loop on older Pythons
        raise ToolInputError(f"cannot use the path {shown!r}: {err}") from None
    if resolved != root and root not in resolved.parents:
        raise ToolInputError(
            f"refused: {path!r} is outside the allowed root {root} (paths with '..', "
            "absolute paths elsewhere and symlinks leading out are not allowed)"
        )
    return resolved


def float_setting(settings: Mapping[str, object], key: str, default: float) -> float:
    """A positive (finite) number tool setting, or a load error naming it."""
    value = settings.get(key, default)
    try:
        number = float(value) if isinstance(value, int | float | str) else math.nan
    except ValueError:
        number = math.nan
    if isinstance(value, bool) or not 0 < number < math.inf:  # nan fails too
        raise ToolLoadError(f"tool_settings {key} must be a positive number, got {value!r}")
    return number


def int_setting(settings: Mapping[str, object], key: str, default: int) -> int:
    """A positive integer tool setting (a number is cut to its integer), or a load error."""
    number = int(float_setting(settings, key, default))
    if number <= 0:
        raise ToolLoadError(f"tool_settings {key} must be a positive number, "
                            f"got {settings.get(key)!r}")
    return number


def bool_setting(settings: Mapping[str, object], key: str, default: bool = False) -> bool:
    """A boolean tool setting."""
    value = settings.get(key, default)
    if isinstance(value, str):
        return value.strip().lower() in {"1", "true", "yes", "on"}
    return bool(value)
