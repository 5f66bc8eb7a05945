#!/usr/bin/env bash
# The app on one file, as a person would use it under Xvfb: peak memory, and each frame's CPU
# time (eframe's measure: drawing and rendering) while the file loads, while the first payload
# is analysed, with no job running, and while the payload list scrolls; issue #42's targets are
# p99 ≤ 16 ms while loading and scrolling, and memory ≤ 2× the file. One run.
#
#   scripts/bench-app-frames.sh CAPTURE [SECONDS_TO_LOAD]   # default 90
#
# Needs Xvfb, xdotool and GNU time (apt: xvfb xdotool time); uses target/release/wirelens
# (CARGO_TARGET_DIR honoured), built first unless SKIP_BUILD=1. Leaves a screenshot of the end
# of the scroll in WORK (default a temporary folder, removed unless KEEP=1) when ImageMagick is
# installed.
set -euo pipefail

cd "$(dirname "$0")/.."
file=$(realpath "$1")
load_secs=${2:-90}
WORK="${WORK:-$(mktemp -d)}"
mkdir -p "$WORK"
[[ -n "${SKIP_BUILD:-}" ]] || cargo build --release --bin wirelens >&2
WL="${CARGO_TARGET_DIR:-$PWD/target}/release/wirelens"
display=":$((60 + RANDOM % 30))"

Xvfb "$display" -screen 0 1600x1000x24 >/dev/null 2>&1 &
xvfb=$!
cleanup() {
    kill "$xvfb" 2>/dev/null || true
    [[ -n "${KEEP:-}" ]] || rm -rf "$WORK"
}
trap cleanup EXIT
sleep 1
export DISPLAY=$display
mkdir -p "$WORK/home"
started=$(date +%s.%N)
HOME="$WORK/home" WIRELENS_FRAME_LOG="$WORK/frames" \
    /usr/bin/time -f "%e %M" -o "$WORK/time" "$WL" "$file" &
app=$!
win=""
for _ in $(seq 1 50); do
    win=$(xdotool search --name wirelens 2>/dev/null | head -n1 || true)
    [[ -n "$win" ]] && break
    sleep 0.2
done
[[ -n "$win" ]] || { echo "no wirelens window appeared" >&2; exit 1; }
xdotool windowsize "$win" 1600 1000 windowmove "$win" 0 0
sleep "$load_secs"
# Frames so far are the load; the ones after are the scroll.
xdotool windowfocus --sync "$win" || true
xdotool mousemove 150 500
sleep 1
before=$(date +%s.%N)
for _ in $(seq 1 40); do
    xdotool click --repeat 10 --delay 15 5
done
for _ in $(seq 1 20); do
    xdotool click --repeat 10 --delay 15 4
done
after=$(date +%s.%N)
sleep 1
if command -v convert >/dev/null; then
    xwd -root -silent | convert xwd:- "png:$WORK/scrolled.png" || true
fi
xdotool key --window "$win" ctrl+q || true
for _ in $(seq 1 50); do
    kill -0 "$app" 2>/dev/null || break
    sleep 0.2
done
kill "$app" 2>/dev/null || true
wait "$app" 2>/dev/null || true

python3 - "$WORK/frames" "$WORK/time" "$(stat -c %s "$file")" "$before" "$after" "$started" <<'PY'
import sys
frames = [l.split() for l in open(sys.argv[1]) if l.strip()]
secs, kib = open(sys.argv[2]).read().split()[-2:]
size = int(sys.argv[3])
# The scroll's moments, in seconds since the app started (as the log's third column counts).
scroll_from = float(sys.argv[4]) - float(sys.argv[6])
scroll_to = float(sys.argv[5]) - float(sys.argv[6])
ms = lambda f: float(f[0]) * 1000
loading = [ms(f) for f in frames if f[1] == "2"]
working = [ms(f) for f in frames if f[1] == "1"]
idle = [ms(f) for f in frames if f[1] == "0"]
scrolling = [ms(f) for f in frames if scroll_from <= float(f[2]) <= scroll_to + 0.5]

def stats(name, ms):
    if not ms:
        print(f"| {name} | 0 | | | |")
        return
    ms = sorted(ms)
    pick = lambda q: ms[min(len(ms) - 1, int(q * len(ms)))]
    print(f"| {name} | {len(ms)} | {pick(0.5):.1f} | {pick(0.99):.1f} | {ms[-1]:.1f} |")

print(f"peak RSS {int(kib) / 1024:.0f} MiB ({int(kib) * 1024 / size:.2f}× the file), {len(frames)} frames")
print("| frames | count | p50 ms | p99 ms | max ms |")
print("|---|---|---|---|---|")
stats("while the capture loads", loading)
stats("while another job runs (the first payload's analysis)", working)
stats("with no job running", idle)
stats("while the list scrolls", scrolling)
longest = sorted(frames, key=lambda f: -float(f[0]))[:5]
print("longest frames (ms at seconds since start, state): " + ", ".join(
    f"{ms(f):.1f} at {f[2]} s ({f[1]})" for f in longest))
PY
