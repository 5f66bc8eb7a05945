#!/usr/bin/env bash
# The profiler's repeatability: two precise runs of `wirelens compare` on the same file, one after
# the other, and how far apart their tail latencies (p99, p99.9) and medians are, row by row.
# Run it on an idle machine; the load average before and after is printed with the table.
#
#   scripts/profiler-repeat.sh [FILE] [RUNTIMES]      # default samples/transactions-1k.json, rust
#   SKIP_BUILD=1 scripts/profiler-repeat.sh           # uses target/release/wirelens as it is
set -euo pipefail

cd "$(dirname "$0")/.."
FILE="${1:-samples/transactions-1k.json}"
RUNTIMES="${2:-rust}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

[[ -n "${SKIP_BUILD:-}" ]] || cargo build --release >&2
WL="${CARGO_TARGET_DIR:-$PWD/target}/release/wirelens"

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for run in a b; do
  "$WL" compare --precise --runtime "$RUNTIMES" "$FILE" --csv "$WORK/$run.csv" >/dev/null
done
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$WORK/a.csv" "$WORK/b.csv" <<'PY'
import csv, sys

def rows(path):
    with open(path, newline="") as f:
        return {(r["format"], r["library"], r["runtime"]): r for r in csv.DictReader(f)}

a, b = rows(sys.argv[1]), rows(sys.argv[2])
figures = ["median_us", "p99_us", "p999_us"]
print(f"{'format':<12} {'library':<18} {'op':<6} " + " ".join(f"{f:>22}" for f in figures)
      + f" {'calls':>7}")
worst = {f: 0.0 for f in figures}
for key in sorted(a.keys() & b.keys()):
    for op in ("encode", "decode"):
        cells = []
        for f in figures:
            x, y = a[key].get(f"{op}_{f}", ""), b[key].get(f"{op}_{f}", "")
            if not x or not y:
                cells.append(f"{'-':>22}")
                continue
            x, y = float(x), float(y)
            diff = abs(x - y) / min(x, y) * 100 if min(x, y) > 0 else 0.0
            worst[f] = max(worst[f], diff)
            cells.append(f"{x:>8.3f} {y:>8.3f} {diff:>4.1f}%")
        calls = a[key].get(f"{op}_latency_calls", "")
        print(f"{key[0]:<12} {key[1]:<18} {op:<6} " + " ".join(cells) + f" {calls:>7}")
print("largest difference between the runs: "
      + ", ".join(f"{f} {worst[f]:.1f}%" for f in figures))
PY
