"""``agent chat`` on a pipe: each question is answered on the portal while the next lines are
read, so a turn hands nothing back to the reading thread.

The reading thread (:func:`answer_piped`) reads a line, puts it in the inbox of one coroutine
at work on the portal (:class:`_Answering`), and reads on; that coroutine echoes each line,
runs, renders and commits each question (:meth:`ChatRepl.aask`, the prompt's own turn) one
after the other, and waits for the next line with the portal free. A slash command waits
until every question before it is answered, then runs on the reading thread as at the
prompt. Ctrl-C on a pipe acts on the turn being answered: the first cancels its run (the turn
is logged, not saved), a second drops it (nothing more is shown or kept of it) and the next
question goes on; with no turn being answered it is ignored, as at an empty prompt.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
from typing import TYPE_CHECKING, TextIO

from agentcli._sync import post, start
from agentcli.cli.live import note
from agentcli.cli.slash import EXIT, dispatch

if TYPE_CHECKING:
    from agentcli.cli.repl import ChatRepl

# What the reading thread puts in the inbox: a line (echoed, and answered unless blank), a barrier
# (resolved once everything before it is answered) or None (the end of the input).
_Item = str | concurrent.futures.Future[None] | None


class PipedLines:
    """Messages from a pipe, one per line; a trailing backslash joins the next line, as at the
    prompt. Ends with EOFError, as Ctrl-D does. Not a generator: a Ctrl-C that lands while a
    line is awaited must leave the rest of the input readable."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.pending: list[str] = []  # lines ending with a backslash, awaiting the next one

    def __iter__(self) -> PipedLines:
        return self

    def __next__(self) -> str:
        while True:
            line = self.stream.readline()
            if not line:
                if not self.pending:
                    raise EOFError
                line = "\n".join(self.pending)
                self.pending = []
                return line
            line = line.rstrip("\r\n")
            if line.endswith("\\"):
                self.pending.append(line[:-1])
                continue
            line = "\n".join([*self.pending, line])
            self.pending = []
            return line


class _Turn:
    """The turn being answered: its task, what Ctrl-C did to it (each flag is set on the
    reading thread and read on the portal) and when it is over for the chat (its end, or
    its drop)."""

    def __init__(self, over: asyncio.Future[None]) -> None:
        self.task: asyncio.Task[None] | None = None
        self.cancelled = False
        self.dropped = False
        self.over = over

    def end(self, *_: object) -> None:
        """On the portal: the turn is over for the chat."""
        if not self.over.done():
            self.over.set_result(None)


class _Answering:
    """The coroutine on the portal that answers the lines in its inbox in order."""

    def __init__(self, repl: ChatRepl) -> None:
        self.repl = repl
        # Filled by the reading thread, emptied on the portal (a deque's append and popleft
        # are atomic). The portal is woken only when it waits for a line: a wake-up per line
        # would hand the interpreter lock back and forth between the threads at every one
        # while the portal answers (~1 ms a turn over the first turns of a long pipe).
        self.inbox: collections.deque[_Item] = collections.deque()
        self.waiting = False  # the portal waits for a line (set there, read by the reader)
        self.ready = asyncio.Event()  # used on the portal only
        self.turn: _Turn | None = None

    def put(self, item: _Item) -> None:
        """On the reading thread: one more item, and a wake-up if the portal waits."""
        self.inbox.append(item)
        if self.waiting:
            post(self.ready.set)

    async def _next(self) -> _Item:
        while not self.inbox:
            self.ready.clear()
            self.waiting = True  # then the inbox is looked at again: no wake-up is lost
            if not self.inbox:
                await self.ready.wait()
            self.waiting = False
        return self.inbox.popleft()

    async def run(self) -> None:
        """Echo each line and answer it; resolve each barrier; end at None."""
        while (item := await self._next()) is not None:
            if isinstance(item, concurrent.futures.Future):
                item.set_result(None)
                continue
            self.repl.echo(item)  # every line, as read: the transcript
            if item.strip():
                await self._answer(item.strip())

    async def _answer(self, question: str) -> None:
        turn = _Turn(asyncio.get_running_loop().create_future())
        turn.task = task = asyncio.ensure_future(
            self.repl.aask(question, lambda: turn.dropped))
        task.add_done_callback(turn.end)
        self.turn = turn
        try:
            await turn.over
        finally:
            self.turn = None
        if task.done() and not task.cancelled():
            task.result()  # our bug, if any, ends the chat as at the prompt
        else:  # cancelled before its run began, or dropped (it ends in the background)
            note(self.repl.console, "Cancelled; back at the prompt.")

    def interrupt(self) -> None:
        """Ctrl-C (on the reading thread): cancel the turn being answered, drop it the second
        time; nothing when no turn is being answered."""
        turn = self.turn
        if turn is None or turn.task is None or turn.dropped:
            return
        if not turn.cancelled:
            turn.cancelled = True
            post(turn.task.cancel)
        else:
            turn.dropped = True
            post(turn.end)


def answer_piped(repl: ChatRepl, lines: PipedLines) -> None:
    """Answer the questions of ``lines`` until their end or ``/exit``."""
    answering = _Answering(repl)
    done, _ = start(answering.run(), instead="answer_piped")

    def send(item: _Item) -> None:
        if done.done():  # it ended early: its error (or the end) is the chat's
            done.result()
            raise EOFError
        answering.put(item)

    def wait(future: concurrent.futures.Future[None]) -> None:
        """Until ``future`` is resolved, or the answering ended first (its error is the
        chat's): a barrier it will never reach must not hang the chat."""
        while True:
            try:
                concurrent.futures.wait([future, done],
                                        return_when=concurrent.futures.FIRST_COMPLETED)
                if future.done():
                    return future.result()
                done.result()
                raise EOFError
            except KeyboardInterrupt:
                answering.interrupt()

    def step() -> bool:
        """Read one line and pass it on; False at the end or ``/exit``."""
        while True:
            try:
                line = next(lines)
                break
            except KeyboardInterrupt:  # most often here: the next line is awaited
                answering.interrupt()
            except EOFError:
                return False
        if not line.strip().startswith("/"):
            send(line)  # echoed and answered there, in order
            return True
        barrier: concurrent.futures.Future[None] = concurrent.futures.Future()
        send(barrier)
        wait(barrier)  # the lines before it are answered: the command runs now
        repl.echo(line)
        return dispatch(repl, line.strip()) is not EXIT

    try:
        while step():
            pass
    except EOFError:
        pass
    finally:
        if not done.done():
            answering.put(None)
        wait(done)
