#!/usr/bin/env bash
# Run 144 (closing checks at the final code, swap_operands(1) by default at fused-pipe K = 10): scripts/gpu-check.sh
# (every level validated at its K list, timed against the copy), compute-sanitizer synccheck of fused-pipe at K = 10
# (memcheck and racecheck ran in run 142 on the same kernel), and the README's main job.
set -uo pipefail
O=${OUT:-/tmp/check144}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-144.json
timeout 100 compute-sanitizer --tool synccheck --error-exitcode 9 $B validate -l fused-pipe -K 10 -N 3,64 > "$O/sanitize-synccheck.txt" 2>&1; echo "synccheck rc=$?"
grep -E "ERROR SUMMARY|passed|failed" "$O/sanitize-synccheck.txt" | tail -2
OUT="$O/gpu-check" timeout 400 scripts/gpu-check.sh "$B" > "$O/gpu-check.log" 2>&1; echo "gpu-check rc=$?"
grep -E "passed|failed|cannot run|exit" "$O/gpu-check.log" | tail -4
$B -K 16 -N 2048 -n 100 -r 5 -l 3 > "$O/readme-main-job.txt" 2>&1; echo "main job rc=$?"; grep -iE "floor|L3" "$O/readme-main-job.txt" | tail -3
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf checks.tgz gpu-check *.txt *.log && rm -rf gpu-check sanitize-*.txt readme-main-job.txt gpu-check.log; ls
