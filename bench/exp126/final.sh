#!/usr/bin/env bash
# This session's closing GPU call, at the final code: fused-cluster at every K from 25 to 31 x N 1, 3, 2047 (the new
# K = 26 and 29 defaults among them), scripts/gpu-check.sh, scripts/export-check.sh, the README's main job, and the
# sweep of every K from 1 to 32 (run 109's script).
set -uo pipefail
O=${OUT:-/tmp/final126}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-final126.json
$B validate -l fused-cluster -K 25,26,27,28,29,30,31 -N 1,3,2047 > "$O/validate-k25-31.txt" 2>&1; echo "validate K 25-31 rc=$?"; tail -n 1 "$O/validate-k25-31.txt"
OUT="$O/gpu-check" timeout 420 scripts/gpu-check.sh "$B" > "$O/gpu-check.log" 2>&1; echo "gpu-check rc=$?"
grep -E "passed|failed|cannot run|exit" "$O/gpu-check.log" | tail -4
OUT="$O/export-check" timeout 300 scripts/export-check.sh "$B" > "$O/export-check.txt" 2>&1; echo "export-check rc=$?"; tail -n 3 "$O/export-check.txt"
$B -K 16 -N 2048 -n 100 -r 5 -l 3 > "$O/readme-main-job.txt" 2>&1; echo "main job rc=$?"; grep -iE "floor|L3" "$O/readme-main-job.txt" | tail -3
OUT="$O/every-k" bash bench/exp108/run109.sh > "$O/every-k.log" 2>&1; echo "every-k rc=$?"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf checks.tgz gpu-check export-check every-k *.txt *.log && rm -rf gpu-check export-check every-k validate-k25-31.txt readme-main-job.txt export-check.txt gpu-check.log every-k.log; ls
