"""Time to the first MCP tool result with one stdio server, checkouts side by side (issue 40).

    .venv/bin/python bench/mcp_first_tool.py [--rounds 7] [--tree old=/tmp/old] [--tree new=.]

`agent run "say hi" --tools ev.echo` against the project's mock model server: the first
reply calls ``ev.echo`` on a stdio server, the same for every checkout (``--server raw``, the
default: ``bench/mcp_raw_server.py``, JSON-RPC without the SDK, so the client's cost shows;
``sdk``: ``tests/tools/fixtures/mcp_echo_server.py`` on the MCP SDK), the second answers.
Per run: the time from the start of the child to the model request that carries the tool's
result (start-up, the server's start and handshake, the call), the wall to exit, and the
child's CPU (user + sys, its server included: the same server for every checkout, so
differences are the client's).
Each checkout runs with its own venv and working directory; rounds interleave, the first
side rotating. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repo root: tests.support
from tests.support.mock_server import MockOpenAIServer  # noqa: E402

SERVERS = {"sdk": ROOT / "tests" / "tools" / "fixtures" / "mcp_echo_server.py",
           "raw": ROOT / "bench" / "mcp_raw_server.py"}
CALL = 'Action:\n```\n{"action": "ev.echo", "action_input": {"text": "hi"}}\n```\n'


def one(python: str, cwd: Path, server: MockOpenAIServer, config: Path,
        seen: list[float]) -> tuple[float, float, float]:
    """(ms to the tool's result at the model, ms to exit, CPU ms) of one run."""
    seen.clear()
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-bench",
           "HOME": tempfile.mkdtemp()}
    start = time.perf_counter()
    proc = subprocess.Popen([python, "-m", "agentcli", "run", "say hi", "-c", str(config),
                             "--tools", "ev.echo", "-m", "openai/mock-model", "--no-log"],
                            cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=300)
    wall = (time.perf_counter() - start) * 1e3
    if proc.returncode != 0 or out.strip() != "done" or len(seen) < 2:
        raise SystemExit(f"run failed ({proc.returncode}): {out[-300:]} {err[-1000:]}")
    return (seen[1] - start) * 1e3, wall, _cpu_of_last_child()


_last = [0.0]


def _cpu_of_last_child() -> float:
    """CPU ms of the child just reaped (RUSAGE_CHILDREN grows by it, its server included)."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = (ru.ru_utime + ru.ru_stime) * 1e3
    spent, _last[0] = total - _last[0], total
    return spent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tree", action="append", default=[], metavar="LABEL=DIR")
    parser.add_argument("--server", choices=sorted(SERVERS), default="raw",
                        help="raw: bench/mcp_raw_server.py, no SDK (the client is what costs); "
                        "sdk: the tests' Python server on the MCP SDK")
    args = parser.parse_args()
    trees = [(t.partition("=")[0], Path(t.partition("=")[2] or ".").resolve())
             for t in args.tree or ["new=."]]
    seen: list[float] = []
    server = MockOpenAIServer().start()

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        seen.append(time.perf_counter())
        text = json.dumps(body)
        return {"text": "Final Answer: done" if "echo: hi" in text else CALL}

    server.set_responder(reply)
    config = Path(tempfile.mkdtemp()) / "c.yaml"
    config.write_text(json.dumps({"mcp_servers": {"ev": {
        "command": sys.executable, "args": [str(SERVERS[args.server])], "trusted": True}}}))
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name, _ in trees}
    _cpu_of_last_child()
    try:
        for r in range(args.rounds):
            order = trees[r % len(trees):] + trees[:r % len(trees)]
            for name, root in order:
                python = str(root / ".venv" / "bin" / "python")
                results[name].append(one(python, root, server, config, seen))
    finally:
        server.stop()
    print(f"MCP, one stdio server ({args.server}): time to the first tool result, "
          f"{args.rounds} interleaved rounds, load {os.getloadavg()[0]:.1f} (median (min-max))")
    first = trees[0][0]
    for name, _ in trees:
        cols = []
        for i, label in enumerate(("to tool result ms", "to exit ms", "CPU ms")):
            vals = [row[i] for row in results[name]]
            cols.append(f"{label} {statistics.median(vals):.0f} ({min(vals):.0f}-{max(vals):.0f})")
        if name != first:
            ratios = [b[2] / a[2] for a, b in zip(results[first], results[name], strict=True)]
            cols.append(f"CPU {name}/{first} {statistics.median(ratios):.2f}")
        print(f"  {name}: " + " | ".join(cols))


if __name__ == "__main__":
    main()
