"""``agent chat``: a prompt-toolkit REPL. It parses input, dispatches slash commands, runs the
executor (async, so Ctrl-C cancels just the run), renders events, and commits each turn."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prompt_toolkit import PromptSession
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.output import Output
from rich.console import Console
from rich.text import Text

from agentcli import exit_codes
from agentcli._sync import in_thread, run_sync
from agentcli.agents import DEFAULT_AGENT, agent_class
from agentcli.callbacks.timings import TimingsHandler
from agentcli.cli.approve import build_approver
from agentcli.cli.consoles import console as make_console
from agentcli.cli.consoles import print_plain, report_tool_warnings
from agentcli.cli.live import TokenPrinter, note, render_answer, warn
from agentcli.cli.observe import Observers
from agentcli.cli.render import TraceRenderer
from agentcli.cli.running import choose_model, sent_options
from agentcli.cli.slash import EXIT, SlashCompleter, dispatch
from agentcli.cli.spinner import ThinkingSpinner
from agentcli.config import CHAT_AGENT, Settings
from agentcli.demo import DEMO_QUESTION, HOW_TO_CONFIGURE, demo_chat_model
from agentcli.errors import ConfigError
from agentcli.memory import Memory
from agentcli.models.base import BaseChatModel
from agentcli.outcome import real_answer, stop_line
from agentcli.paths import data_dir
from agentcli.redact import redact
from agentcli.runtime import build_executor, build_model
from agentcli.schema import RunResult
from agentcli.session import (
    Conversation,
    check_cli_name,
    open_conversation,
    reads_memory,
    record_run,
)
from agentcli.store import Store, open_store
from agentcli.textsafe import safe_line, safe_text
from agentcli.tools.resolve import build_catalog, check_names

if TYPE_CHECKING:
    from agentcli.executor import AgentExecutor
    from agentcli.middleware import Approver

ModelFactory = Callable[[Settings], BaseChatModel]


def history_path(env: dict[str, str]) -> Path:
    """The input-history file under the user's data directory."""
    return data_dir(env) / "chat_history"


def _key_bindings() -> KeyBindings:
    kb = KeyBindings()

    @kb.add("enter")
    @kb.add("c-j")
    def _submit(event: KeyPressEvent) -> None:
        buf = event.current_buffer
        if buf.text.endswith("\\"):  # a trailing backslash continues on the next line
            buf.delete_before_cursor(1)
            buf.insert_text("\n")
        else:
            buf.validate_and_handle()

    @kb.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    return kb


def _stdin_is_a_terminal() -> bool:
    return sys.stdin is not None and sys.stdin.isatty()


def _needs_opt_in(name: str, settings: Settings) -> bool:
    """Whether built-in tool (or group) ``name`` is dangerous and not allowed by ``settings``."""
    if settings.allow_dangerous_tools:
        return False
    catalog = build_catalog(settings)
    spec = catalog.spec(name)
    if spec is None or set(settings.allow) & {name, spec.name, *spec.also_known_as}:
        return False
    members = [catalog.spec(m) for m in spec.members or ()]
    return spec.dangerous or any(m is not None and m.dangerous for m in members)


class ChatRepl:
    """The chat state (model, agent, memory, session) and the loop around it."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        model_factory: ModelFactory,
        *,
        session: str = "default",
        console: Console | None = None,
        approver: Approver | None = None,
        history: History | None = None,
        input: Input | None = None,
        output: Output | None = None,
        toolbar: bool = True,
    ) -> None:
        self.settings = settings
        self.store = store
        self.model_factory = model_factory
        self.console = console or make_console()  # piped: lines are never hard-wrapped
        self.approver = approver
        self.history = history or InMemoryHistory()
        self.input, self.output = input, output
        self.show_toolbar = toolbar
        self.tokens = 0
        self.last: tuple[str, dict[str, object]] | None = None  # question, memory before it
        self.llm: BaseChatModel | None = None
        self.executor: AgentExecutor  # built by rebuild(), below
        self.printer = TokenPrinter(self.console, visible=lambda: self.settings.verbose)
        self.spinner = ThinkingSpinner(self.console, tokens_visible=self.printer.visible)
        self.trace = TraceRenderer(self.console, answer="none",
                                   streamed=lambda: self.printer.streamed,
                                   visible=lambda: self.settings.verbose,
                                   said_elsewhere=frozenset({"interrupted"}))  # one line
        self.conversation: Conversation | None = None
        self.held_back: list[str] = []  # the session's dangerous tools not allowed this time
        self._warned: set[str] = set()  # tool-loading warnings already said
        from agentcli.otel_export import otel_wanted

        self.observers = Observers(stats=False, trace=None, env=os.environ,
                                   otel=otel_wanted(settings.otel, os.environ))
        self.rebuild()
        self.open_session(session)

    # -- state ----------------------------------------------------------------------------
    @property
    def agent_name(self) -> str:
        """The agent type in use."""
        return self.settings.agent or DEFAULT_AGENT

    @property
    def session(self) -> str:
        """The open session's name."""
        assert self.conversation is not None
        return self.conversation.name

    @property
    def memory(self) -> Memory:
        """The open session's memory."""
        assert self.conversation is not None
        return self.conversation.memory

    @property
    def uses_memory(self) -> bool:
        """Whether the agent type in use is shown the earlier turns."""
        return reads_memory(self.settings, self.agent_name)

    @property
    def memory_label(self) -> str:
        """The memory kind to report: ``none`` when the model is shown no earlier turns."""
        return "none" if self.settings.memory == "none" else self.memory.kind

    def rebuild(self, *, new_model: bool = False) -> None:
        """Build the executor from the settings; warn loudly if memory cannot be used."""
        cls = agent_class(self.agent_name)
        if new_model or self.llm is None:
            llm = self.model_factory(self.settings)
            if self.llm is not None:
                self.llm.close()
            self.llm = llm
            if self.conversation is not None:
                self.conversation.attach_model(llm)
        warned: list[str] = []
        self.executor = build_executor(replace(self.settings, agent=self.agent_name), self.llm,
                                       approver=self.approver,
                                       callbacks=[self.spinner, self.printer, self.trace,
                                                  *self.observers.handlers],
                                       warnings=warned)
        report_tool_warnings(self.console, [w for w in warned if w not in self._warned])
        self._warned.update(warned)  # a broken plugin is said once a session, not per rebuild
        if self.conversation is not None:
            self.conversation.uses_memory = self.uses_memory
        if self.settings.memory != "none" and not cls.uses_memory:
            warn(self.console, f"agent type {self.agent_name} cannot use memory: the model will "
                 "NOT see earlier turns (they are still saved). Choose an agent type that uses "
                 "memory with /agent, or set memory: none to silence this.")

    def reconfigure(self, *, new_model: bool = False, **changes: Any) -> None:
        """Change settings and rebuild; if the rebuild fails the old settings stay."""
        old = self.settings
        self.settings = replace(old, **changes)
        try:
            self.rebuild(new_model=new_model)
        except BaseException:
            self.settings = old
            raise

    def open_session(self, name: str) -> None:
        """Switch to session ``name`` (created if new) and load its memory; a resumed session
        comes back with the agent type and tools it last used (flags given now win). Its saved
        setup changes only through ``/agent`` and ``/tools``: a resume never saves less."""
        check_cli_name(name)  # before leaving the session in use
        self._leave_session()
        self.held_back = []
        info = self.store.session(name)
        resumed = info is not None and bool(info.turns)
        if info is not None and resumed:
            self._restore_setup(name, info.agent, info.tools)
        conversation = open_conversation(self.store, name, self.settings, agent=self.agent_name,
                                         llm=self.llm)
        self.conversation = conversation
        if not resumed or info is None or info.tools is None:
            self.save_setup()
        self.tokens = sum((t["prompt_tokens"] or 0) + (t["completion_tokens"] or 0)
                          for t in self.store.turns(name))
        self.last = None
        if conversation.earlier_turns:
            note(self.console, f"Resumed session {name!r}: {conversation.earlier_turns} "
                 f"earlier turn(s) (memory: {self.memory_label}).")
        else:
            note(self.console, f"Session {name!r} (new). /help lists the commands.")

    def _restore_setup(self, name: str, agent: str | None, tools: list[str] | None) -> None:
        flagged = {k for k, v in self.settings.sources.items() if v == "flag"}
        changes: dict[str, Any] = {}
        if agent and agent != self.agent_name and "agent" not in flagged:
            changes["agent"] = agent
        if tools is not None and tools != list(self.settings.tools) and "tools" not in flagged:
            # A dangerous tool was allowed in that chat (/tools allow); allowing it again is
            # the user's call, so it is held back (still saved) and the rest comes back.
            self.held_back = [t for t in tools if _needs_opt_in(t, self.settings)]
            changes["tools"] = [t for t in tools if t not in self.held_back]
        if self.held_back:
            listed = ", ".join(self.held_back)
            warn(self.console, f"session {name!r} had {listed} allowed; not re-allowed without "
                 f"--allow {','.join(self.held_back)} (or /tools allow NAME)")
        if not changes or all(getattr(self.settings, k) == v for k, v in changes.items()):
            return
        try:
            self.reconfigure(**changes)
        except Exception as err:  # e.g. an MCP server's tool that is dangerous now
            self.rebuild()
            warn(self.console, f"could not restore this session's setup ({err}); using "
                 "the current one for now (the saved one is kept)")
            self.held_back = [t for t in tools or () if t not in self.settings.tools]
            return
        note(self.console, f"restored this session's agent {self.agent_name} and tools "
             f"{', '.join(self.settings.tools) or 'none'}")

    def _leave_session(self) -> None:
        """A session left with no turns is not kept (it would stay listed forever)."""
        if self.conversation is None:
            return
        info = self.store.session(self.session)
        if info is not None and info.turns == 0:
            self.store.delete_session(self.session)

    def save_setup(self) -> None:
        """Remember the agent type and tools in the session (they come back on resume); tools
        held back at resume stay in it until ``/tools rm`` drops them."""
        if self.conversation is not None:
            tools = list(self.settings.tools)
            self.held_back = [t for t in self.held_back if t not in tools]
            self.store.set_session_setup(self.session, agent=self.agent_name,
                                         tools=tools + self.held_back)

    def toolbar(self, width: int | None = None) -> str:
        """The bottom toolbar: session, memory, tokens used, model and agent type; fitted to
        the terminal's width (``width``) by shortening, then dropping, the model and agent."""
        if width is None:
            width = shutil.get_terminal_size((80, 24)).columns
        model = self.llm.name if self.llm else "-"
        agent = self.agent_name
        short_agent = agent.removesuffix("-react-description").removesuffix("-description")
        head = (f" session {self.session} | memory {self.memory_label} | "
                f"{self.tokens:,} tokens")
        for tail in (f" | model {model} | agent {agent} ", f" | {model} | {short_agent} ",
                     f" | {model.rpartition('/')[2]} | {short_agent} ",
                     f" | {model.rpartition('/')[2]} ", " "):
            if len(head) + len(tail) <= width:
                return head + tail
        return head[: max(0, width - 1)] + " "

    # -- one turn -------------------------------------------------------------------------
    async def _arun(self, inputs: Mapping[str, object], timings: TimingsHandler) -> RunResult:
        # The turn runs on the one portal loop: Ctrl-C cancels it there (the executor ends
        # the run as ``interrupted``); see ask() and cli/piped.py for the second one.
        assert self.conversation is not None
        named = self.conversation.config(  # gen_ai.conversation.id; the memory's middleware
            metadata={"session_id": self.session})
        result: RunResult | None = None
        self.printer.native = self.executor.agent.native_tools
        self.printer.given = self.executor.answer_given(str(inputs.get("input") or ""))
        try:
            async for event in self.executor.astream(inputs, named, callbacks=[timings]):
                if event.kind == "end":
                    result = event.result
        finally:
            self.spinner.stop()
        assert result is not None
        return result

    async def aask(self, question: str, dropped: Callable[[], bool] = lambda: False) -> None:
        """Run one question with the memory, render it, and commit the finished turn, on
        the portal; nothing is shown or kept of a turn ``dropped`` (a second Ctrl-C) by its
        end."""
        conversation = self.conversation
        assert conversation is not None
        before = conversation.state()  # for /retry
        timings = TimingsHandler()  # each step's status and duration, as `agent run` logs
        try:
            result = await self._arun(conversation.inputs(question), timings)
        except Exception as err:
            if not dropped():
                self.console.print(f"error: {safe_line(redact(str(err)))}", style="bold red",
                                   markup=False, highlight=False, soft_wrap=True)
            return
        if dropped():
            return
        if result.stop_reason == "interrupted":
            note(self.console, "Cancelled; back at the prompt (this turn was not saved).")
        else:
            answer = real_answer(result)
            if answer is None:  # a limit stopped the turn: never show a fake answer
                if not self.settings.verbose:  # (the trace already said why, once)
                    note(self.console, stop_line(result) or "Stopped.")
            elif not (self.printer.answer_streamed and result.stop_reason == "finished"):
                render_answer(self.console, answer)
            self.tokens += result.usage.total_tokens
            self.last = (question, before)
        save = functools.partial(
            record_run, question, result, conversation,
            model=self.llm.name if self.llm else None, agent=self.agent_name,
            options=sent_options(self.settings), meta={"timings": timings.summary()},
            on_memory_error=lambda err: warn(self.console,
                                             f"memory could not record this turn: {err}"))
        try:  # another chat on this session may have written first: its turns are merged in
            if conversation.memory.calls_model:  # (a summary of merged turns is a sync call)
                await in_thread(save)
            else:  # a commit on the loop: the turn's run is over, nothing else waits on it
                save()
        except Exception as err:
            warn(self.console, f"could not save this turn: {err}")

    def ask(self, question: str) -> None:
        """:meth:`aask` from the prompt's thread: the first Ctrl-C cancels the run, a second
        one drops the turn and comes back to the prompt at once."""
        dropped: list[bool] = []
        try:
            run_sync(self.aask(question, lambda: bool(dropped)), instead="ChatRepl.aask")
        except KeyboardInterrupt:
            dropped.append(True)
            note(self.console, "Cancelled; back at the prompt.")

    # -- the loop -------------------------------------------------------------------------
    def loop(self) -> int:
        """Read, dispatch or run, repeat; Ctrl-D or /exit quits. Returns the exit code."""
        if self.input is None and not _stdin_is_a_terminal():  # no prompt to draw
            from agentcli.cli.piped import PipedLines, answer_piped

            try:
                answer_piped(self, PipedLines(sys.stdin))
            finally:
                self.close()
            return exit_codes.OK
        read: Callable[[], str] = functools.partial(PromptSession(
            history=self.history, auto_suggest=AutoSuggestFromHistory(),
            completer=SlashCompleter(self), complete_while_typing=True,
            bottom_toolbar=self.toolbar if self.show_toolbar else None,
            key_bindings=_key_bindings(), multiline=True, input=self.input,
            output=self.output,
        ).prompt, "you> ")
        try:
            while True:  # Ctrl-C: the run (see _run), or the typed line
                try:
                    text = read().strip()
                except KeyboardInterrupt:
                    continue  # Ctrl-C at the prompt clears the line
                except EOFError:
                    break
                if not text:
                    continue
                if text.startswith("/"):
                    if dispatch(self, text) is EXIT:
                        break
                    continue
                self.ask(text)
        finally:
            self.close()
        return exit_codes.OK

    def echo(self, text: str) -> None:
        """A piped message, echoed as a transcript line (``you> ...``)."""
        line = f"you> {safe_text(text)}"
        if not print_plain(self.console, line, emoji_codes=False, soft_wrap=True):
            self.console.print(Text(line), soft_wrap=True)

    def close(self) -> None:
        """Release the model client and the database."""
        with contextlib.suppress(Exception):  # never let tidying up hide the real exit
            self._leave_session()
        if self.llm is not None:
            self.llm.close()
        self.observers.close(self.console)  # the last turn's spans go out
        self.store.close()


def start_chat(settings: Settings, env: dict[str, str], *, session: str, yes: bool) -> int:
    """Entry point for ``agent chat``: build the store, the model and the REPL, then loop."""
    check_names(settings.tools, settings)
    if settings.agent is None:  # chat defaults to an agent type that uses memory
        settings = replace(settings, agent=CHAT_AGENT)
    demo = False
    if not settings.model:
        try:
            settings, probe, notice = choose_model(settings, env, "", None)
            probe.close()
        except ConfigError:  # no model and no local Ollama: the offline demo chat
            demo, notice = True, (
                "Offline demo: no model is configured, so a scripted model answers (try "
                f"\"{DEMO_QUESTION}\"; the Calculator really runs) and nothing is saved. To "
                f"chat with a real model, {HOW_TO_CONFIGURE}.")
        if notice:
            note(Console(), notice)
    path = history_path(env)
    path.parent.mkdir(parents=True, exist_ok=True)

    def factory(s: Settings) -> BaseChatModel:
        if demo and not s.model:
            return demo_chat_model()
        return build_model(s, env)

    # The demo keeps nothing: its session would be resumed by the first real chat.
    store = Store(":memory:") if demo else open_store(settings.db_path, env)
    repl = ChatRepl(replace(settings, stream=True) if "stream" not in settings.sources
                    else settings, store, factory,
                    session=session, approver=build_approver(settings, yes),
                    history=FileHistory(str(path)),
                    toolbar=_stdin_is_a_terminal())
    return repl.loop()
