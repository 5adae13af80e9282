#!/usr/bin/env bash
# Run 148, call 1: issue 9's proof sweep (bench/exp121/proof.sh) and the README's main job, on whatever GPU is lent.
set -uo pipefail
O=${OUT:-/tmp/run148}; B=target/release/mra-bench
OUT="$O" bash bench/exp121/proof.sh
MRA_TUNING_DB=/tmp/nodb-148.json $B -K 16 -N 2048 -n 100 -r 5 -l 3 > "$O/readme-main-job.txt" 2>&1; echo "main job rc=$?"
grep -iE "floor|L3" "$O/readme-main-job.txt" | tail -3
