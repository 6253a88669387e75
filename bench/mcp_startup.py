"""MCP start-up cost, run by hand: `agent tools list` and `agent run` with two MCP servers
configured (tool lists cached, servers unused) against the same commands with none.

    .venv/bin/python bench/mcp_startup.py [--repeat 5]

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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
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
        for label, args in commands.items():
            samples: dict[str, list[float]] = {"none": [], "two MCP servers": []}
            for _ in range(repeat):  # interleaved so drift hits both sides alike
                for side, cfg in (("none", without), ("two MCP servers", with_mcp)):
                    if args[0] == "run":
                        mock.add_reply('Action:\n```\n{"action": "Calculator", '
                                       '"action_input": "2+2"}\n```\n')
                        mock.add_reply("Final Answer: 4")
                    samples[side].append(timed([*args, "-c", str(cfg)], env))
            rows.append((label, *(statistics.median(samples[s]) for s in samples)))
        started = []  # both servers start (side by side since Core v4; one after the other before)
        for _ in range(repeat):
            mock.add_reply("Final Answer: 4")
            started.append(timed(["run", "2+2", "-m", "openai/any", "-q", "-c", str(with_mcp),
                                  "--tools", "ev.echo,fs.list_allowed_directories",
                                  "--allow-dangerous-tools"], env))
    print(f"median of {repeat}, ms        none   two MCP servers (cached, unused)")
    for label, none, two in rows:
        print(f"{label:<22} {none:7.0f}   {two:7.0f}   ({two - none:+.0f})")
    print(f"{'run (both servers start)':<30}   {statistics.median(started):7.0f}")


if __name__ == "__main__":
    main()
