"""initialize_agent's argument checks (wired by the lead into agents/__init__.py)."""

from __future__ import annotations

import pytest

from agentcli.agent_kwargs import accepted_agent_kwargs, check_agent_kwargs, pop_verbose
from agentcli.agents import agent_class
from agentcli.errors import ConfigError


def test_accepted_keys_come_from_the_class_signatures() -> None:
    assert "stream" in accepted_agent_kwargs(agent_class("chat-zero-shot-react-description"))
    self_ask = accepted_agent_kwargs(agent_class("self-ask-with-search"))
    assert {"stream", "self_ask_tool"} <= self_ask


def test_unknown_key_is_one_line_naming_it() -> None:
    cls = agent_class("chat-zero-shot-react-description")
    with pytest.raises(ConfigError, match=r"unknown agent_kwargs 'prefix' for "
                       r"chat-zero-shot-react-description; it accepts: .*stream") as info:
        check_agent_kwargs("chat-zero-shot-react-description", cls, {"prefix": "x"})
    assert "\n" not in str(info.value)
    assert check_agent_kwargs("self-ask-with-search", agent_class("self-ask-with-search"),
                              {"self_ask_tool": "search"}) == {"self_ask_tool": "search"}


def test_verbose_is_accepted_and_removed() -> None:
    options = {"verbose": True, "max_iterations": 3}
    assert pop_verbose(options) is True and options == {"max_iterations": 3}
    assert pop_verbose({}) is False
    with pytest.raises(ConfigError, match="verbose must be true or false"):
        pop_verbose({"verbose": "loud"})
