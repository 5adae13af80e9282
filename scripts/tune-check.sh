#!/usr/bin/env bash
# Tune fused-pipe, fused and L7 at the K of the mission on the GPU found, in one call of a few minutes, and
# leave the proof in $OUT (or ./tune-check-out):
#   tune.txt            per-candidate log, best few per (level, K), and the before/after table
#                       (defaults and tuned configuration timed in the same process, same copy floor)
#   tune-summary.json   the same table as JSON
#   tuning.json         the tuning database of this run (commit it under bench/results/)
#   sweep-default.txt / sweep-tuned.txt   a confirmation: `sweep` of both levels with the
#                       schedule defaults (--untuned), then with the tuned configurations (and
#                       `-l best`), each with its own copy floor
#
# Usage: scripts/tune-check.sh [path/to/mra-bench]     (default: target/release/mra-bench)
# Environment: BUDGET (tuning wall time, default 4m; with the two sweeps the script stays under ~8 min), KS (default 6,8,10,12,16,20,24,32),
#              LEVELS (default fused-pipe,fused,L7), STRATEGY (default anneal).
set -euo pipefail

BIN=${1:-target/release/mra-bench}
OUT=${OUT:-tune-check-out}
BUDGET=${BUDGET:-4m}
KS=${KS:-6,8,10,12,16,20,24,32}
LEVELS=${LEVELS:-fused-pipe,fused,L7}
STRATEGY=${STRATEGY:-anneal}
mkdir -p "$OUT"
export MRA_TUNING_DB="$OUT/tuning.json"
rm -f "$MRA_TUNING_DB"

echo "# $(date -u +%FT%TZ) $("$BIN" --version) on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'unknown GPU')"
start=$(date +%s)
"$BIN" tune -l "$LEVELS" -K "$KS" --strategy "$STRATEGY" --budget "$BUDGET" -n 100 -r 3 \
    --out "$OUT/tune-summary.json" 2>&1 | tee "$OUT/tune.txt" | grep -Ev '^  [^ ]+ K=[0-9]+ ' || true
echo "# tuning took $(( $(date +%s) - start )) s"

# Confirmation in fresh processes: defaults, then tuned (+ the fastest tuned level per K).
"$BIN" sweep -K "$KS" -l "$LEVELS" --untuned --no-peak -n 100 -r 5 --json "$OUT/sweep-default.json" \
    > "$OUT/sweep-default.txt" 2>&1 || echo "# sweep --untuned failed: see $OUT/sweep-default.txt"
"$BIN" sweep -K "$KS" -l "$LEVELS,best" --no-peak -n 100 -r 5 --json "$OUT/sweep-tuned.json" \
    > "$OUT/sweep-tuned.txt" 2>&1 || echo "# sweep (tuned) failed: see $OUT/sweep-tuned.txt"
echo "## sweep, schedule defaults"; grep -v '^#' "$OUT/sweep-default.txt" || true
echo "## sweep, tuned configurations"; grep -v '^#' "$OUT/sweep-tuned.txt" || true
echo "# total $(( $(date +%s) - start )) s; database $MRA_TUNING_DB"
