#!/usr/bin/env bash
# Run 136: `fused` with pair_rows and fuse_k declared (the primitives fused-pipe has): at its defaults otherwise,
# tune times the defaults first (the baseline) and then pair_rows × fuse_k, 15 repetitions, two rounds on fresh
# databases (each round a process).
set -uo pipefail
O=${OUT:-/tmp/run136}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
F=pad_a=4,min_blocks=1,unroll_k=0,align_runs=0,coalesce_c=0
for r in 1 2; do
  $B tune -l fused -K 10,12,14 --fix $F,threads=128 --strategy exhaustive -r 15 -n 100 --db "$O/db-$r.json" > "$O/tune-$r.txt" 2>&1; echo "round $r K10-14 rc=$?"
  $B tune -l fused -K 16 --fix $F,threads=256 --strategy exhaustive -r 15 -n 100 --db "$O/db-$r.json" >> "$O/tune-$r.txt" 2>&1; echo "round $r K16 rc=$?"
  grep -E "^  fused K=" "$O/tune-$r.txt" | sed -E 's/align_runs=0 coalesce_c=0 //; s/min_blocks=1 pad_a=4 //; s/ unroll_k=0//'
done
date -u +%FT%TZ | tee -a "$O/gpu.txt"
