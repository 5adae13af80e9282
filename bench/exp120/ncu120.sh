#!/usr/bin/env bash
# Run 120b: where fused-split K = 30 and 31 (padded to 32) wait against K = 32 on an H100: ncu --set full of one launch
# (after 60 launches of warm-up in mra-bench's
# own harness), the details page and the SASS page with stall samples per instruction.
set -uo pipefail
O=${OUT:-/tmp/ncu120}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-120.json
for lk in "fused-split 30" "fused-split 31" "fused-split 32"; do
  set -- $lk
  name=$1-k$2
  kname=mra_$(echo $1 | tr - _)_k$2_f64
  timeout 170 ncu --clock-control none -k $kname --launch-skip 60 --launch-count 1 --set full --import-source no -o /tmp/$name \
    $B -l $1 -K $2 -n 100 -r 1 > "$O/run-$name.txt" 2>&1; echo "$name rc=$?"
  ncu --import /tmp/$name.ncu-rep --page details --print-details all > "$O/details-$name.txt" 2>&1
  ncu --import /tmp/$name.ncu-rep --page source --csv --print-source sass > "$O/sass-$name.csv" 2>&1
  grep -E "^  mra_|Duration|Registers Per|Achieved Active Warps|Pipe Tensor Cycles Active|Warp Cycles Per Issued|Executed Instructions  |DRAM Throughput|L2 Hit Rate|Stall|Mem Busy|Max Bandwidth" "$O/details-$name.txt" | head -40
done
gzip -9 "$O"/*.csv
