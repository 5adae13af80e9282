#!/usr/bin/env bash
# Run 139: fused-pipe at K = 10 on an H100, every candidate of the main knobs (threads, min_blocks, pad, pair_rows, fuse_k,
# bulk_copy) with stack 1, buffers 2, persistent 0, unroll_k 0, align_runs 0 fixed: 256 candidates, -r 15, one process,
# fresh database; the defaults among them (first).
set -uo pipefail
O=${OUT:-/tmp/run139}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
timeout 500 $B tune -l fused-pipe -K 10 --fix stack=1,buffers=2,persistent=0,unroll_k=0,align_runs=0 --strategy exhaustive -r 15 -n 100 \
  --db "$O/db.json" --out "$O/summary.json" --top 12 > "$O/tune.txt" 2>&1; echo "tune rc=$?"
grep -vE "^  fused-pipe K=" "$O/tune.txt" | head -30
date -u +%FT%TZ | tee -a "$O/gpu.txt"
