"""Checking ``initialize_agent(..., agent_kwargs=..., **executor_options)`` arguments.

Unknown ``agent_kwargs`` keys are an error (LangChain silently ignores them, so a typo such as
``self_ask_tools`` does nothing). The keys an agent type accepts are read from the keyword-only
parameters of its class's ``__init__`` chain, so they are never listed twice. The seed's
``verbose=True`` executor option is accepted and returned separately for the caller to honour.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from agentcli.errors import ConfigError


def accepted_agent_kwargs(agent_cls: type) -> set[str]:
    """The keyword-only parameters of ``agent_cls.__init__`` and its bases."""
    names: set[str] = set()
    for cls in agent_cls.__mro__:
        init = cls.__dict__.get("__init__")
        if init is None or cls is object:
            continue
        for param in inspect.signature(init).parameters.values():
            if param.kind is inspect.Parameter.KEYWORD_ONLY:
                names.add(param.name)
    return names


def check_agent_kwargs(
    agent_type: str, agent_cls: type, agent_kwargs: Mapping[str, Any] | None
) -> dict[str, Any]:
    """``agent_kwargs`` as a dict; an unknown key raises one ConfigError naming it."""
    given = dict(agent_kwargs or {})
    accepted = accepted_agent_kwargs(agent_cls)
    unknown = sorted(set(given) - accepted)
    if unknown:
        raise ConfigError(
            f"initialize_agent: unknown agent_kwargs {', '.join(map(repr, unknown))} for "
            f"{agent_type}; it accepts: {', '.join(sorted(accepted)) or 'none'}"
        )
    return given


def pop_verbose(executor_options: dict[str, Any]) -> bool:
    """Remove the seed's ``verbose`` option from the executor options and return it."""
    value = executor_options.pop("verbose", False)
    if not isinstance(value, bool):
        raise ConfigError(f"initialize_agent: verbose must be true or false, got {value!r}")
    return value
