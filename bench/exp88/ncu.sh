#!/usr/bin/env bash
# Run 88: ncu of the best levels at K = 10, 12, 32 (or CASES="level K;level K;...") (final.sh's ncu step; its first run matched the copy
# kernel too and profiled that). From the repository root: OUT=... bash bench/exp88/ncu.sh
set -uo pipefail
O=$OUT/ncu; mkdir -p "$O"
B=target/release/mra-bench
export MRA_KERNEL_CACHE=$(mktemp -d)
export MRA_TUNING_DB=$(mktemp -d)/tuning.json
M=dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,launch__grid_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio
IFS=";" read -ra C <<< "${CASES:-fused-pipe 10;fused-pipe 12;fused-cluster 32}"
for c in "${C[@]}"; do set -- $c
  timeout 120 ncu --clock-control none -k regex:mra_${1//-/_}_k$2 --launch-skip 40 --launch-count 1 --metrics $M $B -K $2 -l $1 -n 60 -r 1 -s 1 > "$O/ncu-$1-k$2.txt" 2>&1; echo "ncu $1 K=$2 exit $?"
  grep -E "^\s+(dram|lts|gpu__time|launch__grid|launch__reg|sm__warps|sm__pipe_tensor|sm__cycles|smsp__average)" "$O/ncu-$1-k$2.txt" | awk '{print $1, $NF}'; done
tar -C "$OUT" -czf "$OUT/ncu.tgz" ncu && rm -rf "$O"
