#!/usr/bin/env bash
# Fuzzes every target one after the other (one process each, the machine is shared), then keeps
# a minimised seed corpus per target in fuzz/corpus/. Needs cargo-fuzz; runs on the stable
# toolchain through RUSTC_BOOTSTRAP=1. Crashes land in fuzz/artifacts/<target>/; copy each into
# fuzz/regressions/<target>/ once fixed (tests/it/hostile_fuzz_replay.rs replays them).
#
#   scripts/hostile-fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
set -uo pipefail
cd "$(dirname "$0")/../fuzz"
export RUSTC_BOOTSTRAP=1
secs=${1:-120}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=($(ls fuzz_targets | sed 's/\.rs$//'))
fi
[ -d seeds ] || python3 ../scripts/hostile-seeds.py >/dev/null
mkdir -p logs work corpus
for t in "${targets[@]}"; do
    mkdir -p "work/$t" "corpus/$t"
    cp -n seeds/"$t"/* "work/$t"/ 2>/dev/null
    cp -n corpus/"$t"/* "work/$t"/ 2>/dev/null
    echo "== $t ($secs s)"
    cargo fuzz run -s none -a "$t" "work/$t" -- \
        -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -timeout=20 \
        -print_final_stats=1 >"logs/$t.log" 2>&1
    echo "   exit $?: $(grep -E '^#[0-9]+' "logs/$t.log" | tail -1)"
    grep -E 'ERROR|panicked|SUMMARY' "logs/$t.log" | head -3
done
