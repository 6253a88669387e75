"""Run the `agent` CLI with the test-only memory agent registered (for pty-driven tests).

When started in its own session on a pty (``start_new_session=True``), it takes the pty as its
controlling terminal first, so Ctrl-C typed into the pty arrives as SIGINT, as in a real shell.
"""

import contextlib
import fcntl
import os
import sys
import termios

import memory_agent

from agentcli.cli.app import main

if __name__ == "__main__":
    if os.environ.get("CHAT_CHILD_CTTY") and os.isatty(0):
        with contextlib.suppress(OSError):
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    memory_agent.register()
    sys.argv = ["agent", *sys.argv[1:]]
    main()
