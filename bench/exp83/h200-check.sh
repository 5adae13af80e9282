#!/usr/bin/env bash
# This session's H200 check, if one is lent: the missing K (10, 12, 32) in the seed's
# harness with the copy floor in each process, twice, and validation of the fused levels there.
set -uo pipefail
B=${BIN:-target/release/mra-bench}
O=${OUT:-/tmp}/h200; mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv | tee "$O/gpu.txt"
$B validate -l fused-pipe,fused-cluster -K 10,12,13,32 -N 3,2047 2>&1 | tail -2 | tee "$O/validate.txt"
for round in 1 2; do
  for kl in "10 fused-pipe" "12 fused-pipe" "32 fused-cluster"; do
    set -- $kl
    $B -K $1 -l $2 --json 2>> "$O/run.err" | tee -a "$O/run.jsonl" > /dev/null
    tail -3 "$O/run.err" | grep -E "fraction of floor|SM clock" | tr '\n' ' '; echo " (K=$1 $2, round $round)"
  done
done
tar -C "$O" -czf "${OUT:-/tmp}/h200.tgz" . && rm -rf "$O"
