"""Time to the first streamed token: through `agent serve` vs the model server directly.

    .venv/bin/python bench/serve_first_token.py [--pairs 15] [--delay 0.1] [--gap 0.15]

The project's mock model server (127.0.0.1) answers every request with a streamed text reply
whose first byte comes after ``--delay`` seconds (a model's own time to first token) and
whose chunks then follow with ``--chunk-delay`` each. A: a bare ``httpx`` stream straight to
that server. B: the same question streamed through a real `agent serve --agent tool-calling`
child process (token printed at start, as by default) in front of it. Each figure is the time
from sending the request to the first SSE chunk carrying content, measured by the client;
the sides run in interleaved pairs (A first in even pairs). Each request starts after its
connection has been idle ``--gap`` seconds: the mock server writes without TCP_NODELAY, so a
request sent the moment the last one ended (A after A, B after B at a pair's edge) meets
Nagle's algorithm against the client's delayed ACK and waits ~40 ms for its first chunk, on
whichever side happens to go twice in a row. The serve child's CPU per request is printed
too (Linux: /proc), a steadier figure than wall on a shared machine. Nothing is asserted; the
target (issues 33, 40) is B / A <= 1.2.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: tests.support
from tests.support.mock_server import MockOpenAIServer

ANSWER = "Twenty-five percent of three hundred is seventy-five, as the calculator says."


def first_token(client: httpx.Client, url: str, body: dict[str, Any],
                headers: dict[str, str]) -> float:
    """Seconds from the request to the first content delta of its stream."""
    start = time.perf_counter()
    with client.stream("POST", url, json=body, headers=headers) as resp:
        resp.raise_for_status()
        lines = resp.iter_lines()
        for line in lines:
            if not line.startswith("data: {"):
                continue
            choices = json.loads(line[6:]).get("choices") or [{}]
            if choices[0].get("delta", {}).get("content"):
                elapsed = time.perf_counter() - start
                for _ in lines:  # read the rest: the connection is reused
                    pass
                return elapsed
    raise RuntimeError("the stream carried no content")


def start_serve(base_url: str) -> tuple[subprocess.Popen[str], str, str]:
    """`agent serve` on a free port in front of ``base_url``; its URL and printed token."""
    env = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "sk-bench",
           "AGENT_DB": "/tmp/agentcli-bench-serve.db"}
    proc = subprocess.Popen([sys.executable, "-m", "agentcli", "serve", "-m",
                             "openai/mock-model", "--agent", "tool-calling", "--port", "0",
                             "--no-log"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, text=True, env=env)
    assert proc.stderr is not None
    for line in proc.stderr:
        found = re.match(r"OPENAI_BASE_URL=(\S+) OPENAI_API_KEY=(\S+)", line)
        if found:
            return proc, found.group(1), found.group(2)
    raise RuntimeError("agent serve did not start")


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU of a process so far (None where /proc is not there)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--delay", type=float, default=0.1, help="model's first-byte delay")
    parser.add_argument("--chunk-delay", type=float, default=0.005)
    parser.add_argument("--gap", type=float, default=0.15,
                        help="idle seconds before each request (0: back to back)")
    args = parser.parse_args()
    server = MockOpenAIServer().start()
    server.set_responder(lambda body: {"text": ANSWER, "delay": args.delay,
                                       "chunk_delay": args.chunk_delay})
    proc, serve_url, token = start_serve(server.base_url)
    question = {"messages": [{"role": "user", "content": "What is 25% of 300?"}],
                "stream": True}
    direct = (f"{server.base_url}/chat/completions", {**question, "model": "mock-model"}, {})
    served = (f"{serve_url}/chat/completions", {**question, "model": "agent"},
              {"Authorization": f"Bearer {token}"})
    a: list[float] = []
    b: list[float] = []
    try:
        with httpx.Client(timeout=60) as client:
            first_token(client, *direct), first_token(client, *served)  # warm both paths
            cpu_before = cpu_seconds(proc.pid)
            for pair in range(args.pairs):
                sides = [(a, direct), (b, served)]
                for sink, (url, body, headers) in sides if pair % 2 == 0 else sides[::-1]:
                    time.sleep(args.gap)
                    sink.append(first_token(client, url, body, headers))
            cpu_after = cpu_seconds(proc.pid)
    finally:
        proc.terminate()
        proc.wait(10)
        server.stop()
    ratios = sorted(y / x for x, y in zip(a, b, strict=True))
    print(f"time to first streamed token, {args.pairs} interleaved pairs, model first byte "
          f"{args.delay * 1000:.0f} ms, {args.chunk_delay * 1000:.0f} ms per chunk, gap "
          f"{args.gap * 1000:.0f} ms, load {os.getloadavg()[0]:.2f}")
    print(f"  A model server directly: median {statistics.median(a) * 1000:7.1f} ms")
    print(f"  B through agent serve:   median {statistics.median(b) * 1000:7.1f} ms")
    print(f"  B / A: median {statistics.median(ratios):.2f}, min {ratios[0]:.2f} "
          "(target <= 1.2)")
    if cpu_before is not None and cpu_after is not None:
        per_request = (cpu_after - cpu_before) / args.pairs * 1000
        print(f"  agent serve CPU per request: {per_request:.1f} ms (the whole answer, "
              f"{len(ANSWER)} characters)")


if __name__ == "__main__":
    main()
