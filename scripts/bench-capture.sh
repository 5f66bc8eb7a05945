#!/usr/bin/env bash
# Time and peak memory of wirelens on large captures of API traffic, beside tshark on the same
# files in the same run (issue #42's targets), one run each: the machine is shared, so quote
# ratios from one run.
#
#   scripts/bench-capture.sh                  # 100 MB, 1 GB and 2 GB; builds the release first
#   SIZES="100" SKIP_BUILD=1 scripts/bench-capture.sh
#
# The captures come from scripts/gen/capture.py (interleaved keep-alive HTTP/1.1 connections
# with JSON bodies, some gzip and chunked, and h2c gRPC calls), written to WORK (default a
# temporary folder, removed at the end; KEEP=1 keeps it), with the counts the generator wrote.
# For each size it prints one table row per command: seconds, peak RSS (/usr/bin/time's maximum
# resident set) in MiB and as a multiple of the file, and what was found: HTTP responses (and
# gRPC messages) against the generator's counts, and whether a limit cut the reading.
set -euo pipefail

cd "$(dirname "$0")/.."
SIZES="${SIZES:-100 1000 2000}"
WORK="${WORK:-$(mktemp -d)}"
[[ -n "${KEEP:-}" ]] || trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK"

need_apt=()
[[ -x /usr/bin/time ]] || need_apt+=(time)
command -v tshark >/dev/null || need_apt+=(tshark)
if ((${#need_apt[@]})); then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends "${need_apt[@]}" >/dev/null
fi
[[ -n "${SKIP_BUILD:-}" ]] || cargo build --release --bin wirelens >&2
WL="${CARGO_TARGET_DIR:-$PWD/target}/release/wirelens"

# Runs a command under /usr/bin/time: "seconds peak_kib" in $WORK/t, its stdout in $1.
timed() {
  local out="$1"
  shift
  /usr/bin/time -f "%e %M" -o "$WORK/t" "$@" >"$out" 2>"$WORK/err" || true
  read -r SECS KIB <"$WORK/t"
}

row() { # name file_bytes found
  python3 - "$1" "$SECS" "$KIB" "$2" "$3" <<'PY'
import sys
name, secs, kib, size, found = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
print(f"| {name} | {secs:.1f} | {kib / 1024:.0f} | {kib * 1024 / size:.2f}× | {found} |")
PY
}

echo "| command | seconds | peak RSS (MiB) | × file | found |"
echo "|---|---|---|---|---|"
for mb in $SIZES; do
  pcap="$WORK/capture-$mb.pcap"
  [[ -s "$pcap" ]] || python3 scripts/gen/capture.py "$pcap" "$mb" --summary "$pcap.json" 2>/dev/null
  size=$(stat -c %s "$pcap")
  read -r responses grpc <<<"$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["http_responses"], s["grpc_messages"]["total"])' "$pcap.json")"
  echo "| **$((size / 1000000)) MB capture**: $responses HTTP responses, $grpc gRPC messages | | | | |"

  timed "$WORK/tshark.txt" tshark -r "$pcap" -Y http.response -T fields -e frame.number
  row 'tshark -Y http.response -T fields' "$size" "$(wc -l <"$WORK/tshark.txt") responses"

  timed "$WORK/inspect.txt" "$WL" inspect --no-tree --no-hex "$pcap"
  found="$(grep -c 'HTTP/1.1 response' "$WORK/inspect.txt" || true) responses, $(grep -c 'gRPC frame' "$WORK/inspect.txt" || true) gRPC"
  grep -qE 'the limit of|\(limit [a-z-]+' "$WORK/inspect.txt" "$WORK/err" && found="$found, a limit was reached"
  row 'wirelens inspect --no-tree --no-hex' "$size" "$found"

  timed "$WORK/convert.jsonl" "$WL" convert --all --to json "$pcap"
  found="$(wc -l <"$WORK/convert.jsonl") JSON lines"
  grep -qE 'the limit of|\(limit [a-z-]+' "$WORK/err" && found="$found, a limit was reached"
  row 'wirelens convert --all --to json' "$size" "$found"
  rm -f "$WORK/convert.jsonl" "$WORK/inspect.txt" "$WORK/tshark.txt"
done
