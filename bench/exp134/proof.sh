#!/usr/bin/env bash
# Run 134: issue 9's proof at this session's final code (bench/exp121/proof.sh: one sweep of the issue's eight K, every
# level, one process), then K = 10's fast levels once more (run 131 part B's every-K sweep caught fused-pipe K = 10 in a
# host stall: 27.2 µs, every repetition host-bound).
set -uo pipefail
O=${OUT:-/tmp/proof134}; B=target/release/mra-bench
OUT="$O" bash bench/exp121/proof.sh
MRA_TUNING_DB=/tmp/nodb-134.json $B sweep -K 10 -l fused,fused-pipe,fused-ring,fused-groups -n 100 > "$O/k10-rerun.txt" 2>&1; echo "k10 rerun rc=$?"
grep -E "^(copy|fused[a-z-]*) +10 " "$O/k10-rerun.txt"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
