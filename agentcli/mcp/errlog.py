"""A stdio server's stderr, into its log file with a cap: however much a server writes (200 MB
during one call, 300 MB before ``initialize``), the log keeps the first :data:`STDERR_HEAD`
bytes of each start as they come and, past that, only the last :data:`STDERR_TAIL` (held in
memory, written with a marker saying how much was left out when the server is stopped). What
is read is never held whole: memory stays bounded too."""

from __future__ import annotations

import codecs
from typing import TextIO

STDERR_HEAD = 1 << 20  # bytes of a server's stderr logged from each start, as they come
STDERR_TAIL = 64 << 10  # bytes of its last words kept once the head is full


class CappedLog:
    """One server start's stderr, written to ``out`` within the cap."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._decode = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._logged = 0
        self._tail = bytearray()
        self._dropped = 0

    def write(self, data: bytes) -> None:
        """Log ``data`` (the head, as it comes) or keep it as the tail (the last bytes)."""
        room = STDERR_HEAD - self._logged
        if room > 0:
            self._emit(data[:room])
            self._logged += min(room, len(data))
            data = data[room:]
        if data:
            self._tail += data
            over = len(self._tail) - STDERR_TAIL
            if over > 0:
                self._dropped += over
                del self._tail[:over]

    def note(self, text: str) -> None:
        """A line of ours (why the connection ended), kept whatever the cap."""
        self._out.write(f"\nagentcli: {text}\n")
        self._out.flush()

    def close(self) -> None:
        """Write the kept tail, after a marker when some was left out."""
        tail = bytes(self._tail)
        if self._dropped:
            cut = tail.find(b"\n") + 1  # start the tail at a line
            self._dropped, tail = self._dropped + cut, tail[cut:]
            self.note(f"{self._dropped:,} bytes of this server's stderr left out (the log "
                      f"keeps the first {STDERR_HEAD:,} and the last {STDERR_TAIL:,} bytes of "
                      "each start)")
        self._tail.clear()
        self._emit(tail, final=True)

    def _emit(self, data: bytes, final: bool = False) -> None:
        text = self._decode.decode(data, final)
        if text:
            self._out.write(text)
            self._out.flush()
