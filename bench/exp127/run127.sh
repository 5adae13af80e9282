#!/usr/bin/env bash
# Run 127: fused-cluster's row pad x pair_rows at K = 25, 27, 29 at the current layouts (the stride K*CL + pad 4 mod 8
# where an even pad can make it so), every other parameter at the K's default (--fix), two rounds with fresh
# databases, every candidate validated, the default and the copy in the same process.
set -uo pipefail
O=${OUT:-/tmp/out127}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
# K: threads buffers split_cols cluster min_blocks late_wait fuse_k async_exchange (fused-cluster's defaults at 80a8f90)
CASES="29:128:4:1:8:1:1:1:0 27:128:3:1:7:1:0:1:0 25:512:3:2:2:1:1:1:0"
for r in 1 2; do
  for c in $CASES; do
    IFS=: read K T BU SC CLU MB LW FK AX <<< "$c"
    timeout 170 $B tune -l fused-cluster -K $K --strategy exhaustive --fix "threads=$T,buffers=$BU,split_cols=$SC,cluster=$CLU,min_blocks=$MB,late_wait=$LW,fuse_k=$FK,async_exchange=$AX,unroll_rows=1,bulk_copy=1" -r 3 --top 4 --db "$O/db-r$r.json" > "$O/tune-r$r-k$K.txt" 2>&1
    echo "r$r K=$K rc=$?"; grep -E '^\| fused-cluster|#[1-4] |default' "$O/tune-r$r-k$K.txt" | head -8
  done
done
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf tunes.tgz tune-* db-* && rm -f tune-* db-*; ls
