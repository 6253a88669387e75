"""Follow the parameter ``question`` from ``cli/running.py:execute`` through a real run.

    python bench/follow_question.py

Runs ``agent run "What is 25% of 300?"`` in this process against the offline demo replay
(no model configured, so no traffic leaves the machine) under a profiler hook, and records
every call of an agentcli function that receives the question's text as an argument, and every
return of such a function whose value carries the text (as itself, or in a tuple, list, dict
or object attribute one level down). Each distinct edge counts once. A call "back up a layer"
goes from a module to one on a higher floor of ``tests/core/test_layers.py``.
Issue 32's targets: at most 3 calls back up a layer and at most 10 returns.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.core.test_layers import FLOORS, floor_of  # noqa: E402

QUESTION = "What is 25% of 300?"


def _module(frame: FrameType) -> str | None:
    name = frame.f_globals.get("__name__", "")
    return name if isinstance(name, str) and name.startswith("agentcli") else None


def _carries(value: Any) -> bool:
    if isinstance(value, str):
        return QUESTION in value
    if isinstance(value, tuple | list):
        return any(isinstance(v, str) and QUESTION in v for v in value)
    if isinstance(value, dict):
        return any(isinstance(v, str) and QUESTION in v for v in value.values())
    fields = getattr(value, "__dict__", None)
    return isinstance(fields, dict) and any(
        isinstance(v, str) and QUESTION in v for v in fields.values())


def _receives(frame: FrameType) -> bool:
    code = frame.f_code
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    return any(_carries(frame.f_locals.get(n)) for n in names)


def follow() -> tuple[list[tuple[str, str, bool]], list[str]]:
    """The call edges (caller, callee, up a floor?) and the returning functions."""
    calls: dict[tuple[str, str], bool] = {}
    returns: dict[str, None] = {}
    started = [False]  # set on the main thread before the portal's thread sees a call

    def hook(frame: FrameType, event: str, arg: Any) -> None:
        module = _module(frame)
        if module is None or event not in ("call", "return"):
            return
        where = f"{module}:{frame.f_code.co_name}"
        if event == "call":
            if frame.f_code.co_name == "execute" and module == "agentcli.cli.running":
                started[0] = True
            if not started[0] or not _receives(frame):
                return
            caller = frame.f_back
            while caller is not None and _module(caller) is None:
                caller = caller.f_back
            if caller is None:
                return
            source = _module(caller) or ""
            low, high = floor_of(source), floor_of(module)
            up = low is not None and high is not None and high > low
            calls.setdefault((f"{source}:{caller.f_code.co_name}", where), up)
        elif started[0] and _receives(frame) and _carries(arg):
            returns.setdefault(where, None)

    from agentcli.cli.app import main

    sys.argv = ["agent", "run", QUESTION]
    threading.setprofile(hook)  # the run goes on the portal's thread, started after this
    sys.setprofile(hook)
    try:
        main()
    except SystemExit:
        pass
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return [(a, b, up) for (a, b), up in calls.items()], list(returns)


def main() -> None:
    home = tempfile.mkdtemp()
    for key in list(os.environ):
        if key.endswith(("_API_KEY", "_BASE_URL")) or key.startswith("AGENT_"):
            del os.environ[key]
    os.environ.update({"HOME": home, "XDG_CONFIG_HOME": home, "XDG_DATA_HOME": home,
                       "XDG_CACHE_HOME": home, "OLLAMA_BASE_URL": "http://127.0.0.1:9"})
    os.chdir(home)
    calls, returns = follow()
    names = [n for n, _ in FLOORS]
    up = [(a, b) for a, b, is_up in calls if is_up]
    print(f"calls that receive the question     {len(calls):>4}")
    print(f"  of them back up a layer           {len(up):>4}")
    for a, b in up:
        print(f"    {a} ({names[floor_of(a.split(':')[0]) or 0]}) -> "
              f"{b} ({names[floor_of(b.split(':')[0]) or 0]})")
    print(f"returns that carry the question     {len(returns):>4}")
    for where in returns:
        print(f"    {where}")


if __name__ == "__main__":
    main()
