#!/usr/bin/env bash
# Run 79: the K with the usual 200 ms warm-up and with --warmup settle, one process each.
set -u
B=target/release/mra-bench
export MRA_TUNING_DB=/tmp/nodb.json
{ nvidia-smi --query-gpu=name,serial,clocks.max.sm,power.limit,driver_version --format=csv; $B --version; date -u +%FT%TZ; } > $OUT/gpu.txt
cat $OUT/gpu.txt
{
echo "== main job, fused-cluster K=32, --warmup settle"; $B -K 32 -l fused-cluster -n 100 --warmup settle 2>&1 | tail -4
echo "== sweep, 200 ms"; $B sweep -K 6,8,10,12,16,20,24,32 -l copy,fused,fused-pipe,fused-groups,fused-cluster -n 100 --no-peak --json $OUT/sweep-200ms.json 2>&1 | tail -48
echo "== sweep, settle"; $B sweep -K 6,8,10,12,16,20,24,32 -l copy,fused,fused-pipe,fused-groups,fused-cluster -n 100 --no-peak --warmup settle --json $OUT/sweep-settle.json 2>&1 | tail -50
} > $OUT/check.txt 2>&1
cat $OUT/check.txt
