"""``create_agent``: an agent over a state schema, returning state dicts (LangGraph's shape).

    agent = create_agent(model, [my_tool], state_schema=MyState)
    out = agent.invoke({"foo": "Hello"})      # the output-visible state, e.g. out["baz"]

It is a thin layer over :class:`~agentcli.executor.AgentExecutor`: the tool-calling agent
type by default, parse errors sent back to the model, and ``invoke`` returning the state
instead of a :class:`~agentcli.schema.RunResult`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import Any

from agentcli.events import RunEvent
from agentcli.executor import AgentExecutor
from agentcli.middleware import AgentMiddleware
from agentcli.models.base import BaseChatModel
from agentcli.runnable import RunnableSequence, as_runnable
from agentcli.schema import RunResult
from agentcli.tools.base import Tool


class CompiledAgent:
    """A runnable agent over state dicts: invoke, ainvoke, stream, astream, batch."""

    def __init__(self, executor: AgentExecutor) -> None:
        self.executor = executor

    @staticmethod
    def _state(result: RunResult) -> dict[str, Any]:
        return dict(result.state)

    def invoke(self, state: Mapping[str, Any] | str | None = None, *,
               input: Mapping[str, Any] | str | None = None,
               config: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Run to the end; the output-visible state. ``input=`` is LangGraph's name for the
        state; ``config`` is LangChain's run config (callbacks, tags, metadata, run_name)."""
        return self._state(self.executor.invoke(state, config, input=input))

    async def ainvoke(self, state: Mapping[str, Any] | str | None = None, *,
                      input: Mapping[str, Any] | str | None = None,
                      config: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Async :meth:`invoke`."""
        return self._state(await self.executor.ainvoke(state, config, input=input))

    def stream(self, state: Mapping[str, Any] | str) -> Iterator[RunEvent]:
        """Every event of the run; the last holds the result (``event.result.state``)."""
        return self.executor.stream(state)

    def astream(self, state: Mapping[str, Any] | str) -> AsyncIterator[RunEvent]:
        """Async :meth:`stream`."""
        return self.executor.astream(state)

    def batch(
        self, states: Sequence[Mapping[str, Any] | str], config: Mapping[str, Any] | None = None,
        *, concurrency: int | None = None,
    ) -> list[dict[str, Any] | BaseException]:
        """Many runs, at most ``concurrency`` (or the config's ``max_concurrency``) at once;
        failures are returned, not raised."""
        results = self.executor.batch(states, config, concurrency=concurrency)
        return [r if isinstance(r, BaseException) else self._state(r) for r in results]

    def __or__(self, then: Any) -> RunnableSequence:
        """``agent | fn``: a runnable running the agent, then ``fn`` on its state."""
        return RunnableSequence(as_runnable(self), as_runnable(then))

    def __ror__(self, before: Any) -> RunnableSequence:
        """``fn | agent``: a runnable running ``fn``, then the agent on its result."""
        return RunnableSequence(as_runnable(before), as_runnable(self))


def create_agent(
    model: BaseChatModel,
    tools: Sequence[Tool | Callable[..., Any]] = (),
    *,
    system_prompt: str | None = None,
    state_schema: type | None = None,
    response_format: Any = None,
    middleware: Sequence[AgentMiddleware] = (),
    agent_type: str = "tool-calling",
    **executor_options: Any,
) -> CompiledAgent:
    """An agent over ``model`` and ``tools`` (functions become tools) with typed state."""
    from agentcli.agents import agent_class, initialize_agent
    from agentcli.models.media import reads_media
    from agentcli.structured import ResponseFormat
    from agentcli.tools.base import tool as as_tool

    built = [t if isinstance(t, Tool) else as_tool(t) for t in tools]
    fmt = ResponseFormat.of(response_format) if response_format is not None else None
    agent_kwargs: dict[str, Any] = {}
    if fmt is not None:
        agent_kwargs["response_schema"] = fmt.schema
    native = agent_class(agent_type).native_tools  # the tool-calling agent
    if system_prompt is not None:
        agent_kwargs["system_prompt" if native else "system_extra"] = system_prompt
    if native:  # tools' images reach a vision model
        agent_kwargs["tool_media"] = reads_media(model.name)
    executor_options.setdefault("handle_parsing_errors", True)
    executor_options.setdefault("return_intermediate_steps", True)
    return CompiledAgent(initialize_agent(  # the one factory, as the CLI's runtime uses too
        built, model, agent_type, agent_kwargs=agent_kwargs, state_schema=state_schema,
        response_format=fmt, middleware=middleware, **executor_options))
