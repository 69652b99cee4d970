#!/usr/bin/env bash
# The cluster runs of docs/results/datafusion.md: starts a scheduler and EXECUTORS executors
# (none: one process), times RUNS lidx-sql invocations of the scan query; children killed on exit.
# Usage: datafusion-cluster.sh BIN_DIR TABLE RUNS EXECUTORS SLOTS PARTITIONS [LIDX_SQL_DIR]
# EXECUTORS=0: single process. Prints one line per run: seconds, then the answer (CSV).
set -euo pipefail
bin=$1; table=$2; runs=$3; executors=$4; slots=$5; parts=$6; sqlbin=${7:-$1}
q="SELECT count(*), bit_xor(key), max(value) FROM large"
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
args=(--partitions "$parts" --format csv --table "large=$table")
if [ "$executors" -gt 0 ]; then
  "$bin/lidx-scheduler" --bind 127.0.0.1:0 > "$work/sched.out" 2> "$work/sched.err" & pids+=($!)
  for i in $(seq 50); do grep -q listening "$work/sched.out" 2>/dev/null && break; sleep 0.1; done
  addr=$(sed -n 's/^lidx-scheduler listening on //p' "$work/sched.out")
  for e in $(seq "$executors"); do
    mkdir "$work/e$e"
    "$bin/lidx-executor" --scheduler "$addr" --port $((52000 + 2*e)) --grpc-port $((52001 + 2*e)) \
      --slots "$slots" --id "e$e" --work-dir "$work/e$e" > "$work/e$e.out" 2> "$work/e$e.err" & pids+=($!)
    for i in $(seq 100); do grep -q "registration succeed" "$work/e$e.err" 2>/dev/null && break; sleep 0.1; done
  done
  args+=(--cluster "$addr")
fi
for r in $(seq "$runs"); do
  s=$(date +%s.%N)
  out=$("$sqlbin/lidx-sql" "${args[@]}" "$q" | tail -1)
  e=$(date +%s.%N)
  echo "$(echo "$e - $s" | bc) $out"
done
if [ "$executors" -gt 0 ]; then
  for e in $(seq "$executors"); do echo "e$e tasks: $(grep -c 'lidx parts [1-9]' "$work/e$e.err")"; done
fi
rm -rf "$work"
