#!/usr/bin/env bash
# Run 88, final check of the final code: validate every level at a spread of K (odd K and N included) and fused
# where its default changed; memcheck of the kernels the register cap or fused's 512 threads changed; ncu of the
# best levels at K = 10, 12, 32 (one launch after 40, alone, --clock-control none). The issue's sweep is
# sweep.sh. From the repository root: OUT=... bash bench/exp88/final.sh
set -uo pipefail
O=$OUT/final; mkdir -p "$O"
B=target/release/mra-bench
nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version,memory.total --format=csv > "$O/gpu.txt" 2>&1
$B --version > "$O/version.txt" 2>&1; cat "$O/gpu.txt" "$O/version.txt"
export MRA_KERNEL_CACHE=$(mktemp -d)
export MRA_TUNING_DB=$(mktemp -d)/tuning.json
$B validate -l all -K 7,10,12,13,16,20,23,25,32 -N 3,2047 --json > "$O/validate.jsonl" 2> "$O/validate.err"; echo "exit $?" >> "$O/validate.err"
$B validate -l fused -K 9,10,11,12,13,14,17,19,20,21,22,23,24 -N 1,3,2047 > "$O/validate-fused.txt" 2>&1; echo "exit $?" >> "$O/validate-fused.txt"
tail -n 2 "$O/validate.err" "$O/validate-fused.txt"
for c in "fused 24" "fused-pipe 20"; do set -- $c
  compute-sanitizer --tool memcheck $B validate -l $1 -K $2 -N 3 > "$O/memcheck-$1-k$2.txt" 2>&1; echo "memcheck $1 K=$2 exit $? $(grep -h "ERROR SUMMARY" "$O/memcheck-$1-k$2.txt")"; done
M=dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,launch__grid_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio
for c in "fused-pipe 10" "fused-pipe 12" "fused-cluster 32"; do set -- $c
  timeout 120 ncu --clock-control none -k regex:mra_${1//-/_}_k$2 --launch-skip 40 --launch-count 1 --metrics $M $B -K $2 -l $1 -n 60 -r 1 -s 1 > "$O/ncu-$1-k$2.txt" 2>&1; echo "ncu $1 K=$2 exit $?"
  grep -E "^\s+(dram|lts|gpu__time|launch__grid|launch__reg|sm__warps|sm__pipe_tensor|sm__cycles|smsp__average)" "$O/ncu-$1-k$2.txt" | awk '{print $1, $NF}'; done
tar -C "$OUT" -czf "$OUT/final.tgz" final && rm -rf "$O"
