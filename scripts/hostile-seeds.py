#!/usr/bin/env python3
"""Writes the raw seed sets for the fuzz targets from samples/ and the conformance data.

Output: fuzz/seeds/<target>/ (not committed); `cargo fuzz cmin` then keeps the files that add
coverage into fuzz/corpus/<target>/, which is committed. Files over 64 KiB are left out.
"""
import base64, gzip, hashlib, json, os, sys, zlib

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
# CBOR tag 0 (date/time text) in every shape the RFC 3339 parser tells apart: MessagePack writes
# a parsed one as its timestamp extension, so each branch of the parser is one seed away.
def cbor_text(t):
    b = t.encode()
    head = bytes([0x60 + len(b)]) if len(b) < 24 else bytes([0x78, len(b)])
    return head + b


stamps = ["2023-11-14T22:13:20Z", "2023-11-14t22:13:20z", "2023-11-14 22:13:20Z",
          "1969-12-31T23:59:60Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z",
          "2023-11-14T22:13:20+01:00", "2023-11-14T22:13:20-08:30", "2023-11-14T22:13:20+1:000",
          "2023-11-14T22:13:20.Z", "2023-11-14T22:13:20Zx", "2023-11-14T22:13:20",
          "2023-13-14T22:13:20Z", "2023-00-14T22:13:20Z", "2023-11-32T22:13:20Z",
          "2023-11-14T24:13:20Z", "2023-11-14T22:60:20Z", "2023-11-14T22:13:61Z",
          "2023-11-14X22:13:20Z", "2023/11/14T22:13:20Z", "+023-11-14T22:13:20Z", "yesterday"]
stamps += ["2023-11-14T22:13:20." + "123456789012"[:n] + z for n in (1, 3, 6, 9, 10, 12)
           for z in ("Z", "+05:45")]
for t in stamps:
    tagged = b"\xc0" + cbor_text(t)
    for d in (tagged, b"\x81" + tagged, b"\xa1\x61t" + tagged):
        put("roundtrip", b"\x02" + d)
        put("encode_all", b"\x02" + d)
        put("cbor", d)
# HTTP bodies in each content coding Python can write, each one empty, short and corrupt, and a
# deflate body whose first two bytes look like a zlib header but fail its check; peeling also
# sees plain JSON text (escapes, nesting) as pasted.
def response(coding, body, content_type="application/json"):
    coding = "Content-Encoding: %s\r\n" % coding if coding else ""
    head = "HTTP/1.1 200 OK\r\nContent-Type: %s\r\n%sContent-Length: %d\r\n\r\n" % (
        content_type, coding, len(body))
    return head.encode() + body


def raw_deflate(data):
    c = zlib.compressobj(wbits=-15)
    return c.compress(data) + c.flush()


for text in (b"", b'{"a": "x\\"y\\u00e9\\n"}', b'[1, 2.5e3, true, null, {"k": []}]'):
    for coding, body in (("gzip", gzip.compress(text, mtime=0)), ("deflate", zlib.compress(text)),
                         ("deflate", raw_deflate(text)), ("identity", text)):
        put("peel", response(coding, body))
        put("peel", response(coding, body[: len(body) // 2]))
        put("http", response(coding, body))
put("peel", response("deflate", b"\x78\x01" + raw_deflate(b'{"a": 1}')))
put("peel", response("gzip, deflate", zlib.compress(gzip.compress(b'{"a": 1}', mtime=0))))
for d in json_seeds[:60] + [d for d in json_seeds if d.startswith(b"\xef\xbb\xbf")]:
    put("peel", d)
put("peel", b"\xef\xbb\xbf" + json_seeds[-1])

# One response for each media type the Content-Type table names, with parameters and in upper
# case as senders write them, and the +json/+cbor suffixes.
media = {"application/json": b'{"a": 1}', "text/json": b"[1]", "application/grpc+json": b'{"a": 1}',
         "application/msgpack": b"\x81\xa1a\x01", "application/x-msgpack": b"\x91\x01",
         "application/vnd.msgpack": b"\x01", "application/cbor": b"\xa1\x61a\x01",
         "application/vnd.api+json": b"{}", "application/senml+cbor": b"\x80"}
for m in ("application/protobuf", "application/x-protobuf", "application/vnd.google.protobuf"):
    media[m] = b"\x08\x01\x12\x01a"
frame = b"\x00\x00\x00\x00\x02\x08\x01"
trailer = b"\x80\x00\x00\x00\x0egrpc-status:0\r\n"
for m in ("application/grpc", "application/grpc+proto", "application/grpc-web",
          "application/grpc-web+proto"):
    media[m] = frame + trailer
for m in ("application/grpc-web-text", "application/grpc-web-text+proto"):
    media[m] = base64.b64encode(frame) + base64.b64encode(trailer)
for m, body in media.items():
    for ct in (m, m.upper() + "; charset=utf-8"):
        put("http", response(None, body, ct))
        put("peel", response(None, body, ct))
# Bare gRPC frames: a trailer last, a trailer before a message, a trailer holding binary.
for d in (frame + trailer, trailer + frame, frame + b"\x80\x00\x00\x00\x02\x00\xff", frame * 3):
    put("peel", d)
    put("grpc", d)
    put("detect", d)
for t in sorted(os.listdir(OUT)):
    print(t, len(os.listdir(os.path.join(OUT, t))))
