#!/usr/bin/env bash
# Run 160: fused-split K = 32 with persistent(1) (one block per SM for the whole launch) against its default grid
# (min(N, M) pairs): validated at odd N with the persistent grid, memcheck, then alternating processes.
set -uo pipefail
O=${OUT:-/tmp/run160}; B=target/release/mra-bench
mkdir -p "$O"; export MRA_TUNING_DB=$O/persistent-db.json; rm -f "$MRA_TUNING_DB"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
$B validate -l fused-split -K 32 -N 1,3,2047 --untuned 2>&1 | tail -4 | tee "$O/validate-default.txt"
$B tune -l fused-split -K 32 --fix persistent=1,fuse_k=2,prefetch_l2=2 -n 100 2>&1 | tail -12 | tee "$O/tune.txt"
$B validate -l fused-split -K 32 -N 1,3,17,300,2047,2048 2>&1 | tail -8 | tee "$O/validate-persistent.txt"
timeout 300 compute-sanitizer --tool memcheck $B validate -l fused-split -K 32 -N 300 2>&1 | tail -4 | tee "$O/memcheck.txt"
for r in 1 2 3; do
  $B sweep -K 32 -l copy,fused-split -n 100 --json "$O/persistent-r$r.json" 2>&1 | grep -E "fused-split|copy" | tail -3 | sed "s/^/persistent r$r: /"
  $B sweep -K 32 -l copy,fused-split -n 100 --untuned --json "$O/default-r$r.json" 2>&1 | grep -E "fused-split|copy" | tail -3 | sed "s/^/default r$r: /"
done 2>&1 | tee "$O/rounds.txt"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
