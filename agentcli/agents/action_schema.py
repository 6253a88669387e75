"""The JSON Schema of one action blob, for servers that can constrain a reply to a schema.

The JSON-blob agent types ask the model for ``{"action": <tool>, "action_input": <input>}``.
A server with constrained decoding (OpenAI ``json_schema``, llama.cpp grammars, vLLM
``guided_json``, Ollama ``format``) can then only produce a blob naming a real tool, which is
what lets a 135M model act at all. The parsers stay: a server may ignore the schema.

Shape: when every tool takes one string, one flat object whose ``action`` is an enum of the
tool names plus ``"Final Answer"``. When some tool takes named arguments, an ``anyOf`` with one
branch per tool (its argument schema as ``action_input``) and one for the answer, so the
grammar also constrains the arguments. ``action`` comes first in ``properties`` because
grammar-based servers generate keys in that order, and the tool choice should come first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agentcli.agents.prompt_style import argument_names
from agentcli.tools.base import Tool

if TYPE_CHECKING:
    from agentcli.agents.base import Agent

FINAL_ANSWER = "Final Answer"
# A bound on text inputs and answers: without it a small model fills the string until the
# token cap (one measured SmolLM2 reply: 1,024 tokens of Calculator "input", 75 s).
MAX_INPUT_CHARS = 400
_TEXT: dict[str, Any] = {"type": "string", "maxLength": MAX_INPUT_CHARS}
# Keywords that grammar converters (llama.cpp, Outlines, xgrammar) may reject or mishandle;
# dropped from tool argument schemas, which only need to steer, not validate.
_DROPPED_KEYWORDS = frozenset({"title", "examples", "$schema", "default", "format", "pattern"})


def action_schema(
    tools: Sequence[Tool], *, final_action: str = FINAL_ANSWER,
    answer_schema: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A JSON Schema that admits exactly one action blob for ``tools`` or the final answer.

    ``answer_schema`` (a run's structured response format) is what the final answer's
    ``action_input`` must be, instead of text.
    """
    names = [t.name for t in tools]
    structured = [t for t in tools if argument_names(t)]
    answer = _clean(answer_schema) if answer_schema is not None else dict(_TEXT)
    if not structured and answer_schema is None:
        return _branch([*names, final_action], answer)
    branches = [_branch([t.name], _input_schema(t)) for t in tools]
    branches.append(_branch([final_action], answer))
    return {"type": "object", "anyOf": branches}  # OpenAI wants an object at the root


def final_only(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (an action schema) narrowed to its final-answer branch: the constraint for
    a request that must be answered now, without tools."""
    if "anyOf" in schema:
        return dict(schema["anyOf"][-1])  # the final answer's branch is always the last
    props = dict(schema.get("properties") or {})
    props["action"] = {"type": "string", "enum": [FINAL_ANSWER]}
    return {**schema, "properties": props}


def schema_for_agent(
    agent: type[Agent], tools: Sequence[Tool], mode: str = "auto",
    response_schema: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    """The action schema an agent type's requests should carry, or None (off, or no blob:
    only a type whose reply is one action blob, ``json_blob`` on its class, takes one)."""
    if mode == "off" or not agent.json_blob:
        return None
    return action_schema(tools, answer_schema=response_schema)


def _branch(actions: list[str], action_input: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": actions},
            "action_input": action_input,
        },
        "required": ["action", "action_input"],
        "additionalProperties": False,
    }


def _input_schema(tool: Tool) -> dict[str, Any]:
    if not argument_names(tool):
        return dict(_TEXT)
    schema: dict[str, Any] = _clean(tool.args_schema or {})
    schema.setdefault("type", "object")
    return schema


def _clean(value: Any) -> Any:
    """A copy of a schema without the keywords that only decorate it."""
    if isinstance(value, dict):
        return {
            k: ({name: _clean(sub) for name, sub in v.items()} if k == "properties"
                and isinstance(v, dict) else _clean(v))
            for k, v in value.items() if k not in _DROPPED_KEYWORDS
        }
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value
