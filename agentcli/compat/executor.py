"""LangChain's ``AgentExecutor``: the ``_call(inputs, run_manager)`` subclass hook, ``run``,
calling the executor (``executor({"input": q}, return_only_outputs=True)``) and ``memory=``.

agentcli's own :class:`~agentcli.executor.AgentExecutor` refuses a subclass that overrides
``_call`` (it would never be called: wrap runs with middleware there). This one calls it:
``invoke`` runs ``self._call(inputs, run_manager)``, and ``super()._call(...)`` runs the agent
and returns its result dict, so LangChain's retrying or monitoring subclasses port as
written. ``stream``/``astream`` go straight to the run (no ``_call``).

``executor.run(q)`` is the answer text; ``executor(inputs)`` the result dict (only the outputs
with ``return_only_outputs=True``). With ``memory=`` (:mod:`agentcli.compat.memory`) each run
is shown the remembered turns as its chat history and its question and answer are saved.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from agentcli import create
from agentcli._sync import run_sync
from agentcli.agents.base import Agent
from agentcli.callbacks.manager import CallbackManager as _Manager
from agentcli.callbacks.manager import RunConfig
from agentcli.compat.agents import langchain_shaped
from agentcli.compat.callbacks import CallbackManagerForChainRun
from agentcli.compat.memory import BaseMemory
from agentcli.compat.plan import PlanAgent, is_plan_agent
from agentcli.compat.providers import STREAMING
from agentcli.executor import AgentExecutor as _Executor
from agentcli.executor import Answer, Config, Inputs, one_input
from agentcli.models.base import BaseChatModel
from agentcli.records import record
from agentcli.schema import AgentStep, Decision, RunResult
from agentcli.tools.base import Tool


@record
class RunInfo:
    """What ``include_run_info=True`` adds: the run's id (its handlers' ``run_id``)."""

    run_id: uuid.UUID


class AgentExecutor(_Executor):
    """An executor whose runs go through ``_call`` (for subclasses that override it), with
    LangChain's ``run``, ``__call__`` and ``memory``."""

    calls_call = True

    def __init__(self, agent: Any = None, tools: Sequence[Tool] | None = None, *args: Any,
                 memory: BaseMemory | None = None, **kwargs: Any) -> None:
        if is_plan_agent(agent):  # a plan() agent or a Runnable: asked at each step
            agent = PlanAgent(agent, tools or ())
            kwargs.setdefault("stall_limit", None)  # its code repeats a call on purpose
        super().__init__(agent, tools, *args, **kwargs)
        self.memory = memory
        self.stream_tokens = self.stream_tokens or _streams(self.llm)

    @classmethod
    def adopting(cls, built: _Executor, memory: BaseMemory | None = None) -> AgentExecutor:
        """This class over an executor agentcli built (``initialize_agent``'s)."""
        adopted = cls.__new__(cls)
        adopted.__dict__.update(vars(built))
        adopted.memory = memory
        adopted.stream_tokens = built.stream_tokens or _streams(built.llm)
        return adopted

    @classmethod
    def from_agent_and_tools(cls, agent: Any, tools: Any, **kwargs: Any) -> AgentExecutor:
        """LangChain's constructor by another name."""
        return cls(agent, tools, **kwargs)

    def invoke(self, inputs: Inputs = None, config: Config = None, *, input: Inputs = None,
               callbacks: Config = None, response_format: Answer = None) -> RunResult:
        """Run through ``self._call`` (LangChain's hook) and return the result dict."""
        given = one_input(inputs, input)
        data = {"input": given} if isinstance(given, str) else dict(given)
        conf = RunConfig.of(config).adding(callbacks)
        asked = data
        if self.memory is not None:  # the turns so far, as the agents read them
            data = {**data, "chat_history": self.memory.messages()}
            conf = replace(conf, middleware=(*conf.middleware, *self.memory.middleware()))
        manager = _Manager([*self.callbacks, *conf.callbacks])
        out = self._call(data, CallbackManagerForChainRun(manager, conf, self.verbose,
                                                          response_format))
        if not isinstance(out, RunResult):
            # what _call returned, a plain dict (say a fallback answer), as a result dict
            extra = {k: v for k, v in out.items() if k not in ("output", "input")}
            output = out.get("output", "")
            out = RunResult(output=None if output is None else str(output), steps=(),
                            stop_reason="finished", state=extra, input=data.get("input"))
        if self.memory is not None and out.output is not None:  # no answer: no turn to keep
            self.memory.save_context(asked, {"output": out.output})
        return out

    def __call__(self, inputs: Inputs, return_only_outputs: bool = False,
                 callbacks: Config = None, *, tags: list[str] | None = None,
                 metadata: dict[str, Any] | None = None, run_name: str | None = None,
                 include_run_info: bool = False) -> dict[str, Any]:
        """LangChain's older call: the result dict, or only its outputs; with
        ``include_run_info``, ``"__run"`` holds the run's id (``RunInfo.run_id``)."""
        run_id = uuid.uuid4()
        config = {"tags": tags, "metadata": metadata, "run_name": run_name,
                  "run_id": run_id.hex}
        result = self.invoke(inputs, {k: v for k, v in config.items() if v}, callbacks=callbacks)
        shown = {key: result[key] for key in self.output_keys} if return_only_outputs else result
        if include_run_info:
            shown["__run"] = RunInfo(run_id)
        return shown

    def run(self, *args: Inputs, callbacks: Config = None, tags: list[str] | None = None,
            metadata: dict[str, Any] | None = None, **kwargs: Any) -> str:
        """The answer text: ``run(question)`` or ``run(input=question)``."""
        if len(self.output_keys) != 1:
            raise ValueError(f"run() needs exactly one output key, this executor has "
                             f"{self.output_keys}: call invoke() and read result['output']")
        if len(args) + bool(kwargs) != 1:
            raise ValueError("run() takes one question: run(q) or run(input=q), not "
                             f"{len(args)} positional and {sorted(kwargs)} keyword argument(s)")
        given = args[0] if args else kwargs
        out: str = self(given, callbacks=callbacks, tags=tags, metadata=metadata)["output"]
        return out

    async def ainvoke(self, inputs: Inputs = None, config: Config = None, *,
                      input: Inputs = None, callbacks: Config = None,
                      response_format: Answer = None) -> RunResult:
        """Async :meth:`invoke` (``_call`` runs in a worker thread)."""
        return await asyncio.to_thread(self.invoke, inputs, config, input=input,
                                       callbacks=callbacks, response_format=response_format)

    def _call(self, inputs: dict[str, Any],
              run_manager: CallbackManagerForChainRun | None = None) -> dict[str, Any]:
        """One run of the agent on ``inputs``; its result dict."""
        config = run_manager.config if run_manager is not None else None
        fmt = run_manager.response_format if run_manager is not None else None
        return run_sync(_Executor.ainvoke(self, inputs, config, response_format=fmt))



def _streams(llm: BaseChatModel | None) -> bool:
    """A model LangChain code made with ``streaming=True`` (a provider's, or a model class
    of its own with a true ``streaming`` field): its tokens go to the handlers."""
    return llm in STREAMING or getattr(llm, "streaming", False) is True


def initialize_agent(tools: Sequence[Tool], llm: BaseChatModel, agent: Any = None,
                     callback_manager: _Manager | None = None, agent_path: Any = None,
                     agent_kwargs: dict[str, Any] | None = None, *,
                     memory: BaseMemory | None = None, **options: Any) -> AgentExecutor:
    """agentcli's ``initialize_agent`` (same arguments), also taking ``memory=``; the
    executor has LangChain's ``run`` and ``__call__``; the chat agent has LangChain's prompt
    shape (:class:`~agentcli.compat.prompts.LangChainChatAgent`)."""
    return AgentExecutor.adopting(
        create.initialize_agent(tools, llm, langchain_shaped(agent), callback_manager, agent_path,
                                agent_kwargs, **options), memory)


def create_react_agent(llm: BaseChatModel, tools: Sequence[Tool], prompt: object,
                       **options: Any) -> Agent:
    """agentcli's ``create_react_agent`` (same arguments); the agent also has LangChain's
    ``invoke({"input": q, "intermediate_steps": [...]})``: one step, the next action or the
    answer."""
    built = create.create_react_agent(llm, tools, prompt, **options)

    def invoke(inputs: Mapping[str, Any], config: object = None) -> Decision:
        steps = [AgentStep(a, o) for a, o in inputs.get("intermediate_steps") or ()]
        request = built.request({**inputs, "intermediate_steps": steps})
        return built.decide(llm.generate(request.messages, stop=request.stop))

    built.invoke = invoke  # type: ignore[attr-defined]  # on this agent only
    return built
