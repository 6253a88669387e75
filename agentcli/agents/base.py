"""The agent step contract: given the steps so far, decide to act or to finish."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from agentcli.agents.prompts import load
from agentcli.callbacks.manager import CallbackManager
from agentcli.errors import ConfigError, OutputParserError
from agentcli.models.base import BaseChatModel, acall_model, call_model
from agentcli.schema import AgentFinish, AgentStep, ChatResult, Decision, Message
from agentcli.tools.base import Tool

if TYPE_CHECKING:
    from agentcli.agents.parsers import AgentOutputParser


_LEADING_THOUGHT = re.compile(r"^\s*Thought\s*:\s*", re.I)


class Agent(ABC):
    """Decides the next step. The executor only ever sees AgentAction / AgentFinish."""

    agent_type: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    accepts: ClassVar[str] = "single-input tools"
    uses_memory: ClassVar[bool] = False  # True when the prompt includes inputs["chat_history"]

    def __init__(
        self, llm: BaseChatModel, tools: Sequence[Tool], *, stream: bool = False, **_: Any
    ) -> None:
        self.llm = llm
        self.tools = list(tools)
        self.stream = stream

    @property
    def allowed_tools(self) -> list[str]:
        """Names of the tools this agent may call."""
        return [t.name for t in self.tools]

    @abstractmethod
    def plan(
        self, steps: Sequence[AgentStep], inputs: dict[str, Any], callbacks: CallbackManager
    ) -> Decision:
        """Decide the next action(s) or finish."""

    @abstractmethod
    async def aplan(
        self, steps: Sequence[AgentStep], inputs: dict[str, Any], callbacks: CallbackManager
    ) -> Decision:
        """Async twin of :meth:`plan`."""

    @abstractmethod
    def plan_final(
        self, steps: Sequence[AgentStep], inputs: dict[str, Any], callbacks: CallbackManager
    ) -> AgentFinish:
        """One last call without tools: answer from what has been observed."""

    @abstractmethod
    async def aplan_final(
        self, steps: Sequence[AgentStep], inputs: dict[str, Any], callbacks: CallbackManager
    ) -> AgentFinish:
        """Async twin of :meth:`plan_final`."""


class TextAgent(Agent):
    """An agent whose model replies in text that a parser turns into a decision."""

    parser: AgentOutputParser
    stop: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    def build_messages(
        self, steps: Sequence[AgentStep], inputs: dict[str, Any], *, final: bool = False
    ) -> list[Message]:
        """The prompt for this step; ``final`` adds the answer-now instruction."""

    def plan(
        self, steps: Sequence[AgentStep], inputs: dict[str, Any], callbacks: CallbackManager
    ) -> Decision:
        """Ask the model, then parse its text."""
        result = call_model(
            self.llm, self.build_messages(steps, inputs), callbacks,
            stop=self.stop, stream=self.stream,
        )
        return self.parser.parse(result.text)

    async def aplan(
        self, steps: Sequence[AgentStep], inputs: dict[str, Any], callbacks: CallbackManager
    ) -> Decision:
        """Async twin of :meth:`plan`."""
        result = await acall_model(
            self.llm, self.build_messages(steps, inputs), callbacks,
            stop=self.stop, stream=self.stream,
        )
        return self.parser.parse(result.text)

    def plan_final(
        self, steps: Sequence[AgentStep], inputs: dict[str, Any], callbacks: CallbackManager
    ) -> AgentFinish:
        """Ask once more for a final answer from the steps so far."""
        result = call_model(
            self.llm, self.build_messages(steps, inputs, final=True), callbacks,
            stop=self.stop, stream=self.stream,
        )
        return self._as_finish(result)

    async def aplan_final(
        self, steps: Sequence[AgentStep], inputs: dict[str, Any], callbacks: CallbackManager
    ) -> AgentFinish:
        """Async twin of :meth:`plan_final`."""
        result = await acall_model(
            self.llm, self.build_messages(steps, inputs, final=True), callbacks,
            stop=self.stop, stream=self.stream,
        )
        return self._as_finish(result)

    def _as_finish(self, result: ChatResult) -> AgentFinish:
        try:
            decision = self.parser.parse(result.text)
        except OutputParserError:
            decision = None
        if isinstance(decision, AgentFinish):
            return decision
        # The model still wanted a tool; its text is the best answer we have.
        return AgentFinish({"output": result.text.strip()}, result.text)


def scratchpad(steps: Sequence[AgentStep], *, starts_after_thought: bool = False) -> str:
    """Replay the steps as prior work: each log, its observation, then ``Thought:``.

    A log that follows a ``Thought:`` already written (every step after the first, and the
    first when the prompt ends with one) loses its own leading ``Thought:`` so it never doubles.
    """
    # Incremental: each call renders only the steps added since the last one (agents/_pad.py).
    from agentcli.agents._pad import scratchpad_text

    return scratchpad_text(steps, starts_after_thought)


def final_instruction() -> str:
    """The instruction appended when the run must end with an answer now."""
    return load("final_answer").strip()


def chat_history(inputs: dict[str, Any]) -> list[Message]:
    """The memory's prior turns (``inputs["chat_history"]``), or none."""
    history = inputs.get("chat_history") or []
    return [m for m in history if isinstance(m, Message)]


def history_text(messages: Sequence[Message]) -> str:
    """Prior turns as ``Human: ...`` / ``AI: ...`` lines for a text prompt."""
    names = {"user": "Human", "assistant": "AI", "system": "System", "tool": "Tool"}
    return "\n".join(f"{names[m.role]}: {m.content}" for m in messages)


def require_single_input(agent_type: str, tools: Sequence[Tool]) -> None:
    """Text formats pass one string per call: refuse tools that need several arguments."""
    for t in tools:
        props = (t.args_schema or {}).get("properties") or {}
        if t.is_structured and len(props) > 1:
            raise ConfigError(
                f"the agent type {agent_type!r} passes one text input per call, but the tool "
                f"{t.name!r} takes several arguments ({', '.join(props)}); use --agent "
                "structured-chat-zero-shot-react-description or --agent tool-calling"
            )
