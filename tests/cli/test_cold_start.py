"""Start-up stays lean: `--help` and `tools list` import no HTTP client, numexpr or REPL."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

HEAVY = ("httpx", "numexpr", "prompt_toolkit", "agentcli.models.openai_compat",
         "agentcli.executor", "pydantic", "markdown_it", "pygments")
_PROBE = """
import atexit, json, runpy, sys
sys.argv = ["agent", *sys.argv[1:]]
# at exit: the entry point ends the process itself once its exit handlers have run
atexit.register(lambda: sys.stderr.write("\\nMODULES=" + json.dumps(sorted(sys.modules))))
runpy.run_module("agentcli", run_name="__main__")
"""


@pytest.mark.parametrize("args", [["--help"], ["tools", "list"], ["run", "--help"],
                                  ["batch", "--help"]])
def test_no_heavy_imports(args: list[str]) -> None:
    env = {**os.environ, "COLUMNS": "120"}
    proc = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True,
                          text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)
    assert "Usage" in proc.stdout or "llm-math" in proc.stdout, proc.stderr
    modules = set(json.loads(proc.stderr.rsplit("MODULES=", 1)[1]))
    loaded = sorted(m for m in HEAVY if m in modules)
    assert loaded == [], f"`agent {' '.join(args)}` imported {loaded}"
