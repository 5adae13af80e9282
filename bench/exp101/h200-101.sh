#!/usr/bin/env bash
# Run 101 on an H200 if one is lent: K = 32's copy, bound, fused-cluster and fused-split in one
# sweep (twice), then fused-cluster and fused-split alone in their processes, alternating.
set -uo pipefail
B=target/release/mra-bench
O=${OUT:-/tmp/h200-101}
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-h200.json
$B validate -l fused-split -K 32 -N 1,3,2047 2>&1 | tail -1 | tee "$O/validate.txt"
for r in 1 2; do
  $B sweep -K 32 -l copy,bound,fused-cluster,fused-split -n 100 --json "$O/sweep$r.json" > "$O/sweep$r.txt" 2>&1
  grep -E "^(copy|bound|fused-cluster|fused-split) " "$O/sweep$r.txt"
done
for r in 1 2; do for l in fused-cluster fused-split; do
  $B -l $l -K 32 -n 100 -r 5 2>&1 | grep -E "^# $l: median" | tee -a "$O/alone.txt"
done; done
