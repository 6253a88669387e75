"""The chat's one event loop (issue 23): every turn runs on it, Ctrl-C cancels the turn
running, and at the prompt Ctrl-C is a KeyboardInterrupt as before."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from agentcli.cli.repl_loop import TurnLoop


def test_turns_share_one_loop_and_ctrl_c_cancels_only_the_running_turn() -> None:
    turns = TurnLoop()
    seen: list[object] = []

    async def turn(interrupt: bool) -> None:
        seen.append(asyncio.get_running_loop())
        if interrupt:
            asyncio.get_running_loop().call_soon(os.kill, os.getpid(), signal.SIGINT)
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                seen.append("cancelled")  # the run ends itself, as the executor does
                return
            seen.append("not cancelled")

    try:
        with turns.sigint_cancels_turns():
            assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
            turns.run(turn(False))
            turns.run(turn(True))
            turns.run(turn(False))  # the next turn runs normally
            with pytest.raises(KeyboardInterrupt):  # no turn running: at the prompt
                os.kill(os.getpid(), signal.SIGINT)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        turns.close()
    assert seen[2] == "cancelled" and seen[0] is seen[1] is seen[3]


def test_a_cancellation_that_escapes_the_turn_is_a_keyboard_interrupt() -> None:
    turns = TurnLoop()

    async def stubborn() -> None:
        asyncio.get_running_loop().call_soon(os.kill, os.getpid(), signal.SIGINT)
        await asyncio.sleep(30)  # CancelledError propagates out of the task

    try:
        with pytest.raises(KeyboardInterrupt):
            turns.run(stubborn())  # (the handler is installed for the one turn)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        turns.close()
