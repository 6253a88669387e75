"""Agents written LangChain's way, run by agentcli's one loop.

- ``BaseSingleActionAgent`` / ``BaseMultiActionAgent`` subclasses with ``plan(intermediate_steps,
  **kwargs)`` returning an ``AgentAction`` (or a list of them) or an ``AgentFinish``;
- a Runnable (anything with ``invoke``) given as the agent: it gets ``{"input": ...,
  "intermediate_steps": [...]}`` and returns the same;
- ``LLMSingleActionAgent(llm_chain=LLMChain(llm=..., prompt=...), output_parser=...,
  stop=[...])``: the prompt's ``format(intermediate_steps=..., **inputs)`` is the model request
  and the parser reads the reply, so its model call is the run's own (events, usage).

The first two become a :class:`PlanAgent`: each step of the loop asks the plan (through an
in-process "model", :class:`_Planner`, so limits, tools, handlers and verbose output are the
loop's own) instead of a language model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import Any, cast

from agentcli._sync import in_thread
from agentcli.agents.base import Agent
from agentcli.errors import OutputParserError
from agentcli.models.base import BaseChatModel, TokenSink
from agentcli.records import record
from agentcli.schema import (
    FORCE_STOP_MESSAGE,
    AgentAction,
    AgentFinish,
    AgentStep,
    ChatRequest,
    ChatResult,
    Decision,
    user,
)
from agentcli.tools.base import Tool

Steps = list[tuple[AgentAction, str]]


class BaseSingleActionAgent:
    """Subclass and implement ``plan(intermediate_steps, **kwargs)``: the next action or the
    answer (``aplan`` is not needed: the plan runs in a worker thread)."""

    def plan(self, intermediate_steps: Steps, callbacks: object = None,
             **kwargs: Any) -> AgentAction | AgentFinish | list[AgentAction]:
        """The next step."""
        raise NotImplementedError(f"{type(self).__name__} must implement plan()")

    @property
    def input_keys(self) -> list[str]:
        """What a run reads."""
        return ["input"]

    @property
    def return_values(self) -> list[str]:
        """What an answer holds."""
        return ["output"]


class BaseMultiActionAgent(BaseSingleActionAgent):
    """Like :class:`BaseSingleActionAgent`; ``plan`` may return several actions (run
    concurrently)."""


@record
class _PlanRequest(ChatRequest):
    """A step's request: the run state the plan reads."""

    state: Mapping[str, object] = field(default_factory=dict, compare=False)
    final: bool = False


@record
class _Planned(ChatResult):
    """A step's reply: the plan's decision (its log as the text)."""

    decision: Decision | None = field(default=None, compare=False)
    error: OutputParserError | None = field(default=None, compare=False)  # plan() raised it


class _Planner(BaseChatModel):
    """The "model" of a plan agent: asking it runs the plan on the state."""

    base_url = ""
    observed = False  # a plan step is not a model call: no model events, no usage

    def __init__(self, name: str, plan: Callable[[Steps, dict[str, Any]], object]) -> None:
        self.name = name
        self.plan = plan

    async def arequest(self, request: ChatRequest, on_token: TokenSink | None = None
                       ) -> ChatResult:
        """Run the plan (in a worker thread: it may make sync model calls)."""
        if not isinstance(request, _PlanRequest):
            raise TypeError("a plan agent's model only answers its own agent's requests")
        if request.final:  # LangChain's plan agents stop with the canned message
            return _Planned("", decision=AgentFinish({"output": FORCE_STOP_MESSAGE}, ""))
        state = request.state
        steps = [(s.action, str(s.observation)) for s in
                 cast("Sequence[AgentStep]", state.get("intermediate_steps") or ())]
        inputs = {k: v for k, v in state.items()
                  if k not in ("messages", "intermediate_steps", "chat_history")}
        try:
            decided = await in_thread(lambda: self.plan(steps, inputs))
        except OutputParserError as err:  # for handle_parsing_errors, as from a parser
            return _Planned(err.llm_output or "", error=err)
        return _Planned(_log(decided), decision=_decision(decided, self.name))


class PlanAgent(Agent):
    """A LangChain ``plan()`` agent or Runnable, as an agentcli agent."""

    agent_type = "plan"
    runnable = True  # verbose prints results as LangChain does for these (no prefixes)
    reruns_calls = True  # its code repeats a call on purpose: each runs the tool again

    def __init__(self, planner: object, tools: Sequence[Tool]) -> None:
        super().__init__(tools)
        name = type(planner).__name__
        plan = getattr(planner, "plan", None)
        if callable(plan):
            self.llm = _Planner(name, lambda steps, inputs: plan(steps, callbacks=None,
                                                                  **inputs))
        else:
            invoke = cast("Callable[[dict[str, Any]], object]", cast("Any", planner).invoke)
            self.llm = _Planner(name, lambda steps, inputs: invoke(
                {**inputs, "intermediate_steps": steps}))

    def request(self, state: Mapping[str, object], *, final: bool = False) -> ChatRequest:
        """The state, for the plan."""
        return _PlanRequest((user(str(state.get("input", ""))),), state=state, final=final)

    def decide(self, result: ChatResult) -> Decision:
        """The plan's decision."""
        if isinstance(result, _Planned) and result.error is not None:
            raise result.error
        if isinstance(result, _Planned) and result.decision is not None:
            return result.decision
        raise OutputParserError("the plan returned no decision", llm_output=result.text)


def _decision(decided: object, name: str) -> Decision:
    if isinstance(decided, AgentAction | AgentFinish):
        return decided
    if isinstance(decided, list | tuple) and decided and all(
            isinstance(a, AgentAction) for a in decided):
        return list(decided)
    raise TypeError(f"{name}.plan returned {type(decided).__name__}: it must return an "
                    "AgentAction, a list of them, or an AgentFinish")


def _log(decided: object) -> str:
    if isinstance(decided, list | tuple):
        return "".join(getattr(a, "log", "") for a in decided)
    return str(getattr(decided, "log", ""))


def is_plan_agent(agent: object) -> bool:
    """Whether ``agent`` is one :class:`PlanAgent` serves: a ``plan()`` agent or a Runnable."""
    return not isinstance(agent, Agent) and (
        isinstance(agent, BaseSingleActionAgent) or callable(getattr(agent, "plan", None))
        or callable(getattr(agent, "invoke", None)))


class AgentOutputParser:
    """Subclass and implement ``parse(text)``: an ``AgentAction`` or an ``AgentFinish``
    (raise ``OutputParserException`` for a reply it cannot read)."""

    def parse(self, text: str) -> AgentAction | AgentFinish:
        """The step in the reply."""
        raise NotImplementedError(f"{type(self).__name__} must implement parse()")


class StringPromptTemplate:
    """Subclass and implement ``format(**kwargs)`` (the keyword fields given are attributes,
    as on LangChain's pydantic template)."""

    input_variables: list[str]

    def __init__(self, **fields: Any) -> None:
        self.input_variables = []
        for key, value in fields.items():
            setattr(self, key, value)

    def format(self, **kwargs: Any) -> str:
        """The prompt text."""
        raise NotImplementedError(f"{type(self).__name__} must implement format()")


class LLMChain:
    """A model and a prompt: ``run(**inputs)`` sends the formatted prompt, returns the text."""

    def __init__(self, llm: BaseChatModel, prompt: Any, **_: object) -> None:
        self.llm = llm
        self.prompt = prompt

    def run(self, *, stop: Sequence[str] | None = None, callbacks: object = None,
            **inputs: Any) -> str:
        """The model's reply to the prompt filled with ``inputs``."""
        return self.llm.generate([user(self.prompt.format(**inputs))], stop=stop).text

    predict = run


class LLMSingleActionAgent(Agent):
    """LangChain's prompt + parser agent: each step sends ``llm_chain.prompt.format(
    intermediate_steps=..., **inputs)`` (with ``stop``) and ``output_parser.parse``s the
    reply."""

    agent_type = "llm-single-action"

    def __init__(self, llm_chain: LLMChain, output_parser: Any,
                 stop: Sequence[str] | None = None,
                 allowed_tools: Sequence[str] | None = None, **_: object) -> None:
        self.llm_chain = llm_chain
        self.output_parser = output_parser
        self.stop = list(stop or [])
        super().__init__([])
        self.llm = llm_chain.llm
        # verbose prints LangChain's prefixes for this agent around each result
        self.logging_prefixes = (self.stop[0] if self.stop else "", "")

    def request(self, state: Mapping[str, object], *, final: bool = False) -> ChatRequest:
        """The user's prompt over the steps so far."""
        steps = [(s.action, str(s.observation)) for s in
                 cast("Sequence[AgentStep]", state.get("intermediate_steps") or ())]
        wanted = getattr(self.llm_chain.prompt, "input_variables", None) or list(state)
        inputs = {k: state[k] for k in wanted
                  if k in state and k not in ("intermediate_steps", "messages")}
        text = self.llm_chain.prompt.format(intermediate_steps=steps, **inputs)
        return ChatRequest((user(str(text)),), stop=tuple(self.stop))

    def decide(self, result: ChatResult) -> Decision:
        """The output parser's reading of the reply."""
        decided = self.output_parser.parse(result.text)
        return _decision(decided, type(self.output_parser).__name__)
