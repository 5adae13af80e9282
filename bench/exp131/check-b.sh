#!/usr/bin/env bash
# Run 131, part B (closing checks): scripts/gpu-check.sh, the README's main job, and the sweep of every K from 1 to 32
# (run 109's script).
set -uo pipefail
O=${OUT:-/tmp/check131b}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-131b.json
OUT="$O/gpu-check" timeout 330 scripts/gpu-check.sh "$B" > "$O/gpu-check.log" 2>&1; echo "gpu-check rc=$?"
grep -E "passed|failed|cannot run|exit" "$O/gpu-check.log" | tail -4
$B -K 16 -N 2048 -n 100 -r 5 -l 3 > "$O/readme-main-job.txt" 2>&1; echo "main job rc=$?"; grep -iE "floor|L3" "$O/readme-main-job.txt" | tail -3
OUT="$O/every-k" bash bench/exp108/run109.sh > "$O/every-k.log" 2>&1; echo "every-k rc=$?"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf checks.tgz gpu-check every-k *.txt *.log && rm -rf gpu-check every-k readme-main-job.txt gpu-check.log every-k.log; ls
