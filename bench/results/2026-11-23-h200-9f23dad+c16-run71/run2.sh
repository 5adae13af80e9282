#!/usr/bin/env bash
# Run 71, second call: cluster 2..16 in one process with the default (cluster 8) among the candidates.
set -u
B=.gpu/c16/mra-bench
export MRA_KERNEL_CACHE=$(mktemp -d) MRA_TUNING_DB=/tmp/nodb.json
W=$(mktemp -d)
FIX=async_exchange=1,fuse_k=2,pad_a=4,unroll_rows=1,late_wait=1,pair_rows=0,split_cols=2
nvidia-smi --query-gpu=name,serial,driver_version,power.limit,clocks.max.sm --format=csv,noheader > $OUT/gpu2.txt
date -u +%FT%TZ >> $OUT/gpu2.txt
for round in 1 2; do
  $B tune -l fused-cluster -K 32 --fix $FIX --strategy exhaustive -n 100 -r 5 --db $W/a-$round.json > $OUT/tune2-k32-r$round.txt 2>&1; echo "k32 r$round rc=$?"
  grep -E "^\| fused-cluster|defaults|#1 " $OUT/tune2-k32-r$round.txt
done
