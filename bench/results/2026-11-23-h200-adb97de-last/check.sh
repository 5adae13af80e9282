#!/usr/bin/env bash
set -u
B=.gpu/last/mra-bench
export MRA_KERNEL_CACHE=$(mktemp -d) MRA_TUNING_DB=/tmp/nodb.json
nvidia-smi --query-gpu=name,serial,driver_version,power.limit --format=csv,noheader > $OUT/gpu.txt
$B --version >> $OUT/gpu.txt; date -u +%FT%TZ >> $OUT/gpu.txt
{
echo "== README main job (exactly as written)"; $B -K 16 -N 2048 -n 100 -r 5 -l 3 2>&1 | grep -E "median"; echo "rc=${PIPESTATUS[0]}"
echo "== sweep with --json --csv --plot (written through replace_file)"; $B sweep -K 12,32 -l copy,fused-pipe,fused-cluster -n 100 --json $OUT/sweep.json --csv $OUT/sweep.csv --plot $OUT/sweep.svg 2>&1 | grep -E "^(copy|fused)"; echo "rc=${PIPESTATUS[0]}"
echo "== validate"; $B validate -l fused-pipe,fused-cluster -K 13,32 -N 3,2047 2>&1 | tail -1; echo "rc=${PIPESTATUS[0]}"
} > $OUT/check.txt 2>&1
cat $OUT/check.txt
