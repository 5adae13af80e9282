#!/usr/bin/env bash
# Run 152: ncu of the H200's misses (fused-pipe K = 10, 12; fused-split K = 32) and the bound level at K = 12 and 32.
set -uo pipefail
O=${OUT:-/tmp/run152}; mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
target/release/mra-bench --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
OUT="$O" CASES="fused-pipe 10;fused-pipe 12;bound 12;fused-split 32;bound 32" bash bench/exp88/ncu.sh
date -u +%FT%TZ | tee -a "$O/gpu.txt"
