#!/usr/bin/env bash
# Fuzzes every target one after the other (one process each, the machine is shared), then keeps
# a minimised seed corpus per target in fuzz/corpus/. Needs cargo-fuzz; runs on the stable
# toolchain through RUSTC_BOOTSTRAP=1. Crashes land in fuzz/artifacts/<target>/; copy each into
# fuzz/regressions/<target>/ once fixed (tests/it/hostile_fuzz_replay.rs replays them).
#
# Every libFuzzer line in fuzz/logs/<target>.log is prefixed with the seconds since the start,
# and the summary line gives runs, cov/ft at start, at half time and at the end, and the second
# at which cov last grew (how close the run came to a plateau). The run prints every new edge's
# address (`-print_pcs=1`, address randomisation off so the addresses match the binary), and the
# second line names the code the second half's new edges are in, by crate, so a run can tell
# branches still found in wirelens from branches found inside a dependency (a decompressor, say)
# or in std code inlined into ours (hash table probes, sorting).
#
#   scripts/hostile-fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   MERGE=1 scripts/hostile-fuzz.sh ... also merges the new coverage into fuzz/merged/<target>/
set -uo pipefail
cd "$(dirname "$0")/../fuzz"
export RUSTC_BOOTSTRAP=1
secs=${1:-120}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=($(ls fuzz_targets | sed 's/\.rs$//'))
fi
mkdir -p logs work corpus

# The crates holding the edges first seen after HALF seconds (from INITED) of a run, by the
# source line of each edge (addr2line's innermost frame): a branch of std or hashbrown code
# inlined into a wirelens function counts as std's, so "wirelens" means a branch in our source.
# The wirelens lines among them follow, at most ten.
attribute() {
    local bin="${CARGO_TARGET_DIR:-target}/x86_64-unknown-linux-gnu/release/$1"
    awk -v half="$2" '$3 == "INITED" { t0 = $1 }
        t0 != "" && $2 == "NEW_PC:" && $1 - t0 > half { print $3 }' "logs/$1.log" |
        while read -r pc; do printf '0x%x\n' $((pc - 0x555555554000)); done |
        addr2line -e "$bin" >"logs/$1.new-edges"
    sed -E -e 's#^/rustc?/.*#std#' \
            -e 's#^.*/registry/src/[^/]*/([^/]*)-[0-9][^/]*/.*#\1#' \
            -e 's#^.*/fuzz/[^ ]*#fuzz-checks#' -e 's#^/.*/src/[^ ]*#wirelens#' \
            -e 's#^([a-z0-9_-]+)\.[0-9a-f]+-cgu\.[0-9]+:.*#\1#' -e 's#^\?\?:.*#unknown#' \
            "logs/$1.new-edges" |
        sort | uniq -c | sort -rn |
        awk '{ n += $1; c = c sep $2 " " $1; sep = ", " }
             END { printf "   second half'"'"'s new edges: %d (%s)\n", n, n ? c : "none" }'
    grep "^$(dirname "$PWD")/src/" "logs/$1.new-edges" |
        sed -E 's#^.*/(src/)#\1#; s/ \(discriminator [0-9]+\)//' | sort | uniq -c | head -10
}
for t in "${targets[@]}"; do
    mkdir -p "work/$t" "corpus/$t"
    cp -n corpus/"$t"/* "work/$t"/ 2>/dev/null
    echo "== $t ($secs s)"
    start=$(date +%s)
    nice -n 10 setarch -R cargo fuzz run -s none -a "$t" "work/$t" -- \
        -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -timeout=20 \
        -print_final_stats=1 -print_pcs=1 2>&1 |
        while IFS= read -r line; do
            printf '%d %s\n' $(($(date +%s) - start)) "$line"
        done >"logs/$t.log"
    code=${PIPESTATUS[0]}
    # "T #RUNS EVENT cov: C ft: F ..." lines. Seconds count from INITED (loading the corpus
    # can take minutes); start is INITED, half the last line at half the time left, end the last.
    awk -v half=$((secs / 2)) -v code="$code" '
        $2 ~ /^#[0-9]+$/ && / cov: / {
            for (i = 3; i <= NF; i++) { if ($i == "cov:") c = $(i+1); if ($i == "ft:") f = $(i+1) }
            if ($3 == "INITED") { t0 = $1; s = c "/" f; sc = c; lastc = c }
            if (t0 == "") next
            t = $1 - t0
            if (t <= half) { h = c "/" f; hc = c }
            if (c != lastc) { grew = t; lastc = c }
            runs = substr($2, 2); e = c "/" f; ec = c
        }
        END { printf "   exit %s: runs %s, cov/ft start %s half %s end %s, +%d edges in the second half, cov last grew at %ss after INITED\n",
              code, runs, s, h, e, ec - hc, grew + 0 }' "logs/$t.log"
    attribute "$t" "$((secs / 2))"
    grep -E 'ERROR|panicked|SUMMARY' "logs/$t.log" | head -3
    if [ "${MERGE:-0}" = 1 ]; then
        # Every edge of the committed corpus and the run, not every counter bucket (that keeps
        # the corpus small: `cargo test` replays it). Copy merged/<target> over corpus/<target>.
        rm -rf "merged/$t" && mkdir -p "merged/$t"
        cargo fuzz run -s none -a "$t" "merged/$t" "corpus/$t" "work/$t" -- -merge=1 \
            -use_counters=0 -max_len=65536 -timeout=20 >"logs/$t.merge.log" 2>&1
        echo "   merged: $(ls "merged/$t" | wc -l) files"
    fi
done
