#!/usr/bin/env bash
# This session's closing GPU call: (1) if the GPU is an H200, run 101's K = 32 measurement and
# the proof sweep (bench/exp103/h200.sh); (2) run 105's DMMA chains microbenchmark; (3)
# scripts/gpu-check.sh at the final code (every level validated, L1-L3 timed against the copy);
# (4) compute-sanitizer memcheck and racecheck of fused-split, whose source changed (its SASS did not).
# From the repository root, with target/release/mra-bench; logs under $OUT.
set -uo pipefail
O=${OUT:-/tmp/final105}; B=target/release/mra-bench
mkdir -p "$O"
OUT="$O/h200" bash bench/exp103/h200.sh
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
nvcc -O3 -arch=sm_90 -o /tmp/dmma-chains bench/micro/dmma-chains.cu && /tmp/dmma-chains > "$O/dmma-chains.txt" 2>&1; echo "dmma-chains rc=$?"
grep -E "k8 .*warps/SM +(1|4|8) chains +(1|2|4) " "$O/dmma-chains.txt"
export MRA_TUNING_DB=/tmp/nodb-final105.json
OUT="$O/gpu-check" timeout 420 scripts/gpu-check.sh "$B" > "$O/gpu-check.log" 2>&1; echo "gpu-check rc=$?"
grep -E "passed|failed|cannot run|exit" "$O/gpu-check.log" | tail -6
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $B validate -l fused-split -K 32 -N 3 > "$O/sanitizer-$tool.txt" 2>&1; echo "$tool rc=$?"; tail -2 "$O/sanitizer-$tool.txt"
done
date -u +%FT%TZ | tee -a "$O/gpu.txt"
