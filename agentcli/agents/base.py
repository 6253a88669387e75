"""The agent step contract: the request for the next step, and the decision in the reply."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

from agentcli.agents._prefix import PrefixCache
from agentcli.agents._prefix import scratchpad as scratchpad  # text types' prior work
from agentcli.agents.parsers import JsonBlobOutputParser
from agentcli.agents.prompt_parts import take_parts
from agentcli.agents.prompt_style import argument_names, compact_values, prompt_name, tool_lines
from agentcli.agents.prompts import builtin_text, load, render, template_name
from agentcli.errors import ConfigError, OutputParserError, ProviderError
from agentcli.schema import (
    PARSE_ERROR_TOOL,
    AgentFinish,
    AgentStep,
    ChatRequest,
    ChatResult,
    ContentText,
    Decision,
    Message,
    assistant,
    media_parts,
    user,
)
from agentcli.tools.base import Tool

if TYPE_CHECKING:
    from agentcli.agents.parsers import AgentOutputParser
    from agentcli.agents.template import PromptTemplate
    from agentcli.models.base import BaseChatModel


class Agent(ABC):
    """One agent type: a prompt and two pure functions, no model I/O.

    :meth:`request` turns the run state into the next model request; :meth:`decide` turns
    the model's reply into an action, several actions, or the answer (raising
    :class:`OutputParserError` when the reply cannot be read). The executor sends the request
    and feeds the reply back, so one agent serves sync, async and streaming runs alike.

    The state holds ``input``, ``chat_history`` (memory), ``messages`` (the conversation so
    far), ``intermediate_steps`` (the steps the agent may see) and any user fields.
    """

    agent_type: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    accepts: ClassVar[str] = "single-input tools"
    uses_memory: ClassVar[bool] = False  # True when the prompt includes state["chat_history"]
    native_tools: ClassVar[bool] = False  # True when it needs the model's function calling
    # Prompt texts that live on the class (a new type needs no package data file), by name.
    prompts: ClassVar[dict[str, str]] = {}
    # The template --prompt / prompt_file: replaces (a name in ``prompts`` or package data);
    # None: the type has no replaceable prompt.
    main_template: ClassVar[str | None] = None
    # Which LangChain prompt options split the main template: prefix/suffix ("text") or
    # system_message_prefix/_suffix ("chat").
    prompt_options: ClassVar[Literal["text", "chat"]] = "chat"
    # True when the reply is one JSON action blob: a schema (structured actions) can constrain it.
    json_blob: ClassVar[bool] = False
    quoted_names: ClassVar[bool] = False  # True when the prompt shows tool names "quoted"

    def __init__(self, tools: Sequence[Tool], *, response_schema: dict[str, Any] | None = None,
                 system_extra: str = "", action_schema: dict[str, Any] | None = None,
                 prompt_style: str = "full", templates: Mapping[str, str] | None = None) -> None:
        self.tools = list(tools)
        self.templates = dict(templates or {})  # the user's replacements, by template name
        self.response_schema = response_schema  # the JSON Schema a final answer must match
        self.system_extra = system_extra  # the user's extra instructions (--system)
        self.action_schema = action_schema  # constrains each action blob (structured actions)
        self.prompt_style = prompt_style  # "full", or "compact" for small models
        self.llm: BaseChatModel | None = None  # the model an executor uses unless given one
        self.setup()

    def setup(self) -> None:  # noqa: B027 - an optional hook: most types override it
        """Build the prompt and parser from the tools (the last step of ``__init__``)."""

    def tool_values(self, no_tools: str = "") -> dict[str, str]:
        """``{tools}`` (``name: description`` lines, or ``no_tools``) and ``{tool_names}``."""
        return {"tools": tool_lines(self.tools) or no_tools,
                "tool_names": ", ".join(self.allowed_tools)}

    def prompt(self, base: str, **values: str) -> str:
        """The prompt file ``base`` filled in; its compact variant for the compact style.

        A template the user replaced (``--prompt``) always wins over the compact variant.
        """
        name = base if base in self.templates else prompt_name(base, self.prompt_style)
        if name != base:
            values = {**values, **compact_values(self.tools, quoted_names=self.quoted_names)}
        return render(self.text(name), **values)

    def text(self, name: str) -> str:
        """Template ``name``: the user's replacement, the class's own text, or the built-in."""
        return self.templates.get(name) or self.prompts.get(name) or load(name)

    @classmethod
    def create_prompt(cls, tools: Sequence[Tool], **options: Any) -> PromptTemplate:
        """This type's main prompt over ``tools``, with LangChain's prompt options (``prefix``,
        ``suffix``, ``format_instructions``, ``system_message_prefix``/``_suffix``)."""
        from agentcli.agents.template import PromptTemplate

        rest = dict(options)
        made = take_parts(cls, rest)
        if rest:
            raise TypeError(f"create_prompt got unknown argument(s) {sorted(rest)}")
        name = template_name(cls)
        text = made.get("templates", {}).get(name) or builtin_text(cls, name)
        return PromptTemplate.from_template(render(
            text, tools=tool_lines(tools), tool_names=", ".join(t.name for t in tools)))

    def with_tools(self, tools: Sequence[Tool]) -> Agent:
        """The same agent over other tools (its prompt rebuilt by the factory that made it)."""
        rebuild = getattr(self, "rebuild", None)
        if rebuild is not None:
            fresh: Agent = rebuild(tools)
            return fresh
        import copy

        clone = copy.copy(self)
        clone.tools = list(tools)
        clone.setup()  # its prompt and parser over the new tools
        return clone

    def answering(self, schema: dict[str, Any] | None) -> Agent:
        """The same agent for a run whose answer must match ``schema`` (a run's output schema:
        ``--schema``, a served ``response_format``): its prompt, answer tool and action schema
        ask for that shape. Pure: no tools are loaded, the parser is kept."""
        if schema == self.response_schema:
            return self
        import copy

        clone = copy.copy(self)
        clone.response_schema = schema
        if self.action_schema is not None:  # structured actions: the answer branch changes
            from agentcli.agents.action_schema import action_schema

            clone.action_schema = action_schema(self.tools, answer_schema=schema)
        clone.setup()
        if hasattr(self, "parser"):  # a parser the caller gave stays
            clone.parser = self.parser  # type: ignore[attr-defined]
        return clone

    def question(self, inputs: Mapping[str, object]) -> str:
        """The first user message of a chat prompt: the input (in ``human_message``, if set;
        a :class:`~agentcli.schema.ContentText` input keeps its attachments)."""
        question = inputs["input"]
        question = question if isinstance(question, str) else str(question)
        template = self.templates.get("human_message")
        if template is None:
            return question
        text = render(template, input=str(question), agent_scratchpad="").strip()
        parts = media_parts(question)
        return ContentText(text, parts) if parts else text

    @property
    def allowed_tools(self) -> list[str]:
        """Names of the tools this agent may call."""
        return [t.name for t in self.tools]

    @abstractmethod
    def request(self, state: Mapping[str, object], *, final: bool = False) -> ChatRequest:
        """The model request for the next step; ``final`` asks for an answer now, no tools."""

    @abstractmethod
    def decide(self, result: ChatResult) -> Decision:
        """The decision in the model's reply; raises OutputParserError when there is none."""

    def finish(self, result: ChatResult) -> AgentFinish:
        """The forced last answer: the reply's answer, its plain text when it could not be
        read as a decision, and no answer (empty output) when it still asked for a tool."""
        try:
            decision = self.decide(result)
        except OutputParserError:
            return AgentFinish({"output": result.text.strip()}, result.text)
        if isinstance(decision, AgentFinish):
            return decision
        return AgentFinish({"output": ""}, result.text)  # an action is never the answer

    def turn_messages(self, result: ChatResult, decision: Decision) -> list[Message]:
        """How the model's reply is kept in ``state["messages"]``."""
        return [assistant(result.text)]

    def explain(self, error: ProviderError) -> ProviderError:
        """A clearer provider error for this agent type (e.g. no native tool calling)."""
        return error

    def with_instructions(self, prompt: str, *, before: bool = False) -> str:
        """The prompt with the answer format and the user's extra instructions.

        They follow a system prompt; ``before`` puts them first, for the one-message
        completion prompts that end with the scratchpad.
        """
        extra = []
        if self.response_schema is not None:
            extra.append(load("structured_answer").strip().replace(
                "{schema}", json.dumps(self.response_schema, ensure_ascii=False)))
        if self.system_extra:
            extra.append(self.system_extra.strip())
        if not extra:
            return prompt
        parts = [*extra, prompt] if before else [prompt.rstrip("\n"), *extra]
        return "\n\n".join(parts)


class TextAgent(Agent):
    """An agent whose model replies in text that a parser turns into a decision."""

    parser: AgentOutputParser
    stop: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    def build_messages(
        self, steps: Sequence[AgentStep], inputs: Mapping[str, object], *, final: bool = False
    ) -> list[Message]:
        """The prompt for this step; ``final`` adds the answer-now instruction."""

    def request(self, state: Mapping[str, object], *, final: bool = False) -> ChatRequest:
        """The prompt built from the steps so far, with this type's stop sequences (and the
        action schema, where one constrains replies; never on the answer-now request)."""
        steps = cast("Sequence[AgentStep]", state.get("intermediate_steps") or ())
        schema = self.action_schema
        if final and schema is not None:  # answer now: only the final-answer branch is allowed
            from agentcli.agents.action_schema import final_only

            schema = final_only(schema)
        return ChatRequest(tuple(self.build_messages(steps, state, final=final)), stop=self.stop,
                           response_format=schema)

    def decide(self, result: ChatResult) -> Decision:
        """Parse the model's text."""
        return self.parser.parse(result.text)


class JsonBlobAgent(TextAgent):
    """A chat type whose system message is its main template filled with the tools, and
    whose model replies with one JSON action blob (or ``Final Answer``) per turn."""

    json_blob: ClassVar[bool] = True
    stop: ClassVar[tuple[str, ...]] = ("Observation:",)
    single_input: ClassVar[bool] = True  # False: tools with several arguments are shown too
    no_tools: ClassVar[str] = ""  # what ``{tools}`` says when there are none

    def setup(self) -> None:
        """The JSON-blob parser and the system prompt."""
        if self.single_input:
            require_single_input(self.agent_type, self.tools)
        self.parser = JsonBlobOutputParser()
        self.system_prompt = self.with_instructions(self.system_text())

    def system_text(self) -> str:
        """The main template filled with the tools."""
        return self.prompt(str(self.main_template), **self.tool_values(self.no_tools)).strip()


def work_as_turns(
    steps: Sequence[AgentStep], question: str, *, final: bool = False
) -> list[Message]:
    """The question, then the work so far as alternating turns: each reply the model sent
    (assistant) and what it observed (user), the shape chat-tuned models are trained on.
    Turns strictly alternate (some chat templates insist); the answer-now instruction joins
    the last user turn. Each step's turns are built once per run (so a message keeps its
    encoded JSON from one request to the next)."""
    work = _TURNS.get(steps, None, _steps_turns) if steps else []
    turns = [user(question), *work]
    if final:
        turns[-1] = user(f"{turns[-1].content}\n\n{final_instruction()}")
    return turns


def _steps_turns(steps: Sequence[AgentStep], _first: int = 0) -> list[Message]:
    """Steps as turns: what the model sent (assistant), what it observed (user)."""
    turns: list[Message] = []
    for step in steps:
        said = step.action.log.strip() or json.dumps(
            {"action": step.action.tool, "action_input": step.action.tool_input},
            ensure_ascii=False)
        seen = (step.observation if step.action.tool == PARSE_ERROR_TOOL
                else f"Observation: {step.observation}")
        turns += [assistant(said), user(seen)]
    return turns


_TURNS: PrefixCache[list[Message]] = PrefixCache(list.__add__)


def final_instruction() -> str:
    """The instruction appended when the run must end with an answer now."""
    return load("final_answer").strip()


def chat_history(inputs: Mapping[str, object]) -> list[Message]:
    """The memory's prior turns (``inputs["chat_history"]``), or none."""
    history = inputs.get("chat_history")
    if not isinstance(history, list | tuple):
        return []
    # A memory's history holds messages only: its kinds are told in one pass in C, not by an
    # isinstance per message at every request of every turn (a long chat sends hundreds).
    if all(issubclass(kind, Message) for kind in set(map(type, history))):
        return list(history)
    return [m for m in history if isinstance(m, Message)]


def history_text(messages: Sequence[Message]) -> str:
    """Prior turns as ``Human: ...`` / ``AI: ...`` lines for a text prompt."""
    names = {"user": "Human", "assistant": "AI", "system": "System", "tool": "Tool"}
    return "\n".join(f"{names[m.role]}: {m.content}" for m in messages)


def require_single_input(agent_type: str, tools: Sequence[Tool]) -> None:
    """Text formats pass one string per call: refuse tools that need several arguments."""
    for t in tools:
        if names := argument_names(t):
            raise ConfigError(
                f"the agent type {agent_type!r} passes one text input per call, but the tool "
                f"{t.name!r} takes several arguments ({', '.join(names)}); use --agent "
                "structured-chat-zero-shot-react-description or --agent tool-calling"
            )
