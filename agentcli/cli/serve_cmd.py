"""``agent serve``: the configured agents as an OpenAI-compatible endpoint on 127.0.0.1."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from agentcli import exit_codes
from agentcli.cli import model_flags as opts
from agentcli.cli.environ import environment
from agentcli.errors import ConfigError

if TYPE_CHECKING:
    from starlette.types import ASGIApp

    from agentcli.serve.agents import ServedAgent

INSTALL_HINT = "agent serve needs the serve extra: pip install 'agentcli[serve]'"
TOKEN_ENV = "AGENT_SERVE_TOKEN"


def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (loopback by "
                             "default)."),
    port: int = typer.Option(8765, "--port", "-p", help="Port (0: any free one)."),
    token: str | None = typer.Option(
        None, "--token", envvar=TOKEN_ENV, show_envvar=True,
        help="Bearer token every request must send (default: a new one, printed at start)."),
    no_token: bool = typer.Option(
        False, "--no-token", help="Answer without a token (loopback only; any local account "
        "can then use the agent)."),
    model: str | None = opts.MODEL_OPT,
    agent: str | None = opts.AGENT_OPT,
    tools: str | None = opts.TOOLS_OPT,
    config: Path | None = opts.CONFIG_OPT,
    profile: str | None = typer.Option(None, "--profile", help="Profile served as default."),
    max_iterations: int | None = opts.MAX_ITERATIONS_OPT,
    max_time: float | None = typer.Option(
        None, "--max-time", help="Seconds per request (default 300)."),
    max_tokens: int | None = typer.Option(None, "--max-tokens", help="Token budget per request."),
    max_cost: float | None = typer.Option(None, "--max-cost", help="USD budget per request."),
    allow: str | None = typer.Option(
        None, "--allow", help="Dangerous tools to load (tool_policy: allow runs them)."),
    tools_module: str | None = opts.MODULE_OPT,
    db: str | None = opts.DB_OPT,
    log: bool | None = typer.Option(
        None, "--log/--no-log", help="Log runs without a session (default: `agent logs`)."),
    otel: bool | None = typer.Option(
        None, "--otel/--no-otel", help="Export OpenTelemetry traces (a trace per request)."),
    base_url: str | None = opts.BASE_URL_OPT,
    option: list[str] | None = opts.option_opt("--option", "-o"),
    system: str | None = opts.system_opt("--system", "-s"),
    prompt: str | None = opts.PROMPT_OPT,
) -> None:
    """Serve the agent as an OpenAI-compatible API: /v1/chat/completions, /v1/models.

    Each config profile is one more model id. Dangerous tools run only when the config's
    tool_policy allows them; a saved conversation by the X-Agent-Session header. A token
    is generated and printed unless --token or --no-token."""
    flags = {"model": model, "agent": agent, "tools": tools, "profile": profile,
             "max_iterations": max_iterations, "max_execution_time": max_time,
             "max_tokens": max_tokens, "max_cost": max_cost, "allow": allow,
             "tools_module": tools_module, "db_path": db, "otel": otel,
             **opts.model_flags(base_url, option, system, prompt)}
    raise typer.Exit(start(host, port, token, config, flags, environment(), log=log,
                           no_token=no_token))


def start(host: str, port: int, token: str | None, config: Path | None,
          flags: dict[str, object], env: dict[str, str], *, log: bool | None,
          no_token: bool = False) -> int:
    """Check the bind, build the agents, serve until Ctrl-C; returns the exit code."""
    from agentcli.cli.consoles import console, report_tool_warnings

    try:
        from agentcli.serve.app import Service, create_app
        from agentcli.serve.server import bind, bound_loopback, run, url_of
    except ImportError:
        raise ConfigError(INSTALL_HINT) from None

    token = (token or "").strip() or None
    if no_token and token is not None:
        raise ConfigError(f"--no-token and a token (--token or ${TOKEN_ENV}) contradict "
                          "each other: pass one")
    generated = token is None and not no_token
    if generated:  # as Jupyter does: other accounts on this machine cannot reach the agent
        import secrets

        token = secrets.token_urlsafe(24)
    if token is not None:
        from agentcli.redact import remember

        remember([token])
    from rich.text import Text

    from agentcli.otel_export import OtelExport, otel_wanted
    from agentcli.run_logging import logging_enabled
    from agentcli.serve.agents import build_agents, close_agents
    from agentcli.store import open_store
    from agentcli.textsafe import safe_line

    err = console(stderr=True)
    sock = bind(host, port)  # a taken port fails before any agent is built
    if no_token and not bound_loopback(sock):  # the address bound, not the name asked for
        address = sock.getsockname()[0]
        sock.close()
        raise ConfigError(f"--host {host} is bound to {address}, not a loopback address: "
                          "--no-token is for loopback only; drop it to require a token")
    agents: dict[str, ServedAgent] = {}
    store = None
    otel: OtelExport | None = None
    try:
        agents = build_agents(config, flags, env)
        report_tool_warnings(err, list(dict.fromkeys(  # a plugin's line once, not per profile
            line for served in agents.values() for line in served.warnings)))
        first = next(iter(agents.values()))
        if otel_wanted(first.settings.otel, env):  # a handler on each agent: every served run
            otel = OtelExport(env)
            for served in agents.values():
                served.executor.callbacks.append(otel.new_handler(agent_name=served.name))
        store = open_store(first.settings.db_path, env)
        service = Service(agents, store, env,
                          log_runs=log if log is not None else logging_enabled(env),
                          say=lambda line: err.print(Text(safe_line(line), style="yellow"),
                                                     soft_wrap=True))
        app: ASGIApp = create_app(service, token=token)
        if otel is not None:  # a server span per request, in the trace its traceparent names
            from agentcli.serve.spans import ServerSpans

            app = ServerSpans(app, otel.provider)

        def ready() -> None:
            guard = ("bearer token required" if token else
                     "no token: any local account can use it")
            err.print(Text(f"Serving {', '.join(agents)} on {url_of(sock)} ({guard}); "
                           "Ctrl-C to stop.", style="green"), soft_wrap=True)
            if generated:  # the one place the token is shown: the clients' settings
                err.file.write(f"OPENAI_BASE_URL={url_of(sock)} OPENAI_API_KEY={token}\n")
                err.file.flush()

        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a server stops
            run(app, sock, on_ready=ready)
    finally:
        sock.close()
        close_agents(agents)
        if otel is not None and (warning := otel.close()):
            err.print(warning, markup=False, highlight=False)
        if store is not None:
            store.close()
    return exit_codes.OK

