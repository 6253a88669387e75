"""``tool-calling``: native function calling over the OpenAI-compatible API.

Tools are sent as JSON schemas; each native tool call becomes a :class:`ToolCallAction`, and
all calls of one model turn are returned together so the executor runs them concurrently.
The next request replays each turn as the assistant message with its tool calls followed by
one tool message per call, in call order. A reply without tool calls is the answer.

Local models often write a call as JSON text instead (``{"name": ..., "arguments": ...}``,
``<tool_call>...</tool_call>``, ``{"tool_calls": [...]}``...): such text naming a known tool
is run as if it had been a native call, and each repair is reported with
``on_text(kind="repair")`` so the run's stats count it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from agentcli.agents import _json_repair
from agentcli.agents.base import Agent, chat_history
from agentcli.agents.parsers import maybe_json
from agentcli.agents.prompts import load
from agentcli.callbacks.manager import CallbackManager
from agentcli.errors import ConfigError, OutputParserError, ProviderError
from agentcli.models.base import BaseChatModel, acall_model, call_model
from agentcli.schema import (
    AgentAction,
    AgentFinish,
    AgentStep,
    ChatResult,
    Decision,
    Message,
    ToolCall,
    assistant,
    system,
    user,
)
from agentcli.tools.base import Tool

TEXT_AGENT_HINT = "--agent chat-zero-shot-react-description"
NO_FINAL_ANSWER = (
    "The agent reached its limit and the model asked for more tools instead of answering."
)


@dataclass(frozen=True)
class ToolCallAction(AgentAction):
    """An action from a native tool call; ``turn`` groups the calls of one model reply."""

    turn: str = ""
    content: str = ""  # the assistant text sent alongside the calls


class ToolCallingAgent(Agent):
    """Native tool calling: schemas out, tool calls in, tool messages back."""

    agent_type: ClassVar[str] = "tool-calling"
    summary: ClassVar[str] = (
        "Native function calling (OpenAI tools API); parallel calls run concurrently. Best "
        "for models that support tools; repairs calls written as JSON text."
    )
    accepts: ClassVar[str] = "any tools, including multi-argument (sent as JSON schemas)"
    uses_memory: ClassVar[bool] = True

    def __init__(self, llm: BaseChatModel, tools: Sequence[Tool], **kw: Any) -> None:
        super().__init__(llm, tools, **kw)
        if not getattr(llm, "supports_tools", True):
            raise ConfigError(
                f"the model {llm.name!r} does not support native tool calling; use a text "
                f"agent type such as {TEXT_AGENT_HINT}"
            )
        self.schemas = [t.to_openai() for t in self.tools]

    # -- prompt -------------------------------------------------------------------------
    def build_messages(
        self, steps: Sequence[AgentStep], inputs: dict[str, Any], *, final: bool = False
    ) -> list[Message]:
        """System, history, the question, then each turn's calls and their tool messages."""
        messages = [system(load("tool_calling_system").strip()), *chat_history(inputs),
                    user(str(inputs["input"]))]
        i = 0
        while i < len(steps):
            action = steps[i].action
            if not isinstance(action, ToolCallAction):  # a parse-error step: plain text
                messages += [assistant(action.log), user(steps[i].observation)]
                i += 1
                continue
            turn = [s for s in steps[i:] if isinstance(s.action, ToolCallAction)]
            group = []
            for s in turn:
                assert isinstance(s.action, ToolCallAction)
                if s.action.turn != action.turn:
                    break
                group.append(s)
            calls = tuple(
                ToolCall(s.action.tool_call_id or f"call_{i + n}", s.action.tool,
                         _arguments_text(s.action.tool_input))
                for n, s in enumerate(group)
            )
            messages.append(assistant(action.content, tool_calls=calls))
            messages += [
                Message("tool", s.observation, tool_call_id=c.id, name=c.name)
                for s, c in zip(group, calls, strict=True)
            ]
            i += len(group)
        if final:
            messages.append(user(load("tool_calling_final").strip()))
        return messages

    # -- planning -----------------------------------------------------------------------
    def plan(
        self, steps: Sequence[AgentStep], inputs: dict[str, Any], callbacks: CallbackManager
    ) -> Decision:
        """Call the model with the tool schemas and turn its calls into actions."""
        with _tool_support_hint():
            result = call_model(self.llm, self.build_messages(steps, inputs), callbacks,
                                tools=self.schemas or None, stream=self.stream)
        return self._decide(result, callbacks)

    async def aplan(
        self, steps: Sequence[AgentStep], inputs: dict[str, Any], callbacks: CallbackManager
    ) -> Decision:
        """Async twin of :meth:`plan`."""
        with _tool_support_hint():
            result = await acall_model(self.llm, self.build_messages(steps, inputs), callbacks,
                                       tools=self.schemas or None, stream=self.stream)
        return self._decide(result, callbacks)

    def plan_final(
        self, steps: Sequence[AgentStep], inputs: dict[str, Any], callbacks: CallbackManager
    ) -> AgentFinish:
        """One last call with the tools removed: answer from what you have."""
        result = call_model(self.llm, self.build_messages(steps, inputs, final=True), callbacks,
                            stream=self.stream)
        return _final(result)

    async def aplan_final(
        self, steps: Sequence[AgentStep], inputs: dict[str, Any], callbacks: CallbackManager
    ) -> AgentFinish:
        """Async twin of :meth:`plan_final`."""
        result = await acall_model(self.llm, self.build_messages(steps, inputs, final=True),
                                   callbacks, stream=self.stream)
        return _final(result)

    def _decide(self, result: ChatResult, callbacks: CallbackManager) -> Decision:
        turn = uuid.uuid4().hex[:12]
        calls: list[tuple[str, str, Any]] = []
        repairs = 0
        for n, call in enumerate(result.tool_calls):
            args, repaired = _decode_arguments(call, result.text)
            repairs += repaired
            calls.append((call.id or f"call_{turn}_{n}", call.name, args))
        if not calls and result.text.strip():
            found = text_tool_calls(result.text, {t.name for t in self.tools})
            repairs += len(found)
            calls = [(f"call_{turn}_{n}", name, args) for n, (name, args) in enumerate(found)]
        if repairs:
            callbacks.on_text(f"Repaired {repairs} tool call(s) the model wrote as text or "
                              "broken JSON", kind="repair", count=repairs)
        if calls:
            content = "" if not result.tool_calls else result.text
            return [ToolCallAction(name, args, result.text, tool_call_id=call_id, turn=turn,
                                   content=content)
                    for call_id, name, args in calls]
        if not result.text.strip():
            raise OutputParserError(
                "The model returned neither text nor a tool call.", llm_output=result.text,
                observation="Your reply was empty. Call a tool, or answer the question in text.",
            )
        return AgentFinish({"output": result.text.strip()}, result.text)


def _final(result: ChatResult) -> AgentFinish:
    """The forced answer; a server that ignored the missing tools may still send calls."""
    text = result.text.strip()
    if not text and result.tool_calls:
        text = NO_FINAL_ANSWER
    return AgentFinish({"output": text}, result.text)


def _arguments_text(tool_input: str | dict[str, Any]) -> str:
    value = tool_input if isinstance(tool_input, dict) else {"input": tool_input}
    return json.dumps(value, ensure_ascii=False)


def _decode_arguments(call: ToolCall, text: str) -> tuple[dict[str, Any], int]:
    """The call's arguments as an object, and 1 when they had to be repaired."""
    raw = call.arguments.strip()
    if not raw:
        return {}, 0
    try:
        value = json.loads(raw)
    except ValueError:
        value = maybe_json(raw)
        if not isinstance(value, dict):
            raise OutputParserError(
                f"The arguments of the call to {call.name!r} are not a JSON object.",
                llm_output=text or raw,
                observation=f"The arguments you gave {call.name} are not valid JSON: "
                f"{raw[:200]!r}. Call it again with a JSON object of its arguments.",
            ) from None
        return value, 1
    if isinstance(value, str):  # double-encoded arguments
        inner = maybe_json(value)
        return (inner, 1) if isinstance(inner, dict) else ({"input": value}, 1)
    if not isinstance(value, dict):
        return {"input": value}, 1
    return value, 0


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
            args = call[2] if call[1] else {}
            if isinstance(args, str):
                decoded = maybe_json(args)
                args = decoded if isinstance(decoded, dict) else {"input": args}
            elif not isinstance(args, dict):
                args = {"input": args}
            found.append((call[0], args))
    return found[:20]


@contextmanager
def _tool_support_hint() -> Iterator[None]:
    """A 400 about tools means the server cannot do native calls: say what to use instead."""
    try:
        yield
    except ProviderError as err:
        message = str(err)
        if err.status == 400 and "tool" in message.lower():
            raise ProviderError(
                f"{message}; this model or server does not seem to support native tool "
                f"calling, use a text agent type such as {TEXT_AGENT_HINT}",
                provider=err.provider, status=err.status,
            ) from err
        raise
