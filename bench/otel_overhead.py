"""OpenTelemetry export overhead per model request, run by hand.

    .venv/bin/python bench/otel_overhead.py [--steps 100] [--pairs 7]

In-process: the same scripted run (``--steps`` tool calls, one model request before each and
one for the answer) without and with :class:`agentcli.callbacks.otel.OtelHandler` on the real
SDK (``BatchSpanProcessor`` + ``OTLPSpanExporter`` posting to an OTLP/HTTP sink on
127.0.0.1), in interleaved pairs (A first in even pairs). Each model request also carries one
tool span, so the figure is per step of the loop. "Off" is also checked the way the CLI does
it: a piped ``agent run`` without ``--otel`` imports no ``opentelemetry`` module.
Nothing here is asserted; the target (issue 21) is <= 1 ms per model request.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentcli import tool
from agentcli.create import initialize_agent
from agentcli.models.fake import FakeChatModel


@tool
def echo(text: str) -> str:
    """Echo the text."""
    return text


class _Sink(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def _replies(steps: int) -> list[str]:
    action = 'Thought: echo\nAction:\n```\n{{"action": "echo", "action_input": "{}"}}\n```\n'
    return [action.format(i) for i in range(steps)] + ["Final Answer: done"]


def one_run(steps: int, handlers: list[Any]) -> float:
    llm = FakeChatModel(_replies(steps))
    ex = initialize_agent([echo], llm, max_iterations=steps + 5, callbacks=handlers)
    start = time.perf_counter()
    assert ex.invoke({"input": "go"})["output"] == "done"
    return time.perf_counter() - start


def off_imports() -> int:
    """How many opentelemetry modules a piped `agent run` without --otel imports."""
    probe = ("import atexit, runpy, sys\nsys.argv = ['agent', 'run', 'q', '-q']\n"
             "atexit.register(lambda: print(sum(m.startswith('opentelemetry') "
             "for m in sys.modules)))\nrunpy.run_module('agentcli', run_name='__main__')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env=env, stdin=subprocess.DEVNULL)
    return int(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--pairs", type=int, default=7)
    args = parser.parse_args()

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from agentcli.callbacks.otel import OtelHandler

    sink = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(
        endpoint=f"http://127.0.0.1:{sink.server_address[1]}/v1/traces")))
    handler = OtelHandler(provider, env={})
    one_run(5, []), one_run(5, [handler])  # warm both paths
    off: list[float] = []
    on: list[float] = []
    for pair in range(args.pairs):
        order = [(off, []), (on, [handler])] if pair % 2 == 0 else [(on, [handler]), (off, [])]
        for sink_list, handlers in order:
            sink_list.append(one_run(args.steps, handlers))
    provider.shutdown()
    sink.shutdown()
    requests = args.steps + 1
    deltas = sorted((b - a) / requests * 1e6 for a, b in zip(off, on, strict=True))
    print(f"otel overhead, {args.steps} steps ({requests} model requests + {args.steps} tool "
          f"calls per run), {args.pairs} interleaved pairs, load {os.getloadavg()[0]:.2f}")
    print(f"  off: median {statistics.median(off) / requests * 1e6:7.1f} us per model request")
    print(f"  on:  median {statistics.median(on) / requests * 1e6:7.1f} us per model request")
    print(f"  overhead per model request (with its tool span): median "
          f"{statistics.median(deltas):.1f} us, min {deltas[0]:.1f} us (target <= 1000 us)")
    print(f"  off in the CLI: opentelemetry modules imported by `agent run`: {off_imports()}")


if __name__ == "__main__":
    main()
