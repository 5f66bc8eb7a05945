#!/usr/bin/env python3
"""Writes hostile captures (pcap files of one crafted TCP connection each) into a folder.

    scripts/capture-bombs.py DIR

Each file attacks one reader of the capture layer: HPACK, HTTP/2 framing, content codings on an
HTTP/2 stream, compressed gRPC frames, WebSocket framing and permessage-deflate, HTTP/1.1
headers. Where the attack leaves something to read after it, the capture holds an innocent
message there (`{"after":true}`), so a run can check the rest of the capture is still read.
`scripts/hostile-limits.sh` runs `wirelens` on each under a memory rlimit and a timeout.
"""
import os
import struct
import sys
import zlib

AFTER = b'{"after":true}'


def pcap(client, server, mss=60000):
    """A raw-IP pcap of one TCP connection 10.0.0.1:51234 -> 10.0.0.2:80 (no handshake): the
    client's bytes, then the server's, in segments of at most `mss` bytes."""
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 101)]
    n = 0
    for to_server, data in ((True, client), (False, server)):
        src, dst = (b"\x0a\x00\x00\x01", b"\x0a\x00\x00\x02")
        sport, dport = 51234, 80
        if not to_server:
            src, dst, sport, dport = dst, src, dport, sport
        seq = 1000
        for at in range(0, len(data), mss):
            chunk = data[at:at + mss]
            tcp = struct.pack(">HHIIBBHHH", sport, dport, seq, 0, 5 << 4, 0x18, 65535, 0, 0)
            ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + len(chunk), n & 0xFFFF,
                             0, 64, 6, 0, src, dst)
            packet = ip + tcp + chunk
            out.append(struct.pack("<IIII", 1_700_000_000, n, len(packet), len(packet)))
            out.append(packet)
            seq = (seq + len(chunk)) & 0xFFFFFFFF
            n += 1
    return b"".join(out)


# HTTP/2
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, SETTINGS, CONTINUATION = 0, 1, 4, 9
END_STREAM, END_HEADERS = 1, 4


def frame(kind, flags, stream, payload, length=None):
    n = len(payload) if length is None else length
    return struct.pack(">I", n)[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def hpack_int(value, prefix_bits, first):
    top = (1 << prefix_bits) - 1
    if value < top:
        return bytes([first | value])
    out = [first | top]
    value -= top
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    out.append(value)
    return bytes(out)


def literal(name, value, indexed=False):
    """A literal field with a new name: with incremental indexing, or without indexing."""
    out = b"\x40" if indexed else b"\x00"
    out += hpack_int(len(name), 7, 0) + name
    return out + hpack_int(len(value), 7, 0) + value


GET = b"\x82\x86\x84"  # :method GET, :scheme http, :path /
STATUS_200 = b"\x88"


def json_response(stream, extra=b""):
    block = STATUS_200 + literal(b"content-type", b"application/json") + extra
    return (frame(HEADERS, END_HEADERS, stream, block)
            + frame(DATA, END_STREAM, stream, AFTER))


def h2(client_frames, server_frames):
    return pcap(PREFACE + frame(SETTINGS, 0, 0, b"") + client_frames,
                frame(SETTINGS, 0, 0, b"") + server_frames)


def zeros_deflate(total, wbits):
    """`total` zero bytes compressed (raw deflate for wbits -15, gzip for 31), built from one
    compressed MiB repeated: a full flush resets the window, so every MiB compresses alike."""
    c = zlib.compressobj(9, zlib.DEFLATED, wbits)
    mib = b"\0" * (1 << 20)
    head = c.compress(mib) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(mib) + c.flush(zlib.Z_FULL_FLUSH)
    rest = c.flush()
    if wbits == 31:
        # gzip: the header belongs to the first MiB only; the trailer's CRC and size are wrong
        # for the whole, which a bounded reader never reaches.
        return head + again * ((total >> 20) - 1) + rest
    return head + again * ((total >> 20) - 1)


def hpack_bomb():
    # One 4,000-byte field into the dynamic table, then referenced 16,000 times per frame over
    # 64 CONTINUATION frames: about 1 MB on the wire, 4 GB of header fields.
    first = GET + literal(b"x-bomb", b"a" * 4000, indexed=True)
    client = frame(HEADERS, END_STREAM, 1, first)
    for i in range(64):
        client += frame(CONTINUATION, END_HEADERS if i == 63 else 0, 1, b"\xbe" * 16000)
    client += frame(HEADERS, END_HEADERS | END_STREAM, 3, GET)
    return h2(client, json_response(3))


def header_flood_h2():
    # 100,000 small header fields in one request (4 bytes each, in CONTINUATIONs).
    block = GET + b"".join(literal(b"h", b"v") for _ in range(100_000))
    client = b""
    chunks = [block[i:i + 16384] for i in range(0, len(block), 16384)]
    for i, c in enumerate(chunks):
        kind = HEADERS if i == 0 else CONTINUATION
        flags = (END_STREAM if i == 0 else 0) | (END_HEADERS if i == len(chunks) - 1 else 0)
        client += frame(kind, flags, 1, c)
    client += frame(HEADERS, END_HEADERS | END_STREAM, 3, GET)
    return h2(client, json_response(3))


def continuation_flood():
    # A header block that never ends: 900,000 empty CONTINUATION frames, then the next stream.
    client = frame(HEADERS, END_STREAM, 1, GET)
    client += frame(CONTINUATION, 0, 1, b"") * 900_000
    client += frame(HEADERS, END_HEADERS | END_STREAM, 3, GET)
    return h2(client, json_response(3))


def streams(n):
    client = b"".join(frame(HEADERS, END_HEADERS | END_STREAM, 2 * i + 1, GET) for i in range(n))
    server = b"".join(frame(HEADERS, END_HEADERS | END_STREAM, 2 * i + 1, STATUS_200)
                      for i in range(n // 4))
    return h2(client, server)


def h2_gzip_bomb():
    body = zeros_deflate(1 << 30, 31)
    server = frame(HEADERS, END_HEADERS, 1, STATUS_200 + literal(b"content-type", b"application/json")
                   + literal(b"content-encoding", b"gzip"))
    for at in range(0, len(body), 16384):
        server += frame(DATA, 0, 1, body[at:at + 16384])
    server += frame(DATA, END_STREAM, 1, b"")
    server += json_response(3)
    client = frame(HEADERS, END_HEADERS | END_STREAM, 1, GET)
    client += frame(HEADERS, END_HEADERS | END_STREAM, 3, GET)
    return h2(client, server)


def grpc_bomb():
    grpc = literal(b"content-type", b"application/grpc")
    request = b"\x83\x86" + literal(b":path", b"/pkg.Svc/Get") + grpc
    packed = zeros_deflate(1 << 30, 31)
    body = b"\x01" + struct.pack(">I", len(packed)) + packed
    client = frame(HEADERS, END_HEADERS, 1, request + literal(b"grpc-encoding", b"gzip"))
    for at in range(0, len(body), 16384):
        client += frame(DATA, 0, 1, body[at:at + 16384])
    client += frame(DATA, END_STREAM, 1, b"")
    client += frame(HEADERS, END_HEADERS, 3, request)
    client += frame(DATA, END_STREAM, 3, b"\x00\x00\x00\x00\x02\x08\x01")
    server = frame(HEADERS, END_HEADERS, 3, STATUS_200 + grpc)
    server += frame(DATA, 0, 3, b"\x00\x00\x00\x00\x02\x08\x02")
    server += frame(HEADERS, END_HEADERS | END_STREAM, 3, literal(b"grpc-status", b"0"))
    return h2(client, server)


def h2_length_lie():
    # A DATA frame announcing 16 MB with 5 bytes behind it, on the client side; the server's
    # answer is whole.
    client = frame(HEADERS, END_HEADERS, 1, GET) + frame(DATA, 0, 1, b"short", length=0xFFFFFF)
    return h2(client, json_response(1))


# WebSocket
WS_REQUEST = (b"GET /chat HTTP/1.1\r\nHost: example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
              b"Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n")
WS_RESPONSE = (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
               b"Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n")


def ws(first, opcode, payload, rsv1=False, mask=None, length=None):
    b0 = (0x80 if first else 0) | (0x40 if rsv1 else 0) | opcode
    n = len(payload) if length is None else length
    m = 0x80 if mask else 0
    if n < 126:
        head = bytes([b0, m | n])
    elif n < 1 << 16:
        head = bytes([b0, m | 126]) + struct.pack(">H", n)
    else:
        head = bytes([b0, m | 127]) + struct.pack(">Q", n)
    if mask:
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        head += mask
    return head + payload


def ws_client_after():
    return WS_REQUEST + ws(True, 1, AFTER, mask=b"\x01\x02\x03\x04")


def ws_deflate_bomb():
    # One message of about 2 MB inflating to 2 GiB, then an uncompressed one.
    bomb = zeros_deflate(2 << 30, -15)[:-4]  # the flush tail is left off (RFC 7692)
    server = WS_RESPONSE + ws(True, 2, bomb, rsv1=True) + ws(True, 1, AFTER)
    return pcap(ws_client_after(), server)


def ws_length_lie():
    # A frame whose 64-bit length says 2^63 bytes; the client's message is whole.
    server = WS_RESPONSE + ws(True, 2, b"tiny", length=1 << 63)
    return pcap(ws_client_after(), server)


def ws_fragment_flood():
    # A message in 2,000,000 one-byte fragments.
    server = WS_RESPONSE + ws(False, 2, b"x") + ws(False, 0, b"x") * 2_000_000 + ws(True, 0, b"x")
    return pcap(ws_client_after(), server)


def http1_header_flood():
    request = b"GET / HTTP/1.1\r\nHost: example\r\n" + b"h: v\r\n" * 100_000 + b"\r\n"
    request += b"GET /after HTTP/1.1\r\nHost: example\r\n\r\n"
    response = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                % len(AFTER)) + AFTER
    return pcap(request, response * 2)


BOMBS = {
    "h2-hpack-bomb.pcap": hpack_bomb,
    "h2-header-flood.pcap": header_flood_h2,
    "h2-continuation-flood.pcap": continuation_flood,
    "h2-100k-streams.pcap": lambda: streams(100_000),
    "h2-gzip-bomb.pcap": h2_gzip_bomb,
    "h2-grpc-gzip-bomb.pcap": grpc_bomb,
    "h2-length-lie.pcap": h2_length_lie,
    "ws-deflate-bomb.pcap": ws_deflate_bomb,
    "ws-length-2p63.pcap": ws_length_lie,
    "ws-fragment-flood.pcap": ws_fragment_flood,
    "http1-header-flood.pcap": http1_header_flood,
}

if __name__ == "__main__":
    out = sys.argv[1]
    only = sys.argv[2:]
    os.makedirs(out, exist_ok=True)
    for name, make in BOMBS.items():
        if only and name not in only:
            continue
        with open(os.path.join(out, name), "wb") as f:
            f.write(make())
