#!/usr/bin/env bash
# Run 83: build the K = 10 harness with nvcc, validate, time interleaved (3 rounds), then one
# launch of each kernel under ncu (launches in `prof` order: 20 per kernel). One archive.
set -uo pipefail
cd "$(dirname "$0")"
O=${OUT:-/tmp/run83}/r
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv | tee "$O/gpu.txt"
nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -lgomp -lcuda -Xptxas -v -o /tmp/run83 main.cu > "$O/build.txt" 2>&1 || { cat "$O/build.txt"; exit 1; }
grep -E "spill|registers" "$O/build.txt" | head -20
/tmp/run83 ${ROUNDS:-3} 2>&1 | tee "$O/interleaved.txt"
M="launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,launch__shared_mem_config_size,launch__registers_per_thread,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,sm__warps_active.avg.pct_of_peak_sustained_active"
for i in 1 2 3 4; do
  timeout 60 ncu --clock-control none --launch-skip $((i * 20 + 5)) --launch-count 1 --metrics "$M" /tmp/run83 prof >> "$O/ncu.txt" 2>&1; echo "ncu $i rc=$?"
done
grep -E "mra_|stack|duration|tensor|inst_executed|conflicts|warps_active|launch__" "$O/ncu.txt" | head -80
tar -C "$O" -czf "${OUT:-/tmp}/run83.tgz" . && rm -rf "$O"
