#!/usr/bin/env bash
# Run 150: the closing checks (scripts/gpu-check.sh, scripts/export-check.sh) and a private-stream-data sweep of the H200's misses.
set -uo pipefail
O=${OUT:-/tmp/run150}; B=target/release/mra-bench
mkdir -p "$O"; export MRA_TUNING_DB=/tmp/nodb-150.json
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
$B sweep -K 10,12,32 -l copy,bound,fused-pipe,fused-split -n 100 --stream-data private > "$O/sweep-private.txt" 2>&1; echo "private sweep rc=$?"
grep -E "^(copy|bound|fused-pipe|fused-split) " "$O/sweep-private.txt" | grep -v "cannot run"
OUT="$O/gpu-check" timeout 330 scripts/gpu-check.sh "$B" > "$O/gpu-check.log" 2>&1; echo "gpu-check rc=$?"
grep -E "passed|failed|cannot run|exit" "$O/gpu-check.log" | tail -4
OUT="$O/export" timeout 150 bash scripts/export-check.sh "$B" > "$O/export-check.log" 2>&1; echo "export-check rc=$?"
tail -5 "$O/export-check.log"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf checks.tgz gpu-check export gpu-check.log export-check.log && rm -rf gpu-check export gpu-check.log export-check.log; ls
