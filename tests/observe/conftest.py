"""The real OTLP/HTTP receiver the OpenTelemetry tests export to."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture
def receiver() -> Iterator[object]:
    """An :class:`~tests.observe.otlp_receiver.OtlpReceiver` on 127.0.0.1, started."""
    pytest.importorskip("opentelemetry.proto")
    from tests.observe.otlp_receiver import OtlpReceiver

    server = OtlpReceiver()
    server.start()
    try:
        yield server
    finally:
        server.stop()
