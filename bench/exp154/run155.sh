#!/usr/bin/env bash
# Run 155: fused-split K = 32 with the end-of-tensor barrier moved (bench/exp154/fs32_latebar.cu through MRA_EXP_SOURCE,
# experiment build bench/exp154/patch.diff) against the generated kernel: validation, memcheck, four alternating rounds,
# ncu of one launch each, and the bound level's clock and power.
set -uo pipefail
O=${OUT:-/tmp/run155}; B=target/release/mra-bench; X=bench/exp154/fs32_latebar.cu
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-155.json
variant() { unset MRA_EXP_SOURCE; case $1 in latebar) export MRA_EXP_SOURCE=$X;; esac; }
variant latebar
$B validate -l fused-split -K 32 -N 1,2,3,64,2047 > "$O/validate-latebar.txt" 2>&1; echo "validate latebar rc=$?"; grep -E "EXPERIMENT|passed|failed|FAIL" "$O/validate-latebar.txt" | tail -2
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B validate -l fused-split -K 32 -N 3,64 > "$O/sanitize-memcheck.txt" 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|passed|failed" "$O/sanitize-memcheck.txt" | tail -2
for r in 1 2 3 4; do
  for v in stock latebar; do variant $v
    $B -l fused-split -K 32 -n 100 -r 11 > "$O/r$r-$v.txt" 2>&1; echo "round $r $v rc=$?"
    grep -E "median|SM clock" "$O/r$r-$v.txt" | cut -c1-200
  done
done
variant stock
$B -l bound -K 32 -n 100 -r 11 > "$O/bound.txt" 2>&1; echo "bound rc=$?"; grep -E "median|SM clock" "$O/bound.txt" | cut -c1-200
M=gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio,smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio
for v in stock latebar; do variant $v
  timeout 120 ncu --clock-control none -k regex:mra_fused_split --launch-skip 40 --launch-count 1 --metrics $M $B -l fused-split -K 32 -n 60 -r 1 -s 1 > "$O/ncu-$v.txt" 2>&1; echo "ncu $v rc=$?"
  grep -E "^\s+(gpu__time|sm__pipe|sm__cycles|smsp__average)" "$O/ncu-$v.txt" | awk '{print $1, $(NF-1), $NF}'
done
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf run155.tgz *.txt && find . -name "*.txt" ! -name gpu.txt -delete; ls
