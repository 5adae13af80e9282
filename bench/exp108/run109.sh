#!/usr/bin/env bash
# Run 109: one sweep of every K from 1 to 32 over the levels that are fastest somewhere, an empty
# tuning database, -n 100 (the README harness otherwise), in one process; plus the chart.
set -uo pipefail
O=${OUT:-/tmp/out109}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-109.json
KS=$(seq -s, 1 32)
$B sweep -K "$KS" -l bound,fused,fused-pipe,fused-ring,fused-groups,fused-cluster,fused-split -n 100 --json "$O/sweep.json" --plot "$O/sweep.svg" > "$O/sweep.txt" 2>&1
echo "sweep rc=$?"
grep -E "^\| (copy|best)|^Best|best" "$O/sweep.txt" | head -20
tail -n 45 "$O/sweep.txt"
