"""An agent with its tools and limits, and how one run of it starts (:meth:`LoopSetup.start`:
the input checked against the state schema, the run's own output schema, callbacks and
deadline). :class:`~agentcli.loop.AgentLoop` adds the loop itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from agentcli.agents.base import Agent
from agentcli.agents.prompts import placeholders
from agentcli.answers import Given
from agentcli.callbacks.base import BaseCallbackHandler
from agentcli.callbacks.manager import CallbackManager, RunConfig, handlers_of
from agentcli.deadline import deadline as enclosing_deadline
from agentcli.errors import AgentCliError
from agentcli.events import Start
from agentcli.middleware import (
    AgentMiddleware,
    ApprovalGate,
    Approver,
    Budget,
    ObservationCap,
    RunInfo,
    deny_all,
)
from agentcli.recovery import (
    ParsingErrorHandler,
)
from agentcli.run import (
    Run,
)
from agentcli.schema import (
    AgentAction,
    AgentStep,
    user,
)
from agentcli.state import StateSchema
from agentcli.structured import ResponseFormat
from agentcli.tools.base import Tool
from agentcli.tools.math_words import notation
from agentcli.tools.naming import find_tool, tool_lookup

if TYPE_CHECKING:
    from agentcli.models.base import BaseChatModel
    from agentcli.pricing import PriceTable

Inputs = str | Mapping[str, object] | None
Config = RunConfig | Mapping[str, object] | Iterable[BaseCallbackHandler] | CallbackManager | None
Trim = int | Callable[[list[AgentStep]], list[AgentStep]]
# A run's output schema: a JSON Schema dict, a dataclass, a TypedDict or a ResponseFormat.
Answer = ResponseFormat | Mapping[str, object] | type | None


class LoopSetup:
    """An agent with its tools and limits; opens the runs its loop drives."""


    def __init__(
        self,
        agent: Agent,
        tools: Sequence[Tool] | None = None,
        *,
        llm: BaseChatModel | None = None,
        max_iterations: int | None = 15,
        max_execution_time: float | None = None,
        early_stopping_method: Literal["force", "generate", "auto"] = "force",
        handle_parsing_errors: ParsingErrorHandler = False,
        return_intermediate_steps: bool = False,
        trim_intermediate_steps: Trim = -1,
        max_observation_chars: int | None = 8_000,
        approver: Approver = deny_all,
        callbacks: Iterable[BaseCallbackHandler] = (),
        max_tool_workers: int = 8,
        max_tokens: int | None = None,
        max_cost: float | None = None,
        prices: PriceTable | None = None,
        stream_tokens: bool = False,
        stall_limit: int | None = 3,
        state_schema: type | StateSchema | None = None,
        response_format: ResponseFormat | None = None,
        middleware: Sequence[AgentMiddleware] = (),
        verbose: bool = False,
        tags: Sequence[str] = (),
        metadata: Mapping[str, object] | None = None,
        callback_manager: CallbackManager | None = None,
        tool_refresh: Callable[[], list[Tool] | None] | None = None,
    ) -> None:
        if early_stopping_method not in ("force", "generate", "auto"):
            raise ValueError(
                f"early_stopping_method must be 'force', 'generate' or 'auto', "
                f"got {early_stopping_method!r}"
            )
        if not isinstance(agent, Agent):
            raise TypeError(
                f"agent must be an agentcli Agent (from initialize_agent, create_react_agent or "
                f"agent_class(TYPE)(tools)); got {type(agent).__name__}")
        self.agent = agent
        # create_react_agent's agent carries its model
        self.llm: BaseChatModel | None = llm if llm is not None else getattr(agent, "llm", None)
        self.tools = list(tools if tools is not None else agent.tools)
        self.tool_map = tool_lookup(self.tools)  # readable names and API-safe (wire) names
        self.max_iterations = max_iterations
        self.max_execution_time = max_execution_time
        self.early_stopping_method = early_stopping_method
        self.handle_parsing_errors = handle_parsing_errors
        self.return_intermediate_steps = return_intermediate_steps
        self.trim_intermediate_steps = trim_intermediate_steps
        self.max_observation_chars = max_observation_chars
        self.approver = approver
        self.callbacks = [*handlers_of(callback_manager), *callbacks]  # the older name
        if verbose:  # what LangChain's verbose=True prints, on stdout
            from agentcli.callbacks.stdout import StdOutCallbackHandler

            self.callbacks.append(StdOutCallbackHandler(
                prefixes=getattr(agent, "logging_prefixes", None)
                or not (agent.native_tools or getattr(agent, "runnable", False)),
                tools=[t.name for t in self.tools], name=type(self).__name__))
        self.verbose = verbose
        self.tags = list(tags)  # on every run's Start event (and LangChain's on_chain_start)
        self.metadata = dict(metadata or {})
        self.max_tool_workers = max_tool_workers
        self.max_tokens = max_tokens  # budget: total tokens in + out across the run
        self.max_cost = max_cost  # budget: USD across the run (see agentcli.pricing)
        self.prices = prices  # this executor's price table (None: the built-in one)
        self.stream_tokens = stream_tokens
        self.stall_limit = stall_limit
        self.schema = StateSchema.of(state_schema)
        self.response_format = response_format
        self.user_middleware = list(middleware)
        # asked before each model request: a new tool list when a source changed (an MCP
        # server's tools/list_changed), else None
        self.tool_refresh = tool_refresh
        self.schema.check_tools(self.tools)

    @property
    def middleware(self) -> list[AgentMiddleware]:
        """Every hook in force, outermost first: the cap, the gate, budgets, then the user's."""
        built: list[AgentMiddleware] = [ObservationCap(self.max_observation_chars),
                                        ApprovalGate(self.approver)]
        if self.max_tokens is not None or self.max_cost is not None:
            built.append(Budget(self.max_tokens, self.max_cost))
        return [*built, *self.user_middleware]

    # ------------------------------------------------------------------ starting a run
    def start(self, inputs: str | Mapping[str, object], config: Config = None, *,
              response_format: Answer = None) -> Run:
        """Validate the input against the state schema and open a run whose answer must match
        ``response_format`` (an input of the run, like pydantic-ai's per-run ``output_type``:
        a JSON Schema dict, dataclass, TypedDict or ResponseFormat; None: the executor's own)."""
        conf = RunConfig.of(config)
        fmt = (self.response_format if response_format is None
               else ResponseFormat.of(response_format))
        data: dict[str, object] = {"input": inputs} if isinstance(inputs, str) else dict(inputs)
        if "input" not in data and "messages" not in data and self.schema.fields.keys() == {
            *StateSchema.of().fields
        }:
            raise AgentCliError("the run needs an 'input' (the question)")
        values = self.schema.accept(data)
        if "input" in values:
            question = values["input"]  # a ContentText keeps its attachments
            values["messages"] = [*values.get("messages", []),
                                  user(question if isinstance(question, str) else str(question))]
        values.setdefault("messages", [])
        manager = CallbackManager([*self.callbacks, *conf.callbacks], run_id=conf.run_id)
        info = RunInfo(manager.run_id)
        deadline = (None if self.max_execution_time is None
                    else time.monotonic() + self.max_execution_time)
        outer = enclosing_deadline()  # a caller's time limit (the CLI's, spanning start-up)
        if outer is not None:
            deadline = outer if deadline is None else min(deadline, outer)
        asked = [m.content for m in values["messages"] if getattr(m, "role", None) == "user"]
        run = Run(values, manager, info, deadline, self._agent_for(fmt), prices=self.prices,
                  middleware=[*self.middleware, *conf.middleware], answer_format=fmt,
                  question=str(values.get("input") or (asked[-1] if asked else "")))
        info.emit = run.emit  # a closure, not a bound method: no run <-> info cycle
        run.emit(Start(data, manager.run_id, (*self.tags, *conf.tags),
                       {**self.metadata, **conf.metadata}, conf.run_name))
        return run


    def answer_given(self, question: str, tool_texts: Sequence[str] = (),
                     results: Sequence[str] = ()) -> Given:
        """What the answer rule judges this executor's replies against: the question, the
        tools' descriptions and the run's error observations, its results, the placeholders."""
        return Given(question, (*(t.description for t in self.tools), *tool_texts),
                     tuple(results), placeholders(*self.agent.templates.values()),
                     notation if "Calculator" in self.tool_map else None)

    def _agent_for(self, fmt: ResponseFormat | None) -> Agent:
        """The agent of a run whose answer must match ``fmt``: this executor's agent, asking
        for that shape (no tools loaded, nothing built but its prompt)."""
        return self.agent.answering(None if fmt is None else fmt.schema)

    # ------------------------------------------------------------------ tools
    def lookup(self, action: AgentAction) -> tuple[Tool | None, str]:
        """The tool for an action, or the observation explaining why it cannot run."""
        return find_tool(self.tool_map, self.tools, action.tool, wire=self.agent.native_tools)

