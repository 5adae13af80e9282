#!/usr/bin/env bash
# One device call: if the lent GPU is an H200, run 101's K = 32 measurement (bench/exp101/h200-101.sh)
# and the proof sweep (every K of issue 9, every level) in the same lease; on any other GPU
# do nothing (exit 0) so the lease can be handed back at once.
set -uo pipefail
O=${OUT:-/tmp/h200}
mkdir -p "$O/run"
if ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  echo "not an H200: $(nvidia-smi --query-gpu=name,serial --format=csv,noheader)"; exit 0
fi
OUT="$O/run" bash bench/exp101/h200-101.sh
export MRA_TUNING_DB=/tmp/nodb-h200.json
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader > "$O/run/sweep-gpu.txt"
date -u +%FT%TZ >> "$O/run/sweep-gpu.txt"
target/release/mra-bench sweep -K 6,8,10,12,16,20,24,32 -l all -n 100 --json "$O/run/sweep-all.json" > "$O/run/sweep-all.txt" 2>&1
echo "sweep rc $?"
tail -40 "$O/run/sweep-all.txt"
tar -C "$O" -czf "$O/run.tgz" run && rm -rf "$O/run"
