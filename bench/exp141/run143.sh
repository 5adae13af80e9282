#!/usr/bin/env bash
# Run 143: swap_operands(1) confirmed where run 142 saw it faster, and in `fused`.
# (a) fused K = 12: swap_operands(1) at 128 threads with the pad free against fused's defaults (pair_rows 1), three
# processes; (b) fused-pipe K = 11, 12, 13: run 142's comparison again, two processes; (c) fused K = 10 swapped against
# its defaults, one process; (d) every swapped fused candidate of K = 5, 7, 12, 13 at 128 and 256 threads validated.
set -uo pipefail
O=${OUT:-/tmp/run143}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-143.json
for r in 1 2 3; do
  $B tune -l fused -K 12 --strategy exhaustive --fix swap_operands=1,threads=128,min_blocks=1 -r 21 -n 500 --db "$O/fused12-r$r.json" > "$O/fused12-r$r.txt" 2>&1; echo "fused K=12 round $r rc=$?"
  grep -E "^  (#[1-3]|defaults) |wrong" "$O/fused12-r$r.txt" | cut -c1-200
done
for r in 1 2; do
  for k in 11 12 13; do
    fix=$(grep "^$k " bench/exp141/fix142.txt | cut -d' ' -f2)
    $B tune -l fused-pipe -K $k --strategy exhaustive --fix "$fix" -r 21 -n 300 --db "$O/pipe$k-r$r.json" > "$O/pipe$k-r$r.txt" 2>&1; echo "fused-pipe K=$k round $r rc=$?"
    grep -E "^  (#1|defaults) " "$O/pipe$k-r$r.txt" | cut -c1-200
  done
done
$B tune -l fused -K 10 --strategy exhaustive --fix swap_operands=1,threads=128,min_blocks=1 -r 21 -n 500 --db "$O/fused10.json" > "$O/fused10.txt" 2>&1; echo "fused K=10 rc=$?"
grep -E "^  (#1|defaults) |wrong" "$O/fused10.txt" | cut -c1-200
$B tune -l fused -K 5,7,12,13 --strategy exhaustive --fix swap_operands=1 -r 1 -n 20 --warmup 20ms --db "$O/val.json" > "$O/val.txt" 2>&1; echo "validation tune rc=$?"
grep -E "candidates \(" "$O/val.txt"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf run143.tgz *.txt *.json && find . \( -name "*.txt" -o -name "*.json" \) ! -name gpu.txt -delete; ls
