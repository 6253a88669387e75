"""The one place where an exception becomes a one-line message and an exit code.

The ``agent`` group runs every command inside :func:`errors_to_exit`
(``DefaultRunGroup.invoke``), so a command raises and never catches to print: a
``ConfigError`` is exit 2, a ``ProviderError`` exit 4, any other ``AgentCliError`` its own
code, Ctrl-C (and a SIGTERM during ``agent run``: :func:`sigterm_raises`) 130, a file the
OS refuses (another account's directory) exit 2 naming it, a bug one "internal error" line
(``--debug`` adds the traceback).
The debug flag comes with each invocation (the group's parsed ``--debug``), so two runs in
one process (a test's ``CliRunner``) never share it.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import NoReturn

import typer

from agentcli import exit_codes
from agentcli.errors import AgentCliError, ConfigError, ProviderError
from agentcli.textsafe import safe_line, safe_text

_MAX_ERROR = 2000  # characters of an error line


def fail(message: str, code: int) -> NoReturn:
    """Print one red line to stderr (secrets redacted, controls shown, never hard-wrapped)
    and exit with ``code``."""
    from rich.text import Text

    from agentcli.cli.consoles import console
    from agentcli.redact import redact

    message = safe_line(redact(message))
    if len(message) > _MAX_ERROR:  # e.g. an error quoting a 60 KB input
        message = f"{message[:_MAX_ERROR]}... [{len(message) - _MAX_ERROR:,} more characters]"
    line = Text("error: ", style="bold red") + Text(message)
    console(stderr=True).print(line, soft_wrap=True)
    raise typer.Exit(code)


@contextmanager
def sigterm_raises(error: Callable[[], BaseException] = KeyboardInterrupt) -> Iterator[None]:
    """Within the block, a SIGTERM (``kill``, ``timeout``, systemd) raises ``error()`` in the
    main thread: ``agent run`` takes it as Ctrl-C (the run stops as ``interrupted``, its log
    row says so, exit 130); the chat REPL, where Ctrl-C only cancels a turn, ends with
    ``SystemExit``. Either way the MCP servers are stopped at exit. Nothing changes when the
    parent set SIGTERM to be ignored, or off the main thread; the handler before comes back."""
    import threading

    def handler(signum: int, frame: FrameType | None) -> None:
        raise error()

    before = signal.getsignal(signal.SIGTERM) or signal.SIG_DFL  # None: not set from Python
    if threading.current_thread() is not threading.main_thread() or before is signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def _print_traceback() -> None:
    """The current traceback for --debug, redacted like every other printed text."""
    import traceback

    from agentcli.redact import redact

    sys.stderr.write(safe_text(redact(traceback.format_exc())))
    sys.stderr.flush()


def _denied(err: PermissionError) -> str:
    """The line for a file or directory the OS refused: under one of agentcli's directories
    (another account's ``$XDG_DATA_HOME``, say), which variable points elsewhere."""
    from pathlib import Path

    from agentcli.paths import cache_dir, config_dir, data_dir

    path = Path(os.path.abspath(err.filename)) if err.filename else None
    for variable, base in (("XDG_DATA_HOME", data_dir().parent),
                           ("XDG_CONFIG_HOME", config_dir().parent),
                           ("XDG_CACHE_HOME", cache_dir().parent)):
        if path is not None and path.is_relative_to(base.absolute()):
            return (f"permission denied: {path}; agentcli keeps its files under {base} "
                    f"(${variable}), which this account may not use: make it yours, or set "
                    f"{variable} to a directory you own")
    return (f"permission denied: {path or err.strerror or err}; check the owner and mode of "
            "the file and the directories above it")


@contextmanager
def errors_to_exit(*, debug: bool = False) -> Iterator[None]:
    """The one place where exceptions become a one-line message and an exit code;
    ``debug`` also prints the traceback."""
    try:
        yield
    except (typer.Exit, typer.Abort, typer.TyperException):
        raise  # click's own exits, usage errors and aborts keep click's handling
    except BrokenPipeError:  # the reader of stdout went away (`agent logs | head -1`): stop
        # quietly, stdout pointed at /dev/null so the interpreter's final flush cannot fail
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise typer.Exit(exit_codes.OK) from None
    except AgentCliError as err:
        if debug:
            _print_traceback()
        code = exit_codes.PROVIDER if isinstance(err, ProviderError) else (
            exit_codes.USAGE if isinstance(err, ConfigError) else err.exit_code
        )
        fail(str(err), code)
    except KeyboardInterrupt:  # the line a run stopped in a model wait prints, and its code
        from agentcli.cli.consoles import console

        console(stderr=True).print(exit_codes.INTERRUPTED_LINE, style="yellow", markup=False,
                                   highlight=False, soft_wrap=True)
        raise typer.Exit(exit_codes.INTERRUPTED) from None
    except PermissionError as err:  # the machine's doing, not a bug: say where and what to do
        if debug:
            _print_traceback()
        fail(_denied(err), exit_codes.USAGE)
    except Exception as err:
        if debug:
            _print_traceback()
        fail(f"internal error: {type(err).__name__}: {err} (rerun with --debug for the "
             "traceback and please report it)", exit_codes.INTERNAL)
