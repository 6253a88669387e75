"""MCP start-up cost, run by hand: `agent tools list` and `agent run` with two MCP servers
configured (tool lists cached, servers unused) against the same commands with none; then
`agent run` with both servers started (their tools used): the time to its answer on stdout
and to its exit (the servers closed), optionally interleaved with other checkouts of agentcli
(run from DIR), e.g. ``--against old=/tmp/old`` after ``git worktree add /tmp/old
ec322f5``.

    .venv/bin/python bench/mcp_startup.py [--repeat 5] [--against LABEL=DIR ...] [--only-started]

Needs node and the npm servers in $AGENTCLI_NPM_CACHE (default ~/.cache/agentcli-npm).
Prints medians in milliseconds. Nothing here is asserted: speed targets live in bench/.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: tests.support
from tests.support.mock_server import MockOpenAIServer

NPM = Path(os.environ.get("AGENTCLI_NPM_CACHE") or Path.home() / ".cache" / "agentcli-npm")
MODULES = NPM / "node_modules" / "@modelcontextprotocol"


def timed(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "agentcli", *args], capture_output=True,
                          text=True, env=env, stdin=subprocess.DEVNULL)
    elapsed = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {proc.stderr.strip()}")
    return elapsed


def answer_and_exit(args: list[str], env: dict[str, str], checkout: str) -> tuple[float, float]:
    """Milliseconds until the first line on stdout (the answer) and until the process exits,
    running the agentcli of ``checkout`` (``-m`` puts the working directory first on the path,
    before PYTHONPATH and the editable install)."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "agentcli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                            env={**env, "PYTHONPATH": checkout}, cwd=checkout)
    assert proc.stdout is not None
    proc.stdout.readline()
    answered = (time.perf_counter() - start) * 1000
    _, err = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {err.strip()}")
    return answered, (time.perf_counter() - start) * 1000


def spread(samples: list[float]) -> str:
    return (f"{statistics.median(samples):7.0f} ({min(samples):.0f}-{max(samples):.0f})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--against", action="append", default=[], metavar="LABEL=DIR",
                        help="also run the both-servers row with this checkout")
    parser.add_argument("--only-started", action="store_true",
                        help="only the row where both servers start")
    opts = parser.parse_args()
    repeat = opts.repeat
    here = str(Path(__file__).resolve().parents[1])
    sides = {"this": here, **dict(a.split("=", 1) for a in opts.against)}
    work = Path(tempfile.mkdtemp(prefix="mcp-bench-"))
    env = {**os.environ, "XDG_DATA_HOME": str(work / "data"), "OPENAI_API_KEY": "sk-bench"}
    servers = {
        "ev": {"command": "node", "args": [str(MODULES / "server-everything/dist/index.js"),
                                           "stdio"]},
        "fs": {"command": "node", "args": [str(MODULES / "server-filesystem/dist/index.js"),
                                           str(work)]},
    }
    with_mcp, without = work / "mcp.yaml", work / "none.yaml"
    with_mcp.write_text(json.dumps({"mcp_servers": servers}))
    without.write_text("{}\n")
    for name in servers:  # fill the tool-list cache once, as the first `tools list` would
        timed(["mcp", "tools", name, "--refresh", "-c", str(with_mcp)], env)
    rows = []
    with MockOpenAIServer() as mock:
        env["OPENAI_BASE_URL"] = mock.base_url
        commands = {
            "tools list": ["tools", "list"],
            "run (llm-math)": ["run", "2+2", "-m", "openai/any", "-q"],
        }
        for label, args in ({} if opts.only_started else commands).items():
            samples: dict[str, list[float]] = {"none": [], "two MCP servers": []}
            for _ in range(repeat):  # interleaved so drift hits both sides alike
                for side, cfg in (("none", without), ("two MCP servers", with_mcp)):
                    if args[0] == "run":
                        mock.add_reply('Action:\n```\n{"action": "Calculator", '
                                       '"action_input": "2+2"}\n```\n')
                        mock.add_reply("Final Answer: 4")
                    samples[side].append(timed([*args, "-c", str(cfg)], env))
            rows.append((label, *(statistics.median(samples[s]) for s in samples)))
        # Both servers start (side by side since Core v4; one after the other before) to
        # offer their tools; the model answers at once. The sides take turns going first.
        started: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
        run = ["run", "2+2", "-m", "openai/any", "-q", "-c", str(with_mcp),
               "--tools", "ev.echo,fs.list_allowed_directories", "--allow-dangerous-tools"]
        for i in range(repeat):
            order = list(sides.items())
            for side, path in order[i % len(order):] + order[:i % len(order)]:
                mock.add_reply("Final Answer: 4")
                started[side].append(answer_and_exit(run, env, path))
    if rows:
        print(f"median of {repeat}, ms        none   two MCP servers (cached, unused)")
    for label, none, two in rows:
        print(f"{label:<22} {none:7.0f}   {two:7.0f}   ({two - none:+.0f})")
    print(f"run, both servers start: median (min-max) of {repeat}, ms")
    print(f"{'side':<10} {'to answer':>20} {'to exit':>20} {'exit - answer':>20}")
    for side, pairs in started.items():
        answered, exited = [a for a, _ in pairs], [e for _, e in pairs]
        print(f"{side:<10} {spread(answered):>20} {spread(exited):>20} "
              f"{spread([e - a for a, e in pairs]):>20}")

if __name__ == "__main__":
    main()
