"""What a dead OpenTelemetry collector adds to `agent run`, run by hand.

    .venv/bin/python bench/otel_dead_collector.py [--pairs 7]

Child processes of the real command (stdout piped) against the mock model server, one
model request each, in interleaved rounds (the order rotates each round):

- ``off``: no export;
- ``live``: ``OTEL_EXPORTER_OTLP_ENDPOINT`` at an OTLP/HTTP sink on 127.0.0.1 answering 200;
- ``dead``: the endpoint is a closed loopback port (connections refused), default timeout;
- ``old``: dead, with ``OTEL_EXPORTER_OTLP_TIMEOUT=3000``, agentcli's former default (the
  exporter retries with back-off until it runs out: what issue 33 measured).

The figure is dead - live (the SDK's import and set-up are in both); target <= 100 ms.
Child-process walls are noisy on a shared machine, so the same arms are also timed
in-process where the cost lands: ``OtelExport.close()`` after one scripted run's spans
(in a child process, median of ``--pairs``). Nothing here is asserted.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: tests.support
from tests.support.mock_server import MockOpenAIServer


class _Sink(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run(env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "agentcli", "run", "q", "-m",
                           "openai/mock-model", "--no-log"], capture_output=True, text=True,
                          env=env, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    if proc.returncode != 0 or proc.stdout.strip() != "ok":
        raise SystemExit(f"run failed ({proc.returncode}): {proc.stderr}")
    return wall


_CLOSE = """
import time
from agentcli.create import initialize_agent
from agentcli.models.fake import FakeChatModel
from agentcli.otel_export import OtelExport
import os
export = OtelExport(dict(os.environ))
ex = initialize_agent([], FakeChatModel(["Final Answer: ok"]), callbacks=[export.handler])
ex.invoke({"input": "q"})
start = time.perf_counter()
export.close()
print((time.perf_counter() - start) * 1000)
"""


def _close_ms(env: dict[str, str]) -> float:
    """One scripted run's spans through a fresh OtelExport (in a child: the global provider
    is set once per process); how long its close() takes."""
    proc = subprocess.run([sys.executable, "-c", _CLOSE], capture_output=True, text=True,
                          env=env, stdin=subprocess.DEVNULL, check=True)
    return float(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=7)
    args = parser.parse_args()
    mock = MockOpenAIServer().start()
    mock.set_responder(lambda body: {"text": "Final Answer: ok"})
    sink = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENT_"))}
    base |= {"OPENAI_BASE_URL": mock.base_url, "OPENAI_API_KEY": "sk-bench",
             "AGENT_DB": os.path.join(tempfile.mkdtemp(), "bench.db")}
    dead = f"http://127.0.0.1:{_closed_port()}"
    arms = {
        "off": base,
        "live": base | {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{sink.server_port}"},
        "dead": base | {"OTEL_EXPORTER_OTLP_ENDPOINT": dead},
        "old": base | {"OTEL_EXPORTER_OTLP_ENDPOINT": dead, "OTEL_EXPORTER_OTLP_TIMEOUT": "3000"},
    }
    walls: dict[str, list[float]] = {name: [] for name in arms}
    for env in arms.values():  # warm the bytecode cache and the page cache
        _run(env)
    names = list(arms)
    for round_ in range(args.pairs):
        for name in names[round_ % len(names):] + names[:round_ % len(names)]:
            walls[name].append(_run(arms[name]))
    closes: dict[str, list[float]] = {name: [] for name in names[1:]}
    for _ in range(args.pairs):
        for name in closes:
            closes[name].append(_close_ms(arms[name]))
    sink.shutdown()
    mock.stop()
    med = {name: statistics.median(w) * 1000 for name, w in walls.items()}
    print(f"dead collector, `agent run` (1 model request), {args.pairs} rounds, "
          f"load {os.getloadavg()[0]:.2f}")
    for name in names:
        print(f"  {name:5} median {med[name]:7.0f} ms   min {min(walls[name]) * 1000:7.0f} ms")
    deltas = sorted((d - lv) * 1000 for d, lv in zip(walls["dead"], walls["live"], strict=True))
    print(f"  dead - live: median {med['dead'] - med['live']:+.0f} ms (paired median "
          f"{statistics.median(deltas):+.0f} ms; target <= 100 ms); "
          f"old - live: {med['old'] - med['live']:+.0f} ms")
    print("  in-process OtelExport.close() after one run's spans: " + ", ".join(
        f"{name} {statistics.median(c):.1f} ms (max {max(c):.1f})" for name, c in closes.items()))


if __name__ == "__main__":
    main()
