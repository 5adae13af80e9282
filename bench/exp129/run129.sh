#!/usr/bin/env bash
# Run 129: fused-cluster's last block skips the empty row tiles of passes 0 and 2 (where CL * CLUSTER > K): validate
# every K from 23 to 31 x N = 1, 3, 2047 with the new binary, then the old binary (b97da0f, target/release/mra-bench-old)
# against the new one at each K's defaults, alternating processes, two rounds.
set -uo pipefail
O=${OUT:-/tmp/out129}; B=target/release/mra-bench; OLD=target/release/mra-bench-old
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; $OLD --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-129.json
$B validate -l fused-cluster -K 23,24,25,26,27,29,30,31 -N 1,3,2047 > "$O/validate.txt" 2>&1; echo "validate rc=$?"; tail -n 1 "$O/validate.txt"
one() { $1 -l fused-cluster -K $2 -n 100 2>&1 | tee "$O/$3-k$2-r$4.txt" | grep median | sed 's/.*median \([0-9.]*\) us.*floor[^0-9]*\([0-9.]*\).*/\1 (copy\/level \2)/'; }
for r in 1 2; do
  for k in 29 30 23 25 26 27 31; do
    echo "r$r K=$k old $(one $OLD $k old $r) new $(one $B $k new $r)"
  done
done
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf runs.tgz old-* new-* validate.txt && rm -f old-* new-* validate.txt; ls
