#!/usr/bin/env bash
# Memory and time bounds on hostile input: crafted files (lying length headers, decompression
# bombs, a million levels of nesting, a large pcap) through `wirelens inspect` and `convert`,
# each in a child process under an address-space rlimit and a timeout (its peak RSS shown where GNU
# time is installed). Fails if any child is killed (out of memory, stack overflow, timeout) or
# panics; a decode error (exit 1) is the expected outcome for most of them.
#
#   scripts/hostile-limits.sh [MEMORY_MIB] [SECONDS] [NODES_MIB]
#       (defaults: 512 MiB, 120 s, 2048 MiB; a debug build). The files of ten million one-byte
#       nodes (`nodes-*`) stop at the `nodes` limit (8M by default), whose nodes cost about
#       1.5 GiB: they run under NODES_MIB instead of MEMORY_MIB.
#   WIRELENS_BIN=target/release/wirelens scripts/hostile-limits.sh     (that binary, no build)
set -uo pipefail
cd "$(dirname "$0")/.."
mem_mib=${1:-512}
secs=${2:-120}
nodes_mib=${3:-2048}
if [ -n "${WIRELENS_BIN:-}" ]; then
    bin=$(realpath "$WIRELENS_BIN")
else
    cargo build --quiet --no-default-features --bin wirelens
    bin=target/debug/wirelens
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

python3 - "$dir" <<'PY'
import gzip, os, struct, sys, zlib
d = sys.argv[1]
def put(name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
put("msgpack-array32.msgpack", bytes.fromhex("ddffffffff"))
put("msgpack-str32.msgpack", bytes.fromhex("dbffffffff61"))
put("cbor-bytes-2p63.cbor", bytes.fromhex("5b800000000000000000"))
put("cbor-array-2p63.cbor", bytes.fromhex("9b8000000000000000"))
put("protobuf-len-2g.pb", bytes.fromhex("0a8080808008010203"))
put("grpc-len-2g.grpc", bytes.fromhex("007fffffff0102"))
put("json-1m-arrays.json", b"[" * 1_000_000)
put("json-1m-objects.json", b'{"a":' * 1_000_000)
put("msgpack-1m.msgpack", b"\x91" * 1_000_000)
put("cbor-1m-tags.cbor", b"\xc6\x81" * 500_000)
put("protobuf-1m-groups.pb", b"\x0b" * 1_000_000)
# An od dump whose `*` line repeats a line up to offset 0x44018a0: 27 bytes claiming 71 MB.
put("hexdump-star.txt", b"0000000 00 0\n*\n\n44018a0 07\n")
# Ten million positive fixints (one byte, one node each) in one array: past the node limit.
put("nodes-10m-fixints.msgpack", bytes.fromhex("dd00989680") + b"\0" * 10_000_000)
put("nodes-10m-uints.cbor", bytes.fromhex("9a00989680") + b"\0" * 10_000_000)
# 1 GiB of zeros, gzip-compressed (about 1 MiB), as an HTTP response; and gzip inside gzip.
def zeros_gz(total):
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b"\0" * (1 << 20)
    out = [c.compress(chunk) for _ in range(total >> 20)]
    out.append(c.flush())
    return b"".join(out)
bomb = zeros_gz(1 << 30)
head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: %s\r\nContent-Length: %d\r\n\r\n"
put("http-gzip-bomb.http", head % (b"gzip", len(bomb)) + bomb)
nested = gzip.compress(bomb, 9)
put("http-gzip-gzip-bomb.http", head % (b"gzip, gzip", len(nested)) + nested)
# A pcap of 20,000 TCP segments of 1,000 bytes (20 MB of one reassembled stream).
def pcap(n, size):
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    payload = b"x" * size
    seq = 1000
    for i in range(n):
        tcp = struct.pack(">HHIIBBHHH", 40000, 80, seq, 0, 5 << 4, 0x18, 65535, 0, 0) + payload
        ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), i & 0xFFFF, 0, 64, 6, 0,
                         bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])) + tcp
        eth = b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + ip
        out.append(struct.pack("<IIII", i, 0, len(eth), len(eth)) + eth)
        seq += size
    return b"".join(out)
put("big.pcap", pcap(20_000, 1000))
# A pcap whose second record claims 4 GB.
p = pcap(2, 100)
first = 24 + 16 + 14 + 20 + 20 + 100
put("pcap-lying-record.pcap", p[:first + 8] + struct.pack("<II", 0xFFFFFFF0, 0xFFFFFFF0) + p[first + 16:])
PY
# Hostile captures (scripts/capture-bombs.py): an HPACK bomb, header and CONTINUATION floods,
# 100,000 HTTP/2 streams, gzip and gRPC bombs on HTTP/2, a permessage-deflate message inflating
# to 2 GiB, frame lengths that lie, a WebSocket fragment flood. Each must end within 1 GiB of
# address space with a warning naming the limit that stopped it (checked below).
python3 scripts/capture-bombs.py "$dir"

# Peak RSS per run, where GNU time is installed.
measure=""
if /usr/bin/time -f %M -o /dev/null true 2>/dev/null; then
    measure="/usr/bin/time -f %M -o $dir/rss"
fi
fail=0
run() {
    local what=$1
    local mib=$2
    shift 2
    local start=$SECONDS
    rm -f "$dir/rss"
    timeout "$secs" prlimit --as=$((mib << 20)) -- $measure "$bin" "$@" >"$dir/out" 2>"$dir/err"
    local rc=$?
    local took=$((SECONDS - start))
    local peak=""
    local kib
    kib=$(tail -n1 "$dir/rss" 2>/dev/null)
    case "$kib" in '' | *[!0-9]*) ;; *) peak=", peak RSS $((kib / 1024)) MiB" ;; esac
    local why
    why=$(grep -m1 -E 'error|warning' "$dir/err" | cut -c1-110)
    if [ $rc -gt 1 ] || grep -q 'panicked' "$dir/err"; then
        echo "FAIL  $what: exit $rc after ${took}s${peak}: $(tail -c 300 "$dir/err")"
        fail=1
    else
        echo "ok    $what: exit $rc in ${took}s${peak} ${why:+— $why}"
    fi
}
echo "limits: ${mem_mib} MiB address space (nodes-*: ${nodes_mib} MiB), ${secs} s per run"
for f in "$dir"/*; do
    case "$(basename "$f")" in out | err | rss) continue ;; esac
    name=$(basename "$f")
    mib=$mem_mib
    case "$name" in nodes-*) mib=$nodes_mib ;; esac
    case "$name" in
    h2-* | ws-* | http1-*)
        # A capture bomb: within 1 GiB (the bound the bombs are held to), its warning names
        # the limit that stopped it, and every payload is converted (as JSON Lines) or named.
        run "inspect $name" 1024 inspect "$f"
        if ! grep -qE 'limit [a-z-]+|announces|claims|not continued' "$dir/out" "$dir/err"; then
            echo "FAIL  inspect $name: no warning names a limit"
            fail=1
        fi
        run "convert $name" 1024 convert "$f" --all --to json -o "$dir/converted"
        # Read as it arrives (what a capture over 64 MiB gets): the same bounds, and the same
        # warning, except where holding no payloads leaves no limit to reach (the 100,000
        # streams are all listed).
        run "inspect --stream $name" 1024 inspect --no-tree --no-hex --stream "$f"
        if [ "$name" != h2-100k-streams.pcap ] &&
            ! grep -qE 'limit [a-z-]+|announces|claims|not continued' "$dir/out" "$dir/err"; then
            echo "FAIL  inspect --stream $name: no warning names a limit"
            fail=1
        fi
        run "convert --stream $name" 1024 convert "$f" --all --to json --stream -o "$dir/converted"
        ;;
    pcap-*)
        run "inspect $name" "$mib" inspect "$f"
        run "convert $name" "$mib" convert "$f" --to cbor -o "$dir/converted"
        run "inspect --stream $name" "$mib" inspect --no-tree --no-hex --stream "$f"
        ;;
    *)
        run "inspect $name" "$mib" inspect "$f"
        run "convert $name" "$mib" convert "$f" --to cbor -o "$dir/converted"
        ;;
    esac
done
exit $fail
