"""``tool-calling``: native function calling over the OpenAI-compatible API.

Tools are sent as JSON schemas; each native tool call becomes a :class:`ToolCallAction`, and
all calls of one model turn are returned together so the executor runs them concurrently.
The next request replays each turn as the assistant message with its tool calls followed by
one tool message per call, in call order. A reply without tool calls is the answer.

Local models often write a call as JSON text instead (``{"name": ..., "arguments": ...}``,
``<tool_call>...</tool_call>``, ``{"tool_calls": [...]}``...): such text naming a known tool
is run as if it had been a native call, marked ``repaired`` so the run's stats count it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, cast

from agentcli import _json_repair
from agentcli.agents.base import Agent, chat_history
from agentcli.agents.parsers import maybe_json
from agentcli.agents.prompts import load
from agentcli.errors import OutputParserError, ProviderError
from agentcli.records import record
from agentcli.schema import (
    AgentAction,
    AgentFinish,
    ChatRequest,
    ChatResult,
    Decision,
    Message,
    ToolCall,
    assistant,
    system,
    user,
)
from agentcli.tools.base import Tool
from agentcli.tools.naming import readable_name, tool_lookup, wire_name

TEXT_AGENT_HINT = "--agent chat-zero-shot-react-description"
RESPOND_TOOL = "final_response"  # the tool a structured answer is given through


@record
class ToolCallAction(AgentAction):
    """An action from a native tool call; ``turn`` groups the calls of one model reply."""

    turn: str = ""
    content: str = ""  # the assistant text sent alongside the calls

    @property
    def message_log(self) -> tuple[Message, ...]:
        """The assistant message that made this call (LangChain's ``AgentActionMessageLog``)."""
        call = ToolCall(self.tool_call_id or "", wire_name(self.tool),
                        _arguments_text(self.tool_input))
        return (assistant(self.content, tool_calls=(call,)),)


class ToolCallingAgent(Agent):
    """Native tool calling: schemas out, tool calls in, tool messages back."""

    agent_type: ClassVar[str] = "tool-calling"
    main_template: ClassVar[str | None] = "tool_calling_system"
    summary: ClassVar[str] = (
        "Native function calling (OpenAI tools API); parallel calls run concurrently. Best "
        "for models that support tools; repairs calls written as JSON text."
    )
    accepts: ClassVar[str] = "any tools, including multi-argument (sent as JSON schemas)"
    uses_memory: ClassVar[bool] = True
    native_tools: ClassVar[bool] = True

    def __init__(self, tools: Sequence[Tool], *, system_prompt: str | None = None,
                 tool_media: bool = False, **kw: Any) -> None:
        self.tool_media = tool_media  # forward tools' images/audio to the model
        self.given_prompt = system_prompt  # the caller's system prompt (None: the built-in)
        super().__init__(tools, **kw)

    def setup(self) -> None:
        """The tools' schemas (and the answer's tool, for a structured answer) and the system
        prompt."""
        self.schemas = [t.to_openai() for t in self.tools]
        self._by_name = tool_lookup(self.tools)  # readable and wire (API-safe) names
        if self.response_schema is not None:
            self.schemas.append({"type": "function", "function": {
                "name": RESPOND_TOOL, "description": load("respond_tool").strip(),
                "parameters": self.response_schema,
            }})
        base = (self.text("tool_calling_system").strip() if self.given_prompt is None
                else self.given_prompt)
        self.system_prompt = self.with_instructions(base)

    # -- prompt -------------------------------------------------------------------------
    def request(self, state: Mapping[str, object], *, final: bool = False) -> ChatRequest:
        """System, history, then the conversation so far (calls and their tool messages)."""
        turns = list(cast("Sequence[Message]", state.get("messages") or ()))
        messages = [system(self.system_prompt), *chat_history(state),
                    *(with_media(turns) if self.tool_media else turns)]
        if final:  # no tools: a structured answer can be constrained to its schema natively
            return ChatRequest((*messages, user(load("tool_calling_final").strip())),
                               response_format=self.response_schema)
        return ChatRequest(tuple(messages), tools=tuple(self.schemas))

    def turn_messages(self, result: ChatResult, decision: Decision) -> list[Message]:
        """The assistant turn with the calls as they will run (ids included)."""
        if not isinstance(decision, list) or not decision:
            return [assistant(result.text)]
        first = decision[0]
        content = first.content if isinstance(first, ToolCallAction) else ""
        calls = tuple(ToolCall(a.tool_call_id or f"call_{n}", wire_name(a.tool),
                               _arguments_text(a.tool_input))
                      for n, a in enumerate(decision))
        return [assistant(content, tool_calls=calls)]

    # -- reading the reply ----------------------------------------------------------------
    def decide(self, result: ChatResult) -> Decision:
        """Native calls (or calls written as text) become actions; plain text is the answer."""
        # (id, name, arguments, repaired) of each native call, else of each call in the text
        calls = [(call.id, call.name, *_decode_arguments(call, result.text))
                 for call in result.tool_calls]
        if not calls and result.text.strip():
            names = set(self._by_name) | (
                {RESPOND_TOOL} if self.response_schema is not None else set())
            calls = [("", name, args, True) for name, args in text_tool_calls(result.text, names)]
        turn = uuid.uuid4().hex[:12]
        actions: list[AgentAction] = [  # readable names: fs__read_file -> fs.read_file
            ToolCallAction(readable_name(name, self._by_name), args, result.text,
                           tool_call_id=call_id or f"call_{turn}_{n}", turn=turn,
                           content=result.text if result.tool_calls else "", repaired=repaired)
            for n, (call_id, name, args, repaired) in enumerate(calls)]
        answer = next((a for a in actions if a.tool == RESPOND_TOOL), None)
        if answer is not None and self.response_schema is not None:
            text = json.dumps(answer.tool_input, ensure_ascii=False)
            return AgentFinish({"output": text, "structured_response": answer.tool_input},
                               result.text)
        if actions:
            return actions
        if not result.text.strip():
            raise OutputParserError(
                "The model returned neither text nor a tool call.", llm_output=result.text,
                observation="Your reply was empty. Call a tool, or answer the question in text.",
            )
        return AgentFinish({"output": result.text.strip()}, result.text)

    def finish(self, result: ChatResult) -> AgentFinish:
        """The forced answer: the reply's text only. A server that ignored the missing tools
        may still send calls; those are no answer (empty text), and the run ends without one,
        except a structured answer given through its tool (the run's schema check follows)."""
        if self.response_schema is not None and result.tool_calls:
            try:
                decision = self.decide(result)
            except OutputParserError:
                decision = []
            if isinstance(decision, AgentFinish):
                return decision
        return AgentFinish({"output": result.text.strip()}, result.text)

    def explain(self, error: ProviderError) -> ProviderError:
        """A 400 about tools means the server cannot do native calls: say what to use instead."""
        message = str(error)
        if error.status != 400:
            return error
        if self.tool_media and any(
                word in message.lower() for word in ("image", "audio", "vision", "multimodal")):
            hint = ("this model does not seem to accept the images or audio a tool returned: "
                    "set tool_media: off in the config (or AGENT_TOOL_MEDIA=off)")
        elif "tool" in message.lower():
            hint = ("this model or server does not seem to support native tool calling, use a "
                    f"text agent type such as {TEXT_AGENT_HINT}")
        else:
            return error
        return ProviderError(f"{message}; {hint}", provider=error.provider, status=error.status)


def with_media(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with a user message after each group of tool results that carry media.

    The chat API takes images and audio only in user messages, so the tool messages keep
    their text (with placeholders) and the parts follow them in one user message.
    """
    out: list[Message] = []
    pending: list[dict[str, Any]] = []
    for message in [*messages, None]:  # None: the end, where the last group is flushed
        if (message is None or message.role != "tool") and pending:
            out.append(Message("user", load("tool_media").strip(), parts=tuple(pending)))
            pending = []
        if message is not None:
            out.append(message)
            pending += message.parts if message.role == "tool" else ()
    return out


def _arguments_text(tool_input: str | dict[str, Any]) -> str:
    value = tool_input if isinstance(tool_input, dict) else {"input": tool_input}
    return json.dumps(value, ensure_ascii=False)


def _decode_arguments(call: ToolCall, text: str) -> tuple[dict[str, Any], bool]:
    """The call's arguments as an object, and whether they had to be repaired."""
    raw = call.arguments.strip()
    try:
        value = json.loads(raw) if raw else {}
    except (ValueError, RecursionError):  # RecursionError: JSON nested thousands deep
        value = maybe_json(raw)
        if not isinstance(value, dict):
            raise OutputParserError(
                f"The arguments of the call to {call.name!r} are not a JSON object.",
                llm_output=text or raw,
                observation=f"The arguments you gave {call.name} are not valid JSON: "
                f"{raw[:200]!r}. Call it again with a JSON object of its arguments.",
            ) from None
        return value, True
    return (value, False) if isinstance(value, dict) else (_as_arguments(value), True)


def _as_arguments(value: object) -> dict[str, Any]:
    """Arguments as an object: a JSON string (double-encoded arguments) decoded, any other
    value as ``{"input": value}``."""
    decoded = maybe_json(value) if isinstance(value, str) else value
    return decoded if isinstance(decoded, dict) else {"input": value}


def text_tool_calls(text: str, names: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """Tool calls written as JSON text, for tools in ``names`` (empty when there are none).

    Every top-level JSON value in the text counts, so several ``<tool_call>`` blocks are
    several calls; a value naming no known tool (an answer that holds JSON) is ignored.
    """
    found: list[tuple[str, dict[str, Any]]] = []
    for _, value, _ in _json_repair.iter_values(text, max_attempts=50):
        items = value if isinstance(value, list) else [value]
        if isinstance(value, dict):
            keys = {_json_repair.norm_key(k): k for k in value}
            if "toolcalls" in keys and isinstance(value[keys["toolcalls"]], list):
                items = value[keys["toolcalls"]]
        for item in items[:20]:
            call = _json_repair.find_tool_call(item)
            if call is None or call[0] not in names:
                continue
            found.append((call[0], _as_arguments(call[2]) if call[1] else {}))
    return found[:20]
