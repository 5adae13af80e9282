#!/usr/bin/env bash
set -u
B=.gpu/ncu73/mra-bench
export MRA_KERNEL_CACHE=$(mktemp -d) MRA_TUNING_DB=/tmp/nodb.json
W=$(mktemp -d)
nvidia-smi --query-gpu=name,serial,driver_version,power.limit --format=csv,noheader > $OUT/gpu74.txt
date -u +%FT%TZ >> $OUT/gpu74.txt
FIX=cluster=8,buffers=3,async_exchange=1,late_wait=1,pair_rows=0,split_cols=2,threads=256,fuse_k=2,min_blocks=1,unroll_rows=1
for round in 1 2; do
  $B tune -l fused-cluster -K 32 --fix $FIX --strategy exhaustive -n 100 -r 5 --db $W/p-$round.json > $OUT/tune74-r$round.txt 2>&1; echo "r$round rc=$?"
  grep -E "^  fused-cluster" $OUT/tune74-r$round.txt | sed 's/.*pad_a=\([0-9]*\).*: \([0-9.]*\) us.*(\(.*\))$/pad_a=\1 \2 us (\3)/'
done
