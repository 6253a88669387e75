"""The AgentExecutor: the public API of a run (invoke, stream, batch and their async forms).

The loop itself is :class:`agentcli.loop.AgentLoop` (a generator of effects, no I/O); the
one driver, :mod:`agentcli._drive`, fulfils its effects on asyncio; sync callers reach it
through :mod:`agentcli._sync`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path

from agentcli._drive import adrive
from agentcli._sync import iterate, run_sync
from agentcli.agents.saved import save_agent
from agentcli.callbacks.manager import RunConfig
from agentcli.events import End, RunEvent
from agentcli.loop import AgentLoop
from agentcli.loop_setup import Answer, Config, Inputs, Trim
from agentcli.middleware import Approval, Approver, allow_all, deny_all, truncate_middle
from agentcli.recovery import ParsingErrorHandler
from agentcli.runnable import Pipes, gather_bounded
from agentcli.schema import FORCE_STOP_MESSAGE, PARSE_ERROR_TOOL, RunResult
from agentcli.structured import ResponseFormat

__all__ = ["FORCE_STOP_MESSAGE", "PARSE_ERROR_TOOL", "AgentExecutor", "Answer", "Approval",
           "Approver", "Config", "Inputs", "ParsingErrorHandler", "Trim", "allow_all", "deny_all",
           "truncate_middle"]


class AgentExecutor(AgentLoop, Pipes):
    """Runs an agent with its tools: limits, early stopping, parse-error recovery, approvals."""

    def __init_subclass__(cls, **kw: object) -> None:
        super().__init_subclass__(**kw)
        if "_call" in vars(cls) and not getattr(cls, "calls_call", False):
            raise TypeError(
                f"{cls.__name__} overrides _call, which this AgentExecutor never calls; wrap "
                "the run with middleware (AgentExecutor(..., middleware=[...]), see "
                "agentcli.middleware), or subclass agentcli.compat.AgentExecutor, which does "
                "call _call")

    @property
    def input_keys(self) -> list[str]:
        """What a run reads (LangChain's ``input_keys``)."""
        return ["input"]

    @property
    def output_keys(self) -> list[str]:
        """What a run's result holds (LangChain's ``output_keys``)."""
        return ["output", "intermediate_steps"] if self.return_intermediate_steps else ["output"]

    # ``config`` is LangChain's run config ({"callbacks", "tags", "metadata", "run_name"}) or,
    # as before, a list of handlers; ``input=`` is LangChain's name for the first argument.
    # ``response_format`` is the run's output schema (a JSON Schema dict, a dataclass, a
    # TypedDict): an input of the run, like pydantic-ai's per-run ``output_type``; None keeps
    # the executor's own. One executor serves runs with any schema.
    def stream(self, inputs: Inputs = None, config: Config = None, *, input: Inputs = None,
               callbacks: Config = None, response_format: Answer = None) -> Iterator[RunEvent]:
        """Yield every event of the run as it happens; the last is ``End`` with the result."""
        return iterate(self.astream(inputs, config, input=input, callbacks=callbacks,
                                    response_format=response_format))

    def invoke(self, inputs: Inputs = None, config: Config = None, *, input: Inputs = None,
               callbacks: Config = None, response_format: Answer = None) -> RunResult:
        """Run to the end and return the result."""
        return run_sync(self.ainvoke(inputs, config, input=input, callbacks=callbacks,
                                     response_format=response_format))

    def astream(self, inputs: Inputs = None, config: Config = None, *, input: Inputs = None,
                callbacks: Config = None, response_format: Answer = None
                ) -> AsyncIterator[RunEvent]:
        """Run on the async core, yielding each event as it happens."""
        return adrive(self, self.start(one_input(inputs, input),
                                       RunConfig.of(config).adding(callbacks),
                                       response_format=response_format))

    async def ainvoke(self, inputs: Inputs = None, config: Config = None, *,
                      input: Inputs = None, callbacks: Config = None,
                      response_format: Answer = None) -> RunResult:
        """Run to the end on the async core and return the result."""
        event: RunEvent | None = None
        async for event in self.astream(inputs, config, input=input,  # noqa: B007
                                        callbacks=callbacks, response_format=response_format):
            pass
        assert isinstance(event, End)
        return event.result

    def save_agent(self, path: str | Path) -> None:
        """Save the agent's type and prompt settings (``initialize_agent(agent_path=...)``)."""
        save_agent(self.agent, path)

    async def abatch(
        self,
        inputs: Sequence[str | Mapping[str, object]],
        config: Config = None,
        *,
        concurrency: int | None = None,
        return_exceptions: bool = True,
        response_format: Answer = None,
    ) -> list[RunResult | BaseException]:
        """Run many inputs with at most ``concurrency`` (else the config's
        ``max_concurrency``, else 8) at once; results keep input order."""
        conf = RunConfig.of(config)
        fmt = None if response_format is None else ResponseFormat.of(response_format)  # once
        return await gather_bounded(
            lambda item: self.ainvoke(item, conf, response_format=fmt), inputs,
            concurrency or conf.max_concurrency or 8, return_exceptions)

    def batch(
        self, inputs: Sequence[str | Mapping[str, object]], config: Config = None, *,
        concurrency: int | None = None, response_format: Answer = None,
    ) -> list[RunResult | BaseException]:
        """Synchronous wrapper over :meth:`abatch`."""
        return run_sync(self.abatch(inputs, config, concurrency=concurrency,
                                    response_format=response_format))


def one_input(inputs: Inputs, input: Inputs) -> str | Mapping[str, object]:
    """The run's input, given once: positionally or as LangChain's ``input=``."""
    if (inputs is None) == (input is None):
        raise TypeError("invoke takes the input once: invoke(q) or invoke(input=q)")
    return inputs if inputs is not None else input  # type: ignore[return-value]
