#!/usr/bin/env bash
# Run 149 (after run 148's H200 sweep): tune fused-pipe and fused at K = 12 and fused-split at K = 32 on the lent GPU into a
# fresh database, then two sweeps at K = 12 and 32 that use it.
set -uo pipefail
O=${OUT:-/tmp/run149}; B=target/release/mra-bench
mkdir -p "$O"; export MRA_TUNING_DB="$O/tuning-db.json"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
timeout 300 $B tune -l fused-pipe,fused -K 12 --budget 4m --top 5 --out "$O/tune-k12.json" > "$O/tune-k12.txt" 2>&1; echo "tune k12 rc=$?"
tail -16 "$O/tune-k12.txt"
timeout 120 $B tune -l fused-split -K 32 --strategy exhaustive --top 4 --out "$O/tune-k32.json" > "$O/tune-k32.txt" 2>&1; echo "tune k32 rc=$?"
tail -8 "$O/tune-k32.txt"
for r in 1 2; do
  $B sweep -K 12,32 -l copy,bound,fused,fused-pipe,fused-split -n 100 > "$O/sweep$r.txt" 2>&1; echo "sweep $r rc=$?"
  grep -E "^(copy|bound|fused|fused-pipe|fused-split) " "$O/sweep$r.txt"
done
date -u +%FT%TZ | tee -a "$O/gpu.txt"
