#!/usr/bin/env bash
# Run 118: fused-cluster with bulk_copy(1) at K = 21, 23 (cluster x threads x split_cols x buffers) and K = 27 (also
# min_blocks), random order, ~120 s per K, each candidate validated; fused-pipe's default at K = 21, 23 in the same processes.
set -uo pipefail
O=${OUT:-/tmp/out118}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
C="async_exchange=0,unroll_rows=1,pad_a=4,pair_rows=0,bulk_copy=1"
for K in 21 23; do
  $B tune -l fused-cluster -K $K --strategy random --budget 120s --fix "min_blocks=1,late_wait=0,fuse_k=1,$C" -r 3 --top 3 --db "$O/db.json" > "$O/tune-k$K.txt" 2>&1
  echo "K=$K rc=$? $(grep -E '^\| fused-cluster' "$O/tune-k$K.txt" | cut -d'|' -f5-11)"
  $B -l fused-pipe -K $K -n 100 > "$O/pipe-k$K.txt" 2>&1; echo "fused-pipe K=$K: $(grep -E 'median' "$O/pipe-k$K.txt" | head -1)"
done
$B tune -l fused-cluster -K 27 --strategy random --budget 130s --fix "late_wait=0,fuse_k=1,$C" -r 3 --top 3 --db "$O/db.json" > "$O/tune-k27.txt" 2>&1
echo "K=27 rc=$? $(grep -E '^\| fused-cluster' "$O/tune-k27.txt" | cut -d'|' -f5-11)"
grep -hE "^  #[1-3] " "$O"/tune-k*.txt | sed 's/async_exchange=0 //; s/bulk_copy=1 //; s/pad_a=4 //; s/pair_rows=0 //; s/unroll_rows=1//'
cd "$O" && tar czf tunes.tgz tune-* pipe-* db.json && rm -f tune-* pipe-* db.json; ls
