"""Drive a command on a real pseudo-terminal: type keys, wait for text, kill it."""

from __future__ import annotations

import os
import re
import select
import subprocess
import threading
import time
from collections.abc import Sequence

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]|\r")


class PtySession:
    """A child process whose stdin/stdout/stderr are one pty; output is collected in a thread."""

    def __init__(self, argv: Sequence[str], *, env: dict[str, str], cwd: str | None = None,
                 rows: int = 40, cols: int = 120) -> None:
        import fcntl
        import struct
        import termios

        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.proc = subprocess.Popen(
            list(argv), stdin=slave, stdout=slave, stderr=slave, cwd=cwd, close_fds=True,
            env={**env, "CHAT_CHILD_CTTY": "1"}, start_new_session=True,
        )
        os.close(slave)
        self.master = master
        self._raw = b""
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self.master], [], [], 0.1)
                if ready:
                    data = os.read(self.master, 65536)
                    if not data:
                        return
                    with self._lock:
                        self._raw += data
                elif self.proc.poll() is not None:
                    # its last lines may have come after the select above: take them too
                    while select.select([self.master], [], [], 0)[0]:
                        data = os.read(self.master, 65536)
                        if not data:
                            return
                        with self._lock:
                            self._raw += data
                    return
            except OSError:
                return

    @property
    def text(self) -> str:
        """Everything printed so far, without escape sequences."""
        with self._lock:
            return _ANSI.sub("", self._raw.decode("utf-8", "replace"))

    def send(self, keys: str) -> None:
        """Type ``keys`` (``\\r`` is Enter, ``\\x03`` Ctrl-C, ``\\x04`` Ctrl-D)."""
        os.write(self.master, keys.encode())

    def expect(self, pattern: str, *, after: int = 0, timeout: float = 20.0) -> int:
        """Wait until ``pattern`` (a regex) shows up past offset ``after``; return its end."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = re.compile(pattern).search(self.text, after)
            if match:
                return match.end()
            if self.proc.poll() is not None and not self._reader.is_alive():
                break
            time.sleep(0.05)
        raise AssertionError(f"{pattern!r} not seen in {timeout}s; output:\n{self.text[-3000:]}")

    def finish(self, timeout: float = 60.0) -> int:
        """Wait for the child to exit and for everything it printed to be read; its exit
        code. (Matching the end of :attr:`text` right after the exit could miss the last
        lines, still on their way from the pty to the reader.)"""
        code = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=timeout)
        return code

    def close(self) -> None:
        """Kill the child if it is still running and release the pty."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        self._reader.join(timeout=5)
        os.close(self.master)
