"""Composition: ``a | b`` runs ``a``, then ``b`` on its output (LangChain's Runnable shape).

Anything with ``invoke`` (an :class:`~agentcli.executor.AgentExecutor`, a model, a tool) or a
plain function can be a step. A sequence is itself a :class:`Runnable`: ``invoke``,
``ainvoke``, ``stream``, ``batch``, ``abatch`` and more ``|``.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar

from agentcli._sync import in_thread, run_sync

In = TypeVar("In")
Out = TypeVar("Out")
T = TypeVar("T")
R = TypeVar("R")
Config = Mapping[str, object] | None  # LangChain's run config, passed on as it is


async def gather_bounded(run: Callable[[T], Awaitable[R]], items: Iterable[T], most: int,
                         return_exceptions: bool) -> list[R | BaseException]:
    """``run`` on each item, at most ``most`` at once; the results in the items' order."""
    gate = asyncio.Semaphore(max(1, most))

    async def one(item: T) -> R:
        async with gate:
            return await run(item)

    return list(await asyncio.gather(*map(one, items), return_exceptions=return_exceptions))


class Pipes:
    """``self | then`` and ``before | self``: a sequence running one, then the other."""

    def __or__(self, then: object) -> RunnableSequence:
        return RunnableSequence(as_runnable(self), as_runnable(then))

    def __ror__(self, before: object) -> RunnableSequence:
        return RunnableSequence(as_runnable(before), as_runnable(self))


class Runnable(Pipes, Generic[In, Out]):
    """A step with ``invoke(input, config=None)``; the rest is built on it."""

    def invoke(self, input: In, config: Config = None, **kw: object) -> Out:
        """Run once."""
        raise NotImplementedError(f"{type(self).__name__} must implement invoke")

    async def ainvoke(self, input: In, config: Config = None,
                      **kw: object) -> Out:
        """Run once, off the event loop (a daemon thread)."""
        return await in_thread(lambda: self.invoke(input, config, **kw))

    def stream(self, input: In, config: Config = None,
               **kw: object) -> Iterator[Out]:
        """The output, in one piece."""
        yield self.invoke(input, config, **kw)

    def batch(self, inputs: Sequence[In], config: Config = None, *,
              return_exceptions: bool = False, **kw: object) -> list[Out | BaseException]:
        """Many inputs, at most the config's ``max_concurrency`` (else 8) at once, in order."""
        return run_sync(self.abatch(inputs, config, return_exceptions=return_exceptions, **kw),
                        instead="abatch")

    async def abatch(self, inputs: Sequence[In], config: Config = None, *,
                     return_exceptions: bool = False, **kw: object) -> list[Out | BaseException]:
        """Async :meth:`batch`."""
        most = (config or {}).get("max_concurrency")
        return await gather_bounded(lambda item: self.ainvoke(item, config, **kw), inputs,
                                    int(str(most)) if most else 8, return_exceptions)


Step = Runnable[Any, Any]  # a step of a sequence: what it takes and gives is not tracked


class RunnableLambda(Step):
    """A function (taking the input, and ``config`` if it names one) as a step."""

    def __init__(self, func: Callable[..., object]) -> None:
        self.func = func
        try:
            self._takes_config = "config" in inspect.signature(func).parameters
        except (TypeError, ValueError):
            self._takes_config = False

    def invoke(self, input: object, config: Config = None, **kw: object) -> object:
        """Call the function."""
        return self.func(input, config=config) if self._takes_config else self.func(input)


class _Invoking(Step):
    """An object with ``invoke`` (and maybe ``ainvoke``) as a step."""

    def __init__(self, target: Any) -> None:
        self.target = target

    def invoke(self, input: object, config: Config = None, **kw: object) -> object:
        """:meth:`ainvoke`, through the portal."""
        return run_sync(self.ainvoke(input, config, **kw), instead="ainvoke")

    async def ainvoke(self, input: object, config: Config = None,
                      **kw: object) -> object:
        """The target's ``ainvoke`` when it has one, else its ``invoke`` in a thread (given
        the config, when there is one)."""
        more = kw if config is None else {**kw, "config": config}
        if hasattr(self.target, "ainvoke"):
            return await self.target.ainvoke(input, **more)
        return await in_thread(lambda: self.target.invoke(input, **more))


class RunnableSequence(Step):
    """Steps run one after another, each on the previous one's output."""

    def __init__(self, *steps: Step) -> None:
        flat: list[Step] = []
        for step in steps:
            flat.extend(step.steps if isinstance(step, RunnableSequence) else [step])
        self.steps: list[Step] = flat

    def invoke(self, input: object, config: Config = None, **kw: object) -> object:
        """:meth:`ainvoke`, through the portal."""
        return run_sync(self.ainvoke(input, config), instead="RunnableSequence.ainvoke")

    async def ainvoke(self, input: object, config: Config = None,
                      **kw: object) -> object:
        """Each step's ``ainvoke`` in turn (``config`` goes to every step)."""
        for step in self.steps:
            input = await step.ainvoke(input, config)
        return input


def as_runnable(thing: object) -> Step:
    """A step from a Runnable, an object with ``invoke``, or a function."""
    if isinstance(thing, Runnable):
        return thing
    if hasattr(thing, "invoke"):
        return _Invoking(thing)
    if callable(thing):
        return RunnableLambda(thing)
    raise TypeError(f"cannot compose {type(thing).__name__!r}: a step needs invoke() or to be "
                    "callable")
