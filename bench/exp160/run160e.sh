#!/usr/bin/env bash
# Run 160, fifth call: the closing checks with co_schedule(1) fused-split: scripts/gpu-check.sh and scripts/export-check.sh.
set -uo pipefail
O=${OUT:-/tmp/run160e}; B=target/release/mra-bench
mkdir -p "$O"; export MRA_TUNING_DB=/tmp/nodb-160e.json
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
OUT="$O/gpu-check" timeout 380 scripts/gpu-check.sh "$B" > "$O/gpu-check.log" 2>&1; echo "gpu-check rc=$?"
grep -E "passed|failed|cannot run|exit" "$O/gpu-check.log" | tail -4
grep -E "fused-split" "$O/gpu-check.log" | tail -3 | cut -c1-200
OUT="$O/export" timeout 150 bash scripts/export-check.sh "$B" > "$O/export-check.log" 2>&1; echo "export-check rc=$?"
tail -3 "$O/export-check.log"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf run160e.tgz gpu-check export gpu-check.log export-check.log && rm -rf gpu-check export *.log; ls
