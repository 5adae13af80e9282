#!/usr/bin/env bash
# Run 81: build the K = 10 harness with nvcc, validate, time interleaved (3 rounds) and each
# alone (2 rounds), then one launch of fused-pipe and each swap variant under ncu. One archive.
set -uo pipefail
cd "$(dirname "$0")"
O=${OUT:-/tmp/run81}
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv | tee "$O/gpu.txt"
nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -lgomp -lcuda -o /tmp/run81 main.cu > "$O/build.txt" 2>&1 || { cat "$O/build.txt"; exit 1; }
/tmp/run81 3 2>&1 | tee "$O/interleaved.txt"
for k in fused-pipe swap-jam1 swap-jam2 swap-jam4; do
  echo "== alone: $k"; ONLY=$k /tmp/run81 2 2>&1 | grep -E "^ +[0-9]" | tee -a "$O/alone.txt"
done
M="gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__issue_active.avg.pct_of_peak_sustained_active"
for r in mra_fused_pipe "swap_k10<1" "swap_k10<2" "swap_k10<4"; do
  timeout 60 ncu --clock-control none --launch-skip 5 --launch-count 1 -k regex:"$r" --metrics "$M" /tmp/run81 prof >> "$O/ncu.txt" 2>&1; echo "ncu $r rc=$?"
done
grep -E "mra_|duration|tensor|inst_executed|conflicts|issue_active" "$O/ncu.txt" | head -60
tar -C "$O" -czf "$O/../run81.tgz" . && rm -rf "$O"
