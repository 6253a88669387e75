"""``agent run``: pick the model, run the executor, render the trace and the answer."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from agentcli import demo
from agentcli.agents import DEFAULT_AGENT, agent_class
from agentcli.callbacks.timings import TimingsHandler
from agentcli.cli.consoles import console, print_line, report_tool_warnings
from agentcli.cli.observe import Observers
from agentcli.cli.render import TraceRenderer, print_answer
from agentcli.cli.spinner import ThinkingSpinner
from agentcli.cli.state_opts import RunInputs
from agentcli.config import Settings
from agentcli.deadline import deadline_scope
from agentcli.errors import ConfigError
from agentcli.models.base import BaseChatModel
from agentcli.models.options import effective_options
from agentcli.outcome import exit_code, real_answer, stop_line
from agentcli.redact import redact_data
from agentcli.run_logging import logging_enabled
from agentcli.runtime import build_executor, build_model
from agentcli.schema import RunResult
from agentcli.tools.resolve import check_names

if TYPE_CHECKING:
    from rich.console import Console

    from agentcli.session import Conversation


def _say(err: Console, text: str, style: str) -> None:
    """One styled line on stderr: a notice or a warning."""
    print_line(err, (text, style))


def choose_model(
    settings: Settings, env: dict[str, str], question: str, record: Path | None
) -> tuple[Settings, BaseChatModel, str | None]:
    """The configured model; else a local Ollama; else the offline demo replay (with a notice)."""
    if settings.model:
        return settings, build_model(settings, env, record=record), None

    found = demo.probe_ollama(env.get("OLLAMA_BASE_URL") or demo.OLLAMA_URL)
    if found:
        settings = replace(settings, model=found)
        return settings, build_model(settings, env, record=record), (
            f"No model configured; using the local Ollama model {found}."
        )

    # The replay only answers the exact recorded requests: anything that changes them is out.
    demo_ready = (settings.tools == ["llm-math"] and settings.agent in (None, DEFAULT_AGENT)
                  and not (settings.system or settings.prompt_file or settings.model_options))
    if not (demo_ready and demo.is_demo_question(question)):
        raise ConfigError(f"no model configured: {demo.HOW_TO_CONFIGURE}")

    notice = (
        "Offline demo: no model is configured, so this is a replay of a recorded Qwen run. "
        f"To ask your own questions, {demo.HOW_TO_CONFIGURE}."
    )
    from agentcli.models.replay import ReplayChatModel

    return settings, ReplayChatModel(demo.demo_cassette()), notice


def sent_options(settings: Settings) -> dict[str, object]:
    """The model options every request of this run carries (for --json and the run log)."""
    return effective_options(settings.temperature, settings.model_options)


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
    extra: RunInputs | None = None,
    thread: str | None = None,
    continue_last: bool = False,
    log: bool | None = None,
    extract: Literal["first", "last"] | None = None,
) -> int:
    """Run one question and print the outcome; returns the exit code.

    ``thread`` / ``continue_last`` make the run a turn of a saved conversation; ``log``
    overrides the ``agent logs on|off`` switch for this run; ``extract`` prints only the
    first or last fenced code block of the answer (``-x``, ``--extract-last``).
    """
    check_names(settings.tools, settings)  # unknown names fail before any model is contacted
    agent_class(settings.agent or DEFAULT_AGENT)

    err, out = console(stderr=True), console()
    conversation = None
    if thread is not None or continue_last:
        from agentcli.cli.threads import open_thread

        settings, conversation = open_thread(settings, env, name=thread,
                                             continue_last=continue_last)
    settings, llm, notice = choose_model(settings, env, question, record)
    if conversation is not None:
        conversation.attach_model(llm)
        _thread_notice(err, settings, conversation)
    if settings.model is None:  # the offline demo: replay the seed's wording exactly
        question = demo.DEMO_QUESTION
    if notice:
        _say(err, notice, "bold yellow")
    # In a terminal the answer is rendered on stdout right after the trace: print it once.
    inline = out.is_terminal and err.is_terminal and not json_out
    printer = (TraceRenderer(err, answer="label" if inline else "full")
               if settings.verbose else None)
    from agentcli.otel_export import otel_wanted

    observers = Observers(stats=stats, trace=trace, env=env, prices=settings.prices,
                          otel=otel_wanted(settings.otel, env))
    timings = TimingsHandler()
    # `run` prints no streamed tokens, so the spinner lasts until each reply is complete.
    spinner = ThinkingSpinner(err, tokens_visible=lambda: False)
    result: RunResult | None = None
    try:
        from agentcli.cli.approve import build_approver, human_input

        extra = extra or RunInputs()
        warned: list[str] = []
        # --max-time spans the tools' start-up too: an MCP server that never answers
        # `initialize` cannot hold the run past its limit
        with deadline_scope(settings.max_execution_time):
            with observers.setting_up():  # MCP servers start in the run's trace
                executor = build_executor(settings, llm, approver=build_approver(settings, yes),
                                          callbacks=[spinner, *([printer] if printer else []),
                                                     *observers.handlers, timings],
                                          tool_extras={"human_input": human_input()},
                                          warnings=warned)
            report_tool_warnings(err, warned)
            base = conversation.inputs(question) if conversation else {"input": question}
            inputs = {**base, **extra.values(executor.schema)}
            config = conversation.config() if conversation else None  # its memory's middleware
            # the renderer subscribes to the events; --schema is the run's output schema
            for event in executor.stream(inputs, config, response_format=extra.schema):
                if event.kind == "end":
                    result = event.result
    finally:
        spinner.stop()
        llm.close()
        observers.close(err)
        if conversation is not None and result is None:
            conversation.store.close()
    assert result is not None  # the stream always ends with an "end" event holding it
    if conversation is not None or (  # (the demo keeps nothing)
            settings.model is not None and (log if log is not None else logging_enabled(env))):
        _save(settings, env, question, result, llm.name, timings, conversation, err)
    answer = real_answer(result)
    extracted = None
    if answer is not None and extract is not None:
        from agentcli.cli.extract import extract_block

        extracted = extract_block(answer, last=extract == "last")
    if json_out:
        # A forced stop has no answer: null, with the reason in stop_reason / limit.
        payload = result.to_dict() | {"answer": answer, "model": llm.name,
                                       "model_options": sent_options(settings)}
        if conversation is not None:
            payload["thread"] = conversation.name
        if extracted is not None:
            payload["extracted"] = extracted
        out.print_json(json.dumps(redact_data(payload), ensure_ascii=False))
    elif extra.schema is not None and "structured_response" in result.state:
        value = result.to_dict()["state"]["structured_response"]
        out.print(json.dumps(redact_data(value), ensure_ascii=False), markup=False,
                  highlight=False, soft_wrap=True)
    else:
        stopped = stop_line(result)
        if stopped and not settings.verbose:  # the trace printed it (once) as it happened
            _say(err, stopped, "yellow")
        if extracted is not None:  # the code as written, for a pipe or a file: no Markdown
            print_answer(out, extracted, markdown=False)
        elif answer is not None:
            print_answer(out, answer, markdown=settings.markdown)
    return exit_code(result)


def _thread_notice(err: Console, settings: Settings, conversation: Conversation) -> None:
    if not conversation.uses_memory:
        _say(err, f"WARNING: agent type {settings.agent} cannot use memory: the model will "
             "NOT see earlier turns of this thread", "bold red")
    elif settings.verbose:
        _say(err, f"Thread {conversation.name!r}: {conversation.earlier_turns} earlier "
             "turn(s).", "yellow")


def _save(settings: Settings, env: dict[str, str], question: str, result: RunResult,
          model: str, timings: TimingsHandler, conversation: Conversation | None,
          err: Console) -> None:
    """Save the turn to its thread, or add the run to the SQLite log, through the one
    ``record_run`` (cost included) with the options sent and per-call timings; a failure is a
    one-line warning, never a failed run: the answer still prints."""
    from agentcli.session import record_run
    from agentcli.store import open_store

    failed = ("could not log this run" if conversation is None
              else f"could not save this turn to thread {conversation.name!r}")
    try:
        store = conversation.store if conversation is not None else open_store(
            settings.db_path, env)
        try:
            record_run(question, result, conversation or store, model=model,
                       agent=settings.agent or DEFAULT_AGENT, options=sent_options(settings),
                       meta={"timings": timings.summary()})
        finally:
            store.close()
    except Exception as exc:
        _say(err, f"warning: {failed}: {exc}", "yellow")
