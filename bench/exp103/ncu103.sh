#!/usr/bin/env bash
# Run 103, ncu: one launch of the generated fused-split (the 21st, after warm-up launches) at
# N = 64 (L2-resident) and N = 2048, --clock-control none: pipes, warp states, scheduler.
set -uo pipefail
O=${OUT:-/tmp/ncu103}; V=bench/exp103/v
mkdir -p "$O"
nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -lgomp -lcuda -o /tmp/run103 bench/exp103/main.cu > "$O/build.txt" 2>&1 || { cat "$O/build.txt"; exit 1; }
for N in 64 2048; do
  WARM_MS=0 REPS=1 NOVAL=1 ONLY=gen VARIANTS=gen=$V/gen.cubin N=$N timeout 300 ncu --clock-control none -k mra_fused_split_k32_f64 --launch-skip 20 --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy \
    /tmp/run103 1 > "$O/ncu-n$N.txt" 2>&1; echo "N=$N rc=$?"
  grep -E "Duration|DRAM Throughput|Issue Slots Busy|Executed Ipc Active|Warp Cycles Per Issued|No Eligible|Active Warps Per|Eligible Warps|Stall|pipe|Pipe" "$O/ncu-n$N.txt" | head -30
done
