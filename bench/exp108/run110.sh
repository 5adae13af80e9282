#!/usr/bin/env bash
# Run 110: ncu counts of one launch each (after 40 warm-up launches in mra-bench's harness) of
# fused-pipe at K = 11, 12, 23, 24 and fused-cluster at K = 29, 30, with the warp-state section.
set -uo pipefail
O=${OUT:-/tmp/out110}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-110.json
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__inst_executed_op_ldgsts.sum,smsp__inst_executed_op_global_ld.sum,smsp__inst_executed_op_global_st.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,lts__t_requests_srcunit_tex_op_write.sum,lts__t_requests_srcunit_tex_op_read.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
for lk in "fused-pipe 11" "fused-pipe 12" "fused-pipe 23" "fused-pipe 24" "fused-cluster 29" "fused-cluster 30"; do
  set -- $lk
  timeout 120 ncu --clock-control none -k regex:mra_${1//-/_}_k$2_ --launch-skip 40 --launch-count 1 --section WarpStateStats --metrics $M $B -K $2 -l $1 -n 60 -r 1 -s 1 > "$O/ncu-$1-k$2.txt" 2>&1
  echo "== $1 K=$2 rc=$?"
  grep -E "duration|inst_executed|wavefronts|conflicts|requests|tensor|warps_active|registers|Stall|stall" "$O/ncu-$1-k$2.txt" | grep -v "^==" | head -30
done
