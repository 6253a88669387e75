"""`agent tools list` with and without MCP servers configured (median of N), run by hand.

    .venv/bin/python bench/tools_list_mcp.py [--repeat 5]

Two servers (the in-repo echo server) are configured; their tool lists are cached first
(`tools list --all`), so the measured command starts no server. Also times `agent run` with
an unused server configured against the same run without it (mock model, one reply).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "tools" / "fixtures" / "mcp_echo_server.py"


def once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + sys of the child) time in ms of one ``agent argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "agentcli", *argv], env=env,
                          capture_output=True, text=True, check=False)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"agent {' '.join(argv)} failed: {proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def main() -> None:
    """Print the timing table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    sys.path.insert(0, str(ROOT))
    from tests.support.mock_server import MockOpenAIServer

    with tempfile.TemporaryDirectory() as tmp, MockOpenAIServer() as mock:
        mock.set_responder(lambda body: {"text": "Final Answer: ok"})
        env = {**os.environ, "XDG_DATA_HOME": tmp, "XDG_CONFIG_HOME": tmp,
               "OPENAI_BASE_URL": mock.base_url, "OPENAI_API_KEY": "x",
               "AGENT_DB": str(Path(tmp) / "a.db")}
        plain = Path(tmp) / "plain.yaml"
        plain.write_text("{}\n")
        mcp = Path(tmp) / "mcp.yaml"
        conf = {"command": sys.executable, "args": [str(SERVER)]}
        mcp.write_text(json.dumps({"mcp_servers": {"ev": conf, "ev2": conf}}))
        once(["tools", "list", "-c", str(mcp), "--all"], env)  # fill the cache
        rows = [
            ("tools list, no MCP servers", ["tools", "list", "-c", str(plain)]),
            ("tools list, 2 MCP servers (cached)", ["tools", "list", "-c", str(mcp)]),
            ("run -t current_datetime, no MCP", ["run", "q", "-m", "openai/x", "-c",
                                                 str(plain), "-t", "current_datetime"]),
            ("run -t current_datetime, 2 unused MCP", ["run", "q", "-m", "openai/x", "-c",
                                                       str(mcp), "-t", "current_datetime"]),
            ("run -t ev.echo (starts 1 server)", ["run", "q", "-m", "openai/x", "-c",
                                                  str(mcp), "-t", "ev.echo"]),
        ]
        samples: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in rows}
        for _ in range(repeat):  # interleaved, so load on the machine hits every row alike
            for label, argv in rows:
                samples[label].append(once(argv, env))
        print(f"{'command':42} {'wall ms':>8} {'cpu ms':>8}  (median of {repeat})")
        for label, _ in rows:
            wall = statistics.median(w for w, _c in samples[label])
            cpu = statistics.median(c for _w, c in samples[label])
            print(f"{label:42} {wall:8.0f} {cpu:8.0f}")


if __name__ == "__main__":
    main()
