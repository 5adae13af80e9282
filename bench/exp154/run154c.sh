#!/usr/bin/env bash
# Run 154c: variants mc5 (arrive right after reading, wait and refill after pass 0) and mc7 (mc5, PREFETCH 3) against
# refill issued there) against the generated kernel, at sm_90a: validation, synccheck, three rounds, ncu.
set -uo pipefail
O=${OUT:-/tmp/run154c}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-154.json
variant() { unset MRA_EXP_SOURCE MRA_EXP_ARCH; case $1 in mc3|mc5|mc7) export MRA_EXP_SOURCE=bench/exp154/fs32_$1.cu MRA_EXP_ARCH=sm_90a;; esac; }
for v in mc5 mc7; do variant $v
  $B validate -l fused-split -K 32 -N 1,2,3,64,2047 > "$O/validate-$v.txt" 2>&1; echo "validate $v rc=$?"; grep -E "passed|failed|FAIL" "$O/validate-$v.txt" | tail -2
done
for v in ; do variant $v
  timeout 150 compute-sanitizer --tool synccheck --num-cuda-barriers 64 --error-exitcode 9 $B validate -l fused-split -K 32 -N 3 > "$O/sanitize-synccheck-$v.txt" 2>&1; echo "synccheck $v rc=$?"
  grep -E "ERROR SUMMARY|passed|failed|Warning" "$O/sanitize-synccheck-$v.txt" | tail -3
done
for r in 1 2 3; do
  for v in stock mc3 mc5 mc7; do variant $v
    $B -l fused-split -K 32 -n 100 -r 11 > "$O/r$r-$v.txt" 2>&1; echo "round $r $v rc=$?"
    grep -E "median|SM clock|spilled, 128" "$O/r$r-$v.txt" | cut -c1-200
  done
done
M=gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_membar.ratio,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio
for v in stock mc5; do variant $v
  timeout 120 ncu --clock-control none -k regex:mra_fused_split --launch-skip 40 --launch-count 1 --metrics $M $B -l fused-split -K 32 -n 60 -r 1 -s 1 > "$O/ncu-$v.txt" 2>&1; echo "ncu $v rc=$?"
  grep -E "^\s+(lts|gpu__time|sm__pipe|sm__cycles|smsp__average)" "$O/ncu-$v.txt" | awk '{print $1, $(NF-1), $NF}'
done
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf run154c.tgz *.txt && find . -name "*.txt" ! -name gpu.txt -delete; ls
