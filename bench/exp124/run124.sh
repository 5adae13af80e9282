#!/usr/bin/env bash
# Run 124: run 123's fused-cluster layouts at K = 26 and 29, now the defaults, against the old defaults in separate
# processes, two rounds (the new by the main job, the old by `tune --fix` of its whole configuration); validate first.
set -uo pipefail
O=${OUT:-/tmp/out124}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-124.json
$B validate -l fused-cluster -K 26,29 -N 1,3,2047 > "$O/validate.txt" 2>&1; echo "validate rc=$?"; tail -n 1 "$O/validate.txt"
old26="cluster=2,threads=256,split_cols=1,buffers=3,async_exchange=0,min_blocks=1,late_wait=1,fuse_k=1,unroll_rows=1,pad_a=0,pair_rows=1,bulk_copy=1"
old29="cluster=8,threads=256,split_cols=2,buffers=3,async_exchange=0,min_blocks=2,late_wait=1,fuse_k=1,unroll_rows=1,pad_a=4,pair_rows=0,bulk_copy=1"
new() { $B -l fused-cluster -K $1 -n 100 2>&1 | tee "$O/new-k$1-r$2.txt" | grep median | sed 's/.*median \([0-9.]*\) us.*floor[^0-9]*\([0-9.]*\).*/\1 (copy \2)/'; }
old() { $B tune -l fused-cluster -K $1 --strategy exhaustive --fix "$2" -r 5 --db "$O/db-old$1-r$3.json" > "$O/old-k$1-r$3.txt" 2>&1; grep -E '^  fused-cluster K=|#1 ' "$O/old-k$1-r$3.txt" | head -1 | sed 's/.* \([0-9.]*\) us\/task.*/\1/'; }
for r in 1 2; do
  for k in 26 29; do
    echo "r$r K=$k new $(new $k $r)"
    v=old$k; echo "r$r K=$k old $(old $k "${!v}" $r)"
  done
done
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf runs.tgz *.txt db-*.json && rm -f new-* old-* db-* validate.txt; ls
