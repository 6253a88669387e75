"""LangChain's memory objects over agentcli's memory kinds (:mod:`agentcli.memory`):
``ConversationBufferMemory`` (every turn), ``ConversationBufferWindowMemory`` (the last ``k``)
and ``ConversationSummaryMemory`` (a running summary the model writes).

    memory = ConversationBufferMemory(memory_key="chat_history", return_messages=True)
    memory.save_context({"input": "hi"}, {"output": "hello"})
    memory.load_memory_variables({})   # {"chat_history": [HumanMessage, AIMessage]}
    executor = initialize_agent(tools, llm, agent=..., memory=memory)

With ``memory=`` an executor shows the turns to the agent as its chat history (the
conversational agent types read it) and saves each run's question and answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentcli.memory import BufferMemory, Memory, SummaryMemory, WindowMemory
from agentcli.middleware import AgentMiddleware
from agentcli.models.base import BaseChatModel
from agentcli.schema import Message, user


class ChatMessageHistory:
    """A memory's ``chat_memory``: its messages, and LangChain's way of adding a turn by its
    halves (a question waits for its answer, then the two are one turn)."""

    def __init__(self, turns: Memory | None = None) -> None:
        self.turns: Memory = turns if turns is not None else BufferMemory()
        self.asked: str | None = None

    @property
    def messages(self) -> list[Message]:
        """The remembered messages (and a question still waiting for its answer)."""
        return [*self.turns.messages(), *([user(self.asked)] if self.asked is not None else [])]

    def add_user_message(self, text: str) -> None:
        """A question; the next answer completes the turn."""
        if self.asked is not None:  # two questions in a row: the first went unanswered
            self.turns.add_turn(self.asked, "")
        self.asked = str(text)

    def add_ai_message(self, text: str) -> None:
        """An answer, to the question before it (if any)."""
        asked, self.asked = self.asked, None
        self.turns.add_turn(asked or "", str(text))

    def add_message(self, message: Message) -> None:
        """A user or assistant message."""
        if message.role == "user":
            self.add_user_message(message.content)
        elif message.role == "assistant":
            self.add_ai_message(message.content)
        else:
            raise ValueError(f"chat_memory keeps user and assistant messages, not "
                             f"{message.role!r} ones")

    def clear(self) -> None:
        """Forget every message."""
        self.turns.clear()
        self.asked = None


class _Memory:
    """What the three share: the key, the shape of the value, and which input and output
    make a turn."""

    def __init__(self, turns: Memory, *, memory_key: str = "history",
                 return_messages: bool = False, input_key: str | None = None,
                 output_key: str | None = None, human_prefix: str = "Human",
                 ai_prefix: str = "AI") -> None:
        self.turns = turns
        self.chat_memory = ChatMessageHistory(turns)
        self.memory_key = memory_key
        self.return_messages = return_messages
        self.input_key = input_key
        self.output_key = output_key
        self.human_prefix = human_prefix
        self.ai_prefix = ai_prefix

    @property
    def memory_variables(self) -> list[str]:
        """The one key ``load_memory_variables`` fills."""
        return [self.memory_key]

    def messages(self) -> list[Message]:
        """The remembered turns as messages (what an agent run is shown)."""
        return self.chat_memory.messages

    @property
    def buffer(self) -> str | list[Message]:
        """The memory's value: messages with ``return_messages``, else text."""
        if self.return_messages:
            return self.messages()
        return self._text()

    def _text(self) -> str:
        names = {"user": self.human_prefix, "assistant": self.ai_prefix}
        return "\n".join(f"{names.get(m.role, m.role.title())}: {m.content}"
                         for m in self.messages())

    def load_memory_variables(self, inputs: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """``{memory_key: the turns}`` (messages or ``Human: ...``/``AI: ...`` text)."""
        return {self.memory_key: self.buffer}

    def save_context(self, inputs: Mapping[str, Any], outputs: Mapping[str, Any]) -> None:
        """Remember one turn: the question in ``inputs``, the answer in ``outputs``."""
        self.turns.add_turn(str(inputs[self._input_key(inputs)]),
                            str(outputs[self._output_key(outputs)]))

    def clear(self) -> None:
        """Forget every turn."""
        self.chat_memory.clear()

    def middleware(self) -> list[AgentMiddleware]:
        """What a run with this memory adds (a summary memory's end-of-run request)."""
        return self.turns.middleware()

    def _input_key(self, inputs: Mapping[str, Any]) -> str:
        if self.input_key is not None:
            return self.input_key
        keys = [k for k in inputs if k not in (self.memory_key, "chat_history", "stop")]
        if len(keys) != 1:
            raise ValueError(f"one input key expected, got {keys}: give the memory input_key=")
        return keys[0]

    def _output_key(self, outputs: Mapping[str, Any]) -> str:
        if self.output_key is not None:
            return self.output_key
        if len(outputs) == 1:
            return next(iter(outputs))
        if "output" in outputs:
            return "output"
        raise ValueError(f"one output key expected, got {list(outputs)}: give the memory "
                         "output_key=")


class ConversationBufferMemory(_Memory):
    """Every turn, verbatim (in ``chat_memory``, a :class:`ChatMessageHistory`, if given)."""

    def __init__(self, chat_memory: ChatMessageHistory | None = None, **options: Any) -> None:
        history = chat_memory or ChatMessageHistory()
        super().__init__(history.turns, **options)
        self.chat_memory = history


class ConversationBufferWindowMemory(_Memory):
    """The last ``k`` turns (LangChain's default: 5)."""

    def __init__(self, k: int = 5, **options: Any) -> None:
        super().__init__(WindowMemory(k), **options)
        self.k = k


class ConversationSummaryMemory(_Memory):
    """A running summary of the conversation, written by ``llm`` after each turn (in an
    executor's run, by the run's last request)."""

    def __init__(self, llm: BaseChatModel | None = None, **options: Any) -> None:
        super().__init__(SummaryMemory(llm), **options)

    @property
    def buffer(self) -> str | list[Message]:
        """The summary: its text, or one system message with ``return_messages``."""
        summary = self.turns.summary if isinstance(self.turns, SummaryMemory) else ""
        return self.messages() if self.return_messages else summary


BaseMemory = _Memory  # what ``memory=`` takes
