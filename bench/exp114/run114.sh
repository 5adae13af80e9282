#!/usr/bin/env bash
# Run 114: fused-cluster's row pad (0-8, odd pads at odd K only) x pair_rows at K = 25, 26, 27, 29, 31, every
# other parameter at the K's default (the --fix below), two rounds with fresh databases, every candidate validated.
set -uo pipefail
O=${OUT:-/tmp/out114}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
# K: threads buffers split_cols cluster min_blocks late_wait fuse_k async_exchange (fused-cluster's defaults)
CASES="25:128:3:1:7:1:0:1:0 26:256:3:1:2:1:1:1:0 27:512:4:4:4:1:0:1:0 29:256:3:2:8:2:1:1:0 31:512:3:4:4:1:1:2:0"
for r in 1 2; do
  for c in $CASES; do
    IFS=: read K T BU SC CLU MB LW FK AX <<< "$c"
    $B tune -l fused-cluster -K $K --strategy exhaustive --fix "threads=$T,buffers=$BU,split_cols=$SC,cluster=$CLU,min_blocks=$MB,late_wait=$LW,fuse_k=$FK,async_exchange=$AX,unroll_rows=1" -r 3 --top 3 --db "$O/db-r$r.json" > "$O/tune-r$r-k$K.txt" 2>&1
    echo "r$r K=$K rc=$? $(grep -E '^\| fused-cluster' "$O/tune-r$r-k$K.txt" | cut -d'|' -f6-10)"
  done
done
cd "$O" && tar czf tunes.tgz tune-* db-* && rm -f tune-* db-*; ls
