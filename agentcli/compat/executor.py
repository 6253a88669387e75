"""LangChain's ``AgentExecutor`` subclass hook: ``_call(inputs, run_manager)``.

agentcli's own :class:`~agentcli.executor.AgentExecutor` refuses a subclass that overrides
``_call`` (it would never be called: wrap runs with middleware there). This one calls it:
``invoke`` runs ``self._call(inputs, run_manager)``, and ``super()._call(...)`` runs the agent
and returns its result dict, so LangChain's retrying or monitoring subclasses port as
written. ``stream``/``astream`` go straight to the run (no ``_call``).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from agentcli._sync import run_sync
from agentcli.callbacks.manager import CallbackManager, RunConfig
from agentcli.callbacks.stdout import colored
from agentcli.executor import AgentExecutor as _Executor
from agentcli.executor import Answer, Config, Inputs, one_input
from agentcli.schema import RunResult
from agentcli.textsafe import safe_text


class CallbackManagerForChainRun:
    """What ``_call`` receives as ``run_manager``: ``on_text`` (printed when verbose) and
    the run's config."""

    def __init__(self, manager: CallbackManager, config: RunConfig, verbose: bool,
                 response_format: Answer = None) -> None:
        self.manager = manager
        self.config = config
        self.verbose = verbose
        self.response_format = response_format  # the run's output schema (None: the executor's)
        self.run_id = manager.run_id

    def on_text(self, text: str, color: str | None = None, end: str = "", **kw: object) -> None:
        """Tell the handlers; print it (in ``color``) when the executor is verbose."""
        self.manager.emit("on_text", text, color=color, **kw)
        if self.verbose:
            print(colored(safe_text(text), color), end=end, file=sys.stdout, flush=True)


class CallbackManagerForLLMRun:
    """``run_manager`` in a LangChain-style model's ``_generate`` (agentcli passes None)."""


class CallbackManagerForToolRun:
    """``run_manager`` in a ``BaseTool._run`` (agentcli passes None)."""


class AgentExecutor(_Executor):
    """An executor whose runs go through ``_call``, for subclasses that override it."""

    calls_call = True

    def invoke(self, inputs: Inputs = None, config: Config = None, *, input: Inputs = None,
               callbacks: Config = None, response_format: Answer = None) -> RunResult:
        """Run through ``self._call`` (LangChain's hook) and return the result dict."""
        given = one_input(inputs, input)
        data = {"input": given} if isinstance(given, str) else dict(given)
        conf = RunConfig.of(config).adding(callbacks)
        manager = CallbackManager([*self.callbacks, *conf.callbacks])
        out = self._call(data, CallbackManagerForChainRun(manager, conf, self.verbose,
                                                          response_format))
        if isinstance(out, RunResult):
            return out
        # what _call returned, a plain dict (say a fallback answer), as a result dict
        extra = {k: v for k, v in out.items() if k not in ("output", "input")}
        output = out.get("output", "")
        return RunResult(output=None if output is None else str(output), steps=(),
                         stop_reason="finished", state=extra, input=data.get("input"))

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

