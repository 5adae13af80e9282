#!/usr/bin/env bash
# Run 130: fused-cluster at K = 25-31 with the layout fixed at each K's default (cluster, threads, split_cols, buffers,
# exchange, pad, pair_rows, bulk copies) and the rest free: fuse_k x late_wait x unroll_rows x min_blocks, exhaustive,
# every candidate validated, the default and the copy in the same process; one round.
set -uo pipefail
O=${OUT:-/tmp/out130}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
# K:cluster:threads:split_cols:buffers:async_exchange:pad_a:pair_rows (the defaults at 439fe22)
CASES="29:8:128:1:4:0:0:0 27:7:128:1:3:0:0:0 25:2:512:2:3:0:6:0 31:4:512:2:3:0:4:0 30:8:256:2:3:1:4:0 26:2:512:2:3:0:0:1 28:7:128:1:4:1:4:0"
for c in $CASES; do
  IFS=: read K CLU T SC BU AX PAD PR <<< "$c"
  timeout 75 $B tune -l fused-cluster -K $K --strategy exhaustive --fix "cluster=$CLU,threads=$T,split_cols=$SC,buffers=$BU,async_exchange=$AX,pad_a=$PAD,pair_rows=$PR,bulk_copy=1" -r 3 --top 3 --db "$O/db.json" > "$O/tune-k$K.txt" 2>&1
  echo "K=$K rc=$?"; grep -E '#[1-3] |defaults' "$O/tune-k$K.txt" | sed 's/async_exchange.*bulk_copy=1 cluster=[0-9]* //; s/pad_a=[0-9]* pair_rows=[0-9]* split_cols=[0-9]* threads=[0-9]* //' | head -4
done
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf tunes.tgz tune-* db.json && rm -f tune-* db.json; ls
