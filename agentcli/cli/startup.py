"""Start-up work the ``agent`` command skips: Typer's command tables, swapped for one run.

Typer builds every registered command's parameters from its signature at each start (~10 ms
for ~50 commands) and ``agent --help`` only lists names and summaries. So ``main()`` shows
Typer only the command the line names, and for ``--help`` stand-ins without parameters. This
touches Typer's ``registered_commands``/``registered_groups`` lists, here and nowhere else;
the gain is the cold ``--help`` and ``tools list`` rows of bench/README.md (3.30x -> 2.58x
and 4.09x -> 3.28x ``python -c pass``). Everything is put back when the command returns.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import typer
from typer.models import CommandInfo


def global_flags_first(argv: list[str]) -> list[str]:
    """Move ``--debug`` in front of the subcommand: error hints say "rerun with --debug",
    and users add it at the end (``agent run "q" --debug``)."""
    end = argv.index("--") if "--" in argv else len(argv)
    if "--debug" not in argv[1:end]:
        return argv
    rest = [a for a in argv[1:end] if a != "--debug"]
    return [argv[0], "--debug", *rest, *argv[end:]]


@contextmanager
def listing_only(typer_app: typer.Typer) -> Iterator[None]:
    """For ``agent --help``, which lists each command by name and summary: every command's
    callback is swapped for one with the same name and docstring and no parameters, so Typer
    does not build ~50 commands' options from their signatures only to print one line each."""
    import copy

    saved: list[tuple[typer.Typer, list[CommandInfo]]] = []

    def stub_all(instance: typer.Typer) -> None:
        saved.append((instance, instance.registered_commands))
        stubs = []
        for info in instance.registered_commands:
            stub = copy.copy(info)
            if info.callback is not None:
                stub.callback = _stub_like(info.callback)
            stubs.append(stub)
        instance.registered_commands = stubs
        for group in instance.registered_groups:
            if group.typer_instance is not None:
                stub_all(group.typer_instance)

    stub_all(typer_app)
    try:
        yield
    finally:
        for instance, commands in saved:
            instance.registered_commands = commands


def _stub_like(fn: Callable[..., object]) -> Callable[[], None]:
    def stub() -> None:
        """Never called: stands in for a command that is only listed."""

    stub.__name__, stub.__qualname__, stub.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    return stub


@contextmanager
def only_the_named_command(app: typer.Typer, argv: list[str]) -> Iterator[None]:
    """When the line names a command (``agent run ...``, ``agent tools list``), show Typer
    only that one: Typer builds every command's parameters from its signature at each start
    (~10 ms for all of them). Anything else (help, a bare question, a typo, completion) sees
    them all, as the routing and the "Did you mean" error need."""
    args = [a for a in argv[1:] if a != "--debug"]
    if args == ["--help"] and "_AGENT_COMPLETE" not in os.environ:
        with listing_only(app):
            yield
        return
    first = args[0] if args else ""
    commands = [c for c in app.registered_commands if command_name(c) == first]
    groups = [g for g in app.registered_groups if g.name == first]
    if not (commands or groups) or "_AGENT_COMPLETE" in os.environ:
        yield
        return
    saved = app.registered_commands, app.registered_groups
    app.registered_commands, app.registered_groups = commands, groups
    try:
        yield
    finally:
        app.registered_commands, app.registered_groups = saved


def command_name(info: CommandInfo) -> str:
    """The name a registered command is typed as."""
    if info.name:
        return str(info.name)
    return str(info.callback.__name__).lower().replace("_", "-") if info.callback else ""
