#!/bin/bash
set -u
B=.gpu/last/mra-bench
export MRA_TUNING_DB=/tmp/nodb.json
nvidia-smi --query-gpu=name,serial,clocks.max.sm,power.limit,driver_version --format=csv > $OUT/gpu.txt; $B --version >> $OUT/gpu.txt; date -u >> $OUT/gpu.txt
{
echo "== README main job"; $B -K 16 -N 2048 -n 100 -r 5 -l 3 2>&1 | tail -3
echo "== validate"; $B validate -l all -K 7,10,12,13,16,20,24,25,29,32 -N 3,2047 2>&1 | tail -1
echo "== sweep"; $B sweep -K 6,8,10,12,16,20,24,32 -l copy,fused,fused-pipe,fused-cluster -n 100 --json $OUT/sweep.json 2>&1 | tail -14
echo "== tune exit status"; $B tune --strategy genetic -l fused -K 8; echo "rc=$?"
} > $OUT/check.txt 2>&1
cat $OUT/check.txt
