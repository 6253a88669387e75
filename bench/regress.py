"""Nothing else regresses: a 1 MiB observation, `agent logs` over 100,000 runs, memory.

Run by hand, never in CI: ``.venv/bin/python bench/regress.py [--pairs 7] [--runs 100000]``.
Every row is interleaved A/B pairs of child processes (``bench/run.py``'s helpers), stdout
piped, bytecode cached:

- **1 MiB observation**: ``agent run`` with a tool that returns 1 MiB of text (the observation
  cap keeps what the model sees bounded) vs the same run whose tool returns 10 bytes; wall and
  peak RSS.
- **logs at 100k runs**: ``agent logs -n 20``, ``agent logs -q WORD -n 20`` (full-text search,
  a word in every run, and a word in one run in 1,000) and ``agent logs --json -n 20`` on a log
  of ``--runs`` runs vs the same commands on a log of 10 runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import AGENT, PY, Row, Server, markdown, pairs, report, timed_child  # noqa: E402

TOOLS = '''
import os
from agentcli.tools import tool


@tool
def big(text: str) -> str:
    """Return BENCH_BIG_BYTES bytes of text."""
    return "BIG-START " + "x" * int(os.environ["BENCH_BIG_BYTES"])
'''
RUN = ["run", "read it", "-m", "openai/mock-model", "-q", "-t", "big", "--tools-module"]


def big_observation(n: int, env: dict[str, str], server: Server, work: Path) -> list[Row]:
    """A 1 MiB observation vs a 10-byte one: wall and peak RSS."""
    server.mode("big")
    module = work / "bigtool.py"
    module.write_text(TOOLS)
    rss: dict[str, list[float]] = {"small": [], "big": []}

    def run(size: str, nbytes: int) -> float:
        wall, peak = timed_child([*AGENT, *RUN, str(module)],
                                 {**env, "BENCH_BIG_BYTES": str(nbytes)})
        rss[size].append(peak)
        return wall * 1e3

    small, big = pairs(n, lambda: run("small", 10), lambda: run("big", 1 << 20))
    wall = Row("1 MiB observation: `agent run` wall (ms)", "10 B", "1 MiB", small, big,
               target="ratio <= 1.5")
    wall.met = "yes" if statistics.median(wall.ratios()) <= 1.5 else "no"
    peak = Row("1 MiB observation: peak RSS (MiB)", "10 B", "1 MiB", rss["small"], rss["big"],
               unit="MiB", target="+ <= 10 MiB")
    grown = statistics.median(rss["big"]) - statistics.median(rss["small"])
    peak.met = "yes" if grown <= 10 else "no"
    peak.note = f"{grown:+.1f} MiB"
    rows = [report(wall), report(peak)]
    return rows


def fill_log(data_home: Path, runs: int) -> None:
    """A run log of ``runs`` runs, written in one process through the store's public API
    (``outcome.run_record`` + ``Store.log_run``, one transaction a run, as `agent run` logs)."""
    code = f"""
from agentcli.outcome import run_record
from agentcli.schema import AgentAction, AgentStep, RunResult, Usage
from agentcli.store import open_store
store = open_store(None)
action = AgentAction("Calculator", "300*0.25", "Thought: compute it")
for i in range({runs}):
    word = "needle" if i % 1000 == 0 else "hay"
    result = RunResult(str(i), (AgentStep(action, f"Answer: {{i}}"),), "finished",
                       Usage(100, 20), 2, 0.3)
    store.log_run(run_record(f"What is {{word}} number {{i}}?", result,
                             model="openai/mock-model",
                             agent="chat-zero-shot-react-description"))
store.close()
"""
    subprocess.run([PY, "-c", code], env={**os.environ, "XDG_DATA_HOME": str(data_home)},
                   check=True)


def logs_rows(n: int, env: dict[str, str], runs: int, work: Path) -> list[Row]:
    """`agent logs` on a log of ``runs`` runs vs one of 10."""
    small, large = work / "small", work / "large"
    t0 = time.perf_counter()
    fill_log(small, 10)
    fill_log(large, runs)
    print(f"# filled a log of {runs:,} runs in {time.perf_counter() - t0:.0f} s", flush=True)
    rows = []
    for label, args in (("`agent logs -n 20`", ["logs", "-n", "20"]),
                        ("`agent logs -q hay -n 20` (every run matches)",
                         ["logs", "-q", "hay", "-n", "20"]),
                        ("`agent logs -q needle -n 20` (1 run in 1,000)",
                         ["logs", "-q", "needle", "-n", "20"]),
                        ("`agent logs --json -n 20`", ["logs", "--json", "-n", "20"])):
        a, b = pairs(n, lambda args=args: timed_child(
                         [*AGENT, *args], {**env, "XDG_DATA_HOME": str(small)})[0] * 1e3,
                     lambda args=args: timed_child(
                         [*AGENT, *args], {**env, "XDG_DATA_HOME": str(large)})[0] * 1e3)
        row = Row(f"{label} at {runs:,} runs vs 10 (ms)", "10", f"{runs:,}", a, b,
                  target="ratio <= 1.5")
        row.met = "yes" if statistics.median(row.ratios()) <= 1.5 else "no"
        rows.append(report(row))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--runs", type=int, default=100_000)
    args = parser.parse_args()
    subprocess.run([PY, "-m", "compileall", "-q", str(HERE.parent / "agentcli")], check=True)
    work = Path(tempfile.mkdtemp())
    server = Server()
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-bench",
           "NO_COLOR": "1", "XDG_DATA_HOME": str(work / "data")}
    for key in ("AGENT_CONFIG", "COLUMNS", "PYTHONDONTWRITEBYTECODE"):
        env.pop(key, None)
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} UTC, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()}, {args.pairs} pairs per row", flush=True)
    try:
        rows = big_observation(args.pairs, env, server, work)
        rows += logs_rows(args.pairs, env, args.runs, work)
    finally:
        server.stop()
    print()
    print(markdown(rows))


if __name__ == "__main__":
    main()
