#!/usr/bin/env python3
"""Writes an OTLP trace batch (opentelemetry.proto.trace.v1.TracesData) of N spans, made by
Python's protobuf from the .proto files in tests/data/otel (default 20,000 spans: about 9 MB).

    python3 scripts/gen/otlp.py 20000 /tmp/otlp.pb

Needs grpcio-tools (for protoc) and protobuf from PyPI. Deterministic for a given N.
"""
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data", "otel")


def trace_pb2():
    """The OpenTelemetry trace module, compiled from tests/data/otel by grpcio-tools' protoc."""
    gen = tempfile.mkdtemp()
    protos = [
        "opentelemetry/proto/common/v1/common.proto",
        "opentelemetry/proto/resource/v1/resource.proto",
        "opentelemetry/proto/trace/v1/trace.proto",
    ]
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{ROOT}", f"--python_out={gen}", *protos],
        check=True,
    )
    sys.path.insert(0, gen)
    from opentelemetry.proto.trace.v1 import trace_pb2 as module

    return module


def make(n, trace_pb2):
    """A TracesData of n spans (the same for the same n)."""
    rng = random.Random(20261202)
    services = ["checkout", "cart", "payments", "search", "auth"]
    routes = ["/api/orders", "/api/cart", "/api/pay", "/api/search", "/api/login"]
    batch = trace_pb2.TracesData()
    per_resource = max(1, n // len(services))
    made = 0
    t0 = 1_764_633_600_000_000_000
    for s, service in enumerate(services):
        rs = batch.resource_spans.add()
        for key, value in [("service.name", service), ("host.name", f"node-{s}"), ("telemetry.sdk.language", "python")]:
            kv = rs.resource.attributes.add()
            kv.key = key
            kv.value.string_value = value
        scope = rs.scope_spans.add()
        scope.scope.name = "opentelemetry.instrumentation.fastapi"
        scope.scope.version = "0.48b0"
        count = per_resource if s < len(services) - 1 else n - made
        for i in range(count):
            span = scope.spans.add()
            span.trace_id = rng.randbytes(16)
            span.span_id = rng.randbytes(8)
            if i % 4:
                span.parent_span_id = rng.randbytes(8)
            span.name = f"GET {rng.choice(routes)}"
            span.kind = rng.choice([1, 2, 3])
            start = t0 + made * 1_000_000 + rng.randrange(1_000_000)
            span.start_time_unix_nano = start
            span.end_time_unix_nano = start + rng.randrange(100_000, 90_000_000)
            for key, value in [
                ("http.method", "GET"),
                ("http.route", rng.choice(routes)),
                ("http.status_code", rng.choice([200, 200, 200, 404, 500])),
                ("net.peer.port", rng.randrange(1024, 65535)),
                ("http.user_agent", "python-requests/2.32.3"),
                ("http.url", f"https://{service}.internal:8443{rng.choice(routes)}?id={rng.randrange(10**9)}&page={rng.randrange(50)}"),
                ("net.peer.name", f"{rng.choice(services)}-{rng.randrange(100)}.svc.cluster.local"),
                ("code.function", rng.choice(["handle_request", "get_order", "charge_card", "lookup"])),
                ("thread.id", rng.randrange(1, 64)),
                ("db.statement", "SELECT id, total FROM orders WHERE user_id = $1"),
            ]:
                kv = span.attributes.add()
                kv.key = key
                if isinstance(value, int):
                    kv.value.int_value = value
                else:
                    kv.value.string_value = value
            if i % 10 == 0:
                ev = span.events.add()
                ev.time_unix_nano = start + 5_000
                ev.name = "exception"
                kv = ev.attributes.add()
                kv.key = "exception.message"
                kv.value.string_value = "upstream timed out"
            span.status.code = rng.choice([0, 1, 1, 2])
            made += 1
    return batch


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    out = sys.argv[2] if len(sys.argv) > 2 else "otlp.pb"
    open(out, "wb").write(make(n, trace_pb2()).SerializeToString())
