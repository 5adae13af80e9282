#!/usr/bin/env bash
# Run 92, call 9: the bound under mra-bench's default timing (200 ms warm-up, 5 repetitions; 1 s idle
# before each mode), the way the targets are measured, twice, with the sweep of copy and the
# fastest levels at the same K (default warm-up) between the two. Logs under $OUT.
set -uo pipefail
B=target/release/mra-bench
export MRA_TUNING_DB=/tmp/nodb.json
{ nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version --format=csv; $B --version; date -u +%FT%TZ; } > $OUT/gpu.txt
nvcc -O3 -arch=sm_90a -o /tmp/floor bench/exp92/floor.cu || exit 1
bound() { for K in ${KS:-10 12 16 20 24 32}; do /tmp/floor $K 128 0 2 dmma 200 0; done; }
bound > $OUT/floor-1.txt 2>&1
$B sweep -K ${SWEEP_KS:-10,12,16,20,24,32} -l copy,fused-pipe,fused-cluster -n 100 --json $OUT/sweep.json > $OUT/sweep.txt 2> $OUT/sweep.err
echo "sweep exit $?" >> $OUT/sweep.txt
bound > $OUT/floor-2.txt 2>&1
