"""Create a WAL database private to its owner; tell SQLite not to checkpoint the WAL on close.

:func:`create_private` makes a new database's directory 0700 and the file 0600 before SQLite
opens it: SQLite gives the ``-wal`` and ``-shm`` files the database file's mode, so the
prompts, answers and tool output logged there are readable by their owner only.

By default the last connection to close a WAL database copies the WAL back into the file and
deletes it: two fsyncs on close, and one more on the next process's first write, which starts a
new WAL (~20 ms per ``agent run`` on an ordinary disk). With ``SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE``
the WAL stays and SQLite's auto-checkpoint (every ~1,000 pages, inside a commit) folds it in.
Durability is unchanged: commits are as durable as ``synchronous=NORMAL`` makes them either way.

Python 3.12+ exposes the option as ``Connection.setconfig``. On CPython 3.11 on
x86-64 Linux it is set through ``ctypes`` (the connection's ``sqlite3*`` handle is the first
field after the object header there; it is checked against the file name before use).
Anywhere else the option is simply not set and closing checkpoints as before.
"""

from __future__ import annotations

import contextlib
import functools
import os
import platform
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ctypes

_NO_CKPT_ON_CLOSE = 1006  # SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, SQLite >= 3.16


def create_private(path: Path) -> None:
    """Create ``path``'s directory (0700) and the empty file (0600) if missing; an existing
    file or directory keeps its mode (the user may have shared it on purpose)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not path.exists():
        with contextlib.suppress(FileExistsError):  # another process created it first
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def keep_wal_on_close(db: sqlite3.Connection) -> bool:
    """Skip the checkpoint on close for ``db``; False when this platform cannot."""
    setconfig = getattr(db, "setconfig", None)
    if setconfig is not None:  # Python 3.12+
        setconfig(getattr(sqlite3, "SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE", _NO_CKPT_ON_CLOSE), True)
        return True
    if not _ctypes_fallback_supported():
        return False
    return _set_with_ctypes(db)


def _ctypes_fallback_supported() -> bool:
    # The struct layout is known for these CPython versions only, and a variadic C call
    # through ctypes passes ints correctly only on the x86-64 System V ABI.
    return (sys.implementation.name == "cpython" and sys.version_info[:2] == (3, 11)
            and sys.platform == "linux" and platform.machine() == "x86_64"
            and sqlite3.sqlite_version_info >= (3, 16, 0))


def _set_with_ctypes(db: sqlite3.Connection) -> bool:
    import ctypes

    lib = _library()
    if lib is None:
        return False
    handle = ctypes.c_void_p.from_address(id(db) + object.__basicsize__).value
    if not handle:
        return False
    name = lib.sqlite3_db_filename(ctypes.c_void_p(handle), b"main")
    filename = db.execute("PRAGMA database_list").fetchone()[2]
    if not name or not filename or os.fsdecode(name) != filename:
        return False  # not the handle we expected: leave the connection alone
    done = ctypes.c_int(0)
    rc = lib.sqlite3_db_config(ctypes.c_void_p(handle), ctypes.c_int(_NO_CKPT_ON_CLOSE),
                               ctypes.c_int(1), ctypes.byref(done))
    return rc == 0 and done.value == 1


@functools.cache
def _library() -> ctypes.CDLL | None:
    """The SQLite library the ``_sqlite3`` module is linked against (loaded once)."""
    import _sqlite3
    import ctypes

    try:
        lib = ctypes.CDLL(_sqlite3.__file__)
        lib.sqlite3_db_filename.restype = ctypes.c_char_p
        lib.sqlite3_db_filename.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        lib.sqlite3_db_config.restype = ctypes.c_int
    except (OSError, AttributeError):
        return None
    return lib
