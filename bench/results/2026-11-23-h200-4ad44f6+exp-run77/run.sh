#!/bin/bash
set -u
B=.gpu/exp77/mra-bench
export MRA_TUNING_DB=/tmp/nodb.json MRA_KERNEL_CACHE=$(mktemp -d)
nvidia-smi --query-gpu=name,serial,clocks.max.sm,power.limit,driver_version --format=csv > $OUT/gpu.txt; $B --version >> $OUT/gpu.txt; date -u >> $OUT/gpu.txt
for r in 1 2 3 4; do
  for v in none pass0 pass1; do
    if [ $v = none ]; then env -u MRA_EXP_DROP $B -K 32 -l fused-cluster -N 2048 -n 100 -r 5 > $OUT/r$r-$v.out 2> $OUT/r$r-$v.err
    else MRA_EXP_DROP=$v $B -K 32 -l fused-cluster -N 2048 -n 100 -r 5 > $OUT/r$r-$v.out 2> $OUT/r$r-$v.err; fi
    echo "round $r $v rc=$?: $(grep -h 'median\|validated fused\|failed' $OUT/r$r-$v.err | tr '\n' ' ' | cut -c1-260)"
    grep -h "SM clock" $OUT/r$r-$v.err
  done
done
