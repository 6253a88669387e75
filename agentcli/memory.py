"""Conversation memory: what earlier turns the model sees, and how that is persisted.

Every kind (:data:`Memory`) has the same few methods: ``messages()`` is what goes into
``inputs["chat_history"]``, ``add_turn`` records a finished question/answer, ``clear`` forgets,
and ``to_state``/``load_state`` round-trip through JSON so a session survives a restart.
``middleware()`` is what a run of the conversation carries for the memory: the summary memory
asks for its summary there, at the run's end, so the summary is a model call of the run (its
events, budget and cost), awaited on the async core like every other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from agentcli.errors import ConfigError
from agentcli.middleware import AgentMiddleware, ModelAsk, RunInfo
from agentcli.outcome import recorded_answer
from agentcli.schema import ChatRequest, ChatResult, Message, RunResult, assistant, system, user

if TYPE_CHECKING:
    from agentcli.models.base import BaseChatModel

SUMMARY_PROMPT = (
    "Progressively summarize the conversation, adding to the previous summary and returning "
    "a new summary. Keep names, numbers and decisions.\n\nCurrent summary:\n{summary}\n\n"
    "New lines of conversation:\nHuman: {question}\nAI: {answer}\n\nNew summary:"
)


def estimate_tokens(text: str) -> int:
    """A provider-neutral token estimate: about four characters a token."""
    return max(1, len(text) // 4) if text else 0


class BufferMemory:
    """Every turn, verbatim."""

    kind: ClassVar[str] = "buffer"
    calls_model: ClassVar[bool] = False  # add_turn may ask a model (synchronously)

    def __init__(self) -> None:
        self.clear()

    def _first(self) -> int:
        """The index of the first turn the model is shown."""
        return 0

    def messages(self) -> list[Message]:
        """User/assistant messages for the kept turns."""
        return self._said[2 * self._first():]

    def add_turn(self, question: str, answer: str) -> None:
        """Append a turn. Its messages are made now, once: a long chat sends the same ones
        every turn, and each message keeps its wire form."""
        self.turns.append((question, answer))
        self._said += (user(question), assistant(answer))
        self._saved.append([question, answer])

    def clear(self) -> None:
        """Forget every turn."""
        self.turns: list[tuple[str, str]] = []
        self._said: list[Message] = []
        # Each turn as the JSON list a state holds, made once: a session's state is written
        # after every turn, and rebuilding every earlier turn's list each time made a turn's
        # cost grow with the session. States share these lists, never changed once made.
        self._saved: list[list[str]] = []

    def to_state(self) -> dict[str, Any]:
        """The turns as JSON lists (every turn is kept, whatever the view)."""
        return {"kind": self.kind, "turns": self._saved.copy()}

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore the turns."""
        self.clear()
        for q, a in state.get("turns", []):
            self.add_turn(str(q), str(a))

    def middleware(self) -> list[AgentMiddleware]:
        """Nothing: the turns are kept as they are."""
        return []


class WindowMemory(BufferMemory):
    """The last ``k`` turns."""

    kind: ClassVar[str] = "window"

    def __init__(self, k: int = 5) -> None:
        super().__init__()
        self.k = k

    def _first(self) -> int:
        return max(0, len(self.turns) - self.k) if self.k > 0 else len(self.turns)


class TokenLimitMemory(BufferMemory):
    """The most recent turns that fit in ``max_tokens`` (estimated at four characters a token)."""

    kind: ClassVar[str] = "tokens"

    def __init__(self, max_tokens: int = 2_000) -> None:
        self.max_tokens = max_tokens
        super().__init__()

    def _first(self) -> int:
        """The first of the newest turns whose cost fits in ``max_tokens`` (the longest such
        tail), kept up to date as turns are added, so a turn does not rescan the session."""
        return self._start

    def add_turn(self, question: str, answer: str) -> None:
        """Append a turn; the oldest shown turns go while the shown ones cost too much."""
        super().add_turn(question, answer)
        self._used += _cost((question, answer))
        while self._start < len(self.turns) and self._used > self.max_tokens:
            self._used -= _cost(self.turns[self._start])
            self._start += 1

    def clear(self) -> None:
        """Forget every turn."""
        super().clear()
        self._start = self._used = 0


def _cost(turn: tuple[str, str]) -> int:
    return estimate_tokens(turn[0]) + estimate_tokens(turn[1])


class SummaryMemory:
    """A running summary written by the model after each turn (one extra model call a turn).

    In a run of the conversation the call is the run's (:meth:`middleware`): made at its end,
    it is counted in its usage and cost and streamed as its events. ``add_turn`` then takes
    that summary; it asks ``llm`` itself only for a turn no run summarised (a merge with
    another writer's turns, a turn added by hand).
    """

    kind: ClassVar[str] = "summary"
    calls_model: ClassVar[bool] = True

    def __init__(self, llm: BaseChatModel | None) -> None:
        self.llm = llm
        self.summary = ""
        # what the last run wrote: (the summary it extended, question, answer, new summary)
        self.folded: tuple[str, str, str, str] | None = None

    def messages(self) -> list[Message]:
        """The summary as one system message (nothing before the first turn)."""
        if not self.summary:
            return []
        return [system(f"Summary of the conversation so far:\n{self.summary}")]

    def prompt(self, question: str, answer: str) -> Message:
        """The request that folds one turn into the summary."""
        return user(SUMMARY_PROMPT.format(summary=self.summary or "(empty)", question=question,
                                          answer=answer))

    def add_turn(self, question: str, answer: str) -> None:
        """Fold the turn into the summary (the one the run wrote, if it wrote this one)."""
        folded, self.folded = self.folded, None
        if folded is not None and folded[:3] == (self.summary, question, answer):
            self.summary = folded[3]
            return
        if self.llm is None:
            raise ConfigError("summary memory needs a model")
        self.summary = self.llm.generate([self.prompt(question, answer)]).text.strip()

    def middleware(self) -> list[AgentMiddleware]:
        """The run's last request: this turn's summary."""
        return [_Summarize(self)]

    def clear(self) -> None:
        """Forget the summary."""
        self.summary = ""

    def to_state(self) -> dict[str, Any]:
        """The summary text."""
        return {"kind": self.kind, "summary": self.summary}

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore the summary."""
        self.summary = str(state.get("summary", ""))


class _Summarize(AgentMiddleware):
    """At the end of a run, ask for the summary with the turn folded in (the memory's model,
    else the run's)."""

    def __init__(self, memory: SummaryMemory) -> None:
        self.memory = memory

    def ask_at_end(self, state: Mapping[str, object], result: RunResult,
                   run: RunInfo) -> ModelAsk | None:
        """The summary request for this turn."""
        memory = self.memory
        base, question, answer = memory.summary, str(result.input or ""), recorded_answer(result)

        def then(reply: ChatResult) -> None:
            memory.folded = (base, question, answer, reply.text.strip())

        return ModelAsk(ChatRequest((memory.prompt(question, answer),)), then, memory.llm)


Memory = BufferMemory | SummaryMemory  # BufferMemory's subclasses included


def make_memory(
    kind: str, *, k: int = 5, max_tokens: int = 2_000, llm: BaseChatModel | None = None
) -> Memory:
    """Build a memory by kind name (``buffer``, ``window``, ``tokens``, ``summary``)."""
    makers: dict[str, Callable[[], Memory]] = {
        "buffer": BufferMemory, "window": lambda: WindowMemory(k),
        "tokens": lambda: TokenLimitMemory(max_tokens), "summary": lambda: SummaryMemory(llm)}
    if kind not in makers:
        raise ConfigError(f"unknown memory kind {kind!r} (choose from: {', '.join(makers)})")
    return makers[kind]()


def restore(memory: Memory, state: dict[str, Any] | None) -> Memory:
    """Load ``state`` into ``memory``; turns saved by a buffer-like kind carry across kinds."""
    if state and (state.get("kind") == "summary") == (memory.kind == "summary"):
        memory.load_state(state)  # the same family: a summary, or turns
    return memory
