#!/usr/bin/env bash
# Run 84, call 1: the proof at this commit — one sweep of every level at the K from one
# lease (defaults, no tuning database), and the README main job. On the device, from the repository root:
#   OUT=... bash bench/exp84/sweep.sh
set -uo pipefail
O=$OUT/sweep; mkdir -p "$O"
B=target/release/mra-bench
nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version,memory.total --format=csv > "$O/gpu.txt" 2>&1
export MRA_KERNEL_CACHE=$(mktemp -d)
export MRA_TUNING_DB=$(mktemp -d)/tuning.json   # empty: every level at its schedule's defaults
date -u +%FT%TZ > "$O/start.txt"
s=$(date +%s)
$B sweep -K 6,8,10,12,16,20,24,32 -l all -n 100 --json "$O/sweep.json" --csv "$O/sweep.csv" --plot "$O/sweep.svg" > "$O/sweep.txt" 2>&1
echo "sweep exit $? after $(( $(date +%s) - s )) s" | tee "$O/sweep-exit.txt"
$B -K 16 -N 2048 -n 100 -r 5 -l 3 > "$O/readme-main.txt" 2>&1; echo "main job exit $?" >> "$O/readme-main.txt"
grep -E "^\S+ +(6|8|10|12|16|20|24|32) .*\*" "$O/sweep.txt" | head -20
tail -n 3 "$O/readme-main.txt"
tar -C "$OUT" -czf "$OUT/sweep.tgz" sweep && rm -rf "$O"
