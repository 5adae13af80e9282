#!/bin/bash
set -u
B=.gpu/final/mra-bench
export MRA_TUNING_DB=/tmp/nodb.json
nvidia-smi --query-gpu=name,serial,clocks.max.sm,power.limit,driver_version --format=csv > $OUT/gpu.txt; $B --version >> $OUT/gpu.txt; date -u >> $OUT/gpu.txt
echo "== README main job"; $B -K 16 -N 2048 -n 100 -r 5 -l 3 2>&1 | tail -4 | tee $OUT/readme.txt
echo "== tune end to end (space, with_config, validate, time)"
$B tune -l fused,fused-cluster -K 16,32 --strategy random --max-configs 3 -n 20 -r 2 --db $OUT/tune.json 2>&1 | grep -v "^\s*$" | tail -12 | tee $OUT/tune.txt
echo "== validate with the tuned database"; MRA_TUNING_DB=$OUT/tune.json $B validate -l fused,fused-cluster -K 16,32 -N 3,2047 2>&1 | tail -2
echo "== gpu-check"; OUT=$OUT/gpu-check KS="6 10 12 16 20 24 32" LEVELS="3 fused fused-pipe fused-cluster" timeout 420 bash scripts/gpu-check.sh $B 2>&1 | tail -30
