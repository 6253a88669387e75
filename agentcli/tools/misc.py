"""Small tools: ``human`` (ask the person at the terminal), ``current_datetime``, ``sleep``."""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import datetime

from agentcli import deadline
from agentcli.errors import DeadlineExceeded, ToolInputError
from agentcli.tools.base import Tool
from agentcli.tools.sandbox import float_setting

HUMAN_DESCRIPTION = (
    "You can ask a human for guidance when you think you got stuck or you are not sure what "
    "to do next. The input should be a question for the human."
)


def human(settings: Mapping[str, object]) -> Tool:
    """``human_input`` (a function asking the person) is injected by the CLI; without it (no
    terminal) the tool refuses."""
    human_input = settings.get("human_input")

    def ask(question: str) -> str:
        if not callable(human_input):
            raise ToolInputError("no person is at a terminal to answer; continue without asking")
        return str(human_input(question))

    return Tool("human", HUMAN_DESCRIPTION, func=ask)


def current_datetime(settings: Mapping[str, object]) -> Tool:
    """The current local date and time; the input is ignored."""
    def now(_: str = "") -> str:
        return datetime.now().astimezone().isoformat(timespec="seconds")

    return Tool("current_datetime", "Returns the current local date and time (ISO 8601). "
                "Input is ignored.", func=now)


def sleep(settings: Mapping[str, object]) -> Tool:
    """Wait a number of seconds, at most ``sleep_max`` and the run's time left."""
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
