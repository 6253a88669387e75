"""Core data: actions, finishes, steps, messages and model results (frozen dataclasses)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import field
from typing import Any, Literal

from agentcli.records import record

Role = Literal["system", "user", "assistant", "tool"]
StopReason = Literal[
    "finished", "return_direct", "max_iterations", "max_execution_time", "interrupted", "budget",
    "stalled", "jump_to_end", "no_answer",
]
LIMIT_REASONS: frozenset[str] = frozenset(
    {"max_iterations", "max_execution_time", "budget", "stalled", "no_answer"}
)
# The placeholder answer of a run a limit stopped (``early_stopping_method: force``), as
# LangChain words it; never printed as an answer (``outcome.real_answer``).
FORCE_STOP_MESSAGE = "Agent stopped due to iteration limit or time limit."
# Why a run stopped without its answer, in plain English: one wording for the trace, stderr,
# logs, memory and `agent serve`.
STOP_WORDS: dict[str, str] = {
    "max_iterations": "the agent used all its steps (--max-iterations) without reaching an answer",
    "max_execution_time": "the run reached its time limit (--max-time)",
    "budget": "the run reached its token or cost budget (--max-tokens / --max-cost)",
    "stalled": "the model kept sending the same reply, so the run was stopped",
    "no_answer": "the model's reply held no answer (nothing new: empty, a tool call, the "
                 "question, a tool's own text, a placeholder or a calculation left undone)",
    "interrupted": "the run was interrupted",
}


def stop_words(reason: str) -> str:
    """What stopped a run, as a sentence without its full stop."""
    return STOP_WORDS.get(reason, reason.replace("_", " "))


@record
class AgentAction:
    """The model chose a tool; ``log`` is the raw text that produced the choice."""

    tool: str
    tool_input: str | dict[str, Any]
    log: str = ""
    tool_call_id: str | None = None
    repaired: bool = False  # the agent rebuilt this call from text or broken JSON


@record
class AgentFinish:
    """The model is done; ``return_values["output"]`` is the answer."""

    return_values: dict[str, Any]
    log: str = ""

    @property
    def output(self) -> str:
        """The final answer as text."""
        return str(self.return_values.get("output", ""))


@record
class AgentStep:
    """An action and what its tool returned."""

    action: AgentAction
    observation: str


@record
class ToolCall:
    """A native tool call requested by the model."""

    id: str
    name: str
    arguments: str  # raw JSON text as sent by the model

    def __getitem__(self, key: str) -> Any:
        """LangChain's dict shape: ``call["id"]``, ``call["name"]``, ``call["args"]``."""
        if key == "args":
            import json

            try:
                value = json.loads(self.arguments or "{}")
            except ValueError:
                return {}
            return value if isinstance(value, dict) else {}
        return {"id": self.id, "name": self.name, "type": "tool_call"}[key]

    def get(self, key: str, default: Any = None) -> Any:
        """``call.get("id")``, as on a dict."""
        try:
            return self[key]
        except KeyError:
            return default


class ContentText(str):
    """Text that also carries OpenAI-style content parts (``image_url``, ``input_audio``).

    A tool result with media (an MCP screenshot, say) is one of these: as a ``str`` it is the
    text with short placeholders, which every consumer can use; an agent whose model reads
    images can forward ``.parts``.
    """

    parts: tuple[dict[str, Any], ...]

    def __new__(cls, text: str, parts: Any = ()) -> ContentText:
        """Text plus its parts."""
        obj = super().__new__(cls, text)
        obj.parts = tuple(parts)
        return obj


def media_parts(value: object) -> tuple[dict[str, Any], ...]:
    """The content parts ``value`` carries (none for plain text)."""
    if isinstance(value, ContentText | ToolOutcome):
        return value.parts
    return ()


ToolStatus = Literal["ok", "error", "invalid", "denied"]
PARSE_ERROR_TOOL = "_Exception"  # the "tool" of a step that corrected an unreadable reply


@record(slots=True)
class ToolOutcome:
    """How one tool call ended: ``ok``, ``error``, ``invalid`` or ``denied``, and its text.

    Middleware may rewrite the text (:meth:`with_text`); the status travels with it, so a
    shortened error is still an error.
    """

    text: str
    status: ToolStatus = "ok"
    parts: tuple[dict[str, Any], ...] = ()

    def __str__(self) -> str:
        return self.text

    @classmethod
    def of(cls, value: object) -> ToolOutcome:
        """A tool's return value (text, text with media, or an outcome) as an outcome."""
        if isinstance(value, ToolOutcome):
            return value
        return cls(str(value), "ok", media_parts(value))

    def with_text(self, text: str) -> ToolOutcome:
        """The same outcome with other text."""
        return ToolOutcome(text, self.status, self.parts)


@record
class Message:
    """One chat message; ``tool_calls`` on assistant turns, ``tool_call_id`` on tool results.

    ``parts`` are media content parts; only user messages send them (the chat API accepts
    images nowhere else), other roles keep them for an agent to forward.
    """

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    parts: tuple[dict[str, Any], ...] = ()
    # The step this message closes (a tool result, or the correction after a parse error):
    # the run's ``intermediate_steps`` are a view over the messages that carry one.
    step: AgentStep | None = field(default=None, compare=False, repr=False)
    summary: bool = field(default=False, compare=False)  # stands for older, summarized turns

    def to_openai(self) -> dict[str, Any]:
        """The message as an OpenAI chat-completions dict (built once: messages are frozen,
        and a long chat sends the same history again with every request)."""
        return dict(self._wire)

    def wire_json(self) -> str:
        """:meth:`to_openai` as compact JSON, encoded once (a request body is assembled from
        its messages' JSON, so a long history is not encoded again with every request)."""
        return self._wire_json

    @functools.cached_property
    def _wire_json(self) -> str:
        import json

        return json.dumps(self._wire, ensure_ascii=False, separators=(",", ":"), allow_nan=False)

    @functools.cached_property
    def _wire(self) -> dict[str, Any]:
        content: object = self.content
        if self.parts and self.role == "user":
            content = [{"type": "text", "text": self.content}, *self.parts]
        out: dict[str, Any] = {"role": self.role, "content": content}
        if self.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "type": "function",
                 "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        return out


def system(content: str) -> Message:
    """A system message. The same text gives the same (frozen) message: an agent sends its
    system prompt with every request, and a message encodes its JSON once."""
    return _system(content) if type(content) is str else Message("system", content)


@functools.lru_cache(maxsize=64)
def _system(content: str) -> Message:
    return Message("system", content)


def user(content: str) -> Message:
    """A user (human) message; a :class:`ContentText` brings its media parts (attachments)."""
    return Message("user", str(content), parts=media_parts(content))


def assistant(content: str, tool_calls: tuple[ToolCall, ...] = ()) -> Message:
    """An assistant (AI) message."""
    return Message("assistant", content, tool_calls=tool_calls)


@record
class Usage:
    """Token counts reported by the provider (zeros when it reports none)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        """The three counts as OpenAI names them."""
        return {"prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "total_tokens": self.total_tokens}


@record
class ChatResult:
    """One model reply: text, native tool calls, finish reason and usage."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    response_id: str = ""  # the server's id of this completion, when it sent one

    @property
    def llm_output(self) -> dict[str, object]:
        """Usage and model as LangChain's ``LLMResult.llm_output`` holds them."""
        return {"token_usage": self.usage.to_dict(), "model_name": self.model}

    @property
    def generations(self) -> list[list[Generation]]:
        """The reply as LangChain's ``LLMResult.generations`` holds it (one prompt, one
        candidate): ``generations[0][0].text`` and ``.message``."""
        message = Message("assistant", self.text, tool_calls=self.tool_calls)
        return [[Generation(self.text, message, {"finish_reason": self.finish_reason})]]


@record
class Generation:
    """One candidate reply in LangChain's shape: its text and its message."""

    text: str
    message: Message
    generation_info: dict[str, Any] | None = None


@record
class ChatChunk:
    """One streamed delta: text and/or a fragment of a tool call."""

    text: str = ""
    tool_call_index: int | None = None
    tool_call_id: str | None = None
    tool_call_name: str | None = None
    tool_call_arguments: str = ""
    finish_reason: str | None = None
    usage: Usage | None = None
    response_id: str = ""  # the completion's id, on the chunk that finishes the reply


Decision = AgentFinish | AgentAction | list[AgentAction]


@record
class ChatRequest:
    """One model request: what every model call takes (the executor's, a tool's, a summary's)."""

    messages: tuple[Message, ...]
    stop: tuple[str, ...] = ()
    tools: tuple[dict[str, Any], ...] = ()
    response_format: dict[str, Any] | None = None  # a JSON Schema the reply must match
    options: dict[str, Any] = field(default_factory=dict)  # more body fields (max_tokens...)

    @classmethod
    def of(cls, messages: Sequence[Message], stop: Sequence[str] | None = None,
           tools: Sequence[dict[str, Any]] | None = None, **params: Any) -> ChatRequest:
        """A request from ``generate``-style arguments (``response_schema`` among them)."""
        schema = params.pop("response_schema", None)
        return cls(tuple(messages), tuple(stop or ()), tuple(tools or ()), schema, params)

    def params(self) -> dict[str, Any]:
        """The extra fields as ``generate``-style keywords (``response_schema`` included)."""
        if self.response_format is None:
            return dict(self.options)
        return {**self.options, "response_schema": self.response_format}


@record(repr=False)
class RunResult(dict[str, Any]):
    """What a run produced: the answer, the steps, usage and why it stopped.

    It is also LangChain's result dict (``isinstance(result, dict)``, ``json.dumps`` when the
    values are JSON, the same repr): ``input``, ``output``, ``intermediate_steps`` when the
    steps were kept, and the run's output state fields but its messages; ``result["messages"]``
    and ``result["intermediate_steps"]`` are there even when not shown.
    """

    output: str | None  # None: the run ended without an answer (agentcli.answers)
    steps: tuple[AgentStep, ...]
    stop_reason: StopReason
    usage: Usage = field(default_factory=Usage)
    model_calls: int = 0
    elapsed: float = 0.0
    stats: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)  # the output-filtered run state
    cost: float | None = None  # USD, when the model has a price
    recovered: str | None = None  # the limit after which the model was asked for its answer
    input: object = None  # what the run was asked (``result["input"]``)

    def __post_init__(self) -> None:
        shown: dict[str, Any] = {"input": self.state.get("input", self.input),
                                 "output": self.output}
        if self.steps:
            shown["intermediate_steps"] = self.intermediate_steps()
        shown.update((k, v) for k, v in self.state.items() if k not in ("messages", "input"))
        dict.update(self, shown)

    def intermediate_steps(self) -> list[tuple[AgentAction, str]]:
        """The steps as LangChain's ``(action, observation)`` pairs."""
        return [(s.action, s.observation) for s in self.steps]

    def __missing__(self, key: str) -> Any:
        if key == "intermediate_steps":
            return self.intermediate_steps()
        if key in self.state:
            return self.state[key]
        raise KeyError(f"{key!r}; a result has output, intermediate_steps and its state "
                       f"fields ({', '.join(sorted(self.state)) or 'none'})")

    def get(self, key: str, default: Any = None) -> Any:
        """``result.get("output")``, as on LangChain's dict (the hidden keys too)."""
        try:
            return self[key]
        except KeyError:
            return default

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the result."""
        return {
            "answer": self.output,
            "stop_reason": self.stop_reason,
            "limit": self.stop_reason if self.stop_reason in LIMIT_REASONS else None,
            "recovered": self.recovered,
            "steps": self.steps_data(),
            "usage": {**self.usage.to_dict(), "model_calls": self.model_calls},
            "elapsed_seconds": round(self.elapsed, 3),
            "stats": self.stats,
            "state": self.state_data(),
        }

    def steps_data(self) -> list[dict[str, Any]]:
        """The steps as JSON-ready dicts (``to_dict()["steps"]``)."""
        return [{"tool": s.action.tool, "tool_input": s.action.tool_input, "log": s.action.log,
                 "observation": s.observation} for s in self.steps]

    def state_data(self, skip: tuple[str, ...] = ()) -> dict[str, Any]:
        """``to_dict()["state"]`` without the keys in ``skip`` (never converted)."""
        return {str(k): _jsonable(v) for k, v in self.state.items() if k not in skip}


def _jsonable(value: object) -> object:
    """State values as JSON-ready data (messages become dicts)."""
    if isinstance(value, Message):
        return value.to_openai()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    from dataclasses import asdict, is_dataclass

    if is_dataclass(value) and not isinstance(value, type):
        return _jsonable(asdict(value))
    return str(value)
