#!/usr/bin/env bash
# Run 83: per-instruction execution counts (ncu source page, SASS) of the shared stores in the
# prototype (launch 45) and the generated stack(2) kernel (launch 65).
set -uo pipefail
cd "$(dirname "$0")"
[ -x /tmp/run83 ] || nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -lgomp -lcuda -o /tmp/run83 main.cu > /dev/null 2>&1 || exit 1
for skip in 45 65; do
  echo "== launch $skip"
  timeout 120 ncu --clock-control none --launch-skip $skip --launch-count 1 --section SourceCounters --page source --print-source sass --csv /tmp/run83 prof > /tmp/src$skip.csv 2>&1; echo "rc=$?"
  head -3 /tmp/src$skip.csv | cut -c1-400
  grep -E "STS|BAR.SYNC|DMMA" /tmp/src$skip.csv | cut -c1-300 | head -40
done
