#!/usr/bin/env bash
set -u
B=.gpu/ncu73/mra-bench
export MRA_KERNEL_CACHE=$(mktemp -d) MRA_TUNING_DB=/tmp/nodb.json
W=$(mktemp -d)
nvidia-smi --query-gpu=name,serial,driver_version,power.limit --format=csv,noheader > $OUT/gpu.txt
$B --version >> $OUT/gpu.txt; date -u +%FT%TZ >> $OUT/gpu.txt
M=gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
# The default (split_cols 2), then split_cols 1 with 128 threads forced through a one-candidate database.
ncu --clock-control none --launch-skip 40 --launch-count 1 -k regex:mra_fused_cluster --metrics $M $B -K 32 -l fused-cluster -n 50 -r 1 > $OUT/ncu-default.txt 2>&1; echo "default rc=$?"
$B tune -l fused-cluster -K 32 --fix cluster=8,buffers=3,async_exchange=1,pad_a=4,late_wait=1,pair_rows=0,split_cols=1,threads=128,fuse_k=2,min_blocks=1,unroll_rows=1 -n 20 -r 1 --db $W/s1.json > $OUT/force.txt 2>&1; echo "force rc=$?"
MRA_TUNING_DB=$W/s1.json ncu --clock-control none --launch-skip 40 --launch-count 1 -k regex:mra_fused_cluster --metrics $M $B -K 32 -l fused-cluster -n 50 -r 1 > $OUT/ncu-split1.txt 2>&1; echo "split1 rc=$?"
for f in $OUT/ncu-default.txt $OUT/ncu-split1.txt; do echo "== $f"; grep -E "^\s+(gpu__|sm__|smsp__|l1tex__|dram__)" $f | awk '{print $1, $NF}'; done
