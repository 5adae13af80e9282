#!/usr/bin/env bash
set -u
B=.gpu/c16/mra-bench
export MRA_KERNEL_CACHE=$(mktemp -d) MRA_TUNING_DB=/tmp/nodb.json
W=$(mktemp -d)
nvidia-smi --query-gpu=name,serial,driver_version,power.limit,clocks.max.sm --format=csv,noheader > $OUT/gpu3.txt
date -u +%FT%TZ >> $OUT/gpu3.txt
for round in 1 2; do
  $B tune -l fused-cluster -K 32 --fix cluster=8,buffers=3,async_exchange=1,pad_a=4,late_wait=1,pair_rows=0 --strategy exhaustive -n 100 -r 5 --db $W/u-$round.json > $OUT/tune3-k32-r$round.txt 2>&1; echo "r$round rc=$?"
  grep -E "^\| fused-cluster|defaults|#1 |#2 |#3 " $OUT/tune3-k32-r$round.txt
done
