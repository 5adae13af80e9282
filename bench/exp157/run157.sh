#!/usr/bin/env bash
# Run 157: where fused-split K = 32 stalls, per SASS instruction (ncu SourceCounters, one launch alone), and its L2 / memory
# workload, to tell slice waits (mbarrier), shared loads and DMMA dependencies apart.
set -uo pipefail
O=${OUT:-/tmp/run157}; B=target/release/mra-bench
mkdir -p "$O"; export MRA_TUNING_DB=/tmp/nodb-157.json
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
timeout 300 ncu --clock-control none -k regex:mra_fused_split --launch-skip 40 --launch-count 1 --section SourceCounters --section WarpStateStats --section MemoryWorkloadAnalysis --section SpeedOfLight -o "$O/fs32" $B -l fused-split -K 32 -n 60 -r 1 -s 1 > "$O/ncu-run.txt" 2>&1; echo "ncu rc=$?"
ncu -i "$O/fs32.ncu-rep" --page source --csv --print-source sass > "$O/sass.csv" 2> "$O/sass.err"; echo "source page rc=$? lines $(wc -l < "$O/sass.csv")"
ncu -i "$O/fs32.ncu-rep" --page details > "$O/details.txt" 2>&1; echo "details rc=$?"
grep -E "L2 Cache Throughput|DRAM Throughput|Memory Throughput|Duration|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|Warp Cycles Per Issued|Stall" "$O/details.txt" | head -30
head -1 "$O/sass.csv" | tr ',' '\n' | head -40 | tr '\n' '|'; echo
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf run157.tgz *.txt *.csv *.ncu-rep && find . -name "*.txt" ! -name gpu.txt -delete && rm -f *.csv *.ncu-rep; ls
