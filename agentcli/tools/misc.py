"""Small tools: ``human`` (ask the person at the terminal), ``current_datetime``, ``sleep``."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from agentcli import deadline
from agentcli.errors import DeadlineExceeded, ToolInputError
from agentcli.tools.base import Tool
from agentcli.tools.sandbox import float_setting

HUMAN_DESCRIPTION = (
    "You can ask a human for guidance when you think you got stuck or you are not sure what "
    "to do next. The input should be a question for the human."
)


def _human(human_input: Callable[[str], str] | None = None, **_: Any) -> Tool:
    """``human_input`` is injected by the CLI; without it (no terminal) the tool refuses."""

    def ask(question: str) -> str:
        if human_input is None:
            raise ToolInputError("no person is at a terminal to answer; continue without asking")
        return human_input(question)

    return Tool("human", HUMAN_DESCRIPTION, func=ask)


def _datetime(**_: Any) -> Tool:
    def now(_: str = "") -> str:
        return datetime.now().astimezone().isoformat(timespec="seconds")

    return Tool("current_datetime", "Returns the current local date and time (ISO 8601). "
                "Input is ignored.", func=now)


def _sleep(**settings: Any) -> Tool:
    limit = float_setting(settings, "sleep_max", 60.0)

    def nap(seconds: str) -> str:
        try:
            value = float(str(seconds).strip() or "1")
        except ValueError:
            raise ToolInputError(f"sleep needs a number of seconds, got {seconds!r}") from None
        if not 0 <= value <= limit:
            raise ToolInputError(f"sleep accepts 0 to {limit:g} seconds, got {value:g}")
        time.sleep(deadline.bound(value) or 0.0)
        if deadline.expired():
            raise DeadlineExceeded("sleep was cut at the run's time limit")
        return f"Slept for {value:g} seconds."

    return Tool("sleep", "Make the agent sleep for a while. Input: a number of seconds.",
                func=nap)
