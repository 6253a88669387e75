"""How far past ``--max-time`` each slow case ends (run by hand; prints seconds).

    .venv/bin/python bench/deadlines.py [--limit 2]

Each case runs ``agent run --max-time LIMIT --json`` as a child process against the local
mock server and prints the stop reason, the exit code and two overshoots: the run's own
``elapsed`` minus the limit (the issue's target: under 0.5 s), and the child's wall time minus
the limit (which adds interpreter start-up, imports and exit).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: tests.support
from tests.support.mock_server import MockOpenAIServer

Setup = Callable[[MockOpenAIServer], None]
CASES: dict[str, tuple[Setup, list[str], dict[str, str]]] = {
    "slow model call (20 s)": (lambda s: s.add_reply("Final Answer: x", delay=20), [], {}),
    "trickle 1 byte / 0.5 s": (lambda s: s.add_fault("trickle"), [], {}),
    "trickle, streaming": (lambda s: s.add_fault("trickle"), [], {"AGENT_STREAM": "true"}),
    "endless SSE": (lambda s: s.add_fault("endless_sse"), [], {"AGENT_STREAM": "true"}),
    "slow first byte (20 s)": (lambda s: s.add_fault("slow_first_byte"), [],
                               {"AGENT_STREAM": "true"}),
    "429 Retry-After 3600": (lambda s: s.add_fault("status", status=429, retry_after=3600),
                             [], {}),
    "sleep tool (30 s)": (lambda s: s.add_reply("Action: sleep\nAction Input: 30"),
                          ["-a", "zero-shot-react-description", "-t", "sleep"], {}),
    "terminal sleep 30": (lambda s: s.add_reply("Action: terminal\nAction Input: sleep 30"),
                          ["-a", "zero-shot-react-description", "-t", "terminal",
                           "--allow", "terminal", "--yes"], {}),
}


def run_case(setup: Setup, args: list[str], extra: dict[str, str], limit: float) -> Any:
    with MockOpenAIServer() as server:
        setup(server)
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-bench",
               **extra}
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "agentcli", "run", "q", "-m", "openai/any", "--max-time",
             str(limit), "--json", *args], capture_output=True, text=True, env=env,
            timeout=120, stdin=subprocess.DEVNULL)
        wall = time.monotonic() - started
    result = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return (result.get("stop_reason", "-"), proc.returncode,
            float(result.get("elapsed_seconds", float("nan"))) - limit, wall - limit)


def main() -> None:
    """Print one line per case."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=float, default=2.0)
    limit = parser.parse_args().limit
    print(f"{'case':28} {'stop reason':20} exit  run overshoot (s)  process overshoot (s)")
    for name, (setup, args, extra) in CASES.items():
        reason, code, run_over, wall_over = run_case(setup, args, extra, limit)
        print(f"{name:28} {reason:20} {code:4}  {run_over:18.2f}  {wall_over:22.2f}")


if __name__ == "__main__":
    main()
