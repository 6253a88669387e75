"""The processes below a stdio server, by pid and start time (agentcli/mcp/proctree.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentcli.mcp import proctree

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
SCRIPT = ("import subprocess, sys, time; "
          "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], "
          "start_new_session=True); print(c.pid, flush=True); time.sleep(60)")


def test_a_detached_grandchild_is_found_and_ended_by_pid() -> None:
    parent = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert parent.stdout is not None
        grandchild = int(parent.stdout.readline())
        found = proctree.descendants(parent.pid)
        assert grandchild in {pid for pid, _ in found}  # it left the group, not the tree
        assert all(proctree.alive(k) for k in found)
        proctree.signal_all(found, signal.SIGKILL)
        [known] = [k for k in found if k[0] == grandchild]
        while proctree.alive(known):  # gone (or a zombie awaiting its parent)
            time.sleep(0.01)
    finally:
        parent.kill()
        parent.communicate()


def test_a_pid_with_another_start_time_is_someone_else() -> None:
    assert not proctree.alive((os.getpid(), "0"))  # this pid, but not a process of tick 0
    assert proctree.descendants(2**22 + 12345) == set()  # no such process: nothing below it
