#!/usr/bin/env bash
# Peak memory and time of the wirelens CLI and app on real-sized generated inputs, beside the
# usual tools, one run each (the machine is shared: quote ratios from one run).
#
#   scripts/bench-memory.sh                 # builds target/release/wirelens first
#   SKIP_BUILD=1 RECORDS=330000 SPANS=20000 scripts/bench-memory.sh
#
# Inputs (made by scripts/gen/): a JSON document of RECORDS order records (330,000: 50 MB) and an
# OTLP trace batch of SPANS spans made by Python's protobuf (20,000: 9.3 MB).
# Peak RSS is /usr/bin/time's maximum resident set; the app's is its VmHWM under Xvfb, read when
# it logs (WIRELENS_LOG_TIMES) that every column is shown, or after APP_WAIT seconds.
# Installs what it needs when missing: time, jq, protoc, xvfb (apt); msgpack, orjson, protobuf,
# grpcio-tools (pip).
set -euo pipefail

cd "$(dirname "$0")/.."
RECORDS="${RECORDS:-330000}"
SPANS="${SPANS:-20000}"
APP_WAIT="${APP_WAIT:-120}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

need_apt=()
[[ -x /usr/bin/time ]] || need_apt+=(time)
command -v jq >/dev/null || need_apt+=(jq)
command -v protoc >/dev/null || need_apt+=(protobuf-compiler)
command -v xvfb-run >/dev/null || need_apt+=(xvfb xauth)
if ((${#need_apt[@]})); then
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi
python3 -c 'import msgpack, orjson, google.protobuf, grpc_tools' 2>/dev/null ||
  python3 -m pip install -q msgpack orjson protobuf grpcio-tools

[[ -n "${SKIP_BUILD:-}" ]] || cargo build --release >&2
WL="${CARGO_TARGET_DIR:-$PWD/target}/release/wirelens"

python3 scripts/gen/records.py "$RECORDS" "$WORK/big.json"
python3 scripts/gen/otlp.py "$SPANS" "$WORK/otlp.pb"
MB() { python3 -c 'import os,sys; print(f"{os.path.getsize(sys.argv[1])/1e6:.1f}")' "$1"; }
JSON_MB="$(MB "$WORK/big.json")"
"$WL" convert "$WORK/big.json" --to msgpack -o "$WORK/big.msgpack"
MP_MB="$(MB "$WORK/big.msgpack")"
OTLP_MB="$(MB "$WORK/otlp.pb")"

# "name|command" → a table row: seconds, peak RSS in MB and as a multiple of the input.
row() {
  local name="$1" input_mb="$2"
  shift 2
  /usr/bin/time -f "%e %M" -o "$WORK/t" "$@" >/dev/null 2>"$WORK/err" || {
    echo "| $name | failed: $(tail -1 "$WORK/err") | | |"
    return
  }
  read -r secs kb <"$WORK/t"
  python3 - "$name" "$secs" "$kb" "$input_mb" <<'PY'
import sys
name, secs, kb, mb = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
print(f"| {name} | {secs:.2f} | {kb/1024:.0f} | {kb*1024/1e6/mb:.1f}× |")
PY
}

PROTO=(--proto tests/data/otel/opentelemetry/proto/trace/v1/trace.proto -I tests/data/otel
  --message opentelemetry.proto.trace.v1.TracesData)
PY_MSGPACK='import sys,json,msgpack; open(sys.argv[2],"wb").write(msgpack.packb(json.load(open(sys.argv[1]))))'
PY_MSGPACK_JSON='import sys,msgpack,orjson; open(sys.argv[2],"wb").write(orjson.dumps(msgpack.unpackb(open(sys.argv[1],"rb").read())))'

# A table's title and head.
table() {
  printf '\n%s\n\n| command | seconds | peak RSS (MiB) | × input |\n|---|---:|---:|---:|\n' "$1"
}

# The app: opened on the file under Xvfb; its own log says when the columns are shown.
app_row() {
  local file="$1" input_mb="$2"
  WIRELENS_LOG_TIMES=1 xvfb-run -a -s "-screen 0 1600x1000x24" "$WL" "$file" 2>"$WORK/app.err" &
  local runner=$! pid="" waited=0
  while [[ -z "$pid" && $waited -lt 50 ]]; do
    sleep 0.2
    waited=$((waited + 1))
    pid="$(pgrep -n -f "^$WL $file" || true)"
  done
  local seen=0
  for _ in $(seq 1 $((APP_WAIT * 5))); do
    if grep -q "4 of 4 columns shown" "$WORK/app.err" 2>/dev/null; then
      seen=1
      break
    fi
    sleep 0.2
  done
  local hwm
  hwm="$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)"
  kill "$pid" 2>/dev/null || true
  wait "$runner" 2>/dev/null || true
  local first all
  first="$(grep -m1 -o '[0-9.]* s: [1-9] of 4 columns shown' "$WORK/app.err" | cut -d' ' -f1 || true)"
  all="$(grep -m1 -o '[0-9.]* s: 4 of 4 columns shown' "$WORK/app.err" | cut -d' ' -f1 || true)"
  [[ $seen == 1 ]] || all="not within ${APP_WAIT} s"
  python3 - "$hwm" "$input_mb" "${first:-none}" "${all:-none}" <<'PY'
import sys
kb, mb, first, every = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
print(f"| app, all four columns | source tree at {first} s, every column at {every} s | {kb/1024:.0f} | {kb*1024/1e6/mb:.1f}× |")
PY
}

{
  echo "<!-- bench-memory:start -->"
  echo "Made by \`scripts/bench-memory.sh\` on $(date -u +%Y-%m-%d) ($(nproc) cores, load average"
  echo "$(cut -d' ' -f1-3 /proc/loadavg) at the end). One run each; peak RSS as /usr/bin/time reports it."
  table "JSON: $RECORDS records, $JSON_MB MB."
  row "wirelens convert --to msgpack" "$JSON_MB" "$WL" convert "$WORK/big.json" --to msgpack -o "$WORK/o.msgpack"
  row "Python json + msgpack" "$JSON_MB" python3 -c "$PY_MSGPACK" "$WORK/big.json" "$WORK/py.msgpack"
  row "wirelens convert --to json" "$JSON_MB" "$WL" convert "$WORK/big.json" --to json -o "$WORK/o.json"
  row "jq -c ." "$JSON_MB" jq -c . "$WORK/big.json"
  app_row "$WORK/big.json" "$JSON_MB"
  table "MessagePack: the same records, $MP_MB MB (wirelens' encoding)."
  row "wirelens convert --to json" "$MP_MB" "$WL" convert "$WORK/big.msgpack" --to json -o "$WORK/mp.json"
  row "Python msgpack + orjson" "$MP_MB" python3 -c "$PY_MSGPACK_JSON" "$WORK/big.msgpack" "$WORK/py.json"
  table "OTLP: $SPANS spans, $OTLP_MB MB, with its schema."
  row "wirelens convert --to json" "$OTLP_MB" "$WL" convert "$WORK/otlp.pb" "${PROTO[@]}" --to json -o "$WORK/otlp.json"
  row "protoc --decode" "$OTLP_MB" sh -c 'exec protoc --decode=opentelemetry.proto.trace.v1.TracesData -Itests/data/otel tests/data/otel/opentelemetry/proto/trace/v1/trace.proto <"$1"' sh "$WORK/otlp.pb"
  row "wirelens compare --quick" "$OTLP_MB" "$WL" compare "$WORK/otlp.pb" "${PROTO[@]}" --quick --runtime rust
  echo "<!-- bench-memory:end -->"
} | tee "$WORK/table.md"

python3 - "$WORK/table.md" <<'PY'
import re, sys
table = open(sys.argv[1]).read().strip()
doc = open("BENCHMARKS.md").read()
pattern = re.compile(r"<!-- bench-memory:start -->.*?<!-- bench-memory:end -->", re.S)
doc = pattern.sub(lambda _: table, doc) if pattern.search(doc) else doc.rstrip() + "\n\n" + table + "\n"
open("BENCHMARKS.md", "w").write(doc)
PY
