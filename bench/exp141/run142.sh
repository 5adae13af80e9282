#!/usr/bin/env bash
# Run 142: swap_operands(1) as a schedule primitive (fused-pipe; default at K = 10 on sm_90).
# (a) every swapped candidate of K = 5, 10, 11, 13, 20 at threads 128 validated by tune; (b) K = 10's new default
# against the old one (swap_operands=0) in three processes; (c) swap_operands=1 with the pad free against each other
# K's defaults; (d) validate at odd N and compute-sanitizer at K = 10.
set -uo pipefail
O=${OUT:-/tmp/run142}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-142.json
# (d)
$B validate -l fused-pipe -K 10 -N 1,3,64,2047 > "$O/validate.txt" 2>&1; echo "validate rc=$?"; tail -1 "$O/validate.txt"
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $B validate -l fused-pipe -K 10 -N 3,64 > "$O/sanitize-$tool.txt" 2>&1; echo "$tool rc=$?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed|failed" "$O/sanitize-$tool.txt" | tail -2
done
# (b)
old10="align_runs=0,buffers=2,bulk_copy=1,fuse_k=2,min_blocks=1,pad_a=0,pair_rows=0,persistent=0,stack=1,swap_operands=0,threads=128,unroll_k=0"
for r in 1 2 3; do
  $B tune -l fused-pipe -K 10 --strategy exhaustive --fix "$old10" -r 21 -n 500 --db "$O/ab-r$r.json" > "$O/ab-r$r.txt" 2>&1; echo "round $r rc=$?"
  grep -E "^  (#1|defaults) " "$O/ab-r$r.txt" | cut -c1-220
done
# (c)
while read -r k fix; do
  $B tune -l fused-pipe -K $k --strategy exhaustive --fix "$fix" -r 15 -n 300 --db "$O/other-k$k.json" > "$O/other-k$k.txt" 2>&1; echo "K=$k rc=$?"
  grep -E "^  (#[0-9]|defaults) |wrong" "$O/other-k$k.txt" | cut -c1-200
done < bench/exp141/fix142.txt
# (a)
$B tune -l fused-pipe -K 5,10,11,13,20 --strategy exhaustive --fix swap_operands=1,threads=128,min_blocks=1,persistent=0 -r 1 -n 20 --warmup 20ms --db "$O/val.json" > "$O/val.txt" 2>&1; echo "validation tune rc=$?"
grep -E "candidates \(" "$O/val.txt"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf run142.tgz *.txt *.json && find . \( -name "*.txt" -o -name "*.json" \) ! -name gpu.txt -delete; ls
