#!/usr/bin/env bash
# Run 88, part 1: (a) prepare's block-fit refusal on a GPU: the binary of 1fe9411 (target/release/mra-bench-before)
# tunes fused K = 23 at 512 threads only, which ptxas builds with 130 registers; (b) the register cap above 256
# threads (`__maxnreg__`, target/release/mra-bench) against 1fe9411, alternating processes, twice, over every
# default kernel it changes on sm_90 (run 87's set); (c) fused at 128/256/512 threads at K = 20, 23, 24 with the
# cap, other parameters at their defaults, one process. From the repository root: OUT=... bash bench/exp88/ab.sh
set -uo pipefail
O=$OUT/ab; mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version --format=csv > "$O/gpu.txt" 2>&1; cat "$O/gpu.txt"
export MRA_KERNEL_CACHE=$(mktemp -d)
export MRA_TUNING_DB=$(mktemp -d)/tuning.json
B0=target/release/mra-bench-before; B1=target/release/mra-bench
$B0 --version; $B1 --version
$B0 tune -l fused -K 23 --fix threads=512,min_blocks=1,pad_a=4,unroll_k=0,align_runs=0 --strategy exhaustive -n 20 --db "$O/blockfit-db.json" > "$O/blockfit.txt" 2>&1; echo "blockfit rc=$?" >> "$O/blockfit.txt"
grep -iE "reject|fit|rc=" "$O/blockfit.txt" | head -5
for round in 1 2; do
  for which in before after; do
    B=$B1; [ $which = before ] && B=$B0
    $B sweep -K 20,22,23,24 -l copy,fused,fused-pipe -n 100 --no-peak > "$O/$which-$round-a.txt" 2>&1
    $B sweep -K 25,27,28,31 -l copy,fused-cluster -n 100 --no-peak > "$O/$which-$round-b.txt" 2>&1
    echo "== $which $round"; grep -hE "^(copy|fused)" "$O/$which-$round-a.txt" "$O/$which-$round-b.txt" | awk '{print $1, $2, $3, $7, $8}' | tr '\n' ';'; echo
  done
done
$B1 tune -l fused -K 20,23,24 --fix min_blocks=1,pad_a=4,unroll_k=0,align_runs=0 --strategy exhaustive -n 50 -r 5 --db "$O/threads-db.json" > "$O/fused-threads.txt" 2>&1
grep -vE "^\s*$" "$O/fused-threads.txt" | tail -25
