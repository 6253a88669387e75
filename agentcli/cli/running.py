"""``agent run``: pick the model, run the executor, render the trace and the answer."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from agentcli.cli.consoles import err_console
from agentcli.config import Settings
from agentcli.errors import ConfigError
from agentcli.models.base import BaseChatModel
from agentcli.outcome import exit_code, real_answer, stop_line
from agentcli.redact import redact_data
from agentcli.schema import RunResult

if TYPE_CHECKING:
    from agentcli.executor import RunEvent


def choose_model(
    settings: Settings, env: dict[str, str], question: str, record: Path | None
) -> tuple[Settings, BaseChatModel, str | None]:
    """The configured model; else a local Ollama; else the offline demo replay (with a notice)."""
    from agentcli.runtime import build_model

    if settings.model:
        return settings, build_model(settings, env, record=record), None
    from agentcli import demo

    found = demo.probe_ollama(env.get("OLLAMA_BASE_URL") or demo.OLLAMA_URL)
    if found:
        settings = replace(settings, model=found)
        return settings, build_model(settings, env, record=record), (
            f"No model configured; using the local Ollama model {found}."
        )
    from agentcli.agents import DEFAULT_AGENT

    demo_ready = settings.tools == ["llm-math"] and settings.agent in (None, DEFAULT_AGENT)
    if not (demo_ready and demo.is_demo_question(question)):
        raise ConfigError(f"no model configured: {demo.HOW_TO_CONFIGURE}")
    from agentcli.models.replay import ReplayChatModel

    notice = (
        "Offline demo: no model is configured, so this is a replay of a recorded Qwen run. "
        f"To ask your own questions, {demo.HOW_TO_CONFIGURE}."
    )
    return settings, ReplayChatModel(demo.demo_cassette()), notice


def log_run(
    settings: Settings, env: dict[str, str], question: str, result: RunResult, model: str,
    err: Console,
) -> None:
    """Add the run to the SQLite log; a failure is a one-line warning, never a failed run."""
    try:
        from agentcli.store import open_store

        store = open_store(settings.db_path, env)
        try:
            store.log_run(question, result, model=model, agent=settings.agent)
        finally:
            store.close()
    except Exception as exc:
        err.print(Text(f"warning: could not log this run: {exc}", style="yellow"))


def _placeholder(event: RunEvent) -> bool:
    """The forced stop's placeholder "answer": not drawn as a Final Answer."""
    from agentcli.executor import FORCE_STOP_MESSAGE

    return event.kind == "finish" and event.output == FORCE_STOP_MESSAGE and (
        event.finish is None or not event.finish.log)


def execute(
    question: str,
    settings: Settings,
    env: dict[str, str],
    *,
    yes: bool = False,
    json_out: bool = False,
    record: Path | None = None,
    stats: bool = False,
    trace: Path | None = None,
) -> int:
    """Run one question and print the outcome; returns the exit code."""
    from agentcli.agents import agent_class
    from agentcli.cli.render import VerboseHandler, print_answer
    from agentcli.runtime import build_executor
    from agentcli.tools.registry import expand

    expand(settings.tools)  # unknown names fail before any model is contacted
    agent_class(settings.agent or "chat-zero-shot-react-description")
    err = err_console()
    out = Console()
    settings, llm, notice = choose_model(settings, env, question, record)
    if notice:
        err.print(Text(notice, style="bold yellow"))
    # In a terminal the answer is rendered on stdout right after the trace: print it once.
    inline = out.is_terminal and err.is_terminal and not json_out
    printer = (VerboseHandler(err, show_answer=not inline, events=True)
               if settings.verbose else None)
    from agentcli.cli.observe import Observers

    observers = Observers(stats=stats, trace=trace, env=env)
    result: RunResult | None = None
    try:
        from agentcli.cli.approve import build_approver, human_input

        executor = build_executor(settings, llm, approver=build_approver(settings, yes),
                                  callbacks=[*([printer] if printer else []), *observers.handlers],
                                  tool_extras={"human_input": human_input()})
        for event in executor.stream(question):  # the trace is rendered from the events
            if printer is not None and not _placeholder(event):
                printer.render(event)
            result = event.result or result
    finally:
        llm.close()
        observers.close(err)
    assert result is not None  # the stream always ends with an "end" event holding it
    log_run(settings, env, question, result, llm.name, err)
    answer = real_answer(result)
    if json_out:
        # A forced stop has no answer: null, with the reason in stop_reason / limit.
        payload = result.to_dict() | {"answer": answer, "model": llm.name}
        out.print_json(json.dumps(redact_data(payload), ensure_ascii=False))
    else:
        stopped = stop_line(result)
        if stopped:
            err.print(Text(stopped, style="yellow"))
        if answer is not None:
            print_answer(out, answer)
    return exit_code(result)
