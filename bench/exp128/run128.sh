#!/usr/bin/env bash
# Run 128: run 127's pads as defaults (K = 25 pad 6, 27 and 29 pad 0): validate, then the new defaults (main job) against the
# old (pad 4, `tune --fix` of the whole configuration) in separate processes, two rounds; then ncu of one launch of
# fused-cluster at K = 28 and 29 at the defaults (details and the SASS page with stall samples).
set -uo pipefail
O=${OUT:-/tmp/out128}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-128.json
$B validate -l fused-cluster -K 25,27,29 -N 1,3,2047 > "$O/validate.txt" 2>&1; echo "validate rc=$?"; tail -n 1 "$O/validate.txt"
old25="async_exchange=0,buffers=3,bulk_copy=1,cluster=2,fuse_k=1,late_wait=1,min_blocks=1,pad_a=4,pair_rows=0,split_cols=2,threads=512,unroll_rows=1"
old27="async_exchange=0,buffers=3,bulk_copy=1,cluster=7,fuse_k=1,late_wait=0,min_blocks=1,pad_a=4,pair_rows=0,split_cols=1,threads=128,unroll_rows=1"
old29="async_exchange=0,buffers=4,bulk_copy=1,cluster=8,fuse_k=1,late_wait=1,min_blocks=1,pad_a=4,pair_rows=0,split_cols=1,threads=128,unroll_rows=1"
new() { $B -l fused-cluster -K $1 -n 100 2>&1 | tee "$O/new-k$1-r$2.txt" | grep median | sed 's/.*median \([0-9.]*\) us.*floor[^0-9]*\([0-9.]*\).*/\1 (copy \2)/'; }
old() { $B tune -l fused-cluster -K $1 --strategy exhaustive --fix "$2" -r 5 --db "$O/db-old$1-r$3.json" > "$O/old-k$1-r$3.txt" 2>&1; grep -E '^  fused-cluster K=|#1 ' "$O/old-k$1-r$3.txt" | head -1 | sed 's/.* \([0-9.]*\) us\/task.*/\1/'; }
for r in 1 2; do
  for k in 25 27 29; do
    echo "r$r K=$k new $(new $k $r)"
    v=old$k; echo "r$r K=$k old $(old $k "${!v}" $r)"
  done
done
date -u +%FT%TZ | tee -a "$O/gpu.txt"
for k in 28 29; do
  name=fused-cluster-k$k
  timeout 150 ncu --clock-control none -k mra_fused_cluster_k${k}_f64 --launch-skip 60 --launch-count 1 --set full --import-source no -o /tmp/$name \
    $B -l fused-cluster -K $k -n 100 -r 1 > "$O/ncu-run-$name.txt" 2>&1; echo "ncu $name rc=$?"
  ncu --import /tmp/$name.ncu-rep --page details --print-details all > "$O/details-$name.txt" 2>&1
  ncu --import /tmp/$name.ncu-rep --page source --csv --print-source sass > "$O/sass-$name.csv" 2>&1
  grep -E "Duration|Executed Instructions  |DRAM Throughput|Pipe Tensor Cycles Active|data_bank_conflicts_pipe_lsu_mem_shared_op_(ld|st).sum  |wavefronts_mem_shared_op_(ld|st).sum  |inst_executed_op_shared_(ld|st).sum  " "$O/details-$name.txt" | head -12
done
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf runs.tgz new-* old-* db-* validate.txt ncu-run-* && rm -f new-* old-* db-* validate.txt ncu-run-*
gzip -9 details-*.txt sass-*.csv; ls
