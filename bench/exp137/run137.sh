#!/usr/bin/env bash
# Run 137: fused's pair_rows(1) as its default at K = 12 against pair_rows(0) (tune --fix at the old configuration: the
# defaults are its baseline, timed first in the same process), three rounds, each its own process; then issue 9's proof
# sweep at this commit (bench/exp121/proof.sh).
set -uo pipefail
O=${OUT:-/tmp/run137}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
old12="align_runs=0,coalesce_c=0,min_blocks=1,pad_a=4,pair_rows=0,threads=128,unroll_k=0"
for r in 1 2 3; do
  $B tune -l fused -K 12 --strategy exhaustive --fix "$old12" -r 15 -n 100 --db "$O/db-r$r.json" > "$O/ab-r$r.txt" 2>&1; echo "round $r rc=$?"
  grep -E "^  (#1|defaults) " "$O/ab-r$r.txt" | sed -E 's/align_runs=0 coalesce_c=0 min_blocks=1 pad_a=4 //; s/ threads=128 unroll_k=0//'
done
mkdir -p "$O/proof"; OUT="$O/proof" bash bench/exp121/proof.sh
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf proof.tgz proof ab-r*.txt db-r*.json && rm -rf proof ab-r*.txt db-r*.json
