"""The callback handler base class: every hook does nothing unless overridden.

Handlers subscribe to the run's event stream (:mod:`agentcli.events`): :meth:`on_event`
receives each typed event; the ``on_*`` hooks are the same events in LangChain's shape, for
code written against that API: unless a handler overrides ``on_event``, it calls the hook
that carries each event (:func:`legacy_form`, the one adapter).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from agentcli import events as ev
from agentcli.callbacks.run_ids import as_uuid
from agentcli.schema import AgentAction, AgentFinish, ChatResult, Message, stop_words

if TYPE_CHECKING:
    from agentcli.events import RunEvent, ToolInput


class BaseCallbackHandler:
    """Receives run events. Subclass and override only the hooks you need."""

    # LangChain's opt-outs: True mutes those hooks (and those events in ``on_event``);
    # ``ignore_chat_model`` mutes ``on_llm_start`` only (every model here is a chat model)
    ignore_llm: bool = False
    ignore_chat_model: bool = False
    ignore_chain: bool = False
    ignore_agent: bool = False
    ignore_retriever: bool = False  # no retrievers here: nothing to mute
    raise_error: bool = False  # a failing handler is logged, never raised, whatever this says

    def on_event(self, event: RunEvent, **kw: object) -> None:
        """Any event of the run, typed (see :mod:`agentcli.events`); by default, the
        LangChain-style hook that carries it, with the call's own ids as ``run_id`` and
        ``parent_run_id`` (UUIDs, as LangChain's callback managers pass them)."""
        ids = {"run_id": as_uuid(kw.get("call_run_id")),
               "parent_run_id": as_uuid(kw.get("call_parent_run_id"))}
        for hook, args, extra in legacy_forms(event):
            method = getattr(self, hook)
            if getattr(method, "__func__", None) is getattr(BaseCallbackHandler, hook):
                continue  # not overridden: nothing listens to it
            if _wants_serialized(getattr(method, "__func__", method)):
                args = _langchain_args(hook, args, extra)
            method(*args, **extra, **ids)

    def on_chain_start(self, inputs: dict[str, Any], **kw: object) -> None:
        """A run started."""

    def on_chain_end(self, outputs: dict[str, Any], **kw: object) -> None:
        """A run ended with an answer (or a stop)."""

    def on_chain_error(self, error: BaseException, **kw: object) -> None:
        """A run failed."""

    def on_llm_start(self, messages: list[Message], **kw: object) -> None:
        """A model request is about to be sent."""

    def on_llm_new_token(self, token: str, **kw: object) -> None:
        """A streamed token arrived."""

    def on_llm_end(self, result: ChatResult, **kw: object) -> None:
        """A model request completed."""

    def on_llm_error(self, error: BaseException, **kw: object) -> None:
        """A model request failed."""

    def on_agent_action(self, action: AgentAction, **kw: object) -> None:
        """The agent chose a tool."""

    def on_agent_finish(self, finish: AgentFinish, **kw: object) -> None:
        """The agent gave its final answer."""

    def on_tool_start(self, tool: str, tool_input: ToolInput, **kw: object) -> None:
        """A tool is about to run."""

    def on_tool_end(self, observation: str, **kw: object) -> None:
        """A tool returned; ``observation`` is what the model will read."""

    def on_tool_error(self, error: BaseException, **kw: object) -> None:
        """A tool raised (its error becomes the observation)."""

    def on_text(self, text: str, **kw: object) -> None:
        """Free-form text worth showing (notices, parse-error recoveries, limits)."""


@cache
def _wants_serialized(func: Callable[..., object]) -> bool:
    """Whether a hook function is written LangChain's way: ``(self, serialized, X, ...)``
    (LangChain's ``on_llm_start``, ``on_tool_start`` and ``on_chain_start``)."""
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return False
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = names[1:] if names[:1] == ["self"] else names
    return len(names) >= 2 and names[0] == "serialized"


def _langchain_args(hook: str, args: tuple[object, ...], kw: Mapping[str, object],
                    ) -> tuple[object, ...]:
    """Our hook's arguments in LangChain's shape: ``serialized`` first; prompts as text."""
    if hook == "on_llm_start":
        messages = cast("list[Message]", args[0])
        text = "\n".join(f"{m.role}: {m.content}" for m in messages)
        return {"name": str(kw.get("model") or "")}, [text]
    if hook == "on_tool_start":
        tool, tool_input = args
        shown = tool_input if isinstance(tool_input, str) else json.dumps(
            tool_input, ensure_ascii=False)
        return {"name": tool}, shown
    return {"name": str(kw.get("name") or "AgentExecutor")}, *args


Form = tuple[str, tuple[object, ...], dict[str, object]]


def legacy_forms(event: RunEvent) -> list[Form]:
    """The ``on_*`` hooks that carry ``event``, in order: one for most events; for a reply
    that could not be parsed, LangChain's ``_Exception`` action and the tool call that answers
    it (``on_agent_action``, ``on_tool_start``, ``on_tool_end``)."""
    if isinstance(event, ev.ParseError):
        action, told = event.step.action, str(event.step.observation)
        return [("on_agent_action", (action,), {}),
                ("on_tool_start", (action.tool, told), {"call_id": None}),
                ("on_tool_end", (told,), {"tool": action.tool, "invalid": False,
                                          "denied": False})]
    form = legacy_form(event)
    return [] if form is None else [form]


def legacy_form(event: RunEvent) -> Form | None:
    """The (first) ``on_*`` hook, arguments and keywords that carry ``event`` (None if none
    does)."""
    if isinstance(event, ev.Start):
        return "on_chain_start", (event.inputs,), {
            "tags": list(event.tags), "metadata": dict(event.metadata), "name": event.name}
    if isinstance(event, ev.RunError):
        return "on_chain_error", (event.error,), {}
    if isinstance(event, ev.ModelStart):
        return "on_llm_start", (list(event.request.messages),), {"model": event.model}
    if isinstance(event, ev.ModelToken):
        return "on_llm_new_token", (event.text,), {}
    if isinstance(event, ev.ModelEnd):
        return "on_llm_end", (event.result,), {"model": event.model, "cost": event.cost}
    if isinstance(event, ev.ModelError):
        return "on_llm_error", (event.error,), {"model": event.model}
    if isinstance(event, ev.ActionEvent):
        return "on_agent_action", (event.action,), {}
    if isinstance(event, ev.ToolStart):
        return "on_tool_start", (event.tool, event.tool_input), {"call_id": event.call_id}
    if isinstance(event, ev.ToolError):
        return "on_tool_error", (event.error,), {"tool": event.tool}
    if isinstance(event, ev.Observation):
        return "on_tool_end", (event.step.observation,), {
            "tool": event.step.action.tool, "invalid": event.status == "invalid",
            "denied": event.status == "denied",
        }
    if isinstance(event, ev.ParseError):
        return legacy_forms(event)[0]
    if isinstance(event, ev.Notice):
        return "on_text", (event.text,), {**event.data, "kind": event.topic}
    if isinstance(event, ev.Limit):
        return "on_text", (f"Stopped: {stop_words(event.reason)}.",), {
            "kind": "limit", "reason": event.reason}
    if isinstance(event, ev.Finish):
        return "on_agent_finish", (event.finish,), {}
    if isinstance(event, ev.End):
        return "on_chain_end", (event.result.to_dict(),), {}
    return None
