"""The one portal loop: every sync caller's coroutine runs on one long-lived loop, and a sync
call made inside a running loop is an error that names the async call to await."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time

import pytest

from agentcli._sync import iterate, run_sync
from agentcli.models.base import BaseChatModel, TokenSink
from agentcli.schema import ChatRequest, ChatResult, user


async def _loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


def test_sync_callers_share_one_long_lived_loop_off_their_thread() -> None:
    first = run_sync(_loop())
    seen: list[asyncio.AbstractEventLoop] = []
    worker = threading.Thread(target=lambda: seen.append(run_sync(_loop())))
    worker.start()
    worker.join(30)
    assert seen == [first] and run_sync(_loop()) is first and not first.is_closed()

    async def items() -> object:
        for _ in range(2):
            yield asyncio.get_running_loop()

    assert list(iterate(items())) == [first, first]


def test_a_sync_model_call_inside_a_running_loop_names_the_async_call() -> None:
    class Model(BaseChatModel):
        async def arequest(self, request: ChatRequest, on_token: TokenSink | None = None
                           ) -> ChatResult:
            return ChatResult("hi")

    model = Model()

    async def misuse() -> None:
        model.generate([user("q")])

    with pytest.raises(RuntimeError, match=r"await model\.agenerate"):
        asyncio.run(misuse())
    assert model.generate([user("q")]).text == "hi"  # from sync code it is fine


def test_ctrl_c_cancels_the_call_which_may_still_hand_back_its_result() -> None:
    started = threading.Event()

    async def run() -> str:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            return "interrupted, steps kept"  # as the executor ends a run
        return "not cancelled"

    def interrupt() -> None:
        started.wait(30)
        time.sleep(0.2)  # let the caller reach its wait (where Ctrl-C normally lands)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    assert run_sync(run()) == "interrupted, steps kept"


def test_iterate_advances_the_generator_only_when_asked_and_closes_it() -> None:
    """The pump takes one item per ``next``: breaking out after the first item means the
    generator never ran its second step (a run's next tool never started), and it is closed."""
    steps: list[str] = []

    async def items() -> object:
        try:
            for i in range(3):
                steps.append(f"step {i}")
                yield i
        finally:
            steps.append("closed")

    for item in iterate(items()):
        assert item == 0 and steps == ["step 0"]
        break
    assert steps == ["step 0", "closed"]

    async def failing() -> object:
        yield 1
        raise ValueError("boom")

    got: list[object] = []
    with pytest.raises(ValueError, match="boom"):
        got.extend(iterate(failing()))
    assert got == [1]


def test_ctrl_c_while_iterating_cancels_the_step_and_keeps_what_follows() -> None:
    started = threading.Event()

    async def run() -> object:
        yield "start"
        try:
            started.set()
            await asyncio.sleep(60)
            yield "not cancelled"
        except asyncio.CancelledError:
            yield "interrupted"

    def interrupt() -> None:
        started.wait(30)
        time.sleep(0.2)  # let the caller reach its wait (where Ctrl-C normally lands)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    assert list(iterate(run())) == ["start", "interrupted"]


def test_ctrl_c_between_two_items_cancels_the_next_step_and_loses_nothing() -> None:
    """Ctrl-C that lands in the caller's own code, between two items, is not raised there
    (the run's end would be lost with it): the next step is cancelled and what the generator
    hands back still comes. A second Ctrl-C raises as usual."""
    async def run() -> object:
        yield "start"
        try:
            await asyncio.sleep(60)
            yield "not cancelled"
        except asyncio.CancelledError:
            yield "interrupted"
        yield "end"

    got = []
    for item in iterate(run()):
        got.append(item)
        if item == "start":
            signal.raise_signal(signal.SIGINT)  # as if Ctrl-C came while this item was handled
    assert got == ["start", "interrupted", "end"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back

    with pytest.raises(KeyboardInterrupt):
        for item in iterate(run()):
            if item == "start":
                signal.raise_signal(signal.SIGINT)
                signal.raise_signal(signal.SIGINT)
