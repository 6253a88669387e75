"""A real OTLP/HTTP receiver on 127.0.0.1: decodes each ExportTraceServiceRequest (and
ExportMetricsServiceRequest, on ``/v1/metrics``)."""

from __future__ import annotations

import gzip
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None


@dataclass
class ReceivedSpan:
    """One span as it arrived: ids, name, kind, attributes, status, its resource's service."""

    name: str
    span_id: str
    parent_id: str
    trace_id: str
    kind: int
    attributes: dict[str, Any]
    status_code: int
    service: str
    scope: str
    start: int
    resource: dict[str, Any] = field(default_factory=dict)
    children: list[ReceivedSpan] = field(default_factory=list)


@dataclass
class ReceivedPoint:
    """One histogram data point: its metric's name and unit, attributes, count and sum."""

    name: str
    unit: str
    attributes: dict[str, Any]
    count: int
    sum: float


class OtlpReceiver:
    """Collects the spans POSTed to ``/v1/traces``."""

    def __init__(self) -> None:
        self.spans: list[ReceivedSpan] = []
        self.points: list[ReceivedPoint] = []
        self.posts: list[str] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                receiver.posts.append(self.path)
                if self.path == "/v1/metrics":
                    receiver._take_metrics(ExportMetricsServiceRequest.FromString(body))
                    reply = ExportMetricsServiceResponse().SerializeToString()
                else:
                    receiver._take(ExportTraceServiceRequest.FromString(body))
                    reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._lock = threading.Lock()

    def _take(self, request: ExportTraceServiceRequest) -> None:
        with self._lock:
            for rs in request.resource_spans:
                res = {a.key: _value(a.value) for a in rs.resource.attributes}
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        self.spans.append(ReceivedSpan(
                            s.name, s.span_id.hex(), s.parent_span_id.hex(), s.trace_id.hex(),
                            s.kind, {a.key: _value(a.value) for a in s.attributes},
                            s.status.code, str(res.get("service.name")), ss.scope.name,
                            s.start_time_unix_nano, res))

    def _take_metrics(self, request: ExportMetricsServiceRequest) -> None:
        with self._lock:
            for rm in request.resource_metrics:
                for sm in rm.scope_metrics:
                    for m in sm.metrics:
                        for p in m.histogram.data_points:
                            self.points.append(ReceivedPoint(
                                m.name, m.unit, {a.key: _value(a.value) for a in p.attributes},
                                p.count, p.sum))

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def roots(self) -> list[ReceivedSpan]:
        """The span trees, children in start order as received."""
        by_id = {s.span_id: s for s in self.spans}
        ordered = sorted(self.spans, key=lambda s: s.start)
        for s in self.spans:
            s.children = []
        roots = []
        for s in ordered:
            parent = by_id.get(s.parent_id)
            (parent.children if parent is not None else roots).append(s)
        return roots


def draw(span: ReceivedSpan, depth: int = 0, keys: tuple[str, ...] = ()) -> list[str]:
    """The tree as indented lines: name [service] and chosen attributes."""
    shown = {k: span.attributes[k] for k in keys if k in span.attributes}
    line = "  " * depth + f"{span.name}  [{span.service}]" + (f" {shown}" if shown else "")
    out = [line]
    for child in span.children:
        out += draw(child, depth + 1, keys)
    return out
