"""Runnable composition: ``|``, batch and abatch (bounded, ordered, exceptions returned)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from agentcli.runnable import RunnableLambda, RunnableSequence


def test_pipe_builds_one_flat_sequence() -> None:
    chain = RunnableLambda(lambda x: x + 1) | (lambda x: x * 2) | RunnableLambda(str)
    assert isinstance(chain, RunnableSequence) and len(chain.steps) == 3
    assert chain.invoke(3) == "8"
    assert ((lambda x: x - 1) | RunnableLambda(abs)).invoke(-4) == 5


def test_batch_keeps_order_and_bounds_concurrency() -> None:
    running, most, lock = [0], [0], threading.Lock()

    def slow(x: int) -> int:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.02)
        with lock:
            running[0] -= 1
        return x * x

    out = RunnableLambda(slow).batch(list(range(6)), {"max_concurrency": 2})
    assert out == [0, 1, 4, 9, 16, 25]
    assert most[0] <= 2


def test_batch_returns_or_raises_exceptions() -> None:
    def inverse(x: int) -> float:
        return 1 / x

    step = RunnableLambda(inverse)
    out = step.batch([1, 0, 2], return_exceptions=True)
    assert out[0] == 1.0 and isinstance(out[1], ZeroDivisionError) and out[2] == 0.5
    with pytest.raises(ZeroDivisionError):
        step.batch([1, 0])
    assert asyncio.run(step.abatch([4, 0], return_exceptions=True))[0] == 0.25
