#!/usr/bin/env bash
# Run 116: fused-cluster's layout at odd K with the shifted bulk copies: cluster x threads x split_cols (random order,
# a shared budget), every other parameter at its default (bulk_copy=1 now), each candidate validated.
set -uo pipefail
O=${OUT:-/tmp/out116}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
# K: buffers min_blocks late_wait fuse_k (defaults; async_exchange 0, pad 4, pair_rows 0 at odd K)
for c in 25:3:1:0:1 27:4:1:0:1 29:3:2:1:1 31:3:1:1:2; do
  IFS=: read K BU MB LW FK <<< "$c"
  $B tune -l fused-cluster -K $K --strategy random --budget 110s --fix "bulk_copy=1,buffers=$BU,min_blocks=$MB,late_wait=$LW,fuse_k=$FK,async_exchange=0,unroll_rows=1,pad_a=4,pair_rows=0" -r 3 --top 5 --db "$O/db.json" > "$O/tune-k$K.txt" 2>&1
  echo "K=$K rc=$? $(grep -E '^\| fused-cluster' "$O/tune-k$K.txt" | cut -d'|' -f5-11)"
  grep -E "^  #[1-3] " "$O/tune-k$K.txt" | sed 's/async_exchange=0 //; s/bulk_copy=1 //; s/pad_a=4 //; s/pair_rows=0 //; s/unroll_rows=1//'
done
cd "$O" && tar czf tunes.tgz tune-* db.json && rm -f tune-* db.json; ls
