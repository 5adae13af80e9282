#!/usr/bin/env bash
set -u
B=.gpu/ncu76/mra-bench
export MRA_KERNEL_CACHE=$(mktemp -d) MRA_TUNING_DB=/tmp/nodb.json
nvidia-smi --query-gpu=name,serial,driver_version,power.limit --format=csv,noheader > $OUT/gpu.txt
$B --version >> $OUT/gpu.txt; date -u +%FT%TZ >> $OUT/gpu.txt
S="--section WarpStateStats --section SchedulerStats --section SourceCounters --section Occupancy --section LaunchStats"
timeout 280 ncu --clock-control none --launch-skip 40 --launch-count 1 -k regex:mra_fused_cluster $S $B -K 32 -l fused-cluster -n 50 -r 1 > $OUT/ncu-k32.txt 2>&1; echo "k32 rc=$?"
timeout 200 ncu --clock-control none --launch-skip 40 --launch-count 1 -k regex:mra_fused_pipe $S $B -K 12 -l fused-pipe -n 50 -r 1 > $OUT/ncu-k12.txt 2>&1; echo "k12 rc=$?"
for f in $OUT/ncu-k32.txt $OUT/ncu-k12.txt; do echo "== $f"; grep -iE "stall|Warp Cycles|Issued Warp|Eligible|Active Warps|Duration|One or More|No Eligible" $f | head -40; done
