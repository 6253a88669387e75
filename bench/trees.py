"""Checkouts side by side: the agentcli rows of ``run.py`` (cold, seed, steps, chat), old vs new.

Run by hand, never in CI::

    git worktree add /tmp/old ec322f5
    python3 -m venv /tmp/old/.venv && /tmp/old/.venv/bin/pip install -q -e '/tmp/old[dev]'
    .venv/bin/python bench/trees.py --tree old=/tmp/old --tree new=. [--pairs 7] [--only cold]

Each checkout runs with its own venv (``TREE/.venv/bin/python``) and its own working directory
(``python -m agentcli`` puts the working directory first on sys.path: run from the wrong one,
the old interpreter imports the new package), and its own ``bench/ours_side.py``. Every round
runs every checkout once, the one that goes first rotating (``run.interleave``); one model
server (``bench/server.py``) serves all. Naming the same checkout twice (``--tree new=.
--tree new2=.``) gives an A/A row: the noise of the machine at that moment.

For each row: each side's median and range, then per round the ratio of each side to the
first, median and range. A row got worse beyond its noise when the whole range of the ratios
sits above 1 and the median is further from 1 than the A/A row's.
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
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import SEED, Server, interleave, side, timed_child  # noqa: E402

FLOOR = "floor"  # the bare httpx client of bench/floor.py, a side of its own in chat_floor


class Tree:
    """One checkout: its label, directory and venv interpreter."""

    def __init__(self, spec: str) -> None:
        self.name, _, path = spec.partition("=")
        self.root = Path(path or self.name).resolve()
        self.python = str(self.root / ".venv" / "bin" / "python")
        if not Path(self.python).exists():
            raise SystemExit(f"no venv at {self.python}")

    @classmethod
    def named(cls, name: str) -> Tree:
        """A label only (the floor's column in :func:`row`)."""
        tree = cls.__new__(cls)
        tree.name, tree.root, tree.python = name, Path(name), ""
        return tree

    def agent(self, *args: str) -> list[str]:
        """``python -m agentcli ARGS`` with this checkout's interpreter."""
        return [self.python, "-m", "agentcli", *args]


def row(title: str, unit: str, trees: list[Tree], values: list[list[float]]) -> str:
    """One line: medians and ranges per side, then each side / the first, per round."""
    cells = [title]
    for tree, vals in zip(trees, values, strict=True):
        cells.append(f"{tree.name} {_f(statistics.median(vals))} "
                     f"({_f(min(vals))}-{_f(max(vals))}) {unit}")
    for tree, vals in zip(trees[1:], values[1:], strict=True):
        r = [b / a for a, b in zip(values[0], vals, strict=True) if a]
        cells.append(f"{tree.name}/{trees[0].name} {statistics.median(r):.3f} "
                     f"({min(r):.2f}-{max(r):.2f})")
    for i, tree in enumerate(trees):  # A/A: the same checkout named twice
        for j in range(i):
            if trees[j].root == tree.root:
                r = [b / a for a, b in zip(values[j], values[i], strict=True) if a]
                cells.append(f"A/A {tree.name}/{trees[j].name} {statistics.median(r):.3f} "
                             f"({min(r):.2f}-{max(r):.2f})")
    cells.append(f"load {os.getloadavg()[0]:.1f}")
    line = " | ".join(cells)
    print(line, flush=True)
    return line


def _f(v: float) -> str:
    return f"{v:.3g}" if v < 100 else f"{v:.0f}"


def cold(n: int, trees: list[Tree], env: dict[str, str], server: Server) -> list[str]:
    """`agent --help`, `agent tools list`, the seed `agent run` (wall and peak RSS)."""
    server.mode("seed")
    lines = []
    for title, args in (("cold `agent --help`", ("--help",)),
                        ("cold `agent tools list`", ("tools", "list"))):
        vals = interleave(n, [lambda t=t, a=args: timed_child(t.agent(*a), env, cwd=t.root)[0]
                              * 1e3 for t in trees])
        lines.append(row(title, "ms", trees, vals))
    rss: dict[str, list[float]] = {t.name: [] for t in trees}

    def seed(t: Tree) -> float:
        wall, peak = timed_child(t.agent(*SEED), env, cwd=t.root)
        rss[t.name].append(peak)
        return wall * 1e3

    vals = interleave(n, [lambda t=t: seed(t) for t in trees])
    lines.append(row("seed `agent run` wall", "ms", trees, vals))
    lines.append(row("seed `agent run` peak RSS", "MiB", trees, [rss[t.name] for t in trees]))
    return lines


def steps(n: int, trees: list[Tree], env: dict[str, str], server: Server) -> list[str]:
    """Per step over HTTP: the server-side gap between a reply and the next request, first and
    last 10 steps, and the client's CPU per step (``ours_side.py steps``)."""
    server.mode("step")
    lines = []
    for count in (10, 100, 1000):
        first: dict[str, list[float]] = {t.name: [] for t in trees}
        last: dict[str, list[float]] = {t.name: [] for t in trees}
        cpu: dict[str, list[float]] = {t.name: [] for t in trees}

        def run(t: Tree, count: int = count, first: dict[str, list[float]] = first,
                last: dict[str, list[float]] = last, cpu: dict[str, list[float]] = cpu
                ) -> float:
            server.reset()
            res = side(t.python, "ours_side.py", ["steps", server.base_url, str(count)], env,
                       bench=t.root / "bench")
            gaps = server.stats()["gaps"]
            first[t.name].append(statistics.median(gaps[:10]) * 1e6)
            last[t.name].append(statistics.median(gaps[-10:]) * 1e6)
            cpu[t.name].append(res["cpu_s"] / count * 1e6)
            return 0.0

        interleave(n, [lambda t=t, run=run: run(t) for t in trees])
        lines.append(row(f"per step, {count} steps: first 10", "us", trees,
                         [first[t.name] for t in trees]))
        if count >= 100:
            lines.append(row(f"per step, {count} steps: last 10", "us", trees,
                             [last[t.name] for t in trees]))
        lines.append(row(f"per step, {count} steps: client CPU", "us", trees,
                         [cpu[t.name] for t in trees]))
    return lines


def chat(n: int, trees: list[Tree], env: dict[str, str], server: Server, turns: int
         ) -> list[str]:
    """`agent chat` with ``turns`` questions piped in: the gap before turns 2-11 and before the
    last 10 turns (server side)."""
    questions = "".join(f"question {i}\n" for i in range(turns))
    server.mode("chat")
    early: dict[str, list[float]] = {t.name: [] for t in trees}
    late: dict[str, list[float]] = {t.name: [] for t in trees}

    def run(t: Tree) -> float:
        data = tempfile.mkdtemp()
        server.reset()
        timed_child(t.agent("chat", "-m", "openai/mock-model", "--session", "bench"),
                    {**env, "XDG_DATA_HOME": data, "HOME": data}, stdin=questions, cwd=t.root)
        gaps = server.stats()["gaps"]
        if len(gaps) < turns - 1:
            raise SystemExit(f"{t.name} chat made {len(gaps) + 1} requests, expected {turns}")
        early[t.name].append(statistics.median(gaps[:10]) * 1e3)
        late[t.name].append(statistics.median(gaps[-10:]) * 1e3)
        return 0.0

    interleave(n, [lambda t=t: run(t) for t in trees])
    return [row(f"chat per turn, turns 2-11 of {turns}", "ms", trees,
                [early[t.name] for t in trees]),
            row(f"chat per turn, turns {turns - 9}-{turns}", "ms", trees,
                [late[t.name] for t in trees])]


def chat_cpu(n: int, trees: list[Tree], env: dict[str, str], server: Server,
             turns: int = 200) -> list[str]:
    """CPU per chat turn, start-up taken out: (CPU of a ``turns + 20``-turn `agent chat` -
    CPU of a 20-turn one) / ``turns``, each the child's user + sys from ``wait4``: the row
    that still reads on a loaded machine, where the server-side gaps of :func:`chat` do not."""
    server.mode("chat")
    vals = interleave(n, [lambda t=t: (_chat_cpu_ms(t, env, server, turns + 20)
                                       - _chat_cpu_ms(t, env, server, 20)) / turns
                          for t in trees])
    return [row(f"chat CPU per turn (turns 21-{turns + 20}, start-up out)", "ms", trees, vals)]


def chat_floor(n: int, trees: list[Tree], env: dict[str, str], server: Server,
               turns: int = 200) -> list[str]:
    """Each checkout's `agent chat` beside the floor, in the same rounds: ``bench/floor.py``
    replaying the request bodies the first checkout's chat sent (one bare httpx client, the
    work no client can avoid). Per turn of a ``turns + 20``-question chat: the server-side gap
    before it (the median) and the client CPU (a chat's with start-up out, as in
    :func:`chat_cpu`; the floor's own count of its replay loop); each side / the floor, per
    round."""
    questions = "".join(f"question {i}\n" for i in range(turns + 20))
    server.control("/_mode", {"mode": "chat", "delay": 0.0, "record": True})
    server.reset()
    data = tempfile.mkdtemp()
    timed_child(trees[0].agent("chat", "-m", "openai/mock-model", "--session", "b"),
                {**env, "XDG_DATA_HOME": data, "HOME": data}, stdin=questions, cwd=trees[0].root)
    bodies = Path(tempfile.mkdtemp()) / "bodies.json"
    bodies.write_text(json.dumps(server.control("/_bodies")))
    server.control("/_mode", {"mode": "chat", "delay": 0.0, "record": False})
    names = [FLOOR, *(t.name for t in trees)]
    gaps: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}

    def gap() -> float:
        found = server.stats()["gaps"]
        if len(found) < turns + 19:
            raise SystemExit(f"{len(found) + 1} requests, expected {turns + 20}")
        return statistics.median(found) * 1e3

    def floor() -> float:
        server.reset()
        result = side(sys.executable, "floor.py", ["replay", server.base_url, str(bodies)], env)
        gaps[FLOOR].append(gap())
        cpu[FLOOR].append(result["cpu_s"] * 1e3 / (turns + 20))
        return 0.0

    def chat(t: Tree) -> float:
        short = _chat_cpu_ms(t, env, server, 20)
        whole = _chat_cpu_ms(t, env, server, turns + 20)  # its gaps are the ones kept
        gaps[t.name].append(gap())
        cpu[t.name].append((whole - short) / turns)
        return 0.0

    interleave(n, [floor, *(lambda t=t: chat(t) for t in trees)])
    lines = []
    for title, unit, values in ((f"chat per turn beside the floor, server-side gap ({turns + 20} "
                                 "turns)", "ms", gaps),
                                ("chat per turn beside the floor, client CPU", "ms", cpu)):
        lines.append(row(title, unit, [Tree.named(name) for name in names],
                         [values[name] for name in names]))
    return lines


def _chat_cpu_ms(t: Tree, env: dict[str, str], server: Server, count: int) -> float:
    """User + sys CPU of one `agent chat` answering ``count`` piped questions."""
    data = tempfile.mkdtemp()
    server.reset()
    proc = subprocess.Popen(t.agent("chat", "-m", "openai/mock-model", "--session", "b"),
                            cwd=t.root, env={**env, "XDG_DATA_HOME": data, "HOME": data},
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    assert proc.stdin is not None
    proc.stdin.write("".join(f"question {i}\n" for i in range(count)).encode())
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0 or server.stats()["requests"] < count:
        raise SystemExit(f"{t.name} chat failed ({status})")
    return (usage.ru_utime + usage.ru_stime) * 1e3


def logs(n: int, trees: list[Tree], env: dict[str, str], server: Server, runs: int = 100_000
         ) -> list[str]:
    """`agent logs` (latest 20, full-text search, ``--json``) on one log of ``runs`` runs, the
    same file read by every checkout (filled by ``regress.fill_log``; the layout is the same
    when their ``SCHEMA_VERSION`` is)."""
    from regress import fill_log

    data = Path(tempfile.mkdtemp())
    fill_log(data, runs)
    lines = []
    for title, args in (("`agent logs -n 20`", ("logs", "-n", "20")),
                        ("`agent logs -q hay -n 20`", ("logs", "-q", "hay", "-n", "20")),
                        ("`agent logs -q needle -n 20`", ("logs", "-q", "needle", "-n", "20")),
                        ("`agent logs --json -n 20`", ("logs", "--json", "-n", "20"))):
        vals = interleave(n, [lambda t=t, a=args: timed_child(
            t.agent(*a), {**env, "XDG_DATA_HOME": str(data)}, cwd=t.root)[0] * 1e3
            for t in trees])
        lines.append(row(f"{title}, {runs:,} runs", "ms", trees, vals))
    return lines


def script(n: int, trees: list[Tree], command: str) -> None:
    """Another bench script (``NAME.py ARGS``), each checkout's own copy run with its venv from
    its directory, in interleaved rounds; prints each run's output under its checkout's name."""
    name, *rest = command.split()

    def run(t: Tree) -> float:
        path = t.root / "bench" / name
        if not path.exists():
            print(f"## {t.name}: no bench/{name}", flush=True)
            return 0.0
        out = subprocess.run([t.python, str(path), *rest], cwd=t.root, capture_output=True,
                             text=True, check=False)
        print(f"## {t.name}: {command} (exit {out.returncode}, load "
              f"{os.getloadavg()[0]:.1f})\n{out.stdout}{out.stderr[-2000:]}", flush=True)
        return 0.0

    interleave(n, [lambda t=t: run(t) for t in trees])


SECTIONS: dict[str, Callable[..., list[str]]] = {"cold": cold, "steps": steps, "logs": logs,
                                                "chatcpu": chat_cpu, "chatfloor": chat_floor}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tree", action="append", required=True,
                        help="NAME=DIR, a checkout with its .venv; the first is the baseline")
    parser.add_argument("--pairs", type=int, default=7, help="rounds per row")
    parser.add_argument("--turns", type=int, default=200, help="turns in the chat session")
    parser.add_argument("--only", default="cold,steps,chat",
                        help="cold,steps,chat,chatcpu,chatfloor,logs ('' none)")
    parser.add_argument("--script", action="append", default=[],
                        help="'NAME.py ARGS': run bench/NAME.py of each checkout, --pairs rounds")
    args = parser.parse_args()
    trees = [Tree(spec) for spec in args.tree]
    for tree in {t.root for t in trees}:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "agentcli")],
                       check=True)
    server = Server()
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-bench",
           "NO_COLOR": "1", "OLLAMA_BASE_URL": "http://127.0.0.1:9/v1",
           "XDG_DATA_HOME": tempfile.mkdtemp()}
    for key in ("AGENT_CONFIG", "COLUMNS", "PYTHONDONTWRITEBYTECODE"):
        env.pop(key, None)
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} UTC, {os.cpu_count()} CPUs, load "
          f"{os.getloadavg()}, {args.pairs} rounds, trees "
          + ", ".join(f"{t.name}={t.root}" for t in trees), flush=True)
    try:
        for command in args.script:
            script(args.pairs, trees, command)
        for section in filter(None, args.only.split(",")):
            if section == "chat":
                chat(args.pairs, trees, env, server, args.turns)
            else:
                SECTIONS[section](args.pairs, trees, env, server)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
