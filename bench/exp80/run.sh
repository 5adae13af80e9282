#!/usr/bin/env bash
# Run 80: the K with the seed's shared stream data and with --stream-data private,
# alternating twice in separate processes (copy + the fused levels), then the README main job
# in both modes. Logs and JSON under $OUT.
set -uo pipefail
BIN=${BIN:-target/release/mra-bench}
O=${OUT:-/tmp/run80}
mkdir -p "$O"
export MRA_KERNEL_CACHE=$(mktemp -d)
nvidia-smi --query-gpu=name,serial,power.limit,driver_version,clocks.max.sm --format=csv | tee "$O/gpu.txt"
KS=6,8,10,12,16,20,24,32
LV=fused,fused-pipe,fused-groups,fused-cluster
for round in 1 2; do
  for d in shared private; do
    echo "== round $round, --stream-data $d"
    timeout 200 "$BIN" sweep -K $KS -l $LV --no-peak --stream-data $d --json "$O/sweep-$d-$round.json" > "$O/sweep-$d-$round.txt" 2> "$O/sweep-$d-$round.err"
    echo "rc $?"; cat "$O/sweep-$d-$round.txt"
  done
done
for d in shared private; do
  echo "== main job, --stream-data $d"
  timeout 60 "$BIN" -K 16 -N 2048 -n 100 -r 5 -l 3 --stream-data $d --json > "$O/main-$d.jsonl" 2> "$O/main-$d.err"; echo "rc $?"; tail -3 "$O/main-$d.err"
done
# The device call returns at most 8 files: one archive.
tar -C "$O" -czf "$O/../run80.tgz" . && rm -rf "$O"
