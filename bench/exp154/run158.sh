#!/usr/bin/env bash
# Run 158: fused-split K = 32 with each warp's slices in a ring of three half-slots (bench/exp154/fs32_ring.cu, through
# `--source`, no experiment patch) against the generated kernel: validation, memcheck, three alternating rounds, ncu.
set -uo pipefail
O=${OUT:-/tmp/run158}; B=target/release/mra-bench; X=bench/exp154/fs32_ring.cu
mkdir -p "$O"; export MRA_TUNING_DB=/tmp/nodb-158.json
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
$B validate -l fused-split -K 32 -N 1,2,3,64,2047 --source $X > "$O/validate-ring.txt" 2>&1; echo "validate ring rc=$?"; tail -1 "$O/validate-ring.txt"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B validate -l fused-split -K 32 -N 3,64 --source $X > "$O/sanitize-memcheck.txt" 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|passed|failed" "$O/sanitize-memcheck.txt" | tail -2
for r in 1 2 3; do
  for v in generated ring; do
    if [ $v = ring ]; then a=(--source $X); else a=(); fi
    $B -l fused-split -K 32 -n 100 -r 11 "${a[@]}" > "$O/r$r-$v.txt" 2>&1; echo "round $r $v rc=$?"
    grep -E "median|SM clock|hand-edited" "$O/r$r-$v.txt" | cut -c1-220
  done
done
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio
for v in generated ring; do
  if [ $v = ring ]; then a=(--source $X); else a=(); fi
  timeout 120 ncu --clock-control none -k regex:mra_fused_split --launch-skip 40 --launch-count 1 --metrics $M $B -l fused-split -K 32 -n 60 -r 1 -s 1 "${a[@]}" > "$O/ncu-$v.txt" 2>&1; echo "ncu $v rc=$?"
  grep -E "^\s+(dram|lts|gpu__time|sm__pipe|sm__cycles|smsp__average)" "$O/ncu-$v.txt" | awk '{print $1, $(NF-1), $NF}'
done
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf run158.tgz *.txt && find . -name "*.txt" ! -name gpu.txt -delete; ls
