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
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "tools" / "fixtures" / "mcp_echo_server.py"


def timed(argv: list[str], env: dict[str, str], repeat: int) -> float:
    """Median wall time in ms of ``agent argv``."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "agentcli", *argv], env=env,
                              capture_output=True, text=True, check=False)
        times.append((time.perf_counter() - start) * 1000)
        if proc.returncode != 0:
            raise SystemExit(f"agent {' '.join(argv)} failed: {proc.stderr}")
    return statistics.median(times)


def main() -> None:
    """Print the timing table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    sys.path.insert(0, str(ROOT))
    from agentcli.testing.mock_server import MockOpenAIServer

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
        timed(["tools", "list", "-c", str(mcp), "--all"], env, 1)  # fill the cache
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
        print(f"{'command':42} median of {repeat} (ms)")
        for label, argv in rows:
            print(f"{label:42} {timed(argv, env, repeat):8.0f}")


if __name__ == "__main__":
    main()
