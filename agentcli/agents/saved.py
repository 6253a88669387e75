"""A saved agent: its type and prompt settings in a YAML file (LangChain's ``agent_path``).

``executor.save_agent(PATH)`` writes one; ``initialize_agent(tools, llm, agent_path=PATH)``
builds the same agent over the tools and model given (neither is saved: a model holds keys).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.errors import ConfigError
from agentcli.files import read_small_text, write_atomic

if TYPE_CHECKING:
    from agentcli.agents.base import Agent

_SAVED = ("templates", "system_extra", "prompt_style")  # the agent settings a file keeps


def save_agent(agent: Agent, path: str | Path) -> None:
    """Write ``agent``'s type and prompt settings to ``path`` (YAML), whole."""
    import yaml

    values = {key: getattr(agent, key) for key in _SAVED}
    data = {"_type": agent.agent_type, **{k: v for k, v in values.items() if v and v != "full"}}
    write_atomic(Path(path).expanduser(), yaml.safe_dump(data, allow_unicode=True))


def load_agent_file(path: str | Path) -> tuple[str, dict[str, Any]]:
    """The agent type and keyword arguments a saved agent file holds."""
    import yaml

    from agentcli.yaml_loader import load_yaml

    text = read_small_text(path, "agent file", "give a file written by save_agent")
    try:
        data = load_yaml(text)
    except yaml.YAMLError:
        raise ConfigError(f"agent file {path} is not valid YAML; save it again") from None
    if not isinstance(data, dict) or not isinstance(data.get("_type"), str):
        raise ConfigError(f"agent file {path} has no '_type' (the agent type); "
                          "write it with executor.save_agent(PATH)")
    unknown = sorted(set(data) - {"_type", *_SAVED})
    if unknown:
        raise ConfigError(f"agent file {path} has unknown key(s) {unknown}; "
                          f"it may hold _type, {', '.join(_SAVED)}")
    return data.pop("_type"), data
