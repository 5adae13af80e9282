#!/usr/bin/env bash
# Run 78 on the lent GPU: build with nvcc, validate, time (rounds interleaved), then ncu of one
# launch of fused-cluster and of the chain prototype. Writes logs under $OUT when set.
set -uo pipefail
cd "$(dirname "$0")"
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version --format=csv | tee $O/gpu.txt
date -u +%FT%TZ | tee -a $O/gpu.txt
nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -lgomp -Xptxas -v -o /tmp/run78 main.cu > $O/build.txt 2>&1 || { cat $O/build.txt; exit 1; }
grep -E "Compiling|registers|spill" $O/build.txt
/tmp/run78 "${1:-3}" 2>&1 | tee $O/timing.txt
[ "${PIPESTATUS[0]}" = 0 ] || exit 1
M="regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__issue_active.avg.pct_of_peak_sustained_active"
for k in fused_cluster chain; do
  timeout 120 ncu --clock-control none --launch-skip 10 --launch-count 1 -k regex:mra_$k --metrics "$M" /tmp/run78 prof > $O/ncu-$k.txt 2>&1; echo "ncu $k rc=$?"
  grep -E "issue_stalled|gpu__time|per_second|tensor|dram__|l1tex__|issue_active" $O/ncu-$k.txt | awk '{print $1, $NF}' | sort -k2 -g -r | head -16
done
