"""Where the CLI's OpenTelemetry spans and metrics go, set up from the standard variables.

``OTEL_SDK_DISABLED=true`` and ``OTEL_TRACES_EXPORTER=none`` switch export off; otherwise the
``otel`` setting (``--otel``, ``AGENT_OTEL``, ``otel:``) decides, and when it is unset, export
is on as soon as a tracer provider is installed (``opentelemetry-instrument``), an endpoint
(``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``..._TRACES_ENDPOINT``) or ``OTEL_TRACES_EXPORTER`` is set.

A tracer provider already installed as OpenTelemetry's global one (the zero-code wrapper's)
is used as it is: one provider, one trace, its exporters; its owner flushes it. Only when none
is installed does this module build one: ``OTEL_TRACES_EXPORTER`` (``otlp``, ``console`` on
stderr, comma-separated) over ``OTEL_EXPORTER_OTLP[_TRACES]_PROTOCOL`` (``http/protobuf``, or
``grpc`` when its exporter package is installed), made global for the command so libraries'
spans (the MCP SDK's) nest under ours. Nothing here is imported unless export is on.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Mapping
from typing import Any

from agentcli.errors import ConfigError

INSTALL_HINT = "pip install 'agentcli[otel]'"
_MISSING = (f"OpenTelemetry export needs the optional packages: {INSTALL_HINT} "
            "(or unset OTEL_EXPORTER_OTLP_ENDPOINT / drop --otel)")
_GRPC_PACKAGE = "opentelemetry-exporter-otlp-proto-grpc"
_EXPORTERS = ("otlp", "console", "none")
_DEFAULT_ENDPOINT = {"http/protobuf": "http://localhost:4318", "grpc": "http://localhost:4317"}
# Per export, retries included (the standard's default is 10 s). Under the exporter's first
# retry back-off (0.8-1.2 s), so a collector that refuses the connection costs one attempt,
# not seconds, while one on this machine or network has time to answer.
_TIMEOUT_S = 0.5
_GRACE_S = 0.5  # close() waits at most the timeout per signal plus this, whatever the SDK


def _names(env: Mapping[str, str], var: str = "OTEL_TRACES_EXPORTER") -> list[str]:
    """The exporters a ``OTEL_*_EXPORTER`` variable names (empty when unset)."""
    return [n.strip().lower() for n in (env.get(var) or "").split(",") if n.strip()]


def installed_provider() -> Any:
    """The global tracer provider someone else installed (``opentelemetry-instrument``), or
    None; asks OpenTelemetry only when something already imported it."""
    api = sys.modules.get("opentelemetry.trace")
    if api is None:
        return None
    provider = api.get_tracer_provider()
    if isinstance(provider, api.ProxyTracerProvider | api.NoOpTracerProvider) or \
            getattr(provider, "_agentcli_built", False):  # an earlier command's, in-process
        return None
    return provider


def otel_wanted(setting: bool | None, env: Mapping[str, str]) -> bool:
    """Whether this command exports spans (the setting, else the standard variables)."""
    names = _names(env)
    disabled = (env.get("OTEL_SDK_DISABLED") or "").strip().lower() in ("1", "true", "yes", "on")
    if disabled or (names and set(names) == {"none"}):
        return False
    if setting is not None:
        return setting
    return bool(env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or names
                or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
                or installed_provider() is not None)


def _protocol(env: Mapping[str, str]) -> str:
    protocol = (env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
                or env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf").strip()
    if protocol not in _DEFAULT_ENDPOINT:
        raise ConfigError(f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol} is not supported; "
                          "use http/protobuf (port 4318) or grpc (port 4317)")
    return protocol


def signal_endpoint(env: Mapping[str, str], signal: str = "traces") -> str:
    """The OTLP URL the standard variables name for ``signal`` (traces or metrics)."""
    protocol = _protocol(env)
    full = env.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT")
    if full:
        return full
    base = (env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or _DEFAULT_ENDPOINT[protocol]).rstrip("/")
    return base if protocol == "grpc" else f"{base}/v1/{signal}"


class OtelExport:
    """The tracer (and meter) provider this command reports to; :meth:`close` flushes ours."""

    def __init__(self, env: Mapping[str, str]) -> None:
        try:
            from opentelemetry import metrics, trace
        except ImportError:
            raise ConfigError(_MISSING) from None
        self._env = env
        self._tally: _Tally | None = None
        self._owned: list[Any] = []  # the providers built here, shut down by close()
        self._handlers: list[Any] = []
        self.endpoint = ""
        self.provider: Any = installed_provider()
        self.meter_provider: Any = metrics.get_meter_provider()
        if self.provider is None:
            self.provider = self._build(env)
            if type(trace.get_tracer_provider()).__name__ == "ProxyTracerProvider":
                trace.set_tracer_provider(self.provider)  # libraries' spans go out with ours
        self.handler = self.new_handler()

    def new_handler(self, agent_name: str = "agentcli") -> Any:
        """An :class:`~agentcli.callbacks.otel.OtelHandler` reporting to these providers."""
        from agentcli.callbacks.otel import OtelHandler

        handler = OtelHandler(self.provider, meter_provider=self.meter_provider, env=self._env,
                              agent_name=agent_name)
        self._handlers.append(handler)
        return handler

    def _build(self, env: Mapping[str, str]) -> Any:
        try:
            from opentelemetry.sdk.metrics import MeterProvider
            from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
        except ImportError:
            raise ConfigError(_MISSING) from None
        names = [n for n in _names(env) or ["otlp"] if n != "none"]
        unknown = sorted(set(names) - set(_EXPORTERS))
        if unknown:
            raise ConfigError(f"OTEL_TRACES_EXPORTER={','.join(unknown)} is not supported; "
                              "use otlp, console or none (comma-separated)")
        metric_names = [n for n in _names(env, "OTEL_METRICS_EXPORTER") or names
                        if n in _EXPORTERS and n != "none"]
        self._timeout = _timeout(env)
        resource = Resource.create({"service.name": env.get("OTEL_SERVICE_NAME") or "agentcli"})
        self.provider = TracerProvider(resource=resource, shutdown_on_exit=False)
        self.provider._agentcli_built = True
        for name in names:
            exporter = _exporter("traces", name, env, self._timeout)
            if name == "otlp":
                self.endpoint = signal_endpoint(env)
                exporter = self._tally = _Tally(exporter)
            self.provider.add_span_processor(BatchSpanProcessor(exporter))
        readers = [PeriodicExportingMetricReader(_exporter("metrics", n, env, self._timeout))
                   for n in metric_names]
        self.meter_provider = MeterProvider(resource=resource, metric_readers=readers,
                                            shutdown_on_exit=False)
        self._owned = [self.provider, self.meter_provider]
        return self.provider

    def close(self) -> str | None:
        """Send what is still queued, waiting a bounded time (a dead collector costs one
        refused connection, not the exit); a warning line when some spans were lost."""
        for handler in self._handlers:
            handler.end_unused()
        if not self._owned:
            return None  # an installed provider is flushed by its owner, at exit
        done = threading.Thread(target=self._shutdown, name="agentcli-otel-close", daemon=True)
        done.start()
        done.join(len(self._owned) * self._timeout + _GRACE_S)
        if self._tally is not None and (self._tally.failed or done.is_alive()):
            return (f"warning: OpenTelemetry spans could not be sent to {self.endpoint} "
                    "(is the collector running? OTEL_EXPORTER_OTLP_TIMEOUT gives it longer)")
        return None

    def _shutdown(self) -> None:
        for provider in self._owned:
            provider.shutdown()


# (the console exporter, the OTLP one over http/protobuf, over grpc) per signal
_EXPORTER_CLASSES = {
    "traces": ("opentelemetry.sdk.trace.export.ConsoleSpanExporter",
               "opentelemetry.exporter.otlp.proto.http.trace_exporter.OTLPSpanExporter",
               "opentelemetry.exporter.otlp.proto.grpc.trace_exporter.OTLPSpanExporter"),
    "metrics": ("opentelemetry.sdk.metrics.export.ConsoleMetricExporter",
                "opentelemetry.exporter.otlp.proto.http.metric_exporter.OTLPMetricExporter",
                "opentelemetry.exporter.otlp.proto.grpc.metric_exporter.OTLPMetricExporter"),
}


def _exporter(signal: str, name: str, env: Mapping[str, str], timeout: float) -> Any:
    """The ``name`` exporter (console or otlp) of ``signal`` (traces or metrics)."""
    console, http, grpc = _EXPORTER_CLASSES[signal]
    path = console if name == "console" else grpc if _protocol(env) == "grpc" else http
    module, _, cls = path.rpartition(".")
    try:
        exporter = getattr(importlib.import_module(module), cls)
    except ImportError:
        if path != grpc:
            raise
        raise ConfigError(
            f"OTEL_EXPORTER_OTLP_PROTOCOL=grpc needs {_GRPC_PACKAGE}: pip install "
            f"{_GRPC_PACKAGE} (or set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf)") from None
    if name == "console":  # stderr: stdout is the answer's
        return exporter(out=sys.stderr)
    return exporter(endpoint=signal_endpoint(env, signal), timeout=timeout)


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

    def __getattr__(self, name: str) -> Any:  # shutdown, force_flush: the exporter's own
        return getattr(self._inner, name)

    def export(self, spans: Any) -> Any:
        result = self._inner.export(spans)
        if getattr(result, "name", "") != "SUCCESS":
            self.failed += 1
        return result
