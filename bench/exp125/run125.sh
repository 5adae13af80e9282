#!/usr/bin/env bash
# Run 125: fused-cluster's layout on an H100 at K = 25 and 31 with the
# buffers, the asynchronous exchange and min_blocks free: cluster x threads x split_cols x buffers x
# async_exchange x min_blocks, the rest at the defaults; random order, 160 s per K, every candidate validated.
set -uo pipefail
O=${OUT:-/tmp/out125}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-125.json
t() {
  $B tune -l fused-cluster -K $1 --strategy random --budget 160s --fix "$2" -r 3 --top 5 --db "$O/db-k$1.json" > "$O/tune-k$1.txt" 2>&1
  echo "K=$1 rc=$? $(grep -E '^\| fused-cluster' "$O/tune-k$1.txt" | cut -d'|' -f5-11)"
  grep -E "^  #[1-5] |default|candidates" "$O/tune-k$1.txt" | sed 's/bulk_copy=1 //; s/pair_rows=[01] //; s/unroll_rows=1//; s/late_wait=1 //' | head -9
}
t 25 "bulk_copy=1,late_wait=1,fuse_k=1,unroll_rows=1,pad_a=4,pair_rows=0"
t 31 "bulk_copy=1,late_wait=1,fuse_k=2,unroll_rows=1,pad_a=4,pair_rows=0"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf tunes.tgz tune-* db-*.json && rm -f tune-* db-*.json; ls
