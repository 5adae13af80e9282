#!/usr/bin/env bash
# Run 140 (a check): fused with pair_rows(1) at every pad, align_runs and coalesce_c (128 threads, unroll_k 0, min_blocks 1),
# K = 5, 7, 11, 12, 13, 16: tune validates each candidate against the FP64 reference before timing it (-r 3).
set -uo pipefail
O=${OUT:-/tmp/check140}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
timeout 400 $B tune -l fused -K 5,7,11,12,13,16 --fix pair_rows=1,threads=128,unroll_k=0,min_blocks=1 --strategy exhaustive -r 3 -n 20 \
  --db "$O/db.json" > "$O/tune.txt" 2>&1; echo "tune rc=$?"
grep -E "^fused K=" "$O/tune.txt"; grep -ciE "wrong|invalid" "$O/tune.txt"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
