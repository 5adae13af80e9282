#!/usr/bin/env bash
# Run 151: swap_operands(1) at K = 12 on the lent GPU: every swapped fused-pipe and fused candidate, then sweeps with the
# resulting database (the best swapped candidate where it beat nothing else) against the defaults, alternating.
set -uo pipefail
O=${OUT:-/tmp/run151}; B=target/release/mra-bench
mkdir -p "$O"; DB="$O/tuning-db.json"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
timeout 280 $B tune --db "$DB" -l fused-pipe -K 12 --fix swap_operands=1 --strategy exhaustive --budget 260s --top 5 > "$O/tune-pipe.txt" 2>&1; echo "tune fused-pipe rc=$?"
grep -E "#[1-5]|defaults|candidates" "$O/tune-pipe.txt" | tail -8
timeout 100 $B tune --db "$DB" -l fused -K 12 --fix swap_operands=1 --strategy exhaustive --top 3 > "$O/tune-fused.txt" 2>&1; echo "tune fused rc=$?"
grep -E "#[1-3]|defaults|candidates" "$O/tune-fused.txt" | tail -5
for r in 1 2; do
  MRA_TUNING_DB="$DB" $B sweep -K 12 -l copy,fused,fused-pipe -n 100 > "$O/sweep-swapped$r.txt" 2>&1; echo "swapped $r rc=$?"
  grep -E "^(copy|fused|fused-pipe) " "$O/sweep-swapped$r.txt"
  MRA_TUNING_DB=/tmp/nodb-151.json $B sweep -K 12 -l copy,fused,fused-pipe -n 100 > "$O/sweep-defaults$r.txt" 2>&1; echo "defaults $r rc=$?"
  grep -E "^(copy|fused|fused-pipe) " "$O/sweep-defaults$r.txt"
done
date -u +%FT%TZ | tee -a "$O/gpu.txt"
