#!/usr/bin/env bash
# Run 94: the `bound` level on a GPU against run 92's program (bench/exp92/floor.cu), one call.
# Correctness (validate copy and bound at odd and even K and N), floor.cu in the default timing
# (200 ms warm-up, 5 repetitions, 1 s idle before each mode), the sweep of copy, bound and the
# fastest levels (default timing), and an exhaustive `tune -l bound` (threads x shadow_mma).
# From the repository root on the device machine, logs under $OUT.
set -uo pipefail
B=target/release/mra-bench
export MRA_TUNING_DB=/tmp/run94-db.json
rm -f $MRA_TUNING_DB
{ nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version --format=csv; $B --version; date -u +%FT%TZ; } > $OUT/gpu.txt
$B validate -l copy,bound -K 6,7,10,12,16,20,24,32 -N 3,2047 > $OUT/validate.txt 2>&1
echo "validate exit $?" >> $OUT/validate.txt
nvcc -O3 -arch=sm_90a -o /tmp/floor bench/exp92/floor.cu || exit 1
for K in ${KS:-10 12 16 20 24 32}; do /tmp/floor $K 128 0 2 dmma 200 0; done > $OUT/floor.txt 2>&1
$B sweep -K 6,8,10,12,16,20,24,32 -l copy,bound,fused-pipe,fused-cluster -n 100 --json $OUT/sweep.json > $OUT/sweep.txt 2> $OUT/sweep.err
echo "sweep exit $?" >> $OUT/sweep.txt
$B tune -l bound -K 10,12,32 --strategy exhaustive --out $OUT/tune.json > $OUT/tune.txt 2>&1
echo "tune exit $?" >> $OUT/tune.txt
$B run -l bound -K 10 > $OUT/run.txt 2>&1
echo "run exit $?" >> $OUT/run.txt
