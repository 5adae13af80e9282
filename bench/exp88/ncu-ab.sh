#!/usr/bin/env bash
# Run 88: fused-pipe K = 24 (and 20) one launch alone under ncu, the binary of 1fe9411 (uncapped, 114 registers)
# against the current one (capped at 168: 134 registers), alternating twice on one machine: a single launch of
# the capped build read 144.1 us on one H200 against 133.2 us uncapped on another (3f658f9). From the repository
# root: OUT=... bash bench/exp88/ncu-ab.sh
set -uo pipefail
O=$OUT/ncu-ab; mkdir -p "$O"
nvidia-smi --query-gpu=name,serial --format=csv,noheader | tee "$O/gpu.txt"
export MRA_KERNEL_CACHE=$(mktemp -d)
export MRA_TUNING_DB=$(mktemp -d)/tuning.json
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,launch__registers_per_thread,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active
for round in 1 2; do for which in before after; do
  B=target/release/mra-bench; [ $which = before ] && B=target/release/mra-bench-before
  for K in 20 24; do
    ncu --clock-control none -k regex:mra_fused_pipe_k$K --launch-skip 40 --launch-count 1 --metrics $M $B -K $K -l fused-pipe -n 60 -r 1 -s 1 > "$O/$which-$round-k$K.txt" 2>&1
    echo "$which $round K=$K $(grep -E "^\s+(gpu__time|sm__cycles|launch__reg|dram|sm__pipe)" "$O/$which-$round-k$K.txt" | awk '{print $NF}' | tr '\n' ' ')"
  done
  $B sweep -K 24 -l copy,fused-pipe -n 100 --no-peak 2>&1 | grep -E "^(copy|fused-pipe)" | awk -v w="$which $round" '{print w, $1, $2, $3, $8}'
done; done | tee "$O/summary.txt"
tar -C "$OUT" -czf "$OUT/ncu-ab.tgz" ncu-ab && rm -rf "$O"
