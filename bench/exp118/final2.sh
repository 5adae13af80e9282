#!/usr/bin/env bash
# The closing GPU call after runs 118-119's defaults: fused-cluster at every odd K from 23 to 31 x N 1, 3, 2047; its
# bulk_copy(0) path at even K (16-byte cp.async; tune candidates, each validated); scripts/gpu-check.sh;
# scripts/export-check.sh; the README's main job; the sweep of every K from 1 to 32 (run109.sh).
set -uo pipefail
O=${OUT:-/tmp/final2}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-final2.json
$B validate -l fused-cluster -K 23,25,27,29,31 -N 1,3,2047 > "$O/validate-odd-k.txt" 2>&1; echo "validate odd K rc=$?"; tail -n 1 "$O/validate-odd-k.txt"
for K in 26 32; do
  $B tune -l fused-cluster -K $K --strategy random --max-configs 3 --fix "bulk_copy=0" -r 1 -n 5 --db /tmp/db-nobulk.json >> "$O/nobulk-even-k.txt" 2>&1; echo "bulk_copy=0 K=$K rc=$?"
done
grep -E "candidates \(" "$O/nobulk-even-k.txt"
OUT="$O/gpu-check" timeout 420 scripts/gpu-check.sh "$B" > "$O/gpu-check.log" 2>&1; echo "gpu-check rc=$?"
grep -E "passed|failed|cannot run|exit" "$O/gpu-check.log" | tail -3
OUT="$O/export-check" timeout 300 scripts/export-check.sh "$B" > "$O/export-check.txt" 2>&1; echo "export-check rc=$?"; tail -n 1 "$O/export-check.txt"
$B -K 16 -N 2048 -n 100 -r 5 -l 3 > "$O/readme-main-job.txt" 2>&1; echo "main job rc=$?"; grep -iE "fraction of floor" "$O/readme-main-job.txt" | tail -1
OUT="$O/every-k" bash bench/exp108/run109.sh > "$O/every-k.log" 2>&1; echo "every-k rc=$?"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf checks.tgz gpu-check export-check every-k *.txt *.log && rm -rf gpu-check export-check every-k validate-odd-k.txt nobulk-even-k.txt readme-main-job.txt export-check.txt gpu-check.log every-k.log; ls
