#!/usr/bin/env python3
"""wirelens' timing harness for Python: times each library's encode and decode of the payload
files wirelens wrote, and streams raw samples back as JSON lines on standard output.

Run by `wirelens compare --runtime python` (the binary carries a copy of this file and writes it
to a temporary folder); it can be run by hand: `python3 harness.py JOB.json`, or
`python3 harness.py --probe` to list the runtime and which libraries are installed (runtime and
library lines, "ok" or "missing", then done: what the app's Profile > Runtimes window shows). The job names the
payload files per format (JSON, MessagePack, CBOR, with a descriptor set and a message name
Protobuf, and with the writer's schema (an .avsc) Avro) and the sampling settings. Each line out is one JSON object with a "type":

- runtime: {"runtime", "version", "implementation", "executable"}
- library: {"format", "library", "version", "status": "ok" | "missing" | "failed",
  "install" (missing), "message" (failed), "bytes", "sha256" (ok: the library's own encoding)}
- compressor: {"format", "codec": "gzip" | "zstd" | "brotli", "library", "version", "status",
  "install" (missing), "message", "bytes" (ok: the compressed size of the format's file)}; only
  when the job asks for "compressors" (the levels wirelens uses: gzip 6, zstd 3, brotli 6)
- samples: {"format", "library", "op": "encode" | "decode", "batch", "ns": [per-sample total],
  "cpu_ns", "calls": [single calls], "spread": [{"calls", "ns", "cpu_ns"} per worker]}; for a
  compressor, "library" is its codec and "op" is "compress" | "decompress". "spread" is there
  when the job's settings ask for "all_cores" workers: that many processes (forked, so each has
  its own copy of the value and the bytes) call the operation at once for span_ns from a shared
  start; Python threads would share one interpreter lock, so processes are what use every core.
- done: {}

Every library is checked before it is timed: it decodes the payload, encodes what it read, and
must read its own bytes back as the same data. The clock is time.perf_counter_ns (monotonic).
Uses only the standard library besides the libraries it times.
"""
import hashlib
import json
import platform
import sys
import time


def emit(obj):
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def version_of(module, dist):
    v = getattr(module, "__version__", None)
    if v is None and hasattr(module, "version") and isinstance(module.version, tuple):
        v = ".".join(map(str, module.version))
    if v is None:
        try:
            from importlib.metadata import version
            v = version(dist)
        except Exception:
            v = "unknown"
    return str(v)


class Stdlib:
    __version__ = f"stdlib (Python {platform.python_version()})"


def json_lib():
    # What Starlette's (FastAPI's) JSONResponse writes: compact, UTF-8, no NaN.
    return Stdlib, lambda b: json.loads(b), lambda o: json.dumps(
        o, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def orjson_lib():
    import orjson
    return orjson, orjson.loads, orjson.dumps


def ujson_lib():
    import ujson
    return ujson, ujson.loads, lambda o: ujson.dumps(o, ensure_ascii=False).encode("utf-8")


def msgpack_lib():
    import msgpack
    return msgpack, lambda b: msgpack.unpackb(b, raw=False, strict_map_key=False), msgpack.packb


def ormsgpack_lib():
    import ormsgpack
    return ormsgpack, ormsgpack.unpackb, ormsgpack.packb


def cbor2_lib():
    import cbor2
    return cbor2, cbor2.loads, cbor2.dumps


def shape_of(values, name):
    """The type every one of `values` (decoded JSON at one place in the payload) has: a
    TypedDict per object position (keys every object has are required, the others not), list[T]
    with T the shape of every element, and scalars; several kinds make a Union (smart mode keeps
    1 an int and 1.5 a float)."""
    from typing import Any, List, Optional, Union
    from typing_extensions import NotRequired, TypedDict
    dicts = [v for v in values if isinstance(v, dict)]
    lists = [v for v in values if isinstance(v, list)]
    types = []
    if dicts:
        keys = {}
        for d in dicts:
            for k in d:
                keys.setdefault(k, None)
        fields = {}
        for i, k in enumerate(keys):
            inner = shape_of([d[k] for d in dicts if k in d], f"{name}_{i}")
            fields[k] = inner if all(k in d for d in dicts) else NotRequired[inner]
        types.append(TypedDict(name, fields))
    if lists:
        items = [x for l in lists for x in l]
        types.append(List[shape_of(items, f"{name}_item")] if items else List[Any])
    for t in (str, bool, int, float):
        # bool before int: True is an int to isinstance.
        if any(type(v) is t for v in values):
            types.append(t)
    if not types:
        return Any if not values else type(None)
    shape = types[0] if len(types) == 1 else Union[tuple(types)]
    return Optional[shape] if any(v is None for v in values) else shape


def pydantic_lib(job):
    # pydantic v2 as a FastAPI response model would use it: a TypeAdapter over the payload's
    # shape, inferred from the JSON file, validating JSON bytes and dumping them.
    import pydantic
    with open(job["files"]["json"], "rb") as f:
        sample = json.loads(f.read())
    adapter = pydantic.TypeAdapter(shape_of([sample], "Payload"))
    return pydantic, adapter.validate_json, adapter.dump_json


def protobuf_lib(job):
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    import google.protobuf
    with open(job["descriptor_set"], "rb") as f:
        fds = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for file in fds.file:
        pool.Add(file)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(job["message"]))

    class Version:  # which backend: upb (the C one), cpp or python
        from google.protobuf.internal import api_implementation
        __version__ = f"{google.protobuf.__version__} ({api_implementation.Type()})"
    return Version, cls.FromString, lambda m: m.SerializeToString()


def gzip_codec(levels):
    import gzip
    import zlib
    level = levels.get("gzip", 6)

    class Version:
        __version__ = f"stdlib gzip (zlib {zlib.ZLIB_RUNTIME_VERSION})"
    return Version, lambda b: gzip.compress(b, compresslevel=level, mtime=0), gzip.decompress


def zstd_codec(levels):
    level = levels.get("zstd", 3)
    try:
        import zstandard
    except ImportError:
        # Python 3.14's standard library has zstd too.
        try:
            from compression import zstd

            class Version:
                __version__ = "stdlib compression.zstd"
            return (Version, lambda b: zstd.compress(b, level=level), zstd.decompress)
        except ImportError:
            pass
        raise
    c = zstandard.ZstdCompressor(level=level)
    d = zstandard.ZstdDecompressor()
    return zstandard, c.compress, d.decompress


def brotli_codec(levels):
    import brotli
    quality = levels.get("brotli", 6)
    window = levels.get("brotli_window", 22)
    return brotli, lambda b: brotli.compress(b, quality=quality, lgwin=window), brotli.decompress


def avro_schema_text(job):
    """The schema wirelens' Avro bytes were written with (the .avsc beside the payload)."""
    with open(job["avro_schema"], encoding="utf-8") as f:
        return f.read()


def fastavro_lib(job):
    # What a Kafka or data-pipeline service in Python uses: the parsed schema, and one datum
    # written and read without a container (schemaless_writer, schemaless_reader).
    import io
    import fastavro
    schema = fastavro.parse_schema(json.loads(avro_schema_text(job)))

    def decode(b):
        return fastavro.schemaless_reader(io.BytesIO(b), schema, None)

    def encode(o):
        out = io.BytesIO()
        fastavro.schemaless_writer(out, schema, o)
        return out.getvalue()
    return fastavro, decode, encode


def avro_lib(job):
    # The Apache project's own package: DatumWriter and DatumReader over a binary encoder and
    # decoder, one datum each.
    import io
    import avro
    import avro.io
    import avro.schema
    schema = avro.schema.parse(avro_schema_text(job))
    writer = avro.io.DatumWriter(schema)
    reader = avro.io.DatumReader(schema)

    def decode(b):
        return reader.read(avro.io.BinaryDecoder(io.BytesIO(b)))

    def encode(o):
        out = io.BytesIO()
        writer.write(o, avro.io.BinaryEncoder(out))
        return out.getvalue()
    return avro, decode, encode


# codec, library, distribution name (for `pip install`), loader
CODECS = [
    ("gzip", "gzip", None, gzip_codec),
    ("zstd", "zstandard", "zstandard", zstd_codec),
    ("brotli", "brotli", "brotli", brotli_codec),
]


def compressors(job, settings):
    """Each codec's compress and decompress of each format's file, checked first: the
    decompressed bytes are the file's."""
    levels = job.get("levels") or {}
    for codec, name, dist, load in CODECS:
        try:
            module, compress, decompress = load(levels)
        except ImportError as e:
            for fmt in job["files"]:
                emit({"type": "compressor", "format": fmt, "codec": codec, "library": name,
                      "status": "missing", "version": None, "install": f"pip install {dist}",
                      "message": str(e)})
            continue
        version = version_of(module, dist or name)
        for fmt, path in job["files"].items():
            row = {"type": "compressor", "format": fmt, "codec": codec, "library": name,
                   "version": version}
            with open(path, "rb") as f:
                payload = f.read()
            try:
                packed = compress(payload)
                if decompress(packed) != payload:
                    raise ValueError("decompressed bytes differ from the file")
            except Exception as e:
                emit({**row, "status": "failed", "message": f"{type(e).__name__}: {e}"})
                continue
            emit({**row, "status": "ok", "bytes": len(packed)})
            for op, fn, arg in (("compress", compress, payload), ("decompress", decompress, packed)):
                batch, samples, cpu, calls = measure(fn, arg, settings)
                emit({"type": "samples", "format": fmt, "library": codec, "op": op,
                      "batch": batch, "ns": samples, "cpu_ns": cpu, "calls": calls})


# format, library, distribution name (for `pip install`), module (what --probe imports), loader
LIBRARIES = [
    ("json", "json", None, "json", json_lib),
    ("json", "orjson", "orjson", "orjson", orjson_lib),
    ("json", "ujson", "ujson", "ujson", ujson_lib),
    ("json", "pydantic", "pydantic", "pydantic", pydantic_lib),
    ("msgpack", "msgpack", "msgpack", "msgpack", msgpack_lib),
    ("msgpack", "ormsgpack", "ormsgpack", "ormsgpack", ormsgpack_lib),
    ("cbor", "cbor2", "cbor2", "cbor2", cbor2_lib),
    ("protobuf", "protobuf", "protobuf", "google.protobuf", protobuf_lib),
    ("avro", "fastavro", "fastavro", "fastavro", fastavro_lib),
    ("avro", "avro", "avro", "avro.io", avro_lib),
]
# Loaders that need the job (a descriptor set, an Avro schema, the JSON file).
NEEDS_JOB = {"protobuf", "pydantic", "fastavro", "avro"}


def same(a, b):
    """Equality that holds NaN equal to NaN (a lossless round trip of a NaN is not a change)."""
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return len(a) == len(b) and all(k in b and same(v, b[k]) for k, v in a.items())
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def measure(fn, arg, settings):
    """Warm-up, a batch size so one sample lasts sample_ns, then the samples (totals in ns), the
    thread's CPU time over them (time.thread_time_ns) and single calls timed for latency_ns."""
    clock = time.perf_counter_ns
    warm_until = clock() + settings["warm_up_ns"]
    while True:
        fn(arg)
        if clock() >= warm_until:
            break
    # The batch doubles until one batch lasts a sample's time.
    batch = 1
    while True:
        t0 = clock()
        for _ in range(batch):
            fn(arg)
        took = clock() - t0
        if took >= settings["sample_ns"] or took >= settings["slow_ns"]:
            break
        batch *= 2
    per_call = max(took / batch, 1)
    if per_call >= settings["slow_ns"]:
        batch, n = 1, settings["slow_samples"]
    else:
        fit = int(settings["measurement_ns"] / (per_call * batch))
        n = max(settings["min_samples"], min(settings["max_samples"], fit))
    samples = []
    cpu0 = time.thread_time_ns()
    for _ in range(n):
        t0 = clock()
        for _ in range(batch):
            fn(arg)
        samples.append(clock() - t0)
    cpu = time.thread_time_ns() - cpu0
    # Tail latency: single calls (a slow operation's samples are single calls already).
    calls = list(samples) if batch == 1 else []
    if batch > 1:
        k = max(1, min(settings.get("latency_calls", 0), int(settings.get("latency_ns", 0) / per_call)))
        for _ in range(k if settings.get("latency_calls") else 0):
            t0 = clock()
            fn(arg)
            calls.append(clock() - t0)
    return batch, samples, cpu, calls


def spread(fn, arg, settings):
    """Every core at once: `workers` forked processes, each with its own copy of `arg`, call `fn`
    for span_ns after a shared barrier; each reports its calls, its span and its CPU time. An
    empty list where it cannot run (no fork on this platform, one worker) or a worker fails."""
    cfg = settings.get("all_cores") or {}
    workers, span = int(cfg.get("workers", 0)), int(cfg.get("span_ns", 0))
    if workers < 2 or span <= 0:
        return []
    import multiprocessing
    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:
        return []
    barrier = ctx.Barrier(workers)
    results = ctx.Queue()

    def work():
        clock = time.perf_counter_ns
        warm_until = clock() + settings.get("warm_up_ns", 0)
        fn(arg)
        while clock() < warm_until:
            fn(arg)
        barrier.wait()
        cpu0 = time.thread_time_ns()
        start = clock()
        end = start + span
        calls = 0
        while True:
            fn(arg)
            calls += 1
            now = clock()
            if now >= end:
                break
        results.put({"calls": calls, "ns": now - start, "cpu_ns": time.thread_time_ns() - cpu0})

    procs = [ctx.Process(target=work, daemon=True) for _ in range(workers)]
    try:
        for p in procs:
            p.start()
        runs = [results.get(timeout=span / 1e9 + 60) for _ in procs]
    except Exception:
        runs = []
    for p in procs:
        p.join(timeout=5)
        if p.is_alive():
            p.kill()
    return runs


def emit_runtime():
    emit({
        "type": "runtime",
        "runtime": "python",
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
    })


def probe():
    """Which libraries are installed, with their versions (nothing is timed)."""
    import importlib
    emit_runtime()
    for fmt, name, dist, module_name, _ in LIBRARIES:
        row = {"type": "library", "format": fmt, "library": name}
        try:
            module = Stdlib if dist is None else importlib.import_module(module_name)
        except ImportError as e:
            emit({**row, "status": "missing", "version": None,
                  "install": f"pip install {dist}", "message": str(e)})
            continue
        except Exception as e:
            emit({**row, "status": "failed", "version": None,
                  "message": f"{type(e).__name__}: {e}"})
            continue
        emit({**row, "status": "ok", "version": version_of(module, dist or name)})
    emit({"type": "done"})


def main():
    if sys.argv[1:] == ["--probe"]:
        probe()
        return
    with open(sys.argv[1], encoding="utf-8") as f:
        job = json.load(f)
    settings = job["settings"]
    emit_runtime()
    wanted = job.get("libraries")
    for fmt, name, dist, _, load in LIBRARIES:
        if wanted is not None and name not in wanted:
            continue
        path = job["files"].get(fmt)
        if path is None:
            continue
        if fmt == "protobuf" and not job.get("descriptor_set"):
            continue
        if fmt == "avro" and not job.get("avro_schema"):
            continue
        row = {"type": "library", "format": fmt, "library": name}
        try:
            module, decode, encode = load(job) if name in NEEDS_JOB else load()
        except ImportError as e:
            emit({**row, "status": "missing", "version": None,
                  "install": f"pip install {dist}" if dist else None, "message": str(e)})
            continue
        except Exception as e:
            emit({**row, "status": "failed", "version": None,
                  "message": f"{type(e).__name__}: {e}"})
            continue
        row["version"] = version_of(module, dist or name)
        with open(path, "rb") as f:
            payload = f.read()
        try:
            value = decode(payload)
            own = encode(value)
            if not same(decode(own), value):
                raise ValueError("its own bytes read back as different data")
        except Exception as e:
            emit({**row, "status": "failed", "message": f"round trip: {type(e).__name__}: {e}"})
            continue
        emit({**row, "status": "ok", "bytes": len(own), "sha256": hashlib.sha256(own).hexdigest()})
        for op, fn, arg in (("encode", encode, value), ("decode", decode, own)):
            batch, samples, cpu, calls = measure(fn, arg, settings)
            emit({"type": "samples", "format": fmt, "library": name, "op": op,
                  "batch": batch, "ns": samples, "cpu_ns": cpu, "calls": calls,
                  "spread": spread(fn, arg, settings)})
    if job.get("compressors"):
        compressors(job, settings)
    emit({"type": "done"})


if __name__ == "__main__":
    main()
