#!/usr/bin/env bash
# Run 154: fused-split K = 32 with multicast slices (bench/exp154/fs32_mc.cu through MRA_EXP_SOURCE, experiment build
# bench/exp154/patch.diff) against the generated kernel, each at sm_90 and sm_90a: validation, memcheck, three rounds
# alternating the four, ncu of one launch of stock and multicast.
set -uo pipefail
O=${OUT:-/tmp/run154}; B=target/release/mra-bench; X=bench/exp154/fs32_mc.cu
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-154.json
variant() { unset MRA_EXP_SOURCE MRA_EXP_ARCH; case $1 in mc90a) export MRA_EXP_SOURCE=$X MRA_EXP_ARCH=sm_90a;; mc90) export MRA_EXP_SOURCE=$X;; stock90a) export MRA_EXP_ARCH=sm_90a;; esac; }
for v in mc90a mc90; do variant $v
  $B validate -l fused-split -K 32 -N 1,2,3,64,2047 > "$O/validate-$v.txt" 2>&1; echo "validate $v rc=$?"; grep -E "EXPERIMENT|passed|failed|FAIL" "$O/validate-$v.txt" | tail -3
done
variant mc90a
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B validate -l fused-split -K 32 -N 3,64 > "$O/sanitize-memcheck.txt" 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|passed|failed" "$O/sanitize-memcheck.txt" | tail -2
timeout 150 compute-sanitizer --tool synccheck --error-exitcode 9 $B validate -l fused-split -K 32 -N 3 > "$O/sanitize-synccheck.txt" 2>&1; echo "synccheck rc=$?"
grep -E "ERROR SUMMARY|passed|failed" "$O/sanitize-synccheck.txt" | tail -2
for r in 1 2 3; do
  for v in stock mc90a mc90 stock90a; do variant $v
    $B -l fused-split -K 32 -n 100 -r 11 > "$O/r$r-$v.txt" 2>&1; echo "round $r $v rc=$?"
    grep -E "median|SM clock|EXPERIMENT|registers" "$O/r$r-$v.txt" | cut -c1-220
  done
done
M=gpu__time_duration.sum,lts__t_bytes.sum,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_membar.ratio,smsp__average_warp_latency_issue_stalled_sleeping.ratio
for v in stock mc90a; do variant $v
  timeout 120 ncu --clock-control none -k regex:mra_fused_split --launch-skip 40 --launch-count 1 --metrics $M $B -l fused-split -K 32 -n 60 -r 1 -s 1 > "$O/ncu-$v.txt" 2>&1; echo "ncu $v rc=$?"
  grep -E "^\s+(dram|lts|gpu__time|sm__pipe|sm__cycles|smsp__average)" "$O/ncu-$v.txt" | awk '{print $1, $(NF-1), $NF}'
done
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf run154.tgz *.txt && find . -name "*.txt" ! -name gpu.txt -delete; ls
