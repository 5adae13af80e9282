#!/usr/bin/env bash
# Run 131, part B (closing checks): scripts/gpu-check.sh, the README's main job, and the sweep of every K from 1 to 32
# (run 109's script).
set -uo pipefail
O=${OUT:-/tmp/check131b}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-131b.json
# K = 9 and 11 at their new pad 3 (main job) against the old pads (tune --fix of the old configuration), alternating.
old9="align_runs=0,buffers=2,bulk_copy=1,fuse_k=2,min_blocks=1,pad_a=2,pair_rows=0,persistent=0,stack=1,threads=128,unroll_k=0"
old11="align_runs=0,buffers=2,bulk_copy=1,fuse_k=1,min_blocks=1,pad_a=0,pair_rows=0,persistent=0,stack=1,threads=128,unroll_k=0"
for r in 1 2 3; do
  for k in 9 11; do
    n=$($B -l fused-pipe -K $k -n 100 -r 15 2>&1 | tee "$O/new-k$k-r$r.txt" | grep median | sed 's/.*median \([0-9.]*\) us.*/\1/')
    v=old$k; $B tune -l fused-pipe -K $k --strategy exhaustive --fix "${!v}" -r 15 --db "$O/db-old$k-r$r.json" > "$O/old-k$k-r$r.txt" 2>&1
    o=$(grep -E '#1 ' "$O/old-k$k-r$r.txt" | head -1 | sed 's/.* \([0-9.]*\) us\/task.*/\1/')
    echo "r$r K=$k new $n old $o"
  done
done
OUT="$O/gpu-check" timeout 330 scripts/gpu-check.sh "$B" > "$O/gpu-check.log" 2>&1; echo "gpu-check rc=$?"
grep -E "passed|failed|cannot run|exit" "$O/gpu-check.log" | tail -4
$B -K 16 -N 2048 -n 100 -r 5 -l 3 > "$O/readme-main-job.txt" 2>&1; echo "main job rc=$?"; grep -iE "floor|L3" "$O/readme-main-job.txt" | tail -3
OUT="$O/every-k" bash bench/exp108/run109.sh > "$O/every-k.log" 2>&1; echo "every-k rc=$?"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf checks.tgz gpu-check every-k *.txt *.log db-*.json && rm -rf gpu-check every-k readme-main-job.txt gpu-check.log every-k.log new-* old-* db-*.json; ls
