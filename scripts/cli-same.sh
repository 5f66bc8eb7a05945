#!/usr/bin/env bash
# Runs the same CLI commands with two wirelens binaries over every sample and fixture, and says
# whether they wrote the same: standard output, standard error and exit status of each run.
# A refactoring that should change no behaviour is checked with it:
#
#   scripts/cli-same.sh OLD/wirelens NEW/wirelens [WORK]
#
# Exit 0 when every run agrees; else the runs that differ are listed (their outputs are kept in
# WORK/old and WORK/new, default a fresh folder under /tmp).
set -u
old=${1:?usage: cli-same.sh OLD NEW [WORK]}
new=${2:?usage: cli-same.sh OLD NEW [WORK]}
work=${3:-$(mktemp -d /tmp/cli-same.XXXXXX)}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 2
mkdir -p "$work/old" "$work/new"

# The inputs: every sample and every fixture that is an input (not an expected output, a
# licence or a note).
mapfile -t files < <(
  { ls samples/*; find tests/fixtures -type f; } |
    grep -v -E '(/expected/|/out/|/answers/|\.(md|txt|proto|avsc|py|js|json\.expected|tshark|sha256)$|LICENSE|COPYING|README|/fonts/|/runtimes/)' |
    sort
)

runs=0
run() { # NAME ARGS...: runs both binaries with ARGS, output to WORK/{old,new}/NAME
  local name=$1
  shift
  runs=$((runs + 1))
  for side in old new; do
    local bin=$old
    [ "$side" = new ] && bin=$new
    local dir="$work/$side/$name"
    mkdir -p "$(dirname "$dir")"
    timeout 60 "$bin" "$@" >"$dir.out" 2>"$dir.err" </dev/null
    echo "exit $?" >>"$dir.err"
  done
}

for f in "${files[@]}"; do
  key=${f//\//_}
  run "inspect/$key" inspect "$f" --no-hex
  run "layers/$key" inspect "$f" --layers --no-tree --no-hex
  run "json/$key" convert "$f" --to json
  run "all/$key" convert "$f" --all --to json --partial
  run "cbor/$key" convert "$f" --to cbor
done
# The input taken as it is.
for f in samples/*; do
  run "raw/${f//\//_}" convert "$f" --raw --to json
done
# With the schemas beside the samples.
for pair in orders-api:orders-api user-profile:user-profile transactions-1k:transactions user-profiles:user-profile; do
  data=${pair%%:*}
  proto=samples/${pair##*:}.proto
  for f in samples/"$data".*; do
    key=${f//\//_}
    run "schema-inspect/$key" inspect "$f" --proto "$proto" --no-hex
    run "schema-json/$key" convert "$f" --proto "$proto" --to json
  done
done
# Captures with their key logs, and payloads framed for a schema registry.
for keylog in $(find tests/fixtures -name '*.keylog' | sort); do
  for f in "${keylog%.keylog}".pcap "${keylog%.keylog}".pcapng; do
    [ -f "$f" ] || continue
    run "keylog/${f//\//_}" inspect "$f" --keylog "$keylog" --no-hex
    run "keylog-all/${f//\//_}" convert "$f" --keylog "$keylog" --all --to json --partial
  done
done
for f in tests/fixtures/avro/confluent/*.bin; do
  run "registry/${f//\//_}" inspect "$f" --registry tests/fixtures/avro/confluent/registry.json --no-hex
  run "registry-json/${f//\//_}" convert "$f" --registry tests/fixtures/avro/confluent/registry.json --to json
done
# Two readings of the same data compared by meaning.
for base in iot-metrics order-graphql risk-batch transactions-1k user-profile; do
  for other in samples/"$base".*; do
    [ "$other" = "samples/$base.json" ] && continue
    case $other in *.proto) continue ;; esac
    run "diff/${other//\//_}" diff "samples/$base.json" "$other"
  done
done

differ=0
while IFS= read -r f; do
  rel=${f#"$work/old/"}
  if ! cmp -s "$f" "$work/new/$rel"; then
    echo "differs: $rel"
    differ=$((differ + 1))
  fi
done < <(find "$work/old" -type f | sort)
echo "$runs runs of each binary, $differ output files differ (outputs in $work)"
[ "$differ" -eq 0 ]
