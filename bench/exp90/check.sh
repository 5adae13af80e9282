#!/usr/bin/env bash
# Run 90, GPU check of the cluster-residency report (binary carried: target/release/mra-bench).
# The driver's own count on this machine from bench/exp90/clusters.cu (independent of mra-bench),
# then what mra-bench reports for fused-cluster K = 32 (run) and K = 26, 28, 32 (sweep), then
# scripts/gpu-check.sh over the fused levels. Logs under $OUT.
set -uo pipefail
B=target/release/mra-bench
export MRA_TUNING_DB=/tmp/nodb.json
{ nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version --format=csv; $B --version; date -u +%FT%TZ; } > $OUT/gpu.txt
cat $OUT/gpu.txt
nvcc -O2 -arch=sm_90 -o /tmp/clusters bench/exp90/clusters.cu && /tmp/clusters > $OUT/clusters.txt
head -3 $OUT/clusters.txt
echo "== run fused-cluster K=32"
$B -l fused-cluster -K 32 -N 2048 -n 100 -r 5 > $OUT/run-k32.out 2> $OUT/run-k32.err; echo "exit $?" >> $OUT/run-k32.err
grep -E "clusters|exit" $OUT/run-k32.err; tail -2 $OUT/run-k32.out
echo "== sweep"
$B sweep -K 26,28,32 -l copy,fused-cluster -n 50 --json $OUT/sweep.json > $OUT/sweep.txt 2> $OUT/sweep.err; echo "exit $?" >> $OUT/sweep.txt
cat $OUT/sweep.txt
echo "== gpu-check"
OUT=$OUT/gpu-check VALIDATE_KS=1,6,7,10,12,13,16,20,23,25,32 VALIDATE_NS=3,2047 LEVELS="fused-pipe fused-cluster" KS="10 12 32" bash scripts/gpu-check.sh 2>&1 | tail -25
