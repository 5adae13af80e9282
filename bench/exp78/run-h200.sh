#!/usr/bin/env bash
# Run 78 on an H200 (where K = 32 misses its target), and the state of the K at this
# commit: the chain prototype against fused-cluster (run3.sh, logs in $OUT/exp78/), then the
# README main job, a validation of the fused levels at odd K and N, and a sweep of the copy and
# the fused levels at the K (sweep.json). Binary: target/release/mra-bench (carried).
set -u
B=target/release/mra-bench
export MRA_TUNING_DB=/tmp/nodb.json
{ nvidia-smi --query-gpu=name,serial,clocks.max.sm,power.limit,driver_version --format=csv; $B --version; date -u +%FT%TZ; } > $OUT/gpu.txt
cat $OUT/gpu.txt
EXP_OUT=$OUT/exp78 bash bench/exp78/run3.sh
{
echo "== README main job"; $B -K 16 -N 2048 -n 100 -r 5 -l 3 2>&1 | tail -3
echo "== validate"; $B validate -l fused,fused-pipe,fused-groups,fused-cluster -K 7,10,12,13,25,32 -N 3,2047 2>&1 | tail -1
echo "== sweep"; $B sweep -K 6,8,10,12,16,20,24,32 -l copy,fused,fused-pipe,fused-groups,fused-cluster -n 100 --json $OUT/sweep.json 2>&1 | tail -16
} > $OUT/check.txt 2>&1
cat $OUT/check.txt
