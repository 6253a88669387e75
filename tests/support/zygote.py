"""A warm start for the tests' ``python -m agentcli`` children: fork, instead of exec + import.

Hundreds of tests run the real ``agent`` command in a child process (stdout piped, its own
environment and working directory), and most of each child's CPU is the interpreter starting
and importing the same modules again (~0.3 s a child, most of the quick suite's CPU). Here one
*zygote* per pytest worker starts once, imports those modules and waits; each such child is
then a ``fork`` of it that becomes what ``exec`` would have made: the caller's stdin, stdout,
stderr and ``pass_fds`` on the same numbers and every other descriptor closed, the caller's
environment, working directory, session or process group and umask, fresh ``sys.std*``
streams, Python's start-up signal dispositions, ``sys.argv``/``sys.path[0]`` as ``-m`` sets
them, and ``agentcli`` run with ``runpy`` as ``-m`` runs it. It exits the way the interpreter
does (``SystemExit``, exit hooks, flushes, a traceback and 1 for an uncaught error).

Only ``agentcli`` and its dependencies are loaded ahead (none of agentcli's modules reads
the environment, the home directory or ``sys.argv`` at import; Typer reads three variables,
listed below), never numpy/numexpr, which the Calculator imports under its own thread
settings. A child is started cold, by the real ``Popen``, when anything could differ: other
interpreter flags, a ``PYTHON*``/locale/Typer import-time variable unlike the zygote's,
``preexec_fn``, user/group changes, ``close_fds=False``, or ``AGENTCLI_TEST_COLD=1`` (which
turns the zygote off for a whole run), or in a test marked ``cold``.

The child is the zygote's, not the caller's: the zygote reaps it and writes its wait status
to a pipe the caller holds, which :class:`WarmPopen` reads where ``Popen`` would ``waitpid``.
Its pid is real: signals, ``/proc/PID/stat`` and process groups work as for any child; its
``/proc/PID/environ`` and ``cmdline`` are the zygote's, so a test that reads them is marked
``cold`` (every ``agent`` child of that test exec'd by the real ``Popen``).
"""

from __future__ import annotations

import atexit
import contextlib
import io
import os
import pickle
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
COLD = "AGENTCLI_TEST_COLD"
# Read at import by a module the zygote loads (or by the interpreter itself): a child whose
# value differs from the zygote's is started cold.
_IMPORT_TIME_ENV = ("PYTHON", "LANG", "LC_", "TYPER_", "_TYPER_", "TERMINAL_WIDTH")
# What the zygote imports ahead: the command line, a run, chat, the model client and their
# dependencies (not numpy/numexpr: see above).
_PRELOAD = ("agentcli.cli.app", "agentcli.cli.running", "agentcli.demo",
            "agentcli.models.openai_compat", "agentcli.cli.repl", "sqlite3", "yaml", "dotenv",
            "agentcli.mcp.connection", "agentcli.mcp.stdio", "agentcli.mcp.pool")
# The MCP SDK's client side, loaded as agentcli loads it (agentcli/mcp/sdk.py), after _PRELOAD.
_PRELOAD_MCP = ("mcp.types", "mcp.client.session", "mcp.client.stdio", "mcp.shared.message")
# A test's MCP server script (``server_command``): the SDK's server side.
_PRELOAD_SERVER = ("mcp.server.mcpserver", "mcp.server.fastmcp", "mcp.server.stdio",
                   "mcp.server.lowlevel", "mcp.types")
_HEADER = struct.Struct("!I")
_STATUS = struct.Struct("!i")


# -- the zygote process -----------------------------------------------------------------------

def serve() -> None:
    """The zygote's main (``zygote.py FD KIND``): preload, then fork one child per request.

    KIND ``agent``: FD is one end of a socket pair with the pytest worker. KIND ``server``:
    FD is a listening socket; each connection is a launcher (:func:`launch`) asking for one
    MCP server script, and the child is killed if its launcher dies first."""
    fd, kind = int(sys.argv[1]), sys.argv[2]
    _preload(kind)
    sock = socket.socket(fileno=fd)
    children: dict[int, int] = {}  # pid -> write end of its status pipe
    launchers: dict[int, int] = {}  # a launcher's pidfd -> its child's pid
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    while True:
        ready, _, _ = select.select([sock, wake_r, *launchers], [], [])
        if wake_r in ready:
            os.read(wake_r, 4096)
        for pidfd in set(ready) & set(launchers):
            with contextlib.suppress(ProcessLookupError):
                os.kill(launchers[pidfd], signal.SIGKILL)  # its launcher is gone
            os.close(pidfd)
            del launchers[pidfd]
        if sock in ready:
            conn = sock.accept()[0] if kind == "server" else sock
            try:
                request = _receive(conn)
            except (OSError, EOFError, pickle.UnpicklingError):
                request = None  # a launcher that died while asking
            if request is None:
                if kind == "agent":
                    return  # the pytest worker is gone
                conn.close()
                continue
            spec, fds = request
            watch = -1  # the launcher's pidfd: if it dies, so does its child
            if conn is not sock:
                peer = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                       struct.calcsize("3i"))
                with contextlib.suppress(OSError):
                    watch = os.pidfd_open(struct.unpack("3i", peer)[0])
            status_r, status_w = os.pipe()
            pid = os.fork()
            if pid == 0:
                sock.detach()  # its fd is closed below; the object must not close a reused one
                if conn is not sock:
                    conn.detach()
                _become(spec, fds)  # only returns by raising SystemExit (or any error)
            for fd in fds:
                os.close(fd)
            children[pid] = status_w
            if watch >= 0:
                launchers[watch] = pid
            with contextlib.suppress(OSError):  # the asker may be gone: its pidfd says so
                socket.send_fds(conn, [_STATUS.pack(pid)], [status_r])
            os.close(status_r)
            if conn is not sock:
                conn.close()
        _reap(children)


def _preload(kind: str) -> None:
    import importlib

    if kind == "server":
        for name in _PRELOAD_SERVER:
            with contextlib.suppress(ImportError):
                importlib.import_module(name)
        return
    for name in _PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    with contextlib.suppress(ImportError):
        from agentcli.mcp.sdk import require_sdk

        require_sdk()
        for name in _PRELOAD_MCP:
            importlib.import_module(name)


def _receive(sock: socket.socket) -> tuple[dict[str, Any], list[int]] | None:
    head, fds, _, _ = socket.recv_fds(sock, _HEADER.size, 64)
    if not head:
        return None
    (size,) = _HEADER.unpack(head)
    body = b""
    while len(body) < size:
        part = sock.recv(size - len(body))
        if not part:
            return None
        body += part
    return pickle.loads(body), fds


def _reap(children: dict[int, int]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        fd = children.pop(pid, None)
        if fd is not None:
            with contextlib.suppress(OSError):  # nobody left to read it (a killed launcher)
                os.write(fd, _STATUS.pack(status))
            os.close(fd)


def _become(spec: dict[str, Any], fds: list[int]) -> None:
    """In the forked child: become ``python -m agentcli ARGS`` (or ``python SCRIPT ARGS``)
    as exec would have made it."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    if spec["new_session"]:
        os.setsid()
    elif spec["process_group"] >= 0:
        os.setpgid(0, spec["process_group"])
    targets: list[int] = spec["targets"]
    import fcntl

    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, max(targets, default=2) + 65) for fd in fds]
    for src, target in zip(high, targets, strict=True):
        os.dup2(src, target)  # inheritable, as Popen leaves them
    keep = set(targets)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd not in keep:
            with contextlib.suppress(OSError):
                os.close(fd)
    os.chdir(spec["cwd"])
    if spec["umask"] >= 0:
        os.umask(spec["umask"])
    os.environ.clear()
    os.environ.update(spec["env"])
    signal.signal(signal.SIGINT,
                  signal.SIG_IGN if spec["sigint_ignored"] else signal.default_int_handler)
    _fresh_stdio()
    import random

    random.seed()
    import runpy

    if "script" in spec:  # python SCRIPT ARGS
        sys.argv = [spec["script"], *spec["args"]]
        sys.path[0] = os.path.dirname(os.path.abspath(spec["script"]))
        runpy.run_path(spec["script"], run_name="__main__")
    else:  # python -m agentcli ARGS
        sys.argv = ["-m", *spec["args"]]
        sys.path[0] = os.getcwd()
        runpy.run_module("agentcli", run_name="__main__", alter_sys=True)
    raise SystemExit(0)


def _fresh_stdio() -> None:
    """``sys.stdin``/``stdout``/``stderr`` built on fds 0-2 as the interpreter builds them."""
    encoding, errors = sys.stdout.encoding, sys.stdout.errors
    streams = []
    for fd, mode in ((0, "rb"), (1, "wb"), (2, "wb")):
        try:
            raw = io.FileIO(fd, mode, closefd=False)
        except OSError:
            streams.append(None)
            continue
        buffered: Any = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
        tty = raw.isatty()
        streams.append(io.TextIOWrapper(
            buffered, encoding=encoding, errors="backslashreplace" if fd == 2 else errors,
            newline="\n", line_buffering=tty or fd == 2))
    sys.stdin, sys.stdout, sys.stderr = streams  # type: ignore[assignment]
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams  # type: ignore[misc]


# -- the caller (a pytest worker) -------------------------------------------------------------

class _Zygote:
    """This process's zygote, started on first use; requests one at a time."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sock: socket.socket | None = None
        self.proc: subprocess.Popen[bytes]
        self.env: dict[str, str] = {}

    def spawn(self, spec: dict[str, Any], fds: list[int]) -> tuple[int, int]:
        with self.lock:
            if self.sock is None:
                self._start()
            assert self.sock is not None
            body = pickle.dumps(spec)
            socket.send_fds(self.sock, [_HEADER.pack(len(body))], fds)
            self.sock.sendall(body)
            reply, got, _, _ = socket.recv_fds(self.sock, _STATUS.size, 1)
            if len(reply) != _STATUS.size or len(got) != 1:
                raise OSError("the test zygote did not answer")
            return _STATUS.unpack(reply)[0], got[0]

    def _start(self) -> None:
        ours, theirs = socket.socketpair()
        self.env = dict(os.environ)
        self.proc = REAL_POPEN([sys.executable, "-c", _SERVE, str(theirs.fileno()), "agent"],
                               cwd=ROOT, env=self.env,
                                stdin=subprocess.DEVNULL, pass_fds=[theirs.fileno()],
                                start_new_session=True)
        theirs.close()
        self.sock = ours
        atexit.register(self.stop)

    def stop(self) -> None:
        """End the zygote: it leaves when its socket closes (its children run on)."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None
            self.proc.wait()

    def differs(self, env: dict[str, str]) -> bool:
        """Does ``env`` set an import-time variable otherwise than the zygote saw it?"""
        base = self.env or dict(os.environ)
        names = {k for k in (*env, *base) if k.startswith(_IMPORT_TIME_ENV)}
        return any(env.get(k) != base.get(k) for k in names)


_ZYGOTE = _Zygote()
_SERVE = "from tests.support.zygote import serve; serve()"
REAL_POPEN = subprocess.Popen


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _agent_args(args: Any, executable: Any, shell: bool) -> list[str] | None:
    """The ``agent`` arguments of ``[sys.executable, "-m", "agentcli", ...]``, else None."""
    if shell or executable is not None or isinstance(args, (str, bytes, os.PathLike)):
        return None
    argv = [os.fsdecode(a) if isinstance(a, (bytes, os.PathLike)) else a for a in args]
    if argv[:3] != [sys.executable, "-m", "agentcli"] or not all(
            isinstance(a, str) for a in argv):
        return None
    return argv[3:]


class WarmPopen(REAL_POPEN):  # type: ignore[misc,valid-type]
    """``subprocess.Popen``, with ``python -m agentcli`` children forked from the zygote."""

    _status_fd: int | None = None

    def _execute_child(self, args: Any, executable: Any, preexec_fn: Any, close_fds: bool,
                       pass_fds: Any, cwd: Any, env: Any, startupinfo: Any,
                       creationflags: Any, shell: bool, p2cread: int, p2cwrite: int,
                       c2pread: int, c2pwrite: int, errread: int, errwrite: int,
                       restore_signals: bool, gid: Any, gids: Any, uid: Any, umask: int,
                       start_new_session: bool, process_group: int) -> None:
        agent_args = _agent_args(args, executable, shell)
        child_env = dict(os.environ) if env is None else {
            os.fsdecode(k): os.fsdecode(v) for k, v in env.items()}
        if (agent_args is None or preexec_fn is not None or not close_fds
                or gid is not None or gids is not None or uid is not None
                or _ZYGOTE.differs(child_env)):
            super()._execute_child(  # type: ignore[misc]
                args, executable, preexec_fn, close_fds, pass_fds, cwd, env, startupinfo,
                creationflags, shell, p2cread, p2cwrite, c2pread, c2pwrite, errread,
                errwrite, restore_signals, gid, gids, uid, umask, start_new_session,
                process_group)
            return
        self.args = args
        # what the child's 0, 1, 2 and pass_fds are: ours where not redirected, and closed
        # where ours is closed (as an exec'd child inherits them)
        given = {0: p2cread if p2cread != -1 else 0, 1: c2pwrite if c2pwrite != -1 else 1,
                 2: errwrite if errwrite != -1 else 2, **{fd: fd for fd in pass_fds}}
        given = {target: fd for target, fd in given.items() if _is_open(fd)}
        spec = {"args": agent_args, "env": child_env,
                "cwd": os.fsdecode(cwd) if cwd is not None else os.getcwd(),
                "targets": list(given), "new_session": bool(start_new_session),
                "process_group": process_group, "umask": umask,
                "sigint_ignored": signal.getsignal(signal.SIGINT) is signal.SIG_IGN}
        self.pid, self._status_fd = _ZYGOTE.spawn(spec, list(given.values()))
        self._child_created = True
        self._close_pipe_fds(p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite)

    def _status(self, block: bool) -> int | None:
        """The child's wait status once it has ended (None while it runs)."""
        fd = self._status_fd
        assert fd is not None
        if not block and not select.select([fd], [], [], 0)[0]:
            return None
        data = b""
        while len(data) < _STATUS.size:
            part = os.read(fd, _STATUS.size - len(data))
            if not part:
                break
            data += part
        os.close(fd)
        self._status_fd = -1
        # The zygote went away without telling: like ECHILD, the status is lost.
        return _STATUS.unpack(data)[0] if len(data) == _STATUS.size else 0

    def _try_wait(self, wait_flags: int) -> tuple[int, int]:
        if self._status_fd is None:
            return super()._try_wait(wait_flags)  # type: ignore[no-any-return]
        if self._status_fd == -1:
            return self.pid, 0
        status = self._status(block=not wait_flags & os.WNOHANG)
        return (0, 0) if status is None else (self.pid, status)

    def _internal_poll(self, _deadstate: Any = None, **kw: Any) -> int | None:
        if self._status_fd is None:
            return super()._internal_poll(_deadstate, **kw)  # type: ignore[no-any-return]
        if self.returncode is None and self._waitpid_lock.acquire(False):
            try:
                if self.returncode is None:
                    pid, status = self._try_wait(os.WNOHANG)
                    if pid == self.pid:
                        self._handle_exitstatus(status)
            finally:
                self._waitpid_lock.release()
        return self.returncode  # type: ignore[no-any-return]


def install() -> None:
    """Route this process's ``python -m agentcli`` children through the zygote (Linux only;
    not with ``AGENTCLI_TEST_COLD=1``)."""
    if sys.platform.startswith("linux") and os.environ.get(COLD) != "1":
        subprocess.Popen = WarmPopen  # type: ignore[misc]


# -- MCP server scripts -----------------------------------------------------------------------

class _ServerZygote:
    """This process's zygote for MCP server scripts, listening on a Unix socket."""

    def __init__(self) -> None:
        self.path = ""
        self.proc: subprocess.Popen[bytes] | None = None

    def socket_path(self) -> str:
        if self.proc is None:
            import tempfile

            self.path = os.path.join(tempfile.mkdtemp(prefix="agentcli-zygote-"), "s")
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(self.path)
            listener.listen(64)
            self.proc = REAL_POPEN(
                [sys.executable, "-c", _SERVE, str(listener.fileno()), "server"], cwd=ROOT,
                stdin=subprocess.DEVNULL, pass_fds=[listener.fileno()], start_new_session=True)
            listener.close()
            atexit.register(self.stop)
        return self.path

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


_SERVERS = _ServerZygote()


def server_command(script: str | os.PathLike[str], *args: str) -> dict[str, Any]:
    """The ``command`` and ``args`` of an MCP server config that runs ``python SCRIPT ARGS``
    warm: a small launcher (``python -S -I zygote.py launch``) that the agent starts as its
    server process, whose stdin/stdout/stderr, environment and directory a fork of the server
    zygote takes on. The launcher passes on the signals it gets and exits as the server does;
    if it is killed, the zygote kills the server (``AGENTCLI_TEST_COLD=1``: plain
    ``python SCRIPT``)."""
    if os.environ.get(COLD) == "1" or not sys.platform.startswith("linux"):
        return {"command": sys.executable, "args": [os.fspath(script), *args]}
    return {"command": sys.executable,
            "args": ["-S", "-I", __file__, "launch", _SERVERS.socket_path(), os.fspath(script),
                     *args]}


def launch() -> None:
    """The launcher's main (``zygote.py launch SOCKET SCRIPT ARGS``): ask the server zygote for
    ``python SCRIPT ARGS`` on this process's stdin/stdout/stderr, pass signals on, exit as it
    does."""
    path, script, *args = sys.argv[2:]
    sigint_ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    # Signals are passed on from before the script exists: one that comes before its pid is
    # known waits for it.
    child: list[int] = []
    early: list[int] = []

    def pass_on(number: int, _frame: object) -> None:
        if child:
            os.kill(child[0], number)
        else:
            early.append(number)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, pass_on)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    given = [fd for fd in (0, 1, 2) if _is_open(fd)]
    spec = {"script": script, "args": args, "env": dict(os.environ), "cwd": os.getcwd(),
            "targets": given, "new_session": False, "process_group": -1, "umask": -1,
            "sigint_ignored": sigint_ignored}
    body = pickle.dumps(spec)
    socket.send_fds(sock, [_HEADER.pack(len(body))], given)
    sock.sendall(body)
    reply, fds, _, _ = socket.recv_fds(sock, _STATUS.size, 1)
    pid, status_fd = _STATUS.unpack(reply)[0], fds[0]
    sock.close()
    child.append(pid)
    for number in early:
        os.kill(pid, number)
    data = b""
    while len(data) < _STATUS.size:
        part = os.read(status_fd, _STATUS.size)
        if not part:
            os._exit(1)  # the zygote went away
        data += part
    status = _STATUS.unpack(data)[0]
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__" and sys.argv[1:2] == ["launch"]:
    launch()
