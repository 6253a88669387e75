"""Issue 38's done condition, run by hand: `agent run --max-time N` ends within N + 2 s
whatever its MCP server does. Each case runs the real `agent` against the mock model with one
hostile stdio server (tests/mcp/mcp_hostile_server.py) and prints the wall time from launch to
exit, the budget N + 2, and whether any process the server started is still running; the
baseline row (no server, a model that never answers in time) is what the machine itself adds
to N, so on a loaded machine the rows are best read against it.

    .venv/bin/python bench/mcp_hostile.py [--max-time 5] [--repeat 3]

Nothing here is asserted in the test suite (a loaded machine would make it flaky); the tests
(tests/mcp/test_mcp_hostile.py) check the behaviour with generous bounds.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repo root: tests.support
from tests.support.mock_server import MockOpenAIServer  # noqa: E402

SERVER = ROOT / "tests" / "mcp" / "mcp_hostile_server.py"
CASES = {  # name: (server behaviours, server settings, model replies); None: no server
    "baseline: no server, slow model": (None, {}, 0),
    "silent initialize": (["silent", "deaf", "setsid"], {"startup_timeout": 600}, 0),
    "call never answers": (["slow-call", "deaf", "setsid"], {"call_timeout": 600}, 1),
    "100 MB line": (["huge-call=100", "deaf"], {}, 2),
    "200 MB stderr in a call": (["err-call=200"], {}, 2),
}


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def one(name: str, max_time: float, mock: MockOpenAIServer, tmp: Path) -> tuple[float, int]:
    modes, settings, replies = CASES[name]
    record = tmp / "record"
    record.unlink(missing_ok=True)
    cfg = tmp / "c.yaml"
    cfg.write_text(yaml.safe_dump({"mcp_servers": {"srv": {
        "command": sys.executable, "args": [str(SERVER), str(record), *(modes or [])],
        "trusted": True, **settings}}}))
    tools = ["-t", "srv.ping"] if modes is not None else []
    if modes is None:  # what the machine adds to N: start-up and exit, no server
        mock.add_reply("late", delay=max_time + 30)
    if replies:
        mock.add_reply(tool_calls=[{"name": "srv__ping", "arguments": {}}])
    if replies > 1:
        mock.add_reply("done")
    env = {**os.environ, "XDG_DATA_HOME": str(tmp / "data"), "HOME": str(tmp),
           "OPENAI_BASE_URL": mock.base_url, "OPENAI_API_KEY": "sk-x"}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "agentcli", "run", "q", "-m", "openai/x", "-a",
                    "tool-calling", "-c", str(cfg), *tools, "--max-time",
                    f"{max_time:g}", "--no-log"], capture_output=True, env=env,
                   stdin=subprocess.DEVNULL, timeout=max_time + 120)
    elapsed = time.perf_counter() - start
    pids = [int(line.split()[1]) for line in record.read_text().splitlines()
            if line.split()[0] in ("pid", "child")] if record.exists() else []
    left = [p for p in pids if alive(p)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return elapsed, len(left)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-time", type=float, default=5.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with MockOpenAIServer() as mock, tempfile.TemporaryDirectory() as tmp:
        print(f"{'case':28} {'median s':>9} {'max s':>7} {'budget':>7} left")
        for name in CASES:
            runs = [one(name, args.max_time, mock, Path(tmp)) for _ in range(args.repeat)]
            times = [t for t, _ in runs]
            print(f"{name:28} {statistics.median(times):9.2f} {max(times):7.2f} "
                  f"{args.max_time + 2:7.1f} {sum(n for _, n in runs)}")


if __name__ == "__main__":
    main()
