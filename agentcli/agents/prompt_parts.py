"""LangChain's prompt options, as ``agent_kwargs``: parts of an agent type's main template.

``prefix`` (``system_message_prefix`` for chat types) is the text before the tool list,
``format_instructions`` the text between the tools and ``Begin!``, ``suffix``
(``system_message_suffix``) the rest; a part not given keeps the built-in text. The parts are
joined into one replacement template, checked like a ``--prompt`` file.
``human_message`` is the first user message of chat types (``{input}`` in it; the work
follows it as turns, so an ``{agent_scratchpad}`` in it must end it),
``input_variables`` the variables the caller expects the template to use (checked), and
``output_parser`` replaces the type's parser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentcli.agents.prompts import builtin_text, check_template, template_name, variables
from agentcli.errors import ConfigError

if TYPE_CHECKING:
    from agentcli.agents.base import Agent

_TEXT_PARTS = {"prefix": 0, "format_instructions": 1, "suffix": 2}
_CHAT_PARTS = {"system_message_prefix": 0, "format_instructions": 1, "system_message_suffix": 2}
PART_OPTIONS = (*_TEXT_PARTS, *_CHAT_PARTS, "human_message", "input_variables", "output_parser")


def take_parts(agent: type[Agent], options: dict[str, Any]) -> dict[str, Any]:
    """Remove the prompt options from ``options``; the agent keywords they make
    (``templates``) and what to set on the built agent (``output_parser``)."""
    given = {k: options.pop(k) for k in PART_OPTIONS if k in options}
    if not given:
        return {}
    agent_type = agent.agent_type
    name = template_name(agent)
    parts_of = _CHAT_PARTS if agent.prompt_options == "chat" else _TEXT_PARTS
    wrong = sorted(k for k in given if k in (_TEXT_PARTS | _CHAT_PARTS) and k not in parts_of)
    if wrong:
        raise ConfigError(f"agent type {agent_type!r} takes prompt options "
                          f"{', '.join(parts_of)}, not {', '.join(wrong)}")
    templates: dict[str, str] = dict(options.pop("templates", None) or {})
    main = templates.get(name) or builtin_text(agent, name)
    if any(k in given for k in parts_of):
        head, _, rest = main.partition("{tools}")  # prefix, format instructions, suffix
        middle, begin, tail = rest.partition("Begin!")
        pieces = [head.strip(), middle.strip(), (begin + tail).strip()]
        for key, at in parts_of.items():
            if key in given:
                pieces[at] = str(given[key]).strip()
        main = f"{pieces[0]}\n\n{{tools}}\n\n{pieces[1]}\n\n{pieces[2]}\n"
        check_template(agent, main, "made of the prompt options")
        templates[name] = main
    if "human_message" in given:
        human = str(given["human_message"])
        if "{input}" not in human:
            raise ConfigError("human_message must contain {input} (where the question goes)")
        _, pad, after = human.partition("{agent_scratchpad}")
        if pad and after.strip() and not getattr(agent, "pad_in_human_message", False):
            raise ConfigError(
                f"human_message: agent type {agent_type!r} sends its work as turns right after "
                "this message, so {agent_scratchpad} must end it (move the text after it "
                "before it, or into the system message)")
        templates["human_message"] = human
    if "input_variables" in given:
        allowed = variables(main) | {"input", "agent_scratchpad"}
        unknown = sorted(set(given["input_variables"]) - allowed)
        if unknown:
            raise ConfigError(f"input_variables {unknown} are not filled by {agent_type!r}; "
                              f"it fills {', '.join(sorted(allowed))}")
    out: dict[str, Any] = {"templates": templates} if templates else {}
    if "output_parser" in given:
        parser = given["output_parser"]
        if not callable(getattr(parser, "parse", None)):
            raise ConfigError("output_parser must have a parse(text) method returning an "
                              "AgentAction or AgentFinish")
        out["output_parser"] = parser
    return out
