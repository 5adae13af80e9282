#!/usr/bin/env bash
# Run 84, call 3: `fused` exhaustively at more K on this GPU (its default of 256 threads lost to 128 at
# K = 10 and 12 in call 2), into the database of call 2 if given as DB. From the repository root:
#   OUT=... [DB=bench/results/2026-11-25-h100-1ad6454-run84/tune/tune-db.json] bash bench/exp84/tune-fused.sh
# (run 84 call 3 started from that database, call 2's)
set -uo pipefail
O=$OUT/tune-fused; mkdir -p "$O"
B=target/release/mra-bench
nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version --format=csv > "$O/gpu.txt" 2>&1
export MRA_KERNEL_CACHE=$(mktemp -d)
export MRA_TUNING_DB=$O/tune-db.json
[ -n "${DB:-}" ] && cp "$DB" "$MRA_TUNING_DB"
date -u +%FT%TZ > "$O/start.txt"
$B tune -l fused -K ${KS:-6,8,11,13,14,16} --strategy exhaustive --budget ${BUDGET:-240s} --top 3 > "$O/tune.txt" 2>&1; echo "tune exit $?" >> "$O/tune.txt"
grep -E "^\| fused" "$O/tune.txt"
tar -C "$OUT" -czf "$OUT/tune-fused.tgz" tune-fused && rm -rf "$O"
