"""``python -m agentcli`` and the ``agent`` command: the process around the command line."""

from __future__ import annotations

import gc

# Start-up (a seed run) builds ~50k objects that live until the process ends: modules,
# classes, compiled patterns. At the default threshold (700) the collector runs ~130 times
# while they are built, walking them to free ~700 objects (~15 ms of a seed run); here it
# first runs after 100k new objects, so cyclic garbage is still collected, with a bound.
_FIRST_COLLECTION_AFTER = 100_000


def main() -> None:
    """Run the ``agent`` command line in this process, then end it."""
    gc.set_threshold(_FIRST_COLLECTION_AFTER, *gc.get_threshold()[1:])
    try:
        from agentcli.cli.app import main as command_line

        command_line()
    finally:
        # The OS frees the process's memory at once; left to the interpreter, shutdown runs
        # collections over every object the imports made (~40 ms of a seed run). Frozen
        # objects are skipped; what the command opened it has already closed.
        gc.freeze()


if __name__ == "__main__":
    main()
