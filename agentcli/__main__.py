"""``python -m agentcli`` and the ``agent`` command: the process around the command line."""

from __future__ import annotations

import gc
import os
import sys
from typing import NoReturn

# Start-up (a seed run) builds ~50k objects that live until the process ends: modules,
# classes, compiled patterns. At the default threshold (700) the collector runs ~130 times
# while they are built, walking them to free ~700 objects (~15 ms of a seed run); here it
# first runs after 100k new objects, so cyclic garbage is still collected, with a bound.
_FIRST_COLLECTION_AFTER = 100_000


def main() -> NoReturn:
    """Run the ``agent`` command line in this process, then end it."""
    gc.set_threshold(_FIRST_COLLECTION_AFTER, *gc.get_threshold()[1:])
    code: object = None
    try:
        from agentcli.cli.app import main as command_line

        command_line()
    except SystemExit as done:
        code = done.code
    finally:
        # The OS frees the process's memory at once; left to the interpreter, shutdown runs
        # collections over every object the imports made (~40 ms of a seed run). Frozen
        # objects are skipped; what the command opened it has already closed.
        gc.freeze()
    _end(code)


def _end(code: object) -> NoReturn:
    """End the process with exit status ``code``, as the interpreter would, without freeing
    every module, class and function the imports made one by one (~13 ms of a seed run).

    The exit handlers run as at any exit (MCP servers stopped, HTTP pools and log handlers
    closed) and the standard streams are flushed. Where the interpreter's exit would do more,
    it ends the process itself: a non-daemon thread to wait for, a code it prints (a string),
    a stream it cannot flush (its warning, status 120).
    """
    import atexit
    import threading

    main_thread = threading.main_thread()
    waits = any(t is not main_thread and not t.daemon for t in threading.enumerate())
    status = 0 if code is None else code
    if isinstance(status, int) and 0 <= status <= 255 and not waits and _flushed():
        atexit._run_exitfuncs()
        if _flushed():
            os._exit(status)
    raise SystemExit(code)


def _flushed() -> bool:
    """Flush stdout and stderr; False if one of them cannot be."""
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None and not stream.closed:
                stream.flush()
    except (OSError, ValueError):
        return False
    return True


if __name__ == "__main__":
    main()
