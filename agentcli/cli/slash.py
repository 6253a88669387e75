"""Slash commands of ``agent chat``: plain functions in a dict, plus their tab completion."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from rich.table import Table
from rich.text import Text

from agentcli.agents import agent_class, agent_names
from agentcli.cli.live import note, warn
from agentcli.cli.mcp_prompts import run_prompt
from agentcli.config import resolve_alias
from agentcli.errors import SessionConflictError, ToolLoadError
from agentcli.textsafe import display, safe_text
from agentcli.tools.resolve import build_catalog, check_names

if TYPE_CHECKING:
    from agentcli.cli.repl import ChatRepl

EXIT = object()  # returned by a command to end the REPL
Command = Callable[["ChatRepl", str], object]


def _help(repl: ChatRepl, arg: str) -> None:
    table = Table(show_header=False, box=None, padding=(0, 2))
    for name, (usage, _fn, text) in COMMANDS.items():
        table.add_row(Text(usage or name, style="bold"), text)
    repl.console.print(table)
    note(repl.console, "Enter sends; end a line with \\ or press Alt-Enter for a new line. "
         "Ctrl-C cancels a run, Ctrl-D quits.")


def _tools(repl: ChatRepl, arg: str) -> None:
    verb, _, name = arg.partition(" ")
    name = name.strip()
    current = list(repl.settings.tools)
    allow = list(repl.settings.allow)
    if verb in ("add", "rm", "allow") and name:
        if verb in ("add", "allow"):
            check_names([name], repl.settings)  # unknown names fail here, with a suggestion
            current += [] if name in current else [name]
            if verb == "allow":  # a dangerous tool, opted in for this session (calls still ask)
                allow += [] if name in allow else [name]
        elif name in current:
            current.remove(name)
        elif name in repl.held_back:  # held back at resume: now dropped from the session too
            repl.held_back.remove(name)
            repl.save_setup()
            note(repl.console, f"{name} removed from this session's setup")
            return
        else:
            warn(repl.console, f"{name} is not loaded (loaded: {', '.join(current) or 'none'})")
            return
        try:
            repl.reconfigure(tools=current, allow=allow)
        except ToolLoadError as err:  # the tools stay as they were
            if verb == "add" and "is dangerous" in str(err):
                warn(repl.console, f"{name} is dangerous: {danger_of(err)}. To load it in this "
                     f"session type /tools allow {name} (each call still asks before it runs).")
                return
            raise
        repl.save_setup()
    elif verb:
        note(repl.console, "usage: /tools, /tools add NAME, /tools rm NAME, /tools allow NAME")
        return
    for tool in repl.executor.tools:
        repl.console.print(Text(tool.name, style="bold") + Text(f"  {tool.description}"))
    if not repl.executor.tools:
        note(repl.console, "no tools loaded")


def danger_of(err: ToolLoadError) -> str:
    """The reason in a load-time refusal ("tool 'x' is dangerous: REASON. Opt in with ...")."""
    return str(err).partition("is dangerous: ")[2].partition(". Opt in")[0] or "it can change "\
        "your system"


def _model(repl: ChatRepl, arg: str) -> None:
    if not arg:
        note(repl.console, f"model: {repl.llm.name if repl.llm else '-'}")
        return

    target = resolve_alias(arg, repl.settings.aliases)  # the aliases `run -m` accepts
    repl.reconfigure(new_model=True, model=target)
    note(repl.console, f"model: {arg}" if target == arg.strip() else f"model: {arg} ({target})")


def _agent(repl: ChatRepl, arg: str) -> None:
    if not arg:
        note(repl.console, f"agent type: {repl.agent_name}")
        return
    agent_class(arg)  # unknown names fail here, with a suggestion
    repl.reconfigure(agent=arg)
    repl.save_setup()
    note(repl.console, f"agent type: {arg}")


def _verbose(repl: ChatRepl, arg: str) -> None:
    if arg not in ("on", "off"):
        note(repl.console, "usage: /verbose on|off")
        return
    repl.settings = replace(repl.settings, verbose=arg == "on")
    note(repl.console, f"verbose {arg}")


def _memory(repl: ChatRepl, arg: str) -> None:
    messages = repl.memory.messages()
    if not repl.uses_memory and repl.memory_label != "none":
        warn(repl.console, f"agent type {repl.agent_name} does not read memory; the model "
             "sees none of this")
    if repl.memory_label == "none":
        note(repl.console, f"memory none: the model sees no earlier turns ({len(messages)} "
             "message(s) kept in the session):")
    else:
        note(repl.console, f"{repl.memory.kind} memory, {len(messages)} message(s):")
    for m in messages:
        repl.console.print(Text(f"{m.role}: ", style="bold") + Text(display(m.content)))


def _clear(repl: ChatRepl, arg: str) -> None:
    assert repl.conversation is not None
    repl.conversation.clear()
    repl.last = None
    note(repl.console, "memory cleared (the session's transcript is kept)")


def _session(repl: ChatRepl, arg: str) -> None:
    if not arg:
        note(repl.console, f"session: {repl.session}")
        return
    repl.open_session(arg)


def _sessions(repl: ChatRepl, arg: str) -> None:
    for info in repl.store.sessions():
        mark = "*" if info.name == repl.session else " "
        repl.console.print(f"{mark} {safe_text(info.name)}  ({info.turns} turns)",
                           markup=False, highlight=False)


def _save(repl: ChatRepl, arg: str) -> None:
    from agentcli.store import session_markdown

    if not arg:
        note(repl.console, "usage: /save FILE")
        return
    path = Path(arg).expanduser()
    path.write_text(session_markdown(repl.session, repl.store.turns(repl.session)),
                    encoding="utf-8")
    note(repl.console, f"saved the transcript to {path}")


def _retry(repl: ChatRepl, arg: str) -> None:
    if repl.last is None or repl.conversation is None:
        note(repl.console, "nothing to retry")
        return
    question, before = repl.last
    try:
        repl.conversation.undo_last(before)
    except SessionConflictError:
        warn(repl.console, "another chat has written to this session since your last turn; "
             "/retry would drop its turn instead of yours: ask the question again instead")
        return
    repl.ask(question)


def _exit(repl: ChatRepl, arg: str) -> object:
    return EXIT


COMMANDS: dict[str, tuple[str, Command, str]] = {
    "/help": ("", _help, "show this help"),
    "/tools": ("/tools [add|rm|allow NAME]", _tools,
               "list the loaded tools, add/remove one, or allow a dangerous one"),
    "/model": ("/model NAME", _model, "switch the model (provider/model or an alias)"),
    "/agent": ("/agent TYPE", _agent, "switch the agent type"),
    "/verbose": ("/verbose on|off", _verbose, "show or hide the Thought/Action trace"),
    "/memory": ("", _memory, "show what the model will see of earlier turns"),
    "/clear": ("", _clear, "forget the conversation memory"),
    "/session": ("/session NAME", _session, "switch to (or start) a named session"),
    "/sessions": ("", _sessions, "list the saved sessions"),
    "/save": ("/save FILE", _save, "write the session transcript as Markdown"),
    "/retry": ("", _retry, "ask the last question again"),
    "/exit": ("", _exit, "quit (Ctrl-D also quits)"),
    "/mcp:": ("/mcp:SERVER:PROMPT [args]", run_prompt, "ask an MCP server's prompt"),
}


def dispatch(repl: ChatRepl, line: str) -> object:
    """Run one slash command; errors are one line and the REPL goes on."""
    name, _, arg = line.strip().partition(" ")
    if name.startswith("/mcp:"):  # /mcp:SERVER:PROMPT args
        name, arg = "/mcp:", line.strip()[len("/mcp:"):]
    entry = COMMANDS.get(name)
    if entry is None:
        close = difflib.get_close_matches(name, list(COMMANDS), n=1, cutoff=0.5)
        hint = f"did you mean {close[0]}? " if close else ""
        warn(repl.console, f"unknown command {name}: {hint}/help lists the commands")
        return None
    try:
        return entry[1](repl, arg.strip())
    except Exception as err:
        repl.console.print(f"error: {display(str(err))}", style="bold red", markup=False,
                           highlight=False)
        return None


def _arguments(repl: ChatRepl, command: str, words: list[str]) -> Iterable[str]:
    if command == "/tools":
        if len(words) == 1:
            return ["add", "rm", "allow"]
        if words[0] in ("add", "allow"):
            cat = build_catalog(repl.settings)
            return sorted({*cat.specs, *cat.aliases, *cat.servers, *cat.cached_names()})
        return list(repl.settings.tools)
    if command == "/model":
        from agentcli.models.presets import PRESETS

        current = [repl.settings.model] if repl.settings.model else []
        return current + sorted(repl.settings.aliases) + [f"{p}/" for p in sorted(PRESETS)]
    if command == "/agent":
        return agent_names()
    if command == "/verbose":
        return ["on", "off"]
    if command == "/session":
        return [s.name for s in repl.store.sessions()]
    return []


class SlashCompleter(Completer):
    """Completes command names, then their arguments: tools, models, agent types, sessions."""

    def __init__(self, repl: ChatRepl) -> None:
        self.repl = repl

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/") or "\n" in text:
            return
        command, *words = text.split(" ")
        if not words:
            for name, (_u, _f, help_text) in COMMANDS.items():
                if name.startswith(command):
                    yield Completion(name, -len(command), display_meta=help_text)
            return
        word = words[-1]
        try:
            candidates = list(_arguments(self.repl, command, words))
        except Exception:
            return
        for candidate in candidates:
            if candidate.startswith(word) and candidate != word:
                yield Completion(candidate, -len(word))
