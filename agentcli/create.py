"""The public factories: ``initialize_agent`` and ``create_react_agent`` (LangChain's
shape) and ``create_agent``, an agent over a state schema returning state dicts (LangGraph's):

    agent = create_agent(model, [my_tool], state_schema=MyState)
    out = agent.invoke({"foo": "Hello"})      # the output-visible state, e.g. out["baz"]

It is a thin layer over :class:`~agentcli.executor.AgentExecutor`: the tool-calling agent
type by default, parse errors sent back to the model, and ``invoke`` returning the state
instead of a :class:`~agentcli.schema.RunResult`.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentcli._sync import iterate, run_sync
from agentcli.agents import DEFAULT_AGENT, AgentType, agent_class, build_agent
from agentcli.agents.base import Agent
from agentcli.agents.prompts import check_template, template_name
from agentcli.agents.saved import load_agent_file
from agentcli.callbacks.manager import CallbackManager
from agentcli.events import RunEvent
from agentcli.executor import AgentExecutor, Answer
from agentcli.middleware import AgentMiddleware
from agentcli.models.base import BaseChatModel
from agentcli.models.media import reads_media
from agentcli.runnable import Pipes
from agentcli.structured import ResponseFormat
from agentcli.tools.base import Tool
from agentcli.tools.base import tool as as_tool


class CompiledAgent(Pipes):
    """A runnable agent over state dicts: invoke, ainvoke, stream, astream, batch."""

    def __init__(self, executor: AgentExecutor) -> None:
        self.executor = executor

    # ``response_format``: this run's output schema (None: the one given to create_agent).
    def invoke(self, state: Mapping[str, object] | str | None = None, *,
               input: Mapping[str, object] | str | None = None,
               config: Mapping[str, object] | None = None,
               response_format: Answer = None) -> dict[str, Any]:
        """Run to the end; the output-visible state. ``input=`` is LangGraph's name for the
        state; ``config`` is LangChain's run config (callbacks, tags, metadata, run_name)."""
        return run_sync(self.ainvoke(state, input=input, config=config,
                                     response_format=response_format),
                        instead="CompiledAgent.ainvoke")

    async def ainvoke(self, state: Mapping[str, object] | str | None = None, *,
                      input: Mapping[str, object] | str | None = None,
                      config: Mapping[str, object] | None = None,
                      response_format: Answer = None) -> dict[str, Any]:
        """Async :meth:`invoke`."""
        return dict((await self.executor.ainvoke(state, config, input=input,
                                                 response_format=response_format)).state)

    def stream(self, state: Mapping[str, object] | str, *,
               response_format: Answer = None) -> Iterator[RunEvent]:
        """Every event of the run; the last holds the result (``event.result.state``)."""
        return iterate(self.astream(state, response_format=response_format),
                       instead="CompiledAgent.astream")

    def astream(self, state: Mapping[str, object] | str, *,
                response_format: Answer = None) -> AsyncIterator[RunEvent]:
        """Async :meth:`stream`."""
        return self.executor.astream(state, response_format=response_format)

    def batch(
        self, states: Sequence[Mapping[str, object] | str],
        config: Mapping[str, object] | None = None,
        *, concurrency: int | None = None, response_format: Answer = None,
    ) -> list[dict[str, Any] | BaseException]:
        """Many runs, at most ``concurrency`` (or the config's ``max_concurrency``) at once;
        failures are returned, not raised."""
        results = self.executor.batch(states, config, concurrency=concurrency,
                                      response_format=response_format)
        return [r if isinstance(r, BaseException) else dict(r.state) for r in results]


def initialize_agent(
    tools: Sequence[Tool],
    llm: BaseChatModel,
    agent: str | AgentType | type[Agent] | None = None,
    callback_manager: CallbackManager | None = None,
    agent_path: str | Path | None = None,
    agent_kwargs: dict[str, Any] | None = None,
    *,
    verbose: bool = False,
    **executor_options: Any,
) -> AgentExecutor:
    """Build an AgentExecutor for ``agent`` (a type name, or an agent class of your own)
    over ``tools`` and ``llm``.

    ``verbose=True`` prints the trace to stderr, as the seed's example does; ``agent_path``
    builds the agent a file from ``executor.save_agent`` describes (instead of ``agent``).
    """
    accepted = set(inspect.signature(AgentExecutor).parameters) - {
        "agent", "tools", "llm", "verbose", "callback_manager"}
    unknown = sorted(set(executor_options) - accepted)
    if unknown:
        raise TypeError(f"initialize_agent got unknown argument(s) {unknown}; it takes tools, "
                        "llm, agent, callback_manager, agent_path, agent_kwargs, verbose and: "
                        + ", ".join(sorted(accepted)))
    kwargs = dict(agent_kwargs or {})
    if agent_path is not None:
        if agent is not None:
            raise TypeError("initialize_agent takes agent or agent_path, not both")
        agent, saved = load_agent_file(agent_path)
        kwargs = saved | kwargs
    agent_obj = build_agent(agent or DEFAULT_AGENT, tools, llm, **kwargs)
    return AgentExecutor(agent_obj, tools, llm=llm, verbose=verbose,
                         callback_manager=callback_manager, **executor_options)


def create_react_agent(llm: BaseChatModel, tools: Sequence[Tool], prompt: object, *,
                       tools_renderer: Callable[[list[Tool]], str] | None = None,
                       **unknown: object) -> Agent:
    """A zero-shot ReAct agent over ``tools`` whose prompt is ``prompt`` (a template object
    with ``.template``, or the text), bound to ``llm``: ``AgentExecutor(agent=..., tools=...)``
    runs it. The template must use exactly {tools}, {tool_names}, {input} and
    {agent_scratchpad} (a ConfigError names what is missing); ``tools_renderer`` writes the
    {tools} text (else one ``name: description`` line per tool)."""
    if unknown:
        raise TypeError(f"create_react_agent got unknown argument(s) {sorted(unknown)}; "
                        "accepted: llm, tools, prompt, tools_renderer")
    kind = AgentType.ZERO_SHOT_REACT_DESCRIPTION.value
    text = str(getattr(prompt, "template", prompt))
    check_template(agent_class(kind), text, "given to create_react_agent")
    if tools_renderer is not None:
        text = text.replace("{tools}", tools_renderer(list(tools)))
    built = build_agent(kind, tools, llm, templates={template_name(agent_class(kind)): text})
    built.runnable = True  # type: ignore[attr-defined]  # logs as LangChain's runnable agents
    return built


def create_agent(
    model: BaseChatModel,
    tools: Sequence[Tool | Callable[..., object]] = (),
    *,
    system_prompt: str | None = None,
    state_schema: type | None = None,
    response_format: ResponseFormat | Mapping[str, object] | type | None = None,
    middleware: Sequence[AgentMiddleware] = (),
    agent_type: str = "tool-calling",
    **executor_options: Any,
) -> CompiledAgent:
    """An agent over ``model`` and ``tools`` (functions become tools) with typed state."""
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
