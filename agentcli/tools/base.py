"""Tools: a name, a description for the model, an optional argument schema, and flags."""

from __future__ import annotations

import inspect
import json
import re
import typing
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import field, replace
from typing import TYPE_CHECKING, Any, cast

from agentcli.errors import ToolInputError
from agentcli.records import record
from agentcli.tools.arguments import STRING_SCHEMA, Schema, prepare
from agentcli.tools.inject import Injection, fill, injections
from agentcli.tools.naming import wire_name
from agentcli.type_schema import is_flat, json_type

if TYPE_CHECKING:
    from agentcli.callbacks.base import BaseCallbackHandler
    from agentcli.callbacks.manager import CallbackManager
    from agentcli.state import Command

    Callbacks = CallbackManager | Iterable[BaseCallbackHandler] | None  # as LangChain takes them

ToolInput = str | dict[str, Any]  # the model's JSON: Any, as its readers index into it

@record
class ToolNeeds:
    """What a tool needs before it can load: an LLM, settings, an optional extra package."""

    llm: bool = False
    settings: tuple[str, ...] = ()
    extra: str | None = None

    def describe(self) -> str:
        """A short human summary, e.g. 'LLM; WIKI_URL'."""
        parts = (["LLM"] if self.llm else []) + list(self.settings)
        if self.extra:
            parts.append(f"pip extra [{self.extra}]")
        return ", ".join(parts) or "-"


ToolFactory = Callable[..., "Tool | list[Tool]"]  # called with llm= and the tool settings


@record
class ToolSpec:
    """How to build a tool by name, and what it needs (plain data the registry holds)."""

    name: str
    factory: ToolFactory | None
    summary: str
    needs: ToolNeeds = field(default_factory=ToolNeeds)
    dangerous: bool = False
    danger_reason: str = ""
    members: tuple[str, ...] = ()  # a group name expands to these
    source: str = "built-in"
    also_known_as: tuple[str, ...] = ()  # names users may try (the name the model sees)


@record
class Tool:
    """A callable the agent may use.

    Without ``args_schema`` the tool takes one string. With a JSON-object schema it takes a
    dict checked against it (``tools/arguments.py``: one coercion pass, then ``jsonschema``).
    ``injected`` parameters (run state, call id) are filled by the executor, never by the
    model. A tool returns text, or a :class:`~agentcli.state.Command` to update the state.
    """

    name: str
    description: str
    func: Callable[..., object] | None = None
    coroutine: Callable[..., Awaitable[object]] | None = None
    args_schema: Schema | None = None
    return_direct: bool = False
    dangerous: bool = False
    danger_reason: str = ""
    raise_errors: bool = False
    needs: ToolNeeds = field(default_factory=ToolNeeds)
    source: str = "built-in"
    injected: tuple[Injection, ...] = ()
    # handlers told of each call of this tool, in a run or not (LangChain's tool callbacks)
    callbacks: tuple[BaseCallbackHandler, ...] = ()

    @property
    def is_structured(self) -> bool:
        """True when the tool takes named arguments."""
        return self.args_schema is not None

    def prepare_input(self, tool_input: ToolInput) -> ToolInput:
        """The model's input coerced and checked against the tool's schema
        (``tools/arguments.py``): the text for a single-input tool, a dict otherwise."""
        if self.args_schema is None:
            if tool_input == {}:  # a blob without "action_input"
                return ""
            text: str = prepare(self.name, STRING_SCHEMA, tool_input)["input"]
            return text
        return prepare(self.name, self.args_schema, tool_input)

    def _call(self, fn: Callable[..., object], tool_input: ToolInput,
              state: Mapping[str, object] | None, call_id: str | None) -> object:
        """``fn`` called with the prepared input and the injected values."""
        return self._apply(fn, self.prepare_input(tool_input), state, call_id)

    def _apply(self, fn: Callable[..., object], prepared: ToolInput,
               state: Mapping[str, object] | None, call_id: str | None) -> object:
        """``fn`` called with an input already prepared, and the injected values."""
        extra = fill(self.name, self.injected, state, call_id) if self.injected else {}
        return fn(**prepared, **extra) if isinstance(prepared, dict) else fn(prepared, **extra)

    def invoke(self, tool_input: ToolInput, *, state: Mapping[str, object] | None = None,
               call_id: str | None = None) -> str | Command:
        """Run synchronously with injected values; text or a state ``Command``."""
        with self._reporting(tool_input, call_id) as told:
            if self.func is not None:
                return told(_result(self._call(self.func, tool_input, state, call_id)))
            if self.coroutine is None:
                raise ToolInputError(f"tool {self.name!r} has nothing to run")
            from agentcli._sync import run_sync

            pending = self._call(self.coroutine, tool_input, state, call_id)
            return told(_result(run_sync(cast("Awaitable[object]", pending))))

    async def ainvoke(self, tool_input: ToolInput, *, state: Mapping[str, object] | None = None,
                      call_id: str | None = None) -> str | Command:
        """Async :meth:`invoke`; sync-only tools run in a daemon thread (with the run's
        context: its deadline and callbacks), which a cancelled run abandons."""
        from agentcli._sync import in_thread

        if self.coroutine is None:
            return await in_thread(lambda: self.invoke(tool_input, state=state, call_id=call_id))
        with self._reporting(tool_input, call_id) as told:
            # A schema with a pattern may take up to its time limit to check: that check runs
            # off the event loop, which other runs share. A flat one is quick: no thread hop.
            if is_flat(self.args_schema or STRING_SCHEMA):
                prepared = self.prepare_input(tool_input)
            else:
                prepared = await in_thread(lambda: self.prepare_input(tool_input))
            pending = self._apply(self.coroutine, prepared, state, call_id)
            return told(_result(await cast("Awaitable[object]", pending)))

    @contextmanager
    def _reporting(self, tool_input: ToolInput, call_id: str | None
                   ) -> Iterator[Callable[[str | Command], str | Command]]:
        """Tell this tool's own handlers of the call: start, then the result or the error."""
        if not self.callbacks:
            yield lambda value: value
            return
        from agentcli.callbacks.manager import CallbackManager
        from agentcli.events import Observation, ToolError, ToolStart
        from agentcli.schema import AgentAction, AgentStep

        manager = CallbackManager(self.callbacks)
        manager.dispatch(ToolStart(self.name, tool_input, call_id))

        def told(value: str | Command) -> str | Command:
            step = AgentStep(AgentAction(self.name, tool_input, "", call_id), _text_of(value))
            manager.dispatch(Observation(step))
            return value

        try:
            yield told
        except Exception as err:
            manager.dispatch(ToolError(self.name, err, call_id))
            raise

    def with_callbacks(self, callbacks: Callbacks) -> Tool:
        """This tool, also telling ``callbacks`` (handlers or a manager) of each call."""
        from agentcli.callbacks.manager import handlers_of

        return replace(self, callbacks=(*self.callbacks, *handlers_of(callbacks)))

    def run(self, tool_input: ToolInput, verbose: bool | None = None,
            start_color: str | None = "green", color: str | None = "blue",
            callbacks: Callbacks = None, **_: object) -> str:
        """Run synchronously and return the observation text; ``callbacks`` are told too;
        ``verbose`` prints the result in ``color``, as LangChain's ``Tool.run`` does."""
        if verbose:
            from agentcli.callbacks.manager import handlers_of
            from agentcli.callbacks.stdout import StdOutCallbackHandler

            shown = StdOutCallbackHandler(prefixes=False, color=color)
            callbacks = [*handlers_of(callbacks), shown]
        tool = self.with_callbacks(callbacks) if callbacks else self
        return _text_of(tool.invoke(tool_input))

    async def arun(self, tool_input: ToolInput, callbacks: Callbacks = None) -> str:
        """Run asynchronously and return the observation text."""
        tool = self.with_callbacks(callbacks) if callbacks else self
        return _text_of(await tool.ainvoke(tool_input))

    def to_openai(self) -> dict[str, Any]:
        """The tool as an OpenAI function-calling schema (the name made API-safe)."""
        params = self.args_schema or STRING_SCHEMA
        return {
            "type": "function",
            "function": {"name": wire_name(self.name), "description": self.description,
                         "parameters": params},
        }


def _result(value: object) -> str | Command:
    """What a tool function returned, as an observation: text (JSON for data) or a Command."""
    from agentcli.state import Command

    if isinstance(value, str | Command):
        return value
    if value is None:
        return ""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _text_of(value: str | Command) -> str:
    return value if isinstance(value, str) else value.observation(None)


def _docstring_args(doc: str) -> dict[str, str]:
    """Parse a Google-style ``Args:`` section into {name: description}."""
    out: dict[str, str] = {}
    section = re.split(r"^\s*(?:Args|Arguments|Parameters):\s*$", doc, maxsplit=1, flags=re.M)
    if len(section) < 2:
        return out
    for line in section[1].splitlines():
        m = re.match(r"^\s+(\w+)\s*(?:\([^)]*\))?:\s*(.+)$", line)
        if m:
            out[m.group(1)] = m.group(2).strip()
        elif line.strip() and not line.startswith((" ", "\t")):
            break
    return out


def schema_from_function(func: Callable[..., object]) -> Schema:
    """A JSON-object schema from a function's signature and docstring ``Args:`` section."""
    hints = typing.get_type_hints(func)
    arg_docs = _docstring_args(inspect.getdoc(func) or "")
    hidden = {i.param for i in injections(func)}
    props: dict[str, object] = {}
    required: list[str] = []
    for name, param in inspect.signature(func).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or name in hidden:
            continue
        prop = dict(json_type(hints.get(name, str), nullable=False))
        if name in arg_docs:
            prop["description"] = arg_docs[name]
        if param.default is inspect.Parameter.empty:
            required.append(name)
        else:
            prop["default"] = param.default
        props[name] = prop
    return {"type": "object", "properties": props, "required": required}


def tool(
    func: Callable[..., object] | None = None,
    *,
    name: str | None = None,
    return_direct: bool = False,
    dangerous: bool = False,
) -> Any:
    """Make a Tool from a function: first docstring line is the description the model reads.

    A function with exactly one ``str`` parameter becomes a single-input tool; any other
    signature becomes a structured tool with a schema from the signature.
    """

    def wrap(fn: Callable[..., object]) -> Tool:
        doc = inspect.getdoc(fn) or ""
        description = doc.split("\n\n")[0].replace("\n", " ").strip() or fn.__name__
        injected = injections(fn)
        hidden = {i.param for i in injected}
        params = [p for p in inspect.signature(fn).parameters.values() if p.name not in hidden]
        hints = typing.get_type_hints(fn)
        single = len(params) == 1 and hints.get(params[0].name, str) is str
        is_async = inspect.iscoroutinefunction(fn)
        # a single input passed by its name, so injected parameters may come before it
        first = params[0].name if params else ""
        call = (lambda text, **kw: fn(**{first: text}, **kw)) if single and injected else fn
        return Tool(
            name=name or fn.__name__,
            description=description,
            func=None if is_async else call,
            coroutine=cast("Callable[..., Awaitable[object]]", call) if is_async else None,
            args_schema=None if single else schema_from_function(fn),
            return_direct=return_direct,
            dangerous=dangerous,
            danger_reason="declared dangerous by its author" if dangerous else "",
            injected=injected,
        )

    return wrap(func) if func is not None else wrap
