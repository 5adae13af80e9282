#!/usr/bin/env bash
# This session's closing GPU call, at the final code: scripts/gpu-check.sh, scripts/export-check.sh, the README's main
# job, fused-cluster at every odd K from 25 to 31 x N 1, 3, 2047 (the shifted copies' defaults), K = 25's late_wait 0
# against 1 in one process, the sweep of every K from 1 to 32 (run 109's), and the two sabotaged binaries (never
# committed) that must fail validation: target/sab-slice (a row's last value not copied into the right place) and
# target/sab-c (C's value before the grid taken from the wrong element).
set -uo pipefail
O=${OUT:-/tmp/final118}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-final118.json
$B validate -l fused-cluster -K 25,27,29,31 -N 1,3,2047 > "$O/validate-odd-k.txt" 2>&1; echo "validate odd K rc=$?"; tail -n 1 "$O/validate-odd-k.txt"
for s in sab-slice sab-c; do
  target/$s validate -l fused-cluster -K 25,27,29,31 -N 1,3,2047 > "$O/$s.txt" 2>&1; echo "$s rc=$? (must fail)"; tail -n 1 "$O/$s.txt"
done
$B tune -l fused-cluster -K 25 --strategy exhaustive --fix "threads=512,buffers=3,split_cols=2,cluster=2,min_blocks=1,fuse_k=1,async_exchange=0,unroll_rows=1,pad_a=4,pair_rows=0,bulk_copy=1" -r 5 --db /tmp/db-lw.json > "$O/late-wait-k25.txt" 2>&1
echo "late_wait K=25 rc=$? $(grep -E '^  fused-cluster K=' "$O/late-wait-k25.txt" | sed 's/.*late_wait=\([01]\).*: \([0-9.]*\) us.*/lw\1 \2/' | tr '\n' ' ')"
OUT="$O/gpu-check" timeout 420 scripts/gpu-check.sh "$B" > "$O/gpu-check.log" 2>&1; echo "gpu-check rc=$?"
grep -E "passed|failed|cannot run|exit" "$O/gpu-check.log" | tail -4
OUT="$O/export-check" timeout 300 scripts/export-check.sh "$B" > "$O/export-check.txt" 2>&1; echo "export-check rc=$?"; tail -n 3 "$O/export-check.txt"
$B -K 16 -N 2048 -n 100 -r 5 -l 3 > "$O/readme-main-job.txt" 2>&1; echo "main job rc=$?"; grep -iE "floor|L3" "$O/readme-main-job.txt" | tail -3
OUT="$O/every-k" bash bench/exp108/run109.sh > "$O/every-k.log" 2>&1; echo "every-k rc=$?"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf checks.tgz gpu-check export-check every-k *.txt *.log && rm -rf gpu-check export-check every-k validate-odd-k.txt sab-*.txt late-wait-k25.txt readme-main-job.txt export-check.txt gpu-check.log every-k.log; ls
