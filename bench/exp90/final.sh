#!/usr/bin/env bash
# Final GPU check of this session's code (binary carried): fused-cluster's new defaults (K = 25, 28)
# validated at odd and even N, memcheck of the K = 28 default, a sweep of copy + fused-cluster at
# K = 25..32 with an empty tuning database, and the README main job. Logs under $OUT.
set -uo pipefail
B=target/release/mra-bench
export MRA_TUNING_DB=/tmp/nodb.json
{ nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version --format=csv; $B --version; date -u +%FT%TZ; } > $OUT/gpu.txt
cat $OUT/gpu.txt
echo "== validate"
$B validate -l fused-cluster,fused-pipe,fused -K 7,10,12,13,24,25,26,27,28,29,30,31,32 -N 1,3,2047 > $OUT/validate.txt 2>&1; echo "exit $?" >> $OUT/validate.txt; tail -n 2 $OUT/validate.txt
echo "== memcheck fused-cluster K=28 (cluster 7, 128 threads)"
compute-sanitizer --tool memcheck $B -l fused-cluster -K 28 -N 37 -n 2 -r 1 > $OUT/memcheck.txt 2>&1; echo "exit $?" >> $OUT/memcheck.txt; grep -E "ERROR SUMMARY|exit|clusters" $OUT/memcheck.txt
echo "== sweep"
$B sweep -K 25,26,27,28,29,30,31,32 -l copy,fused-cluster -n 50 --json $OUT/sweep.json > $OUT/sweep.txt 2>&1; echo "exit $?" >> $OUT/sweep.txt; grep -v "^$" $OUT/sweep.txt | tail -n 24
echo "== README main job"
$B -K 16 -N 2048 -n 100 -r 5 -l 3 > $OUT/readme-main.txt 2>&1; echo "exit $?" >> $OUT/readme-main.txt; tail -n 3 $OUT/readme-main.txt
