#!/usr/bin/env bash
set -u
B=.gpu/ncu76/mra-bench
export MRA_KERNEL_CACHE=$(mktemp -d) MRA_TUNING_DB=/tmp/nodb.json
M="regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"
timeout 200 ncu --clock-control none --launch-skip 40 --launch-count 1 -k regex:mra_fused_cluster --metrics "$M" --section SourceCounters --print-details all $B -K 32 -l fused-cluster -n 50 -r 1 > $OUT/stall-k32.txt 2>&1; echo "k32 rc=$?"
timeout 200 ncu --clock-control none --launch-skip 40 --launch-count 1 -k regex:mra_fused_pipe --metrics "$M" --section SourceCounters --print-details all $B -K 12 -l fused-pipe -n 50 -r 1 > $OUT/stall-k12.txt 2>&1; echo "k12 rc=$?"
for f in $OUT/stall-k32.txt $OUT/stall-k12.txt; do echo "== $f"; grep -E "issue_stalled|gpu__time|per_second|tensor" $f | awk '{print $1, $NF}' | sort -k2 -n -r | head -14; done
