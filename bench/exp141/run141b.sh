#!/usr/bin/env bash
# Run 141b: the transposed pass, version 3 (two column tiles per step, bench/exp141/fp10_t3.cu), against the generated
# kernel: validation, memcheck, three alternating rounds, ncu.
set -uo pipefail
O=${OUT:-/tmp/run141b}; B=target/release/mra-bench; X=bench/exp141/fp10_t3.cu
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-141.json
MRA_EXP_SOURCE=$X $B validate -l fused-pipe -K 10 -N 1,3,64,2047 > "$O/validate-t3.txt" 2>&1; echo "validate t3 rc=$?"; tail -2 "$O/validate-t3.txt"
MRA_EXP_SOURCE=$X timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $B validate -l fused-pipe -K 10 -N 3,64 > "$O/sanitize-memcheck.txt" 2>&1; echo "memcheck rc=$?"
for r in 1 2 3; do
  for v in stock t3; do
    if [ $v = t3 ]; then export MRA_EXP_SOURCE=$X; else unset MRA_EXP_SOURCE; fi
    $B -l fused-pipe -K 10 -n 500 -r 21 > "$O/r$r-$v.txt" 2>&1; echo "round $r $v rc=$? $(grep -E '^# fused-pipe: median' "$O/r$r-$v.txt")"
  done
done
M=gpu__time_duration.sum,smsp__inst_executed.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
export MRA_EXP_SOURCE=$X
timeout 120 ncu --clock-control none -k mra_fused_pipe_k10_f64 --launch-skip 60 --launch-count 1 --metrics $M $B -l fused-pipe -K 10 -n 100 -r 1 > "$O/ncu-t3.txt" 2>&1; echo "ncu t3 rc=$?"
grep -E "duration|inst_executed|tensor|wavefronts|conflicts|registers|warps_active" "$O/ncu-t3.txt"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf run141b.tgz *.txt && find . -name "*.txt" ! -name gpu.txt -delete; ls
