#!/usr/bin/env python3
"""Writes the raw seed sets for the fuzz targets from samples/ and the conformance data.

Output: fuzz/seeds/<target>/ (not committed); `cargo fuzz cmin` then keeps the files that add
coverage into fuzz/corpus/<target>/, which is committed. Files over 64 KiB are left out.
"""
import base64, hashlib, json, os, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz", "seeds")
MAX = 64 * 1024


def put(target, data):
    if len(data) > MAX:
        return
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def files(folder, exts=None):
    folder = os.path.join(ROOT, folder)
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if os.path.isfile(path) and (exts is None or os.path.splitext(name)[1] in exts):
            with open(path, "rb") as f:
                yield name, f.read()


json_seeds = [d for _, d in files("tests/data/json-test-suite/test_parsing")]
json_seeds += [d for _, d in files("samples", {".json"})]
msgpack_seeds = [d for _, d in files("samples", {".msgpack"})]
with open(os.path.join(ROOT, "tests/data/msgpack-test-suite/dist/msgpack-test-suite.json")) as f:
    for cases in json.load(f).values():
        for case in cases:
            for h in case["msgpack"]:
                msgpack_seeds.append(bytes.fromhex(h.replace("-", "")))
cbor_seeds = [d for _, d in files("samples", {".cbor"})]
for name in ("appendix_a.json", "fail.json"):
    with open(os.path.join(ROOT, "tests/data/cbor-test-vectors", name)) as f:
        for case in json.load(f):
            cbor_seeds.append(bytes.fromhex(case["hex"]))
pb_seeds = [d for n, d in files("tests/data/protoscope/testdata") if n.endswith(".pb")]
pb_seeds += [d for _, d in files("samples", {".pb"})]
capture = [d for _, d in files("tests/fixtures/capture") if True]
pcaps = [d for _, d in files("tests/fixtures/capture/pcap", {".pcap", ".pcapng"})]
http = [d for n, d in files("tests/fixtures/capture") if n.endswith(".http")]
grpc = [d for _, d in files("samples", {".grpc"})]

for d in json_seeds:
    put("json", d)
for d in msgpack_seeds:
    put("msgpack", d)
for d in cbor_seeds:
    put("cbor", d)
for d in pb_seeds:
    put("protobuf_raw", d)
    put("protobuf_schema", d)
for d in capture:
    put("text", d)
    put("peel", d)
for d in http:
    put("http", d)
for d in grpc + [b"\x00\x00\x00\x00\x02\x08\x01", b"\x80\x00\x00\x00\x0egrpc-status:0\r\n"]:
    put("grpc", d)
for d in pcaps:
    put("pcap", d)
    put("peel", d)
for d in json_seeds[:60] + msgpack_seeds[:60] + cbor_seeds[:60] + pb_seeds + capture:
    put("detect", d)
for pick, seeds in enumerate([json_seeds, msgpack_seeds, cbor_seeds]):
    for d in seeds:
        put("roundtrip", bytes([pick]) + d)
        put("encode_all", bytes([pick]) + d)
for t in sorted(os.listdir(OUT)):
    print(t, len(os.listdir(os.path.join(OUT, t))))
