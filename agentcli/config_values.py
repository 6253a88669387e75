"""The value checks of the settings table (:data:`agentcli.config.FIELDS`): each takes a
raw value (YAML, an environment string or a flag) and returns it checked, or raises
ValueError saying what is allowed."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

Check = Callable[[object], object]


def _null(v: object, *also: str) -> bool:
    """None, or a string spelling it ("none", "null", empty, and ``also``)."""
    return v is None or (isinstance(v, str) and v.strip().lower() in {"none", "null", "", *also})


def _number(v: object, convert: Callable[[str | int | float], float], what: str) -> float:
    """``convert(v)`` for a number or numeric string (never a bool), else ValueError(what)."""
    if isinstance(v, bool) or not isinstance(v, str | int | float):
        raise ValueError(what)
    try:
        return convert(v)
    except (ValueError, OverflowError):
        raise ValueError(what) from None


def positive_int_or_none(v: object) -> int | None:
    if _null(v):
        return None
    text = v.strip() if isinstance(v, str) else v
    if isinstance(text, str) and text.isdigit():
        text = int(text)
    if isinstance(text, bool) or not isinstance(text, int) or text <= 0:
        raise ValueError("a positive integer or null")
    return text


def positive_float_or_none(v: object) -> float | None:
    if _null(v):
        return None
    f = _number(v, float, "a positive number of seconds or null")
    if not math.isfinite(f) or f <= 0:  # nan, inf, zero and negatives are all mistakes
        raise ValueError("a positive, finite number or null")
    return f


def float_range(lo: float, hi: float) -> Check:
    def check(v: object) -> float:
        f = _number(v, float, f"a number from {lo} to {hi}")
        if not lo <= f <= hi:  # also false for nan
            raise ValueError(f"a number from {lo} to {hi}")
        return f

    return check


def int_range(lo: int, hi: int) -> Check:
    def check(v: object) -> int:
        if isinstance(v, str) and not v.strip().lstrip("-").isdigit():
            raise ValueError(f"an integer from {lo} to {hi}")
        n = int(_number(v, int, f"an integer from {lo} to {hi}"))
        if not lo <= n <= hi:
            raise ValueError(f"an integer from {lo} to {hi}")
        return n

    return check


def boolean(v: object) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in {"1", "true", "yes", "on"}:
        return True
    if isinstance(v, str) and v.strip().lower() in {"0", "false", "no", "off"}:
        return False
    raise ValueError("true or false")


def bool_or_none(v: object) -> bool | None:
    return None if _null(v, "auto") else boolean(v)


def choice(*options: str) -> Check:
    def check(v: object) -> str:
        if isinstance(v, bool) and {"on", "off"} <= set(options):
            v = "on" if v else "off"  # YAML 1.1 reads a bare on/off (yes/no) as a boolean
        if not isinstance(v, str) or v not in options:
            raise ValueError("one of " + ", ".join(options))
        return v

    return check


def str_or_none(v: object) -> str | None:
    if v is None:
        return None
    if not isinstance(v, str) or not v.strip():
        raise ValueError("a non-empty string or null")
    return v.strip()


def name_list(v: object) -> list[str]:
    if isinstance(v, str):
        return [s.strip() for s in v.split(",") if s.strip()]
    if isinstance(v, list) and all(isinstance(s, str) for s in v):
        return [s.strip() for s in v if s.strip()]
    raise ValueError("a list of names (or a comma-separated string)")


def parsing_errors(v: object) -> bool | str:
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        low = v.strip().lower()
        if low in {"true", "false"}:
            return low == "true"
        if v.strip():
            return v
    raise ValueError("true, false, or the text to send back to the model")


def mapping(v: object) -> dict[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise ValueError("a mapping of key: value")
    return dict(v)


def tool_policy(v: object) -> dict[str, str]:
    table = mapping(v)
    for name, policy in table.items():
        if policy not in ("allow", "ask", "deny"):
            raise ValueError(f"a mapping of tool: allow|ask|deny (tool {name!r} has {policy!r})")
    return {str(k): str(p) for k, p in table.items()}


def yaml_tools(v: object) -> list[dict[str, Any]]:
    from agentcli.tools.yaml_tools import check_definitions

    return check_definitions(v)


def retry(v: object) -> dict[str, float]:
    allowed = {"attempts", "backoff_base", "backoff_max"}
    if v is None:
        return {}
    if not isinstance(v, dict) or set(v) - allowed:
        raise ValueError("a mapping with attempts, backoff_base and/or backoff_max")
    out: dict[str, float] = {}
    for key, raw in v.items():
        if (isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw)
                or raw < 0):
            raise ValueError(f"a mapping whose {key} is a number >= 0")
        out[key] = int(raw) if key == "attempts" else float(raw)
    if out.get("attempts", 0) > 20:
        raise ValueError("a mapping whose attempts is at most 20")
    return out


def aliases(v: object) -> dict[str, str]:
    table = mapping(v)
    for name, target in table.items():
        if not isinstance(target, str) or ("/" not in target and ":" not in target):
            raise ValueError(f"a mapping of alias: provider/model (alias {name!r} has {target!r})")
        if "/" in str(name) or ":" in str(name):
            raise ValueError(f"a mapping whose aliases have no '/' or ':' (got {name!r})")
    return {str(k): str(t).strip() for k, t in table.items()}


def model_options(v: object) -> dict[str, Any]:
    from agentcli.models.options import check_options

    return check_options(v)
