#!/usr/bin/env bash
# Run 88, part 2: the sweep (every level, K 6-32, no tuning database), the README main job and two
# repeat sweeps at K = 10, 12, with the binary B (default target/release/mra-bench).
# From the repository root: OUT=... B=... bash bench/exp88/sweep.sh
set -uo pipefail
O=$OUT/sweep; mkdir -p "$O"
B=${B:-target/release/mra-bench}
nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version,memory.total --format=csv > "$O/gpu.txt" 2>&1
$B --version > "$O/version.txt" 2>&1; cat "$O/gpu.txt" "$O/version.txt"
export MRA_KERNEL_CACHE=$(mktemp -d)
export MRA_TUNING_DB=$(mktemp -d)/tuning.json   # empty: every level at its schedule's defaults
date -u +%FT%TZ > "$O/start.txt"
s=$(date +%s)
$B sweep -K 6,8,10,12,16,20,24,32 -l all -n 100 --json "$O/sweep.json" --csv "$O/sweep.csv" --plot "$O/sweep.svg" > "$O/sweep.txt" 2>&1
echo "sweep exit $? after $(( $(date +%s) - s )) s" | tee "$O/sweep-exit.txt"
$B -K 16 -N 2048 -n 100 -r 5 -l 3 > "$O/readme-main.txt" 2>&1; echo "main job exit $?" >> "$O/readme-main.txt"
for i in 1 2; do $B sweep -K 10,12 -l all -n 100 > "$O/repeat-$i.txt" 2>&1; echo "repeat $i exit $?"; grep -E "^copy|\*$" "$O/repeat-$i.txt"; done
grep -E "^copy " "$O/sweep.txt"; grep -E "\*$" "$O/sweep.txt"
tail -n 3 "$O/readme-main.txt"
tar -C "$OUT" -czf "$OUT/sweep.tgz" sweep && rm -rf "$O"
