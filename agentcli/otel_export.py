"""Where the CLI's OpenTelemetry spans go: OTLP over HTTP, set up from the standard variables.

``OTEL_SDK_DISABLED=true`` switches export off; otherwise the ``otel`` setting
(``--otel``, ``AGENT_OTEL``, ``otel:``) decides, and when it is unset, export is on as soon as
``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``..._TRACES_ENDPOINT``) is set. ``OTEL_SERVICE_NAME``
names the service (default ``agentcli``); ``OTEL_EXPORTER_OTLP_PROTOCOL`` must be
``http/protobuf`` (the one protocol the ``otel`` extra installs).

The provider is also made OpenTelemetry's global one for the command's process (when none
was set), so that libraries' own spans (the MCP SDK's) are exported with ours and nest under
the tool call that made them. Nothing here is imported unless export is on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentcli.errors import ConfigError

INSTALL_HINT = "pip install 'agentcli[otel]'"
_DEFAULT_ENDPOINT = "http://localhost:4318"
_TIMEOUT_S = 3.0  # per export (the standard's default is 10 s: too long to wait at exit)


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def otel_wanted(setting: bool | None, env: Mapping[str, str]) -> bool:
    """Whether this command exports spans (the setting, else the standard variables)."""
    if _true(env.get("OTEL_SDK_DISABLED")):
        return False
    if setting is not None:
        return setting
    return bool(env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
                or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def traces_endpoint(env: Mapping[str, str]) -> str:
    """The OTLP/HTTP traces URL the standard variables name."""
    full = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    if full:
        return full
    return (env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or _DEFAULT_ENDPOINT).rstrip("/") + "/v1/traces"


class OtelExport:
    """A tracer provider exporting over OTLP/HTTP; :meth:`close` flushes it."""

    def __init__(self, env: Mapping[str, str],
                 request_options: Mapping[str, Any] | None = None) -> None:
        protocol = (env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
                    or env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf").strip()
        if protocol != "http/protobuf":
            raise ConfigError(f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol} is not supported; "
                              "use http/protobuf (OTLP over HTTP, port 4318)")
        try:
            from opentelemetry import trace
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
        except ImportError:
            raise ConfigError(
                f"OpenTelemetry export needs the optional packages: {INSTALL_HINT} "
                "(or unset OTEL_EXPORTER_OTLP_ENDPOINT / drop --otel)") from None
        from agentcli.callbacks.otel import OtelHandler

        service = env.get("OTEL_SERVICE_NAME") or "agentcli"
        self.endpoint = traces_endpoint(env)
        self.provider: Any = TracerProvider(resource=Resource.create({"service.name": service}))
        self._exporter: Any = _Tally(OTLPSpanExporter(endpoint=self.endpoint,
                                                 timeout=_timeout(env)))
        self.provider.add_span_processor(BatchSpanProcessor(self._exporter))  # type: ignore[arg-type]
        if type(trace.get_tracer_provider()).__name__ == "ProxyTracerProvider":
            trace.set_tracer_provider(self.provider)  # libraries' spans go out with ours
        self.handler = OtelHandler(self.provider, env=env, request_options=request_options)

    def close(self) -> str | None:
        """Send every span still queued, then stop; a warning line when some were lost."""
        self.provider.shutdown()
        if self._exporter.failed:
            return (f"warning: {self._exporter.failed} OpenTelemetry span batch(es) could not "
                    f"be sent to {self.endpoint} (is the collector running?)")
        return None


def _timeout(env: Mapping[str, str]) -> float:
    raw = env.get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") or env.get("OTEL_EXPORTER_OTLP_TIMEOUT")
    try:
        return float(raw) / 1000 if raw else _TIMEOUT_S  # the variables are milliseconds
    except ValueError:
        raise ConfigError(f"OTEL_EXPORTER_OTLP_TIMEOUT={raw} is not a number of "
                          "milliseconds") from None


class _Tally:
    """The exporter, counting the batches it failed to send (the SDK only logs them)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.failed = 0

    def export(self, spans: Any) -> Any:
        result = self._inner.export(spans)
        if getattr(result, "name", "") != "SUCCESS":
            self.failed += 1
        return result

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return bool(self._inner.force_flush(timeout_millis))
