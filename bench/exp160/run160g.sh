#!/usr/bin/env bash
# Run 160, on an H200 only (exits at once on another GPU): co_schedule 1 against 0 (run160d.sh), then the K = 32 sweep of
# the levels twice.
set -uo pipefail
O=${OUT:-/tmp/run160g}; B=target/release/mra-bench
mkdir -p "$O"; export MRA_TUNING_DB=/tmp/nodb-160g.json
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu0.txt"
grep -q H200 "$O/gpu0.txt" || { echo "not an H200: nothing run"; exit 0; }
OUT=$O bash bench/exp160/run160d.sh 2>&1 | grep -E "PASS|FAIL|passed|ERROR|us/task|rc=" | cut -c1-260
for r in 1 2; do
  $B sweep -K 32 -l copy,bound,fused-cluster,fused-split -n 100 --json "$O/sweep-k32-r$r.json" > "$O/sweep-k32-r$r.txt" 2>&1; echo "sweep r$r rc=$?"
  python3 -c "import json; d=json.load(open('$O/sweep-k32-r$r.json')); print([(r['level'], round(r['us_per_task'],1), round(1/r['fraction_of_floor'],3) if r['fraction_of_floor'] else None, r['sm_clock']['sm_mhz_median']) for r in d['rows']])"
done
