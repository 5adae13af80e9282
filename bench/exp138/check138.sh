#!/usr/bin/env bash
# Run 138 (checks after fused's pair_rows default at K = 12): compute-sanitizer memcheck, racecheck and synccheck of fused
# at K = 11, 12, 13 (pair_rows 1 at 12), scripts/gpu-check.sh (every level validated at its K list, timed against the copy),
# and the README's main job.
set -uo pipefail
O=${OUT:-/tmp/check138}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-138.json
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $B validate -l fused -K 11,12,13 -N 3,64 > "$O/sanitize-$tool.txt" 2>&1; echo "$tool rc=$?"
  grep -E "ERROR SUMMARY|passed|failed" "$O/sanitize-$tool.txt" | tail -2
done
OUT="$O/gpu-check" timeout 330 scripts/gpu-check.sh "$B" > "$O/gpu-check.log" 2>&1; echo "gpu-check rc=$?"
grep -E "passed|failed|cannot run|exit" "$O/gpu-check.log" | tail -4
$B -K 16 -N 2048 -n 100 -r 5 -l 3 > "$O/readme-main-job.txt" 2>&1; echo "main job rc=$?"; grep -iE "floor|L3" "$O/readme-main-job.txt" | tail -3
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf checks.tgz gpu-check *.txt *.log && rm -rf gpu-check sanitize-*.txt readme-main-job.txt gpu-check.log; ls
