#!/usr/bin/env bash
# Run 83: shared-store instruction and wavefront counts of fused-pipe, the prototype and the generated stack(2).
set -uo pipefail
cd "$(dirname "$0")"
nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -lgomp -lcuda -o /tmp/run83 main.cu > /dev/null 2>&1 || exit 1
M="smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed_op_global_st.sum,sm__sass_inst_executed_op_shared_st.sum"
for i in 1 2 3 4 5 6; do
  timeout 60 ncu --clock-control none --launch-skip $((i * 20 + 5)) --launch-count 1 --metrics "$M" /tmp/run83 prof 2>&1 | grep -E "mra_|void|inst_executed|wavefronts|conflicts"
done
