#!/usr/bin/env bash
# Run 120: fused-split at K = 25..31 (padded to 32) — validate, compute-sanitizer at odd and even K,
# then fused-split against fused-cluster at K = 25..32, two sweeps in separate processes.
set -uo pipefail
O=${OUT:-/tmp/out120}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-120.json
$B validate -l fused-split -K 25,26,27,28,29,30,31,32 -N 1,3,2047 > "$O/validate.txt" 2>&1; echo "validate rc=$?"; tail -n 3 "$O/validate.txt"
for tool in memcheck racecheck; do
  timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $B validate -l fused-split -K 29,30,31 -N 3 > "$O/sanitize-$tool.txt" 2>&1
  echo "sanitize $tool rc=$?"; grep -E "passed|SUMMARY" "$O/sanitize-$tool.txt" | tail -n 2
done
for r in 1 2; do
  $B sweep -K 25,26,27,28,29,30,31,32 -l fused-split,fused-cluster -n 100 --json "$O/sweep-r$r.json" > "$O/sweep-r$r.txt" 2>&1
  echo "sweep r$r rc=$?"; grep -vE "^\s*$" "$O/sweep-r$r.txt" | tail -n 16
done
