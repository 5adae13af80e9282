#!/usr/bin/env bash
# Issue 9's proof at the current code: one sweep of the issue's eight K, every level, in one process on whatever
# GPU the lease gives (the README's table for that GPU); the sweep validates each level before it times it.
set -uo pipefail
O=${OUT:-/tmp/proof121}; B=target/release/mra-bench
mkdir -p "$O/sweep"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-proof121.json
$B sweep -K 6,8,10,12,16,20,24,32 -l all -n 100 --json "$O/sweep/sweep.json" --plot "$O/sweep/sweep.svg" > "$O/sweep/sweep.txt" 2>&1; echo "sweep rc=$?"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
grep -E "^(copy|bound|fused|fused-pipe|fused-ring|fused-groups|fused-cluster|fused-split) " "$O/sweep/sweep.txt"
grep -iE "failed|error" "$O/sweep/sweep.txt" | head -5
