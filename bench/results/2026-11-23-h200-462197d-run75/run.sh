#!/bin/bash
# Run 75: validate forced jam configurations, the broken binary must fail, then time K = 32.
set -u
B=.gpu/r75/mra-bench; BRK=.gpu/r75/mra-bench-broken
export MRA_TUNING_DB=/tmp/nodb.json
nvidia-smi --query-gpu=name,serial,clocks.max.sm,power.limit,driver_version --format=csv > $OUT/gpu.txt
$B --version >> $OUT/gpu.txt; date -u >> $OUT/gpu.txt
C8="cluster=8,buffers=3,pad_a=4,late_wait=1,pair_rows=0,unroll_rows=2,split_cols=2"
{
for spec in \
  "32:$C8,async_exchange=1,threads=256,fuse_k=2,min_blocks=1" \
  "31:$C8,async_exchange=0,threads=256,fuse_k=2,min_blocks=1" \
  "29:$C8,async_exchange=0,threads=256,fuse_k=4,min_blocks=1" \
  "30:$C8,async_exchange=1,threads=128,fuse_k=1,min_blocks=1" \
  "26:cluster=4,buffers=3,pad_a=4,late_wait=1,pair_rows=0,unroll_rows=2,split_cols=2,async_exchange=0,threads=256,fuse_k=2,min_blocks=1" \
  "28:cluster=4,buffers=4,pad_a=4,late_wait=1,pair_rows=0,unroll_rows=2,split_cols=2,async_exchange=0,threads=512,fuse_k=1,min_blocks=1"; do
  k=${spec%%:*}; cfg=${spec#*:}
  echo "=== K=$k $cfg"
  $B tune -l fused-cluster -K $k --fix $cfg --strategy exhaustive -n 10 -r 1 --db $OUT/db-$k.json 2>&1 | tail -4
  MRA_TUNING_DB=$OUT/db-$k.json $B validate -l fused-cluster -K $k -N 1,3,2047; echo "rc=$?"
done
echo "=== broken binary (a_steps_all[0] for every jammed tile), K=32 forced jam+fuse_k(2): must FAIL"
MRA_TUNING_DB=$OUT/db-32.json $BRK validate -l fused-cluster -K 32 -N 3,2047; echo "rc=$?"
} > $OUT/validate.txt 2>&1
echo validate done; grep -E "rc=|passed|FAIL" $OUT/validate.txt | head -30
F="cluster=8,buffers=3,async_exchange=1,pad_a=4,late_wait=1,pair_rows=0,threads=256"
for round in 1 2; do
  timeout 200 $B tune -l fused-cluster -K 32 --fix $F --strategy exhaustive -n 100 -r 5 --top 40 --db $OUT/tune32-r$round.json > $OUT/tune32-r$round.txt 2>&1
  echo "round $round rc=$?"; tail -45 $OUT/tune32-r$round.txt | head -20
done
