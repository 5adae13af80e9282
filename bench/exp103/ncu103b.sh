#!/usr/bin/env bash
# Run 103, ncu by instruction: one launch of the generated fused-split (the 21st) at N = 64 and
# N = 2048 with the full set, then the SASS page with stall samples per instruction (CSV) and
# the warp-state details. --clock-control none.
set -uo pipefail
O=${OUT:-/tmp/ncu103b}; V=bench/exp103/v
mkdir -p "$O"
nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -lgomp -lcuda -o /tmp/run103 bench/exp103/main.cu > "$O/build.txt" 2>&1 || { cat "$O/build.txt"; exit 1; }
for N in 64 2048; do
  WARM_MS=0 REPS=1 NOVAL=1 ONLY=gen VARIANTS=gen=$V/gen.cubin N=$N timeout 400 ncu --clock-control none -k mra_fused_split_k32_f64 --launch-skip 20 --launch-count 1 \
    --set full --import-source no -o /tmp/fs-n$N /tmp/run103 1 > "$O/ncu-run-n$N.txt" 2>&1; echo "N=$N profile rc=$?"
  ncu --import /tmp/fs-n$N.ncu-rep --page details --print-details all > "$O/details-n$N.txt" 2>&1
  ncu --import /tmp/fs-n$N.ncu-rep --page source --csv --print-source sass > "$O/sass-n$N.csv" 2>&1; echo "sass rc=$? $(wc -c < "$O/sass-n$N.csv") bytes"
  grep -iE "stall|Warp Cycles Per Issued|Duration|Tensor|DRAM Throughput" "$O/details-n$N.txt" | head -40
done
gzip -9 "$O"/*.csv
