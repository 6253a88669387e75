"""Composition: ``a | b`` runs ``a``, then ``b`` on its output (LangChain's Runnable shape).

Anything with ``invoke`` (an :class:`~agentcli.executor.AgentExecutor`, a model, a tool) or a
plain function can be a step. A sequence is itself a :class:`Runnable`: ``invoke``,
``ainvoke``, ``stream``, ``batch``, ``abatch`` and more ``|``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Generic, TypeVar

from agentcli._sync import in_thread, run_sync

In = TypeVar("In")
Out = TypeVar("Out")


class Runnable(Generic[In, Out]):
    """A step with ``invoke(input, config=None)``; the rest is built on it."""

    def invoke(self, input: In, config: Mapping[str, Any] | None = None, **kw: Any) -> Out:
        """Run once."""
        raise NotImplementedError(f"{type(self).__name__} must implement invoke")

    async def ainvoke(self, input: In, config: Mapping[str, Any] | None = None,
                      **kw: Any) -> Out:
        """Run once, off the event loop (a daemon thread)."""
        return await in_thread(lambda: self.invoke(input, config, **kw))

    def stream(self, input: In, config: Mapping[str, Any] | None = None,
               **kw: Any) -> Iterator[Out]:
        """The output, in one piece."""
        yield self.invoke(input, config, **kw)

    def batch(self, inputs: Sequence[In], config: Mapping[str, Any] | None = None, *,
              return_exceptions: bool = False, **kw: Any) -> list[Out | BaseException]:
        """Many inputs, at most the config's ``max_concurrency`` (else 8) at once, in order."""
        workers = max(1, int((config or {}).get("max_concurrency") or 8))

        def one(item: In) -> Out | BaseException:
            try:
                return self.invoke(item, config, **kw)
            except Exception as err:
                if not return_exceptions:
                    raise
                return err

        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(one, inputs))

    async def abatch(self, inputs: Sequence[In], config: Mapping[str, Any] | None = None, *,
                     return_exceptions: bool = False, **kw: Any) -> list[Out | BaseException]:
        """Async :meth:`batch`."""
        return await in_thread(lambda: self.batch(inputs, config,
                                                  return_exceptions=return_exceptions, **kw))

    def __or__(self, then: Any) -> RunnableSequence:
        return RunnableSequence(self, as_runnable(then))

    def __ror__(self, before: Any) -> RunnableSequence:
        return RunnableSequence(as_runnable(before), self)

    def pipe(self, *then: Any) -> RunnableSequence:
        """``a.pipe(b, c)`` is ``a | b | c``."""
        return RunnableSequence(self, *(as_runnable(t) for t in then))


class RunnableLambda(Runnable[Any, Any]):
    """A function (taking the input, and ``config`` if it names one) as a step."""

    def __init__(self, func: Callable[..., Any]) -> None:
        self.func = func
        try:
            self._takes_config = "config" in inspect.signature(func).parameters
        except (TypeError, ValueError):
            self._takes_config = False

    def invoke(self, input: Any, config: Mapping[str, Any] | None = None, **kw: Any) -> Any:
        """Call the function."""
        return self.func(input, config=config) if self._takes_config else self.func(input)


class _Invoking(Runnable[Any, Any]):
    """An object with ``invoke`` (and maybe ``ainvoke``) as a step."""

    def __init__(self, target: Any) -> None:
        self.target = target

    def invoke(self, input: Any, config: Mapping[str, Any] | None = None, **kw: Any) -> Any:
        """:meth:`ainvoke`, through the portal."""
        return run_sync(self.ainvoke(input, config, **kw), instead="ainvoke")

    async def ainvoke(self, input: Any, config: Mapping[str, Any] | None = None,
                      **kw: Any) -> Any:
        """The target's ``ainvoke`` when it has one, else its ``invoke`` in a thread (given
        the config, when there is one)."""
        more = kw if config is None else {**kw, "config": config}
        if hasattr(self.target, "ainvoke"):
            return await self.target.ainvoke(input, **more)
        return await in_thread(lambda: self.target.invoke(input, **more))


class RunnableSequence(Runnable[Any, Any]):
    """Steps run one after another, each on the previous one's output."""

    def __init__(self, *steps: Runnable[Any, Any]) -> None:
        flat: list[Runnable[Any, Any]] = []
        for step in steps:
            flat.extend(step.steps if isinstance(step, RunnableSequence) else [step])
        self.steps: list[Runnable[Any, Any]] = flat

    def invoke(self, input: Any, config: Mapping[str, Any] | None = None, **kw: Any) -> Any:
        """:meth:`ainvoke`, through the portal."""
        return run_sync(self.ainvoke(input, config), instead="RunnableSequence.ainvoke")

    async def ainvoke(self, input: Any, config: Mapping[str, Any] | None = None,
                      **kw: Any) -> Any:
        """Each step's ``ainvoke`` in turn (``config`` goes to every step)."""
        for step in self.steps:
            input = await step.ainvoke(input, config)
        return input


def as_runnable(thing: Any) -> Runnable[Any, Any]:
    """A step from a Runnable, an object with ``invoke``, or a function."""
    if isinstance(thing, Runnable):
        return thing
    if hasattr(thing, "invoke"):
        return _Invoking(thing)
    if callable(thing):
        return RunnableLambda(thing)
    raise TypeError(f"cannot compose {type(thing).__name__!r}: a step needs invoke() or to be "
                    "callable")
