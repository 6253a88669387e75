"""``agent "question"`` runs like ``agent run "question"``, as ``llm "prompt"`` does.

The top-level group routes any first argument that is not one of its commands or options to
``run``, and so does a bare ``agent`` with text piped in (the text is the question); a
single word close to a command name (``agent serv``) is still the usual "No such
command" error, with the suggestion and how to ask it as a question. ``agent run -c TEXT``
(``llm``'s continue) says that ours is ``-C``. The group also prints each command's whole
summary in ``agent --help`` instead of cutting it at the terminal's width.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

from agentcli.cli.exits import errors_to_exit
from agentcli.cli.model_flags import PairCommand
from agentcli.errors import ConfigError

DEFAULT_COMMAND = "run"
_WORD = re.compile(r"[a-z][a-z0-9_-]*")


def _typo_of(word: str, commands: list[str]) -> list[str]:
    """Command names ``word`` looks like a mistyping of (a single lowercase word only)."""
    if not _WORD.fullmatch(word):
        return []
    from difflib import get_close_matches  # only for a first word that is no command

    return get_close_matches(word, commands, n=3, cutoff=0.75)


class DefaultRunGroup(TyperGroup):
    """The ``agent`` group: a bare question goes to ``run``; full command summaries."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, self._route(ctx, list(args)))

    def invoke(self, ctx: Any) -> Any:
        """Run the command; its errors become one line and an exit code here, once."""
        with errors_to_exit(debug=bool(ctx.params.get("debug"))):
            return super().invoke(ctx)

    def _route(self, ctx: Any, args: list[str]) -> list[str]:
        flags: set[str] = set()
        for param in self.get_params(ctx):
            if not getattr(param, "is_flag", False):
                # An option taking a value (--show-completion [SHELL]): leave the line alone.
                if any(arg in (*param.opts, *param.secondary_opts) for arg in args):
                    return args
                continue
            flags.update((*param.opts, *param.secondary_opts))
        index = 0
        while index < len(args) and args[index] in flags:
            index += 1
        if index == len(args):
            if all(arg == "--debug" for arg in args):
                from agentcli.cli.question import stdin_is_piped

                if stdin_is_piped():  # echo "2+2?" | agent: the piped text is the question
                    return [*args, DEFAULT_COMMAND]
            return args  # nothing but global options: help, version, completion
        first = args[index]
        commands = list(self.commands)
        if first in commands or _typo_of(first, commands):
            return args  # a command, or the "No such command ... Did you mean" error
        return [*args[:index], DEFAULT_COMMAND, *args[index:]]

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except typer.TyperException as err:  # click's UsageError ("No such command")
            if args:
                word = args[0]
                message = err.message if err.message.endswith("?") else err.message.rstrip(".")
                err.message = f"{message} To ask it as a question: agent run {word!r}"
            raise

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=10_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


_CONTINUE_HINT = ("-c is --config (a YAML file) for agent run, and {value!r} is not a file. "
                  "To continue the last conversation use -C (--continue): "
                  "agent run -C {value!r}")


class RunCommand(PairCommand):
    """``agent run``: ``-c TEXT`` that is not a file gets a pointer to ``-C`` (continue)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        end = args.index("--") if "--" in args else len(args)
        if ctx.resilient_parsing:  # the shell is completing a word: no errors
            end = 0
        for at, arg in enumerate(args[:end]):
            if arg == "-c" and at + 1 < end:
                value = args[at + 1]
                if not Path(value).exists() and not value.endswith((".yaml", ".yml")):
                    raise ConfigError(_CONTINUE_HINT.format(value=value))
        return super().parse_args(ctx, args)
