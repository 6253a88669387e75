"""A scripted agent for tests: decisions played back from a list or a function of the steps.

It makes the executor testable without parsing: each step still goes through the model (a
:class:`~agentcli.models.fake.FakeChatModel` that replies with nothing), so usage, events
and limits behave as in a real run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentcli.agents.base import Agent
from agentcli.executor import AgentExecutor
from agentcli.models.fake import FakeChatModel
from agentcli.schema import (
    AgentAction,
    AgentFinish,
    AgentStep,
    ChatRequest,
    ChatResult,
    Decision,
    user,
)
from agentcli.tools.base import Tool

Script = Sequence[Any] | Callable[[list[AgentStep]], Any]


class ScriptedAgent(Agent):
    """Plays back decisions (or exceptions to raise); records the steps it was shown.

    After the script runs out it repeats ``AgentAction("echo", "again")``; the forced final
    answer reads ``"<final> after N steps"``.
    """

    def __init__(self, script: Script, tools: Sequence[Tool], final: str = "generated") -> None:
        super().__init__(tools)
        self.fn = script if callable(script) else None
        self.decisions = [] if callable(script) else list(script)
        self.seen: list[list[AgentStep]] = []
        self.inputs: list[Mapping[str, Any]] = []
        self.final = final
        self.final_calls = 0

    def request(self, state: Mapping[str, Any], *, final: bool = False) -> ChatRequest:
        """Remember what this step saw; the request itself is a placeholder."""
        self.seen.append(list(state.get("intermediate_steps") or ()))
        self.inputs.append(state)
        return ChatRequest((user(str(state.get("input", ""))),))

    def decide(self, result: ChatResult) -> Decision:
        """The next scripted decision."""
        if self.fn is not None:
            item = self.fn(self.seen[-1])
        else:
            item = self.decisions.pop(0) if self.decisions else AgentAction(
                "echo", f"again {len(self.seen)}", "loop")
        if isinstance(item, BaseException):
            raise item
        return item  # type: ignore[no-any-return]

    def finish(self, result: ChatResult) -> AgentFinish:
        """The forced answer, naming how many steps it saw."""
        self.final_calls += 1
        return AgentFinish({"output": f"{self.final} after {len(self.seen[-1])} steps"}, "")


def silent_model() -> FakeChatModel:
    """A model that answers every request with empty text (the script decides)."""
    return FakeChatModel(lambda messages: "", name="scripted")


def scripted_executor(script: Script, tools: Sequence[Tool], **options: Any) -> AgentExecutor:
    """An AgentExecutor over a :class:`ScriptedAgent` and :func:`silent_model`."""
    options.setdefault("llm", silent_model())
    return AgentExecutor(ScriptedAgent(script, tools), list(tools), **options)
