"""The seed run's CPU, wall and peak RSS, checkouts side by side, beside its dependencies'
import (issue 40): CPU time (user + sys, from ``wait4``) is the steadier figure on a loaded
machine.

    .venv/bin/python bench/seed_cpu.py [--rounds 15] [--tree old=/tmp/old] [--tree new=.]
    .venv/bin/python bench/seed_cpu.py --instructions [--tree ...]   # once each, valgrind

Each round runs, in rotating order, every checkout's ``agent run "What is 25% of 300?"``
(stdout piped, its own venv and working directory, a fresh HOME) against the project's mock
model server (a Calculator call, then the answer), and the floor: ``python -c "import httpx,
numexpr, typer, rich, ssl"`` with the first checkout's interpreter. Prints medians and the
per-round ratios to the floor. Nothing is asserted. ``--instructions`` runs every side once
under valgrind's callgrind instead and prints the instructions each executed (millions), the
figure machine load does not move: the one to compare two checkouts on a shared machine.

A second floor, ``floor+call``, is the same import plus the one thing any run must do with
it: one ``httpx.AsyncClient`` request to the same mock under ``asyncio.run``, done as cheaply
as agentcli does it (an ``http://`` client given a context without the CA bundle; OpenBLAS on
one thread). ``import httpx``
alone loads no transport: httpcore, h11, anyio's asyncio backend and asyncio itself come
with the first async request, so the first floor does not contain them and no run can avoid
them.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repo root: tests.support
from tests.support.mock_server import MockOpenAIServer  # noqa: E402

SEED = ["run", "What is 25% of 300?", "-m", "openai/mock-model"]
ACTION = ('Thought: use the calculator\nAction:\n```\n{"action": "Calculator", '
          '"action_input": "300 * 0.25"}\n```\n')
FLOOR = "import httpx, numexpr, typer, rich, ssl"
FLOOR_CALL = """import os
os.environ["OPENBLAS_NUM_THREADS"] = "1"
""" + FLOOR + """, asyncio
async def call():
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    async with httpx.AsyncClient(verify=context) as client:
        body = {"model": "m", "messages": [{"role": "user", "content": "q"}]}
        reply = await client.post(os.environ["OPENAI_BASE_URL"] + "/chat/completions", json=body)
        reply.read()
asyncio.run(call())
"""


def child(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """(wall ms, CPU ms, peak RSS MiB) of one child, stdout piped."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    wall = (time.perf_counter() - start) * 1e3
    if status != 0:
        raise SystemExit(f"{cmd} failed: {out[-300:]!r} {err[-1000:]!r}")
    return wall, (usage.ru_utime + usage.ru_stime) * 1e3, usage.ru_maxrss / 1024


def queue_replies(server: MockOpenAIServer, side: str) -> None:
    """What the mock answers this side: a Calculator call and the answer for a seed run, one
    reply for the floor's request, nothing for the import floor."""
    if side == "floor+call":
        server.add_reply("Final Answer: 75")
    elif side != "floor":
        server.add_reply(ACTION)
        server.add_reply("Final Answer: 75")


def instructions(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    """Millions of instructions ``cmd`` executed, counted by callgrind."""
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                           *cmd], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, check=False)
    found = re.search(r"Collected : (\d+)", proc.stderr)
    if proc.returncode != 0 or found is None:
        raise SystemExit(f"{cmd} failed under valgrind: {proc.stderr[-1000:]}")
    return int(found.group(1)) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--tree", action="append", default=[], metavar="LABEL=DIR")
    parser.add_argument("--instructions", action="store_true",
                        help="count each side's instructions once (valgrind) instead")
    args = parser.parse_args()
    trees = [(t.partition("=")[0], Path(t.partition("=")[2] or ".").resolve())
             for t in args.tree or ["new=."]]
    server = MockOpenAIServer().start()
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-bench",
           "HOME": tempfile.mkdtemp()}
    python = str(trees[0][1] / ".venv/bin/python")
    sides = [("floor", trees[0][1], [python, "-c", FLOOR]),
             ("floor+call", trees[0][1], [python, "-c", FLOOR_CALL])]
    sides += [(name, root, [str(root / ".venv/bin/python"), "-m", "agentcli", *SEED])
              for name, root in trees]
    if args.instructions:
        try:
            counts = {}
            for name, root, cmd in sides:
                queue_replies(server, name)
                counts[name] = instructions(cmd, root, env)
        finally:
            server.stop()
        print("instructions executed (millions), once each under callgrind:")
        for name, count in counts.items():
            print(f"  {name}: {count:.0f} | /floor {count / counts['floor']:.3f} | "
                  f"/floor+call {count / counts['floor+call']:.3f}")
        return
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name, _, _ in sides}
    try:
        for r in range(args.rounds):
            for name, root, cmd in sides[r % len(sides):] + sides[:r % len(sides)]:
                queue_replies(server, name)
                results[name].append(child(cmd, root, env))
    finally:
        server.stop()
    print(f"seed `agent run` vs `python -c \"{FLOOR}\"`: {args.rounds} interleaved rounds, "
          f"load {os.getloadavg()[0]:.1f}; median (min-max), ratio = per-round side / floor")
    for name, _, _ in sides:
        cols = []
        for i, label in enumerate(("wall ms", "CPU ms", "peak MiB")):
            vals = [row[i] for row in results[name]]
            cols.append(f"{label} {statistics.median(vals):.1f} ({min(vals):.1f}-{max(vals):.1f})")
            for floor in ("floor", "floor+call"):
                if name in ("floor", floor) or i == 2:
                    continue
                ratio = [row[i] / f[i] for row, f in zip(results[name], results[floor],
                                                         strict=True)]
                cols.append(f"{label.split()[0]}/{floor} {statistics.median(ratio):.2f} "
                            f"(min {min(ratio):.2f})")
        print(f"  {name}: " + " | ".join(cols))


if __name__ == "__main__":
    main()
