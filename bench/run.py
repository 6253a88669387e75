"""agentcli vs LangChain (and vs bare httpx, vs ``python -c pass``), like for like, interleaved.

Run by hand, never in CI: ``.venv/bin/python bench/run.py`` after creating the LangChain venv
(see bench/README.md). Every row is a series of A/B pairs run alternately (A first in even
pairs, B first in odd ones); it prints the min and the median of the per-pair ratios and the
1-minute load average when the row finished, then one Markdown table (``--markdown FILE``
also writes it). The model server is ``bench/server.py`` in its own process; its CPU time is
printed for the batch rows so you can see it is not the bottleneck.
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
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LC_PY = os.environ.get("LC_PYTHON", "/tmp/agentcli-bench-lc/bin/python")
PY = sys.executable
AGENT = [PY, "-m", "agentcli"]
SEED = ["run", "What is 25% of 300?", "-m", "openai/mock-model", "-q"]


@dataclass
class Row:
    """One line of the table: what A and B are, their medians, the ratio B/A, the target."""

    name: str
    a: str
    b: str
    a_values: list[float] = field(default_factory=list)
    b_values: list[float] = field(default_factory=list)
    unit: str = "ms"
    target: str = ""
    met: str = ""
    note: str = ""
    load: float = 0.0

    def ratios(self) -> list[float]:
        """B/A per pair."""
        if len(self.a_values) != len(self.b_values):
            return []
        return [b / a for a, b in zip(self.a_values, self.b_values, strict=True) if a]

    def cells(self) -> list[str]:
        """Table cells."""
        r = self.ratios()
        return [self.name, f"{self.a}: {_fmt(statistics.median(self.a_values))}",
                f"{self.b}: {_fmt(statistics.median(self.b_values))}" if self.b_values else "",
                f"{min(r):.2f}" if r else "", f"{statistics.median(r):.2f}" if r else "",
                self.target, self.met, f"{self.load:.1f}", self.note]


def _fmt(value: float) -> str:
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


class Server:
    """bench/server.py in its own process."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([PY, str(HERE / "server.py")], stdout=subprocess.PIPE,
                                     text=True)
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline().split()[1])
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def control(self, path: str, data: dict[str, Any] | None = None) -> Any:
        """POST (with data) or GET a control path."""
        body = json.dumps(data).encode() if data is not None else None
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=body,
                                     method="POST" if body is not None else "GET")
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.loads(resp.read())

    def mode(self, mode: str, delay: float = 0.0) -> None:
        """Switch the reply mode and latency."""
        self.control("/_mode", {"mode": mode, "delay": delay})

    def stats(self) -> dict[str, Any]:
        """CPU seconds so far, requests and inter-request gaps since the last reset."""
        return dict(self.control("/_stats"))

    def reset(self) -> None:
        """Forget the request log."""
        self.control("/_reset", {})

    def stop(self) -> None:
        """Kill the server process."""
        self.proc.kill()
        self.proc.wait()


def timed_child(cmd: list[str], env: dict[str, str], stdin: str | None = None,
                cwd: str | Path | None = None) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB, from ``wait4``) of one child; exits the bench if it fails.
    ``cwd`` matters for ``python -m agentcli``: the working directory comes first on sys.path,
    so a child run from another checkout imports that checkout's package."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE,
                            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL)
    assert proc.stderr is not None
    if stdin is not None:
        assert proc.stdin is not None
        proc.stdin.write(stdin.encode())
        proc.stdin.close()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(f"{cmd} failed ({proc.returncode}):\n{err.decode()[-2000:]}")
    return wall, usage.ru_maxrss / 1024


def side(python: str, script: str, args: list[str], env: dict[str, str],
         bench: Path = HERE) -> dict[str, Any]:
    """Run one in-process benchmark (``bench/script``, another checkout's with ``bench``) in its
    own interpreter, from that checkout; return its JSON result."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as fh:
        out = fh.name
    timed_child([python, str(bench / script), args[0], args[1], out, *args[2:]], env,
                cwd=bench.parent)
    data = dict(json.loads(Path(out).read_text()))
    os.unlink(out)
    return data


def pairs(n: int, run_a: Callable[[], float], run_b: Callable[[], float]
          ) -> tuple[list[float], list[float]]:
    """``n`` interleaved A/B pairs (the order alternates so drift hits both sides)."""
    a_values, b_values = interleave(n, [run_a, run_b])
    return a_values, b_values


def interleave(n: int, runs: list[Callable[[], float]]) -> list[list[float]]:
    """``n`` rounds of every side, the starting side rotating each round (so drift in the
    machine's load hits every side alike); one list of values per side."""
    values: list[list[float]] = [[] for _ in runs]
    for i in range(n):
        for k in range(len(runs)):
            j = (i + k) % len(runs)
            values[j].append(runs[j]())
    return values


def load() -> float:
    """The 1-minute load average."""
    return os.getloadavg()[0]


def report(row: Row) -> Row:
    """Print a row as soon as it is done."""
    row.load = load()
    print(" | ".join(row.cells()), flush=True)
    return row


# -- rows ----------------------------------------------------------------------------------

def seed_vs_lc(n: int, env: dict[str, str], server: Server) -> Row:
    """The seed example end to end as a child process: agentcli vs LangChain."""
    server.mode("seed")

    def ours() -> float:
        return timed_child([*AGENT, *SEED], env)[0] * 1e3

    def theirs() -> float:
        t0 = time.perf_counter()
        side(LC_PY, "lc_side.py", ["seed", server.base_url], env)
        return (time.perf_counter() - t0) * 1e3

    a, b = pairs(n, ours, theirs)
    return report(Row("seed example wall: agentcli vs LangChain", "ours", "LC", a, b,
                      note="ratio = LC / ours"))


def chat_rows(n: int, env: dict[str, str], server: Server, turns: int, lc: bool) -> list[Row]:
    """Per-turn overhead of a long chat session (questions piped into `agent chat`), read from
    the server's inter-request gaps, beside a bare httpx client replaying the same bodies (and
    LangChain's conversational agent, in the same interleaved rounds)."""
    questions = "".join(f"question {i}\n" for i in range(turns))
    early: dict[str, list[float]] = {"ours": [], "floor": [], "lc": []}
    late: dict[str, list[float]] = {"ours": [], "floor": [], "lc": []}

    def record(who: str) -> float:
        gaps = server.stats()["gaps"]
        if len(gaps) < turns - 1:
            raise SystemExit(f"{who} chat made {len(gaps) + 1} requests, expected {turns}")
        early[who].append(statistics.median(gaps[0:10]) * 1e3)   # before turns 2-11
        late[who].append(statistics.median(gaps[-10:]) * 1e3)    # before the last 10 turns
        return 0.0

    def ours() -> float:
        data = tempfile.mkdtemp()
        server.reset()
        timed_child([*AGENT, "chat", "-m", "openai/mock-model", "--session", "bench"],
                    {**env, "XDG_DATA_HOME": data, "HOME": data}, stdin=questions)
        return record("ours")

    server.control("/_mode", {"mode": "chat", "delay": 0.0, "record": True})
    ours()
    bodies = Path(tempfile.mkdtemp()) / "bodies.json"
    bodies.write_text(json.dumps(server.control("/_bodies")))
    server.control("/_mode", {"mode": "chat", "delay": 0.0, "record": False})
    early["ours"].clear()
    late["ours"].clear()

    def floor() -> float:
        server.reset()
        side(PY, "floor.py", ["replay", server.base_url, str(bodies)], env)
        return record("floor")

    def theirs() -> float:
        server.reset()
        side(LC_PY, "lc_side.py", ["chat", server.base_url, str(turns)], env)
        return record("lc")

    interleave(n, [floor, ours, theirs] if lc else [floor, ours])
    rows = []
    for label, data in ((f"turns 2-11 of {turns}", early),
                        (f"turns {turns - 9}-{turns} of {turns}", late)):
        lc_note = (f"; LC {statistics.median(data['lc']):.2f} ms "
                   f"({statistics.median(_div(data['lc'], data['ours'])):.1f}x ours)"
                   if data["lc"] else "")
        row = Row(f"chat overhead per turn, {label} (ms)", "bare httpx", "ours",
                  data["floor"], data["ours"], target="ratio <= 2",
                  note=f"through the front door (stdin piped){lc_note}")
        row.met = "yes" if statistics.median(row.ratios()) <= 2 else "no"
        rows.append(report(row))
    row = Row(f"chat per turn, ours: turns {turns - 9}-{turns} vs 2-11 (ms)", "2-11",
              f"{turns - 9}-{turns}", early["ours"], late["ours"], target="0.8-1.2")
    row.met = "yes" if 0.8 <= statistics.median(row.ratios()) <= 1.2 else "no"
    rows.append(report(row))
    return rows


def _div(a: list[float], b: list[float]) -> list[float]:
    return [x / y for x, y in zip(a, b, strict=True) if y]


def batch_rows(n: int, env: dict[str, str], server: Server, lc: bool) -> list[Row]:
    """Batches at 16/64/256 in flight, 200 ms and 0 ms per call: agentcli vs bare httpx (vs
    LangChain), all three in the same interleaved rounds; wall and client CPU per request."""
    rows = []
    for delay in (0.2, 0.0):
        server.mode("final", delay)
        for conc in (16, 64, 256):
            rows += _batch(n, env, server, lc, delay, conc)
    return rows


def _batch(n: int, env: dict[str, str], server: Server, lc: bool, delay: float, conc: int
           ) -> list[Row]:
    items = conc * 6
    ideal = items / conc * delay
    cpu: dict[str, list[float]] = {"ours": [], "floor": [], "lc": []}
    server_cpu: dict[str, list[float]] = {"ours": [], "floor": [], "lc": []}

    def run(who: str, python: str, script: str) -> float:
        before = server.stats()["cpu"]
        res = side(python, script, ["-" if who == "floor" else "batch", server.base_url,
                                    str(items), str(conc)], env)
        server_cpu[who].append(server.stats()["cpu"] - before)
        if res.get("ok") != items:
            raise SystemExit(f"{who} batch answered {res.get('ok')} of {items}")
        cpu[who].append(float(res["cpu_s"]) / items * 1e3)
        return float(res["wall_s"])

    runs = [lambda: run("floor", PY, "floor.py"), lambda: run("ours", PY, "ours_side.py")]
    if lc:
        runs.append(lambda: run("lc", LC_PY, "lc_side.py"))
    walls = interleave(n, runs)
    ms = f"{delay * 1e3:.0f} ms"
    rows = []
    row = Row(f"batch {items} x {ms} @{conc} in flight (s; ideal {ideal:.1f})", "httpx",
              "ours", walls[0], walls[1], unit="s", target="ratio <= 1.1" if conc == 64 else "",
              note=f"server CPU {statistics.median(server_cpu['ours']):.2f} s (ours run), "
                   f"{statistics.median(server_cpu['floor']):.2f} s (httpx run)")
    if conc == 64:
        row.met = "yes" if statistics.median(row.ratios()) <= 1.1 else "no"
    if lc:
        row.note += (f"; LC {statistics.median(walls[2]):.2f} s "
                     f"({statistics.median(_div(walls[2], walls[1])):.2f}x ours)")
    rows.append(report(row))
    row = Row(f"batch {ms} @{conc}: client CPU per request (ms)", "httpx", "ours",
              cpu["floor"], cpu["ours"], target="ratio <= 1.2" if conc == 256 else "")
    if conc == 256:
        row.met = "yes" if statistics.median(row.ratios()) <= 1.2 else "no"
    if lc:
        row.note = f"LC {statistics.median(cpu['lc']):.2f} ms"
    rows.append(report(row))
    return rows


def step_rows(n: int, env: dict[str, str], server: Server, lc: bool, lc_max: int
              ) -> list[Row]:
    """Per-step overhead over loopback HTTP: the server-side gap between a reply and the
    next request (tool call, parsing, prompt building, serialisation, the HTTP client),
    beside the floor: a bare httpx client replaying the very bodies our run sent."""
    server.mode("step")
    rows = []
    for steps in (10, 100, 1000):
        server.control("/_mode", {"mode": "step", "delay": 0.0, "record": True})
        server.reset()
        side(PY, "ours_side.py", ["steps", server.base_url, str(steps)], env)
        bodies = Path(tempfile.mkdtemp()) / "bodies.json"
        bodies.write_text(json.dumps(server.control("/_bodies")))
        server.control("/_mode", {"mode": "step", "delay": 0.0, "record": False})
        first: dict[str, list[float]] = {"ours": [], "floor": [], "lc": []}
        last: dict[str, list[float]] = {"ours": [], "floor": [], "lc": []}
        cpu: dict[str, list[float]] = {"ours": [], "floor": []}

        def run(who: str, steps: int = steps, first: dict[str, list[float]] = first,
                last: dict[str, list[float]] = last, cpu: dict[str, list[float]] = cpu,
                bodies: Path = bodies) -> float:
            server.reset()
            if who == "floor":
                res = side(PY, "floor.py", ["replay", server.base_url, str(bodies)], env)
            elif who == "lc":
                res = side(LC_PY, "lc_side.py", ["steps", server.base_url, str(steps)], env)
            else:
                res = side(PY, "ours_side.py", ["steps", server.base_url, str(steps)], env)
            gaps = server.stats()["gaps"]
            first[who].append(statistics.median(gaps[:10]) * 1e6)
            last[who].append(statistics.median(gaps[-10:]) * 1e6)
            if who in cpu:
                cpu[who].append(res["cpu_s"] / steps * 1e6)
            return 0.0

        runs = [lambda run=run: run("floor"), lambda run=run: run("ours")]
        if lc and steps <= lc_max:
            runs.append(lambda run=run: run("lc"))
        interleave(n, runs)
        lc_note = (f"; LC {statistics.median(first['lc']):.0f} us" if first["lc"] else "")
        row = Row(f"per step over HTTP, {steps} steps: first 10 (us)", "bare httpx", "ours",
                  first["floor"], first["ours"], unit="us", target="ratio <= 1.3",
                  note=f"client CPU/step: ours {statistics.median(cpu['ours']):.0f} us, "
                       f"bare {statistics.median(cpu['floor']):.0f} us{lc_note}")
        row.met = "yes" if statistics.median(row.ratios()) <= 1.3 else "no"
        rows.append(report(row))
        if steps >= 100:
            lc_note = (f"; LC {statistics.median(last['lc']):.0f} us" if last["lc"] else "")
            row = Row(f"per step over HTTP, {steps} steps: last 10 (us)", "bare httpx", "ours",
                      last["floor"], last["ours"], unit="us", target="ratio <= 1.3",
                      note=f"same bodies replayed by the bare client{lc_note}")
            row.met = "yes" if statistics.median(row.ratios()) <= 1.3 else "no"
            rows.append(report(row))
    return rows


def inproc_rows(env: dict[str, str]) -> list[Row]:
    """In-process rows: a step and the scratchpad at step 1 vs 1000, and warm run logging."""
    rows = []
    first, last = [], []
    for _ in range(3):
        run = side(PY, "ours_side.py", ["fakesteps", "-", "1000"], env)
        first.append(run["first_s"] * 1e6)
        last.append(run["last_s"] * 1e6)
    row = Row("per step, fake model, 1,000-step run: steps 1-10 vs 991-1000 (us)", "first",
              "last", first, last, unit="us", target="ratio <= 2")
    row.met = "yes" if statistics.median(row.ratios()) <= 2 else "no"
    rows.append(report(row))
    pad = side(PY, "ours_side.py", ["scratchpad", "-", "1000"], env)
    row = Row("scratchpad(): steps 1-10 vs 991-1000 (us)", "first", "last",
              [pad["first_s"] * 1e6], [pad["last_s"] * 1e6], unit="us", target="ratio <= 2")
    row.met = "yes" if pad["last_s"] <= 2 * pad["first_s"] else "no"
    rows.append(report(row))
    log = side(PY, "ours_side.py", ["logging", "-", "50"], env)
    row = Row("run logging, warm (open + log + close, ms)", "median", "",
              [log["median_s"] * 1e3], [], target="<= 2 ms")
    row.met = "yes" if log["median_s"] <= 0.002 else "no"
    rows.append(report(row))
    return rows


def markdown(rows: list[Row]) -> str:
    """The table as Markdown."""
    head = ["row", "A (median)", "B (median)", "B/A min", "B/A median", "target", "met",
            "load", "note"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(c.replace("|", "/") for c in r.cells()) + " |" for r in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pairs", type=int, default=7, help="A/B pairs per row (>= 7)")
    parser.add_argument("--turns", type=int, default=200, help="turns in the chat session")
    parser.add_argument("--lc-max-steps", type=int, default=1000,
                        help="skip LangChain in per-step rows longer than this")
    parser.add_argument("--only", help="comma list of sections: cold,seed,chat,batch,steps,"
                        "inproc")
    parser.add_argument("--no-lc", action="store_true", help="agentcli rows only")
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    args = parser.parse_args()
    lc = not args.no_lc
    if lc and not Path(LC_PY).exists():
        raise SystemExit(f"no LangChain venv at {LC_PY}; see bench/README.md (or --no-lc)")
    server = Server()
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-bench",
           "NO_COLOR": "1", "OLLAMA_BASE_URL": "http://127.0.0.1:9/v1",
           "XDG_DATA_HOME": tempfile.mkdtemp()}
    env.pop("AGENT_CONFIG", None)
    env.pop("COLUMNS", None)
    sections = set((args.only or "cold,seed,chat,batch,steps,inproc").split(","))
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} UTC, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()}, {args.pairs} pairs per row", flush=True)
    rows: list[Row] = []
    try:
        if "cold" in sections:
            rows += cold_start(args.pairs, env, server)
        if "seed" in sections and lc:
            rows.append(seed_vs_lc(args.pairs, env, server))
        if "chat" in sections:
            rows += chat_rows(args.pairs, env, server, args.turns, lc)
        if "batch" in sections:
            rows += batch_rows(args.pairs, env, server, lc)
        if "steps" in sections:
            rows += step_rows(args.pairs, env, server, lc, args.lc_max_steps)
        if "inproc" in sections:
            rows += inproc_rows(env)
    finally:
        server.stop()
    table = markdown(rows)
    print()
    print(table)
    if args.markdown:
        args.markdown.write_text(table + "\n")


def cold_start(n: int, env: dict[str, str], server: Server) -> list[Row]:
    """Cold start against `python -c pass`: `--help`, `tools list`, the seed run (and its
    RSS), with bytecode cached as on a user's machine (an editable install's own modules are
    compiled here once; PYTHONDONTWRITEBYTECODE would make every process compile them)."""
    server.mode("seed")
    env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([PY, "-m", "compileall", "-q", str(HERE.parent / "agentcli")], check=True)
    rows = []
    passes, helps = pairs(n, lambda: timed_child([PY, "-c", "pass"], env)[0] * 1e3,
                          lambda: timed_child([*AGENT, "--help"], env)[0] * 1e3)
    row = Row("cold: `agent --help` vs `python -c pass` (ms)", "pass", "help", passes, helps,
              target="ratio <= 3")
    row.met = "yes" if statistics.median(row.ratios()) <= 3 else "no"
    rows.append(report(row))
    passes, lists = pairs(n, lambda: timed_child([PY, "-c", "pass"], env)[0] * 1e3,
                          lambda: timed_child([*AGENT, "tools", "list"], env)[0] * 1e3)
    row = Row("cold: `agent tools list` vs `python -c pass` (ms)", "pass", "list", passes,
              lists, target="ratio <= 4")
    row.met = "yes" if statistics.median(row.ratios()) <= 4 else "no"
    rows.append(report(row))
    rss: list[float] = []

    def seed() -> float:
        wall, peak = timed_child([*AGENT, *SEED], env)
        rss.append(peak)
        return wall * 1e3

    passes, seeds = pairs(n, lambda: timed_child([PY, "-c", "pass"], env)[0] * 1e3, seed)
    row = Row("cold: `agent run` seed example vs `python -c pass` (ms)", "pass", "run",
              passes, seeds, target="ratio <= 10")
    row.met = "yes" if statistics.median(row.ratios()) <= 10 else "no"
    rows.append(report(row))
    row = Row("seed example: peak RSS of `agent run` (MiB)", "run", "", rss, [], unit="MiB",
              target="<= 42")
    row.met = "yes" if statistics.median(rss) <= 42 else "no"
    rows.append(report(row))
    return rows


if __name__ == "__main__":
    main()
