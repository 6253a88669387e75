"""The ``agent`` command line: parse flags, build objects, run, render. Nothing else."""

# No ``from __future__ import annotations``: Typer reads the commands' annotations, and as
# strings it compiles and evaluates each one at start-up (~1 ms of run's 47 options).
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from agentcli import __version__, exit_codes
from agentcli.cli import model_flags as opts
from agentcli.cli.default_cmd import DefaultRunGroup, RunCommand
from agentcli.cli.environ import environment as _env
from agentcli.cli.mcp_cmd import ask_project_trust
from agentcli.cli.startup import global_flags_first, only_the_named_command
from agentcli.errors import ConfigError

if TYPE_CHECKING:
    from agentcli.config import Settings

app = typer.Typer(
    help="A ReAct agent shell: tools, agents and any OpenAI-compatible model.\n\n"
    'agent "QUESTION" [FLAGS] is short for agent run "QUESTION" [FLAGS].\n\n'
    + exit_codes.HELP,
    cls=DefaultRunGroup,
    add_completion=True,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Plain help: Typer's Rich help imports rich.markdown and pygments (~90 ms of start-up).
    rich_markup_mode=None,
)
tools_app = typer.Typer(help="Inspect the tool registry.", no_args_is_help=True,
                        rich_markup_mode=None)
agents_app = typer.Typer(help="Inspect the agent types.", no_args_is_help=True,
                         rich_markup_mode=None)

def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentcli {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
    ),
    debug: bool = typer.Option(
        False, "--debug", help="Show tracebacks on errors (also accepted after the subcommand)."
    ),
) -> None:
    """Global options."""
    if not debug:
        # Libraries (the MCP SDK, httpx) log tracebacks about a misbehaving server straight to
        # stderr; our own error line says what went wrong. --debug shows them.
        import logging

        root = logging.getLogger()
        if not any(isinstance(h, logging.NullHandler) for h in root.handlers):
            root.addHandler(logging.NullHandler())


@app.command(cls=RunCommand)
def run(
    question: str | None = typer.Argument(
        None, help="The question, or - to read it from stdin (optional with --template)."),
    model: str | None = opts.MODEL_OPT,
    agent: str | None = opts.AGENT_OPT,
    tools: str | None = opts.TOOLS_OPT,
    config: Path | None = opts.CONFIG_OPT,
    profile: str | None = opts.PROFILE_OPT,
    max_iterations: int | None = opts.MAX_ITERATIONS_OPT,
    max_time: float | None = typer.Option(None, "--max-time", help="Time limit in seconds."),
    early_stopping: str | None = typer.Option(
        None, "--early-stopping",
        help="At a limit: auto (ask once for the answer after useful work), force or generate."
    ),
    allow_dangerous_tools: bool | None = opts.DANGEROUS_OPT,
    allow: str | None = opts.ALLOW_OPT,
    yes: bool = opts.YES_OPT,
    verbose: bool | None = typer.Option(
        None, "--verbose/--quiet", "-v/-q", help="Show the trace, or print only the answer."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object with the result."),
    no_stdin: bool = typer.Option(
        False, "--no-stdin", help="Leave stdin unread (piped text is otherwise read to its end)."),
    record: Path | None = typer.Option(None, "--record", help="Save a replay cassette here."),
    tools_module: str | None = opts.MODULE_OPT,
    stats: bool = opts.STATS_OPT,
    trace: Path | None = opts.TRACE_OPT,
    otel: bool | None = opts.OTEL_OPT,
    cache: bool | None = opts.CACHE_OPT,
    max_tokens: int | None = typer.Option(None, "--max-tokens", help="Token budget (exit 3)."),
    max_cost: float | None = typer.Option(None, "--max-cost", help="USD budget (exit 3)."),
    state: list[str] | None = typer.Option(
        None, "--state", help="A run state field, NAME=VALUE (repeatable)."),
    state_file: Path | None = typer.Option(
        None, "--state-file", help="JSON object of run state fields."),
    schema: Path | None = typer.Option(
        None, "--schema", help="JSON Schema the answer must match; prints the JSON object."),
    continue_last: bool = typer.Option(
        False, "--continue", "-C", help="Continue the conversation of the last run."
    ),
    thread: str | None = typer.Option(
        None, "--thread", help="Continue (or start) the named conversation; a chat session."
    ),
    log: bool | None = typer.Option(
        None, "--log/--no-log", help="Log this run even if `agent logs off`, or do not."
    ),
    db: str | None = opts.DB_OPT,
    base_url: str | None = opts.BASE_URL_OPT,
    option: list[str] | None = opts.option_opt("--option", "-o"),
    system: str | None = opts.system_opt("--system", "-s"),
    prompt: str | None = opts.PROMPT_OPT,
    markdown: bool | None = typer.Option(
        None, "--markdown/--no-markdown", help="Answer as Markdown (default: by content)."
    ),
    structured_actions: str | None = typer.Option(
        None, "--structured-actions", help="auto, on or off: JSON Schema for action blobs."
    ),
    extract: bool = typer.Option(
        False, "--extract", "-x", help="Print only the first fenced code block of the answer."),
    extract_last: bool = typer.Option(
        False, "--extract-last", help="Print only the last fenced code block of the answer."),
    template: str | None = typer.Option(
        None, "--template", "-T",
        help="Use a saved template (llm's -t; here -t is --tools). See agent templates list."),
    param: list[str] | None = typer.Option(
        None, "--param", "-p", metavar="KEY VALUE",
        help="A template parameter: fills $KEY in the prompt and system text (repeatable)."),
    attach: list[str] | None = typer.Option(
        None, "--attach", "-A", help="An image (or wav/mp3) file or URL for a model that "
        "reads them (repeatable; llm's -a, here -a is --agent)."),
    fragment: list[str] | None = typer.Option(
        None, "--fragment", "-f", help="Context before the question: a file, a glob, an "
        "http(s) URL or - (stdin); repeatable; 1 MiB in all."),
    save: str | None = typer.Option(
        None, "--save", help="Save the prompt, --system, --model, -o, -t, -a, -p as template "
        "NAME instead of running."),
) -> None:
    """Answer one question with the agent loop, printing the Thought/Action/Observation trace."""
    from agentcli.config import load_settings

    if question is None and template is None and save is None:
        from agentcli.cli.question import piped_text, stdin_is_piped

        # echo "2+2?" | agent run: the piped text is the question, as with llm
        if not (no_stdin or "-" in (fragment or [])) and stdin_is_piped():
            question = piped_text(sys.stdin)
        if question is None:
            raise ConfigError('QUESTION is missing; pass one, e.g. agent run "What is '
                              '2+2?" (or pipe it in, or -T NAME for a saved template)')
    from agentcli.cli.running import execute

    env = _env()
    flags = {
        "model": model, "agent": agent, "tools": tools, "profile": profile,
        "max_iterations": max_iterations, "max_execution_time": max_time,
        "early_stopping_method": early_stopping,
        "allow_dangerous_tools": allow_dangerous_tools, "allow": allow,
        "tools_module": tools_module,
        "verbose": verbose if verbose is not None else (False if json_out else None),
        "cache": cache, "max_tokens": max_tokens, "max_cost": max_cost, "db_path": db,
        **opts.model_flags(base_url, option, system, prompt),
        "markdown": markdown, "structured_actions": structured_actions, "otel": otel,
    }
    from agentcli.cli import template_flags

    params = template_flags.param_values(param)
    if save is not None:
        path = template_flags.save_from_flags(save, question, flags, params,
                                              base=template)
        typer.echo(f"saved template {save} in {path}", err=True)
        raise typer.Exit(exit_codes.OK)
    used = None
    if template is not None:
        used, flags = template_flags.with_template(template, flags, params)

    settings = load_settings(config, flags=flags, env=env)
    from agentcli.cli.state_opts import RunInputs

    ask_project_trust(settings)

    extra = RunInputs.from_flags(state or [], state_file, schema)
    from agentcli.cli.compose import compose_question

    text = compose_question(question, template=used, params=params,
                            fragments=fragment or [], tool_settings=settings.tool_settings,
                            read_stdin=not no_stdin)
    if attach:
        from agentcli.cli.attachments import attachment_parts
        from agentcli.schema import ContentText

        text = ContentText(text, attachment_parts(attach))
    from agentcli.cli.exits import sigterm_raises

    with sigterm_raises(KeyboardInterrupt):  # kill, timeout, systemd: as Ctrl-C
        code = execute(text, settings, env, yes=yes,
                       json_out=json_out,
                       record=record, stats=stats, trace=trace, extra=extra, thread=thread,
                       continue_last=continue_last, log=log,
                       extract="last" if extract_last else ("first" if extract else None))
    raise typer.Exit(code)


def _tool_settings(config: Path | None, tools_module: str | None,
                   **flags: object) -> "Settings":
    from agentcli.config import load_settings

    return load_settings(config, flags={"tools_module": tools_module, **flags}, env=_env())


@app.command(cls=opts.PairCommand)
def batch(
    input_path: Path = typer.Argument(..., metavar="INPUT.jsonl",
                                      help='JSONL lines {"id", "input", ...}; - for stdin.'),
    out: Path = typer.Option(..., "--out", "-o", help="Append one JSON line per item here."),
    concurrency: int = typer.Option(8, "--concurrency", "-j", help="Questions at once."),
    expect: str | None = typer.Option(None, "--expect", help="Grade answers against FIELD."),
    model: str | None = opts.MODEL_OPT,
    agent: str | None = opts.AGENT_OPT,
    tools: str | None = opts.TOOLS_OPT,
    config: Path | None = opts.CONFIG_OPT,
    max_iterations: int | None = opts.MAX_ITERATIONS_OPT,
    cache: bool | None = opts.CACHE_OPT,
    stats: bool = opts.STATS_OPT,
    trace: Path | None = opts.TRACE_OPT,
    otel: bool | None = opts.OTEL_OPT,
    yes: bool = opts.YES_OPT,
    allow_dangerous_tools: bool | None = opts.DANGEROUS_OPT,
    allow: str | None = opts.ALLOW_OPT,
    tools_module: str | None = opts.MODULE_OPT,
    retry_errors: bool = typer.Option(
        True, "--retry-errors/--no-retry-errors",
        help="On resume, run again the items whose last line in OUT is a provider error."),
    schema: Path | None = typer.Option(
        None, "--schema", help="JSON Schema every answer must match (as agent run --schema)."),
    base_url: str | None = opts.BASE_URL_OPT,
    option: list[str] | None = opts.option_opt("--option"),
    system: str | None = opts.system_opt("--system", "-s"),
    prompt: str | None = opts.PROMPT_OPT,
) -> None:
    """Run many questions concurrently; resumable; with --expect, an eval report.

    Exits 0 when every item is answered, else 4 (any provider error), 3 (any limit),
    2 (bad input lines) or 1."""
    from agentcli.cli.batch_cmd import run_batch_command
    from agentcli.cli.state_opts import RunInputs
    from agentcli.config import load_settings

    env = _env()
    flags = {"model": model, "agent": agent, "tools": tools, "cache": cache,
             "max_iterations": max_iterations, "verbose": False,
             "allow_dangerous_tools": allow_dangerous_tools, "allow": allow,
             "tools_module": tools_module, "otel": otel,
             **opts.model_flags(base_url, option, system, prompt)}
    settings = load_settings(config, flags=flags, env=env)
    answer_schema = RunInputs.from_flags([], None, schema).schema  # read and checked now
    raise typer.Exit(run_batch_command(
        settings, env, input_path, out, concurrency=concurrency, expect=expect,
        stats=stats, trace=trace, yes=yes, retry_errors=retry_errors, schema=answer_schema,
    ))


@tools_app.command("list")
def tools_list(
    json_out: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    config: Path | None = opts.CONFIG_OPT,
    tools_module: str | None = opts.MODULE_OPT,
    all_tools: bool = typer.Option(
        False, "--all", help="Also list MCP tools, starting servers whose list is not cached."
    ),
    refresh: bool = typer.Option(
        False, "--refresh", help="Start every MCP server and refresh its cached tool list."
    ),
) -> None:
    """List every tool: source (built-in, plugin, module, YAML, MCP), danger, needs.

    MCP servers are not started: their tools come from the list cached the last time each
    server ran. --all starts servers never listed; --refresh starts them all.
    """
    from agentcli.cli.tool_commands import print_tools

    mode = "refresh" if refresh else ("all" if all_tools else "cached")
    print_tools(_tool_settings(config, tools_module), json_out, mcp=mode)


@tools_app.command("show")
def tools_show(
    name: str = typer.Argument(..., help="The tool name."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
    config: Path | None = opts.CONFIG_OPT,
    tools_module: str | None = opts.MODULE_OPT,
) -> None:
    """Show one tool: description, argument schema, danger, needs."""
    from agentcli.cli.tool_commands import show_tool

    show_tool(_tool_settings(config, tools_module), name, json_out)


@tools_app.command("call")
def tools_call(
    name: str = typer.Argument(..., help="The tool name."),
    tool_input: str = typer.Argument(..., help="The input: text, or a JSON object."),
    config: Path | None = opts.CONFIG_OPT,
    tools_module: str | None = opts.MODULE_OPT,
    model: str | None = typer.Option(None, "--model", "-m", help="For tools needing a model."),
    allow: str | None = opts.ALLOW_OPT,
    allow_dangerous_tools: bool | None = opts.DANGEROUS_OPT,
    yes: bool = opts.YES_OPT,
) -> None:
    """Run one tool directly, under the same approval rules as the agent."""
    from agentcli.cli.tool_commands import call_tool

    settings = _tool_settings(config, tools_module, model=model, allow=allow,
                              allow_dangerous_tools=allow_dangerous_tools)
    llm = None
    if settings.model:
        from agentcli.runtime import build_model

        llm = build_model(settings, _env())
    raise typer.Exit(call_tool(settings, name, tool_input, yes=yes, llm=llm))


@agents_app.command("list")
def agents_list(
    json_out: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """List the agent types and what each suits."""
    from agentcli.cli.listing import print_agents

    print_agents(json_out)


@app.command(cls=opts.PairCommand)
def chat(
    session: str = typer.Option("default", "--session", "-s", help="Session to start or resume."),
    model: str | None = opts.MODEL_OPT,
    agent: str | None = opts.AGENT_OPT,
    tools: str | None = opts.TOOLS_OPT,
    memory: str | None = typer.Option(
        None, "--memory", help="auto, none, buffer, window, tokens or summary."
    ),
    config: Path | None = opts.CONFIG_OPT,
    profile: str | None = opts.PROFILE_OPT,
    db: str | None = opts.DB_OPT,
    stream: bool | None = typer.Option(None, "--stream/--no-stream", help="Stream tokens."),
    verbose: bool | None = typer.Option(None, "--verbose/--quiet", "-v/-q", help="Trace."),
    yes: bool = opts.YES_OPT,
    allow_dangerous_tools: bool | None = opts.DANGEROUS_OPT,
    allow: str | None = opts.ALLOW_OPT,
    tools_module: str | None = opts.MODULE_OPT,
    base_url: str | None = opts.BASE_URL_OPT,
    option: list[str] | None = opts.option_opt("--option", "-o"),
    system: str | None = opts.system_opt("--system"),
    prompt: str | None = opts.PROMPT_OPT,
    otel: bool | None = typer.Option(
        None, "--otel/--no-otel", help="Export OpenTelemetry traces (a trace per turn)."),
) -> None:
    """Chat with the agent: memory, saved sessions, streaming, slash commands (/help)."""
    from agentcli.cli.repl import start_chat
    from agentcli.config import load_settings

    env = _env()
    flags = {"model": model, "agent": agent, "tools": tools, "memory": memory,
             "profile": profile, "db_path": db, "stream": stream, "verbose": verbose,
             "allow_dangerous_tools": allow_dangerous_tools, "allow": allow,
             "tools_module": tools_module, "otel": otel,
             **opts.model_flags(base_url, option, system, prompt)}
    settings = load_settings(config, flags=flags, env=env)

    ask_project_trust(settings)
    from agentcli.cli.exits import sigterm_raises

    with sigterm_raises(lambda: SystemExit(exit_codes.INTERRUPTED)):  # (Ctrl-C only cancels)
        code = start_chat(settings, env, session=session, yes=yes)
    raise typer.Exit(code)


# The other commands live in their own modules, registered here once ``app`` exists.
from agentcli.cli.aliases_cmd import aliases_app  # noqa: E402
from agentcli.cli.completion_cmd import completion  # noqa: E402
from agentcli.cli.keys_cmd import keys_app  # noqa: E402
from agentcli.cli.logs_cmd import logs_app  # noqa: E402
from agentcli.cli.mcp_cmd import mcp_app  # noqa: E402
from agentcli.cli.models_cmd import models_app  # noqa: E402
from agentcli.cli.plugins_cmd import install, plugins, uninstall  # noqa: E402
from agentcli.cli.prompts_cmd import prompts_app  # noqa: E402
from agentcli.cli.serve_cmd import serve  # noqa: E402 - Starlette/uvicorn load only to serve
from agentcli.cli.sessions_cmd import sessions_app  # noqa: E402
from agentcli.cli.templates_cmd import templates_app  # noqa: E402
from agentcli.cli.trust_cmd import trust  # noqa: E402

for name, group in (("tools", tools_app), ("agents", agents_app), ("sessions", sessions_app),
                    ("logs", logs_app), ("prompts", prompts_app), ("keys", keys_app),
                    ("models", models_app), ("aliases", aliases_app),
                    ("templates", templates_app), ("mcp", mcp_app)):
    app.add_typer(group, name=name)
for name, command in (("completion", completion), ("trust", trust), ("plugins", plugins),
                      ("install", install), ("uninstall", uninstall)):
    app.command(name)(command)
app.command("serve", cls=opts.PairCommand)(serve)


def main() -> None:
    """Console-script entry point."""
    sys.argv = global_flags_first(sys.argv)
    if "_AGENT_COMPLETE" in os.environ:  # the shell asks for completions: wire them only now
        from agentcli.cli.completion import attach_completions

        attach_completions(app)
    try:
        with only_the_named_command(app, sys.argv):
            app(prog_name="agent")  # also under `python -m agentcli`: one name everywhere
    finally:
        try:
            sys.stdout.flush()
        except BrokenPipeError:  # the reader left before the last buffered bytes went out
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())

