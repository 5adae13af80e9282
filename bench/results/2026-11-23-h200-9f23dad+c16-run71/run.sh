#!/usr/bin/env bash
# Run 71: cluster(16) at K = 32 (and 31) against the default cluster(8), one process per tune.
set -u
B=.gpu/c16/mra-bench
export MRA_KERNEL_CACHE=$(mktemp -d) MRA_TUNING_DB=/tmp/nodb.json
W=$(mktemp -d)
FIX=async_exchange=1,fuse_k=2,pad_a=4,unroll_rows=1,late_wait=1,pair_rows=0
nvidia-smi --query-gpu=name,serial,driver_version,power.limit,clocks.max.sm --format=csv,noheader > $OUT/gpu.txt
$B --version >> $OUT/gpu.txt; date -u +%FT%TZ >> $OUT/gpu.txt
for round in 1 2; do
  $B tune -l fused-cluster -K 32 --fix cluster=16,$FIX --strategy exhaustive -n 100 -r 5 --db $W/t32-$round.json > $OUT/tune-k32-r$round.txt 2>&1; echo "k32 r$round rc=$?"
done
$B tune -l fused-cluster -K 31 --fix cluster=16,async_exchange=0,fuse_k=2,pad_a=4,unroll_rows=1,late_wait=1,pair_rows=0 --strategy exhaustive -n 100 -r 5 --db $W/t31.json > $OUT/tune-k31.txt 2>&1; echo "k31 rc=$?"
# Forced cluster(16) configurations: validated at odd N, and memcheck with a partial last cluster.
for cfg in "buffers=4,split_cols=2,threads=256,min_blocks=1" "buffers=4,split_cols=4,threads=256,min_blocks=1"; do
  rm -f $W/force.json
  $B tune -l fused-cluster -K 32 --fix cluster=16,$FIX,$cfg -n 20 -r 1 --db $W/force.json > /dev/null 2>&1
  echo "== forced $cfg"
  MRA_TUNING_DB=$W/force.json $B validate -l fused-cluster -K 32 -N 1,3,17,2047 2>&1 | tail -6
done
echo "== memcheck (last forced config), K=32 N=5"
MRA_TUNING_DB=$W/force.json timeout 300 compute-sanitizer --tool memcheck $B validate -l fused-cluster -K 32 -N 5 2>&1 | tail -4
