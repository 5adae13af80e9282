#!/usr/bin/env bash
# Run 85 / final check: validate fused where its default changed (K = 9-14: 128 threads; K >= 20: 512) and every
# level at a spread of K, then the issue's sweep (every level, K 6-32, no tuning database) and the
# README main job. On the device, from the repository root:  OUT=... bash bench/exp84/final.sh
set -uo pipefail
O=$OUT/final; mkdir -p "$O"
B=target/release/mra-bench
nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version,memory.total --format=csv > "$O/gpu.txt" 2>&1
$B --version > "$O/version.txt" 2>&1
export MRA_KERNEL_CACHE=$(mktemp -d)
export MRA_TUNING_DB=$(mktemp -d)/tuning.json   # empty: every level at its schedule's defaults
date -u +%FT%TZ > "$O/start.txt"
$B validate -l fused -K ${FUSED_KS:-9,10,11,12,13,14,20,21,24} -N 1,3,2047 > "$O/validate-fused.txt" 2>&1; echo "exit $?" >> "$O/validate-fused.txt"
# compute-sanitizer over fused at a K of each default thread count (128, 256, 512)
for K in 12 16 20; do compute-sanitizer --tool memcheck $B validate -l fused -K $K -N 3 > "$O/memcheck-fused-k$K.txt" 2>&1; echo "K=$K exit $? $(grep -h "ERROR SUMMARY" "$O/memcheck-fused-k$K.txt")"; done
$B validate -l all -K ${VKS:-7,10,12,13,16,20,25,32} -N 3,2047 --json > "$O/validate.jsonl" 2> "$O/validate.err"; echo "exit $?" >> "$O/validate.err"
tail -n 2 "$O/validate-fused.txt" "$O/validate.err"
s=$(date +%s)
$B sweep -K 6,8,10,12,16,20,24,32 -l all -n 100 --json "$O/sweep.json" --csv "$O/sweep.csv" --plot "$O/sweep.svg" > "$O/sweep.txt" 2>&1
echo "sweep exit $? after $(( $(date +%s) - s )) s" | tee "$O/sweep-exit.txt"
$B -K 16 -N 2048 -n 100 -r 5 -l 3 > "$O/readme-main.txt" 2>&1; echo "main job exit $?" >> "$O/readme-main.txt"
grep -E "^(copy|fused) " "$O/sweep.txt"; grep -E "\*$" "$O/sweep.txt"
tail -n 3 "$O/readme-main.txt"
tar -C "$OUT" -czf "$OUT/final.tgz" final && rm -rf "$O"
