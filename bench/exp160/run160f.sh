#!/usr/bin/env bash
# Run 160, seventh call: fused-split K = 32's eight configurations (prefetch_l2 x fuse_k x co_schedule) exhaustively in
# one process, then run160d.sh's alternation (co_schedule 1 against 0) on whatever GPU is lent.
set -uo pipefail
O=${OUT:-/tmp/run160f}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu0.txt"
MRA_TUNING_DB=$O/tune-db.json $B tune -l fused-split -K 32 --strategy exhaustive -n 100 --top 8 > "$O/tune.txt" 2>&1; echo "tune rc=$?"
grep -E "us/task" "$O/tune.txt" | head -20
OUT=$O bash bench/exp160/run160d.sh 2>&1 | grep -E "PASS|FAIL|passed|ERROR|us/task|rc=" | cut -c1-260
