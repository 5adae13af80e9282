#!/usr/bin/env bash
# Run 122: where fused-cluster K = 29 and 31 spend their time against K = 28 and 30 on an H100 (current defaults): ncu --set full of one launch
# (after 60 launches of warm-up in mra-bench's
# own harness), the details page and the SASS page with stall samples per instruction.
set -uo pipefail
O=${OUT:-/tmp/ncu122}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-122.json
for lk in "fused-cluster 28" "fused-cluster 29" "fused-cluster 30" "fused-cluster 31"; do
  set -- $lk
  name=$1-k$2
  kname=mra_$(echo $1 | tr - _)_k$2_f64
  timeout 120 ncu --clock-control none -k $kname --launch-skip 60 --launch-count 1 --set full --import-source no -o /tmp/$name \
    $B -l $1 -K $2 -n 100 -r 1 > "$O/run-$name.txt" 2>&1; echo "$name rc=$?"
  ncu --import /tmp/$name.ncu-rep --page details --print-details all > "$O/details-$name.txt" 2>&1
  ncu --import /tmp/$name.ncu-rep --page source --csv --print-source sass > "$O/sass-$name.csv" 2>&1
  grep -E "^  mra_|Duration|Registers Per|Achieved Active Warps|Pipe Tensor Cycles Active|Warp Cycles Per Issued|Executed Instructions  |DRAM Throughput|L2 Hit Rate|Stall|Mem Busy|Max Bandwidth|Bank Conflicts|Shared Load|Shared Store|L2 Hit Rate" "$O/details-$name.txt" | grep -vE "Stall (GMMA|Membar|Sleeping|Tex Throttle|Misc|Drain|IMC Miss|Dispatch Stall|No Instruction|Not Selected)" | head -26
done
gzip -9 "$O"/*.csv
gzip -9 "$O"/details-*.txt; cd "$O" && tar czf sass.tgz sass-*.csv.gz && rm -f sass-*.csv.gz; ls
