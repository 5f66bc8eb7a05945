#!/usr/bin/env bash
# Times the wirelens CLI, whole process, against the usual tools on the same generated inputs,
# and writes the tables into BENCHMARKS.md between the bench-cli markers (a rerun replaces them).
#
#   scripts/bench-cli.sh            # inputs of 150,000 transaction records (about 22 MB of JSON)
#   RECORDS=30000 RUNS=3 scripts/bench-cli.sh   # SKIP_BUILD=1 uses target/release/wirelens as is
#   (under $CARGO_TARGET_DIR when that is set)
#
# Installs what it needs when missing: hyperfine, jq, protoc (apt), msgpack, cbor2, orjson (pip).
set -euo pipefail

cd "$(dirname "$0")/.."
RECORDS="${RECORDS:-150000}"
RUNS="${RUNS:-5}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

need_apt=()
command -v hyperfine >/dev/null || need_apt+=(hyperfine)
command -v jq >/dev/null || need_apt+=(jq)
command -v protoc >/dev/null || need_apt+=(protobuf-compiler)
if ((${#need_apt[@]})); then
  apt-get update -qq && apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
python3 -c 'import msgpack, cbor2, orjson' 2>/dev/null ||
  python3 -m pip install -q msgpack cbor2 orjson

# The bench build makes target/release/wirelens too, with the same features as `cargo bench`,
# so running this script after the criterion suite (or before it) builds the dependencies once.
[[ -n "${SKIP_BUILD:-}" ]] || cargo bench --no-default-features --no-run >&2
WL="${CARGO_TARGET_DIR:-$PWD/target}/release/wirelens"
MESSAGE=wirelens.samples.TransactionHistory

# Inputs: the 15,000-record sample's records repeated up to RECORDS, in every format.
python3 - "$RECORDS" "$WORK/big.json" <<'PY'
import json, sys
n, out = int(sys.argv[1]), sys.argv[2]
doc = json.load(open("samples/transactions-15k.json"))
records = doc["transactions"]
doc["transactions"] = [records[i % len(records)] for i in range(n)]
doc["count"] = n
json.dump(doc, open(out, "w"))
PY
"$WL" convert "$WORK/big.json" --to msgpack -o "$WORK/big.msgpack"
"$WL" convert "$WORK/big.json" --to cbor -o "$WORK/big.cbor"
"$WL" convert "$WORK/big.json" --to protobuf --proto samples/transactions.proto \
  --message "$MESSAGE" -o "$WORK/big.pb"

# The inputs reach the disk before anything is timed: otherwise the kernel writes them back
# (tens of MB, half a minute after they were made) while the first commands run, on the same two
# cores.
sync

size() { python3 -c 'import os,sys; print(f"{os.path.getsize(sys.argv[1])/1e6:.1f} MB")' "$1"; }

PY_MSGPACK='import sys,msgpack,orjson; sys.stdout.buffer.write(orjson.dumps(msgpack.unpackb(open(sys.argv[1],"rb").read())))'
PY_CBOR='import sys,cbor2,orjson; sys.stdout.buffer.write(orjson.dumps(cbor2.loads(open(sys.argv[1],"rb").read())))'

run() { # name, then hyperfine commands
  local name="$1"
  shift
  hyperfine --style basic --warmup 1 --runs "$RUNS" --export-markdown "$WORK/$name.md" "$@" >&2
}

run protobuf \
  -n "wirelens convert --to json" "$WL convert $WORK/big.pb --proto samples/transactions.proto --message $MESSAGE --to json" \
  -n "protoc --decode" "protoc --decode=$MESSAGE -Isamples samples/transactions.proto < $WORK/big.pb"
run json \
  -n "wirelens convert --to json" "$WL convert $WORK/big.json --to json" \
  -n "jq -c ." "jq -c . $WORK/big.json"
run msgpack \
  -n "wirelens convert --to json" "$WL convert $WORK/big.msgpack --to json" \
  -n "python msgpack + orjson" "python3 -c '$PY_MSGPACK' $WORK/big.msgpack"
run cbor \
  -n "wirelens convert --to json" "$WL convert $WORK/big.cbor --to json" \
  -n "python cbor2 + orjson" "python3 -c '$PY_CBOR' $WORK/big.cbor"

{
  echo "<!-- bench-cli:start -->"
  echo "Made by \`scripts/bench-cli.sh\` on $(date -u +%Y-%m-%d) ($(nproc) cores, load average"
  echo "$(cut -d' ' -f1-3 /proc/loadavg) at the end, this script's own runs included). Inputs: $RECORDS"
  echo "transaction records: JSON $(size "$WORK/big.json"), MessagePack $(size "$WORK/big.msgpack"),"
  echo "CBOR $(size "$WORK/big.cbor"), Protobuf $(size "$WORK/big.pb"). Whole processes, output to"
  echo "/dev/null, $RUNS runs after one warm-up."
  for name in protobuf json msgpack cbor; do
    echo
    echo "#### $name input"
    echo
    sed 's/`[^`]*\/target\/release\/wirelens/`wirelens/; s/\/tmp\/tmp\.[A-Za-z0-9]*\///g' "$WORK/$name.md"
  done
  echo "<!-- bench-cli:end -->"
} >"$WORK/table.md"

python3 - "$WORK/table.md" <<'PY'
import re, sys
table = open(sys.argv[1]).read().rstrip("\n")
try:
    doc = open("BENCHMARKS.md").read()
except FileNotFoundError:
    doc = "# Benchmarks\n\n## CLI, whole process\n\n<!-- bench-cli:start -->\n<!-- bench-cli:end -->\n"
pattern = re.compile(r"<!-- bench-cli:start -->.*?<!-- bench-cli:end -->", re.S)
if not pattern.search(doc):
    doc = doc.rstrip("\n") + "\n\n## CLI, whole process\n\n" + table + "\n"
else:
    doc = pattern.sub(lambda _: table, doc)
open("BENCHMARKS.md.tmp", "w").write(doc)
PY
mv BENCHMARKS.md.tmp BENCHMARKS.md
echo "BENCHMARKS.md updated" >&2
