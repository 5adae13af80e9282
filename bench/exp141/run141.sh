#!/usr/bin/env bash
# Run 141: fused-pipe K = 10, the transposed pass (bench/exp141/fp10_t.cu through MRA_EXP_SOURCE, experiment build
# bench/exp141/patch.diff) against the generated kernel: validation, sanitizers, four alternating rounds, ncu.
set -uo pipefail
O=${OUT:-/tmp/run141}; B=target/release/mra-bench; X=bench/exp141/fp10_t.cu
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-141.json
MRA_EXP_SOURCE=$X $B validate -l fused-pipe -K 10 -N 1,3,64,2047 > "$O/validate-t.txt" 2>&1; echo "validate transposed rc=$?"; tail -3 "$O/validate-t.txt"
for tool in memcheck racecheck; do
  MRA_EXP_SOURCE=$X timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $B validate -l fused-pipe -K 10 -N 3,64 > "$O/sanitize-$tool.txt" 2>&1; echo "$tool rc=$?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed|failed" "$O/sanitize-$tool.txt" | tail -2
done
for r in 1 2 3 4; do
  for v in stock t; do
    if [ $v = t ]; then export MRA_EXP_SOURCE=$X; else unset MRA_EXP_SOURCE; fi
    $B -l fused-pipe -K 10 -n 500 -r 21 > "$O/r$r-$v.txt" 2>&1; echo "round $r $v rc=$?"
    grep -E "Time\(us\)|floor|EXPERIMENT|valid" "$O/r$r-$v.txt" | cut -c1-200
  done
done
unset MRA_EXP_SOURCE
M=gpu__time_duration.sum,smsp__inst_executed.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
for v in stock t; do
  if [ $v = t ]; then export MRA_EXP_SOURCE=$X; else unset MRA_EXP_SOURCE; fi
  timeout 120 ncu --clock-control none -k mra_fused_pipe_k10_f64 --launch-skip 60 --launch-count 1 --metrics $M $B -l fused-pipe -K 10 -n 100 -r 1 > "$O/ncu-$v.txt" 2>&1; echo "ncu $v rc=$?"
  grep -E "duration|inst_executed|tensor|wavefronts|conflicts|registers|warps_active" "$O/ncu-$v.txt"
done
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf run141.tgz *.txt && find . -name "*.txt" ! -name gpu.txt -delete; ls
