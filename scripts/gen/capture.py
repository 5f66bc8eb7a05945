#!/usr/bin/env python3
"""Writes a deterministic, realistic pcap of about SIZE_MB megabytes for the capture benchmarks.

    python3 scripts/gen/capture.py OUT.pcap SIZE_MB [--seed N] [--summary OUT.json]

Ethernet/IPv4/TCP (MSS 1460, correct sequence numbers and checksums) carrying hundreds of
interleaved connections at once: keep-alive HTTP/1.1 JSON APIs (GET/POST/PUT, 300 B-30 KB
bodies, some gzip, some chunked) and about 10 % h2c gRPC (prior knowledge, port 50051, unary
/shop.v1.Orders/Get calls with hand-encoded protobuf). Once SIZE_MB x 1,000,000 bytes are
written, every open connection finishes its exchange and closes. scripts/bench-*.sh make their
100 MB, 1 GB and 2 GB capture inputs with it; `--summary` writes the counts a reader of the file
should report (connections, HTTP requests/responses, gzip and chunked responses, gRPC calls and
messages, packets, bytes), which tshark agrees with (`-d tcp.port==50051,http2` for the gRPC).
Standard library only; same seed, same bytes (for a given zlib).
"""
import argparse
import base64
import gzip
import json
import math
import random
import struct
import sys

MSS = 1460
FIN, SYN, PSH, ACK = 0x01, 0x02, 0x08, 0x10
T0 = 1_768_467_600 * 1_000_000  # 2026-01-15 09:00:00 UTC, in microseconds
GRPC_PORT = 50051
SERVERS = [(1, 80), (2, 80), (3, 8080), (4, 8080)]  # (last octet of 10.1.0.x, port)
GRPC_SERVERS = [3, 4]
HOSTS = 4000  # client addresses 10.0.0.1 ...

PCAP_HEADER = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1)
REC = struct.Struct("<IIII").pack
# Ethernet (14) and 0x45 0x00 | total length | id | DF | ttl, proto | checksum | addresses,
# ports (12) | seq | ack | data offset, flags | window | checksum | urgent
HDR = struct.Struct("!16sHHHHH12sIIHHHH").pack
_frame = struct.Struct("!HBBBI").pack


def frame(length, ftype, flags, stream):
    """An HTTP/2 frame header: 24-bit length, type, flags, stream id."""
    return _frame(length >> 8, length & 0xFF, ftype, flags, stream)


DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def http_date(sec):
    """An IMF-fixdate, as the Date header has it."""
    days, rem = divmod(sec, 86400)
    h, rem = divmod(rem, 3600)
    m, s = divmod(rem, 60)
    # civil date from days since 1970-01-01 (Howard Hinnant's algorithm)
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    mo = mp + 3 if mp < 10 else mp - 9
    y = yoe + era * 400 + (mo <= 2)
    return f"{DAYS[(days + 3) % 7]}, {d:02d} {MONTHS[mo - 1]} {y} {h:02d}:{m:02d}:{s:02d} GMT"


def iso(rng):
    sec = T0 // 1_000_000 - rng.randrange(0, 400 * 86400)
    date = http_date(sec)  # reuse the civil-date arithmetic
    _, d, mon, y, hms, _ = date.split(" ")
    return f"{y}-{MONTHS.index(mon) + 1:02d}-{d}T{hms}.{rng.randrange(1000):03d}Z"


# ---------------------------------------------------------------------------------------------
# Payload pools, made once per run and reused: JSON bodies (and their gzip forms), request
# bodies, error bodies, bearer tokens and gRPC messages.

FIRST = ["Ana", "Bruno", "Chen", "Dara", "Emeka", "Fatima", "Gustav", "Hana", "Ivan", "Jo",
         "Kemal", "Lucia", "Mateo", "Nia", "Oskar", "Priya", "Quinn", "Rosa", "Sven", "Yuki"]
LAST = ["Almeida", "Berg", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ito",
        "Jensen", "Kowalski", "Larsen", "Moreau", "Novak", "Okafor", "Petrov", "Rossi", "Sato"]
CITIES = [("Lisbon", "PT", 38.7223, -9.1393), ("Oslo", "NO", 59.9139, 10.7522),
          ("Austin", "US", 30.2672, -97.7431), ("Osaka", "JP", 34.6937, 135.5023),
          ("Lagos", "NG", 6.5244, 3.3792), ("Lyon", "FR", 45.764, 4.8357),
          ("Quito", "EC", -0.1807, -78.4678), ("Perth", "AU", -31.9523, 115.8613),
          ("Berlin", "DE", 52.52, 13.405), ("Toronto", "CA", 43.6532, -79.3832)]
STREETS = ["Rua Augusta", "Karl Johans gate", "Congress Ave", "Midosuji", "Broad Street",
           "Rue de la République", "Avenida Amazonas", "Hay Street", "Friedrichstraße"]
PRODUCTS = ["Espresso beans 1 kg", "Ceramic pour-over", "Steel water bottle", "Linen apron",
            "Oak cutting board", "Cast iron skillet", "Wool throw", "Desk lamp", "Notebook A5",
            "Trail running socks", "Bluetooth speaker", "Chef's knife 20 cm"]
TAGS = ["priority", "gift", "wholesale", "b2b", "returning", "vip", "promo-2026", "eco"]
STATUSES = ["pending", "paid", "packed", "shipped", "delivered", "refunded", "cancelled"]
RESOURCES = ["orders", "users", "products", "invoices", "shipments", "payments"]


def uid(rng):
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def person(rng):
    f, l = rng.choice(FIRST), rng.choice(LAST)
    return f, l, f"{f.lower()}.{l.lower()}{rng.randrange(100)}@example.com"


def address(rng):
    city, cc, lat, lon = rng.choice(CITIES)
    return {"street": f"{rng.choice(STREETS)} {rng.randrange(1, 300)}", "city": city,
            "postal_code": f"{rng.randrange(10000, 99999)}", "country": cc,
            "geo": {"lat": round(lat + rng.uniform(-0.05, 0.05), 6),
                    "lon": round(lon + rng.uniform(-0.05, 0.05), 6)}}


def line_item(rng):
    return {"sku": f"SKU-{rng.randrange(10000, 99999)}", "name": rng.choice(PRODUCTS),
            "qty": rng.randrange(1, 6), "unit_price": round(rng.uniform(2, 250), 2),
            "discount": rng.choice([0.0, 0.05, 0.1, 0.15])}


def record(rng, res, k):
    """One API record of a resource: ids, names, timestamps, nested objects, floats."""
    if res == "users":
        f, l, mail = person(rng)
        return {"id": 200000 + k, "uuid": uid(rng), "first_name": f, "last_name": l,
                "email": mail, "created_at": iso(rng), "last_login_at": iso(rng),
                "active": rng.random() < 0.9, "score": round(rng.uniform(0, 100), 3),
                "address": address(rng), "roles": rng.sample(["buyer", "seller", "admin",
                                                               "support"], rng.randrange(1, 3)),
                "preferences": {"locale": rng.choice(["en-US", "pt-PT", "ja-JP", "de-DE"]),
                                "newsletter": rng.random() < 0.4, "theme": "dark"}}
    if res == "products":
        return {"id": 300000 + k, "sku": f"SKU-{rng.randrange(10000, 99999)}",
                "name": rng.choice(PRODUCTS), "price": round(rng.uniform(2, 400), 2),
                "currency": "EUR", "stock": rng.randrange(0, 5000),
                "rating": {"average": round(rng.uniform(1, 5), 2), "count": rng.randrange(9999)},
                "dimensions_cm": [round(rng.uniform(1, 60), 1) for _ in range(3)],
                "weight_kg": round(rng.uniform(0.05, 12), 3), "updated_at": iso(rng),
                "tags": rng.sample(TAGS, rng.randrange(0, 4)), "discontinued": False}
    f, l, mail = person(rng)
    items = [line_item(rng) for _ in range(rng.randrange(1, 6))]
    total = round(sum(i["qty"] * i["unit_price"] * (1 - i["discount"]) for i in items), 2)
    rec = {"id": 100000 + k, "uuid": uid(rng), "number": f"{res[:2].upper()}-2026-{k:06d}",
           "status": rng.choice(STATUSES), "created_at": iso(rng), "updated_at": iso(rng),
           "customer": {"id": 200000 + rng.randrange(50000), "name": f"{f} {l}", "email": mail},
           "currency": rng.choice(["EUR", "USD", "JPY"]), "total": total,
           "tax_rate": rng.choice([0.0, 0.07, 0.19, 0.23]), "items": items,
           "tags": rng.sample(TAGS, rng.randrange(0, 3)), "notes": None}
    if res in ("orders", "shipments"):
        rec["shipping"] = {"method": rng.choice(["standard", "express", "pickup"]),
                           "address": address(rng), "eta_days": rng.randrange(1, 9)}
    if res in ("payments", "invoices"):
        rec["payment"] = {"method": rng.choice(["card", "sepa", "paypal"]),
                          "captured": rng.random() < 0.8, "fee": round(total * 0.014, 2)}
    return rec


def json_body(rng, res, target, compact):
    """A list response of about `target` bytes (one record at least)."""
    dump = (lambda v: json.dumps(v, separators=(",", ":"))) if compact else json.dumps
    data, size, k = [], 120, rng.randrange(1, 900000)
    while True:
        rec = record(rng, res, k + len(data))
        n = len(dump(rec)) + 2
        if data and size + n > target:
            break
        data.append(rec)
        size += n
    doc = {"data": data, "meta": {"page": rng.randrange(1, 40), "per_page": len(data),
                                  "total": rng.randrange(len(data), 100000),
                                  "next_cursor": base64.urlsafe_b64encode(
                                      rng.randbytes(12)).decode()},
           "generated_at": iso(rng)}
    return dump(doc).encode()


def error_body(rng, status):
    code = {404: "not_found", 500: "internal"}[status]
    res = rng.choice(RESOURCES)
    doc = {"error": {"status": status, "code": code,
                     "message": (f"{res[:-1]} {rng.randrange(100000, 999999)} was not found"
                                 if status == 404 else "upstream inventory service timed out"),
                     "request_id": uid(rng), "trace_id": f"{rng.getrandbits(128):032x}",
                     "details": [{"field": rng.choice(["id", "customer_id", "sku"]),
                                  "reason": rng.choice(["unknown", "deleted", "timeout"])}],
                     "documentation_url": f"https://docs.shop.example/errors/{code}"},
           "timestamp": iso(rng)}
    return json.dumps(doc).encode()


# Protobuf, encoded by hand: varints, length-delimited strings and messages, doubles.

def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def pb_int(field, n):
    return varint(field << 3) + varint(n & 0xFFFFFFFFFFFFFFFF)


def pb_bytes(field, b):
    if isinstance(b, str):
        b = b.encode()
    return varint(field << 3 | 2) + varint(len(b)) + b


def pb_double(field, x):
    return varint(field << 3 | 1) + struct.pack("<d", x)


def grpc_request(rng):
    """shop.v1.GetOrderRequest: order_id=1, customer_id=2, repeated string fields=3,
    RequestContext ctx=4 {trace_id=1, deadline_ms=2, locale=3}, include_history=5."""
    ctx = (pb_bytes(1, f"{rng.getrandbits(128):032x}") + pb_int(2, rng.choice([250, 1000, 5000]))
           + pb_bytes(3, rng.choice(["en-US", "pt-PT", "ja-JP"])))
    msg = pb_bytes(1, f"ord_{rng.getrandbits(48):012x}") + pb_int(2, rng.randrange(1, 10**7))
    fields = ["items", "shipping", "totals", "history", "customer"]
    for f in rng.sample(fields, rng.randrange(1, 5)):
        msg += pb_bytes(3, f)
    msg += pb_bytes(4, ctx)
    if rng.random() < 0.5:
        msg += pb_int(5, 1)
    return msg


def grpc_response(rng, n_items):
    """shop.v1.Order: id=1, customer_id=2, status=3 (enum), repeated LineItem items=4 {sku=1,
    name=2, quantity=3, unit_price_cents=4, weight_kg=5 (double)}, Address shipping=5 {street=1,
    city=2, postal_code=3, country=4, lat=5, lon=6 (doubles)}, created_at_ms=6, total=7 (double),
    repeated string tags=8, gift=9, repeated int32 status_history=10 (packed)."""
    msg = (pb_bytes(1, f"ord_{rng.getrandbits(48):012x}") + pb_int(2, rng.randrange(1, 10**7))
           + pb_int(3, rng.randrange(0, 7)))
    total = 0
    for _ in range(n_items):
        price = rng.randrange(199, 49999)
        qty = rng.randrange(1, 6)
        total += price * qty
        item = (pb_bytes(1, f"SKU-{rng.randrange(10000, 99999)}")
                + pb_bytes(2, rng.choice(PRODUCTS))
                + pb_int(3, qty) + pb_int(4, price) + pb_double(5, round(rng.uniform(0.05, 12), 3)))
        msg += pb_bytes(4, item)
    city, cc, lat, lon = rng.choice(CITIES)
    addr = (pb_bytes(1, f"{rng.choice(STREETS)} {rng.randrange(1, 300)}") + pb_bytes(2, city)
            + pb_bytes(3, str(rng.randrange(10000, 99999))) + pb_bytes(4, cc)
            + pb_double(5, lat) + pb_double(6, lon))
    msg += pb_bytes(5, addr) + pb_int(6, T0 // 1000 - rng.randrange(10**10))
    msg += pb_double(7, total / 100)
    for t in rng.sample(TAGS, rng.randrange(0, 4)):
        msg += pb_bytes(8, t)
    if rng.random() < 0.2:
        msg += pb_int(9, 1)
    history = b"".join(varint(rng.randrange(0, 7)) for _ in range(rng.randrange(1, 8)))
    msg += pb_bytes(10, history)
    return msg


def hpack(headers):
    """A header block of literals without indexing, new name, no Huffman (0x00 prefix)."""
    def length(n):  # 7-bit prefix integer, H bit clear
        if n < 127:
            return bytes([n])
        out, n = bytearray([127]), n - 127
        while n >= 128:
            out.append(n & 0x7F | 0x80)
            n >>= 7
        out.append(n)
        return bytes(out)
    out = b""
    for name, value in headers:
        out += b"\x00" + length(len(name)) + name.encode() + length(len(value)) + value.encode()
    return out


class Pools:
    def __init__(self, rng):
        self.bodies = {}  # resource -> [(body, gzip body)]
        lo, hi = math.log(300), math.log(30000)
        for i in range(300):
            res = RESOURCES[i % len(RESOURCES)]
            body = json_body(rng, res, int(math.exp(rng.uniform(lo, hi))), i % 2 == 0)
            self.bodies.setdefault(res, []).append((body, gzip.compress(body, 6, mtime=0)))
        self.posts = {res: [json.dumps({"data": record(rng, res, rng.randrange(900000))}).encode()
                            for _ in range(20)] for res in RESOURCES}
        self.errors = {s: [error_body(rng, s) for _ in range(20)] for s in (404, 500)}
        self.tokens = []
        for _ in range(64):
            claims = {"sub": str(rng.randrange(200000, 250000)), "iss": "https://auth.shop.example",
                      "aud": "shop-api", "scope": "orders:read orders:write",
                      "iat": T0 // 1_000_000 - 600, "exp": T0 // 1_000_000 + 3000}
            parts = [b'{"alg":"HS256","typ":"JWT"}', json.dumps(claims).encode(), rng.randbytes(32)]
            self.tokens.append(".".join(base64.urlsafe_b64encode(p).rstrip(b"=").decode()
                                        for p in parts))
        grpc = lambda m: b"\x00" + struct.pack(">I", len(m)) + m  # noqa: E731
        self.grpc_req = [grpc(grpc_request(rng)) for _ in range(200)]
        # 1 to 250 line items: about 100 B to 14 KB, one DATA frame each
        self.grpc_resp = [grpc(grpc_response(rng, int(math.exp(rng.uniform(0, math.log(250))))))
                          for _ in range(300)]
        assert max(len(m) for m in self.grpc_resp) <= 16384


# ---------------------------------------------------------------------------------------------
# TCP connections. Each is a generator of bursts (lists of Ethernet frames) in its own order;
# the main loop interleaves the bursts of all open connections.

class State:
    def __init__(self):
        self.stopping = False
        self.t = T0
        self.counts = {"http1": 0, "h2": 0, "http_requests": 0, "http_responses": 0,
                       "gzip_responses": 0, "chunked_responses": 0, "grpc_calls": 0,
                       "grpc_client": 0, "grpc_server": 0}


def ip4(a, b, c, d):
    return bytes([a, b, c, d])


def words(b):
    return sum(struct.unpack(f"!{len(b) // 2}H", b))


class Conn:
    def __init__(self, st, pools, rng, k, h2):
        self.st, self.pools, self.rng = st, pools, rng
        h = k % HOSTS
        cport = 32768 + ((k // HOSTS) * 997 + h * 131) % 28232
        if cport == GRPC_PORT:  # `-d tcp.port==50051,http2` would take this HTTP/1.1 for h2
            cport = 32767
        cip = ip4(10, 0, h // 250, h % 250 + 1)
        if h2:
            sid, sport = rng.choice(GRPC_SERVERS), GRPC_PORT
        else:
            sid, sport = rng.choice(SERVERS)
        sip = ip4(10, 1, 0, sid)
        self.sport, self.sid = sport, sid
        router = bytes.fromhex("020000000001")
        server = bytes.fromhex(f"0200000100{sid:02x}")
        self.k = []
        for src, dst, sp, dp, smac, dmac, ttl, win in (
                (cip, sip, cport, sport, router, server, 63, 64240),
                (sip, cip, sport, cport, server, router, 64, 65160)):
            addrs = src + dst + struct.pack("!HH", sp, dp)
            ttlproto = ttl << 8 | 6
            ipk = 0x4500 + 0x4000 + ttlproto + words(src + dst)
            tck = words(src + dst) + 6 + sp + dp
            self.k.append((dmac + smac + b"\x08\x00\x45\x00", ipk, addrs, tck, win, ttlproto))
        self.seq = [rng.getrandbits(32), rng.getrandbits(32)]
        self.ipid = [rng.getrandbits(16), rng.getrandbits(16)]
        self.token = rng.choice(pools.tokens)

    def pkt(self, d, flags, payload=b"", opt=b""):
        """One frame from the client (d=0) or the server (d=1); advances that side's seq."""
        prefix, ipk, addrs, tck, win, ttlproto = self.k[d]
        seq = self.seq[d]
        ack = self.seq[1 - d] if flags & ACK else 0
        n = len(payload)
        tl = 40 + len(opt) + n
        ipid = self.ipid[d] = (self.ipid[d] + 1) & 0xFFFF
        r = (ipk + tl + ipid) % 65535
        offflags = (5 + len(opt) // 4) << 12 | flags
        # one's complement sums are sums modulo 65535 (65536 = 1): whole payloads at once
        s = tck + tl - 20 + seq + ack + offflags + win
        if opt:
            s += int.from_bytes(opt, "big")
        if n:
            s += int.from_bytes(payload, "big") << 8 if n & 1 else int.from_bytes(payload, "big")
        r2 = s % 65535
        hdr = HDR(prefix, tl, ipid, 0x4000, ttlproto, 0xFFFF - r if r else 0, addrs,
                  seq, ack, offflags, win, 0xFFFF - r2 if r2 else 0, 0)
        self.seq[d] = (seq + n + (1 if flags & (SYN | FIN) else 0)) & 0xFFFFFFFF
        return hdr + opt + payload

    def send(self, d, data, final_ack):
        """A message from one side in MSS segments; the peer ACKs every second segment (and
        the last one when final_ack, else its next message carries the ACK)."""
        out, mv, n, pend = [], memoryview(data), len(data), 0
        pkt = self.pkt
        for i in range(0, n, MSS):
            last = i + MSS >= n
            out.append(pkt(d, PSH | ACK if last else ACK, mv[i:i + MSS]))
            pend += 1
            if pend == 2 and (final_ack or not last):
                out.append(pkt(1 - d, ACK))
                pend = 0
        if pend and final_ack:
            out.append(pkt(1 - d, ACK))
        return out

    def open(self):
        mss = b"\x02\x04\x05\xb4"
        yield [self.pkt(0, SYN, opt=mss)]
        yield [self.pkt(1, SYN | ACK, opt=mss), self.pkt(0, ACK)]

    def close(self):
        yield [self.pkt(0, FIN | ACK)]
        yield [self.pkt(1, FIN | ACK), self.pkt(0, ACK)]


class Http1(Conn):
    def run(self):
        st, rng, pools, c = self.st, self.rng, self.pools, self.st.counts
        c["http1"] += 1
        host = "api.shop.internal" if self.sport == 80 else f"catalog.shop.internal:{self.sport}"
        server = "nginx/1.25.4" if self.sport == 80 else "envoy"
        agent = rng.choice(["shop-web/4.12.0 python-requests/2.31.0", "okhttp/4.12.0",
                            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)"
                            " Chrome/124.0 Safari/537.36", "shop-batch/2.3 Go-http-client/1.1"])
        common = (f"Host: {host}\r\nUser-Agent: {agent}\r\nAccept: application/json\r\n"
                  f"Accept-Encoding: gzip, deflate\r\nAuthorization: Bearer {self.token}\r\n")
        yield from self.open()
        for _ in range(rng.randrange(20, 41)):
            if st.stopping:
                break
            res = rng.choice(RESOURCES)
            rid = uid(rng)
            x = rng.random()
            if x < 0.72:
                method, body = "GET", b""
                if x < 0.4:
                    path = (f"/api/v1/{res}/{rng.randrange(100000, 999999)}"
                            f"?include=items,customer&fields=id,status,total,updated_at")
                else:
                    path = (f"/api/v1/{res}?page={rng.randrange(1, 60)}&per_page=50"
                            f"&sort=-created_at&status={rng.choice(STATUSES)}")
                extra = ""
            else:
                method = "POST" if x < 0.95 else "PUT"
                body = rng.choice(pools.posts[res])
                path = (f"/api/v1/{res}" if method == "POST"
                        else f"/api/v1/{res}/{rng.randrange(100000, 999999)}")
                extra = f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            req = (f"{method} {path} HTTP/1.1\r\n{common}{extra}X-Request-Id: {rid}\r\n"
                   f"Connection: keep-alive\r\n\r\n").encode() + body
            c["http_requests"] += 1
            yield self.send(0, req, False)

            y = rng.random()
            gz = False
            if y < 0.04:
                status, reason, body = 404, "Not Found", rng.choice(pools.errors[404])
            elif y < 0.06:
                status, reason, body = 500, "Internal Server Error", rng.choice(pools.errors[500])
            else:
                status, reason = (201, "Created") if method == "POST" else (200, "OK")
                plain, packed = rng.choice(pools.bodies[res])
                gz = rng.random() < 0.32
                body = packed if gz else plain
            chunked = rng.random() < 0.1
            head = (f"HTTP/1.1 {status} {reason}\r\nDate: {http_date(st.t // 1_000_000)}\r\n"
                    f"Server: {server}\r\nContent-Type: application/json; charset=utf-8\r\n")
            if gz:
                head += "Content-Encoding: gzip\r\nVary: Accept-Encoding\r\n"
                c["gzip_responses"] += 1
            if chunked:
                head += "Transfer-Encoding: chunked\r\n"
                c["chunked_responses"] += 1
                cuts = sorted(rng.sample(range(1, len(body)), min(len(body) - 1,
                                                                  rng.randrange(1, 5))))
                parts = [body[a:b] for a, b in zip([0] + cuts, cuts + [len(body)])]
                body = b"".join(b"%x\r\n" % len(p) + p + b"\r\n" for p in parts) + b"0\r\n\r\n"
            else:
                head += f"Content-Length: {len(body)}\r\n"
            if server == "envoy":
                head += f"x-envoy-upstream-service-time: {rng.randrange(2, 90)}\r\n"
            head += f"X-Request-Id: {rid}\r\nCache-Control: no-store\r\n"
            if chunked and (len(head) + 2 + len(body)) % MSS == 1:
                # tshark 4.0 calls a chunked body malformed when its last LF comes alone in
                # a segment; one more header keeps tshark usable as the reference count
                head += "Vary: Origin\r\n"
            head += "\r\n"
            c["http_responses"] += 1
            frames = self.send(1, head.encode() + body, True)
            for i in range(0, len(frames), 6):
                yield frames[i:i + 6]
        yield from self.close()


class H2(Conn):
    PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

    def run(self):
        st, rng, pools, c = self.st, self.rng, self.pools, self.st.counts
        c["h2"] += 1
        authority = f"orders-{self.sid}.shop.internal:{GRPC_PORT}"
        req_block = hpack([(":method", "POST"), (":scheme", "http"),
                           (":path", "/shop.v1.Orders/Get"), (":authority", authority),
                           ("content-type", "application/grpc"), ("te", "trailers"),
                           ("user-agent", "grpc-python/1.62.1 grpc-c/39.0.0 (linux; chttp2)")])
        resp_block = hpack([(":status", "200"), ("content-type", "application/grpc")])
        trailers = hpack([("grpc-status", "0")])
        yield from self.open()
        # SETTINGS: ENABLE_PUSH 0, INITIAL_WINDOW_SIZE 4 MiB, MAX_HEADER_LIST_SIZE 16 KiB;
        # then a connection WINDOW_UPDATE to 16 MiB (what grpc clients do).
        settings = struct.pack("!HIHIHI", 2, 0, 4, 4 << 20, 6, 16384)
        hello = (self.PREFACE + frame(len(settings), 4, 0, 0) + settings
                 + frame(4, 8, 0, 0) + struct.pack("!I", (16 << 20) - 65535))
        yield self.send(0, hello, False)
        settings = struct.pack("!HIHIHI", 3, 100, 4, 4 << 20, 5, 16384)
        hello = (frame(len(settings), 4, 0, 0) + settings + frame(4, 8, 0, 0)
                 + struct.pack("!I", (16 << 20) - 65535) + frame(0, 4, 1, 0))
        yield self.send(1, hello, False)
        yield self.send(0, frame(0, 4, 1, 0), False)  # SETTINGS ACK

        stream, calls = 1, rng.randrange(8, 31)
        while calls > 0 and not st.stopping:
            batch = min(calls, 1 if rng.random() < 0.7 else rng.randrange(2, 4))
            calls -= batch
            ids = []
            for _ in range(batch):
                msg = rng.choice(pools.grpc_req)
                data = (frame(len(req_block), 1, 4, stream) + req_block  # END_HEADERS
                        + frame(len(msg), 0, 1, stream) + msg)  # END_STREAM
                c["grpc_calls"] += 1
                c["grpc_client"] += 1
                ids.append(stream)
                stream += 2
                yield self.send(0, data, False)
            for sid in ids:
                msg = rng.choice(pools.grpc_resp)
                data = (frame(len(resp_block), 1, 4, sid) + resp_block
                        + frame(len(msg), 0, 0, sid) + msg
                        + frame(len(trailers), 1, 5, sid) + trailers)  # END_STREAM|END_HEADERS
                c["grpc_server"] += 1
                frames = self.send(1, data, True)
                for i in range(0, len(frames), 6):
                    yield frames[i:i + 6]
        goaway = struct.pack("!II", 0, 0)  # last stream 0, NO_ERROR
        yield self.send(0, frame(len(goaway), 7, 0, 0) + goaway, False)
        yield from self.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("size_mb", type=float)
    ap.add_argument("--seed", type=int, default=20260115)
    ap.add_argument("--summary")
    ap.add_argument("--concurrency", type=int,
                    help="connections open at a time (default: by size, at most 500)")
    args = ap.parse_args()

    target = int(args.size_mb * 1_000_000)
    # a connection carries about 160 KB: open at most a third of the file's connections at a
    # time, so that most run their course before the size is reached
    conc = args.concurrency or int(min(500, max(8, target / 160_000 / 3)))
    pools = Pools(random.Random(args.seed * 7919 + 1))
    rng = random.Random(args.seed)
    st = State()
    conns, k, most = [], 0, 0
    t, written, pending, frames, buf = T0, len(PCAP_HEADER), 0, 0, []
    with open(args.out, "wb") as f:
        f.write(PCAP_HEADER)
        while True:
            if not st.stopping:
                if written + pending >= target:
                    st.stopping = True
                elif len(conns) < conc and (not conns or rng.random() < 0.1):
                    h2 = rng.random() < 0.1
                    crng = random.Random(rng.getrandbits(64))
                    conn = (H2 if h2 else Http1)(st, pools, crng, k, h2)
                    conns.append(conn.run())
                    k += 1
            if not conns:
                break
            most = max(most, len(conns))
            i = int(rng.random() * len(conns))
            t += 40 + int(rng.random() * 360)
            st.t = t
            burst = next(conns[i], None)
            if burst is None:
                conns[i] = conns[-1]
                conns.pop()
                continue
            for p in burst:
                n = len(p)
                sec, us = divmod(t, 1_000_000)
                buf.append(REC(sec, us, n, n))
                buf.append(p)
                pending += n + 16
                t += 5 + (n >> 7)  # about a gigabit per second within a burst
            frames += len(burst)
            if pending >= 1 << 22:
                f.write(b"".join(buf))
                written += pending
                buf, pending = [], 0
        f.write(b"".join(buf))
        written += pending

    c = st.counts
    summary = {
        "seed": args.seed,
        "connections": {"http1": c["http1"], "h2": c["h2"], "total": c["http1"] + c["h2"],
                        "most_open": most},
        "http_requests": c["http_requests"], "http_responses": c["http_responses"],
        "gzip_responses": c["gzip_responses"], "chunked_responses": c["chunked_responses"],
        "grpc_calls": c["grpc_calls"],
        "grpc_messages": {"client": c["grpc_client"], "server": c["grpc_server"],
                          "total": c["grpc_client"] + c["grpc_server"]},
        "frames": frames, "bytes": written,
    }
    if args.summary:
        with open(args.summary, "w") as f:
            json.dump(summary, f, indent=2)
            f.write("\n")
    print(f"{args.out}: {written / 1e6:.1f} MB, {frames} frames, "
          f"{summary['connections']['total']} connections", file=sys.stderr)


if __name__ == "__main__":
    main()
