#!/usr/bin/env bash
# Run 132: fused-pipe at odd K with bulk copies (K = 9, 11, 13, 19): the row pad 0-4 with every other parameter at
# the K's default (--fix), odd pads now splitting the strides (intermediates K² + pad, the staged tensor one more);
# every candidate validated against the FP64 reference; two rounds with fresh databases; then validate at pad 3.
set -uo pipefail
O=${OUT:-/tmp/out132}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
# K:fuse_k (the other defaults are the same at these K)
CASES="11:1 13:2 19:2 9:2"
for r in 1 2; do
  for c in $CASES; do
    IFS=: read K FK <<< "$c"
    timeout 100 $B tune -l fused-pipe -K $K --strategy exhaustive --fix "align_runs=0,buffers=2,bulk_copy=1,fuse_k=$FK,min_blocks=1,pair_rows=0,persistent=0,stack=1,threads=128,unroll_k=0" -r 5 --top 5 --db "$O/db-r$r.json" > "$O/tune-r$r-k$K.txt" 2>&1
    echo "r$r K=$K rc=$?"; grep -E '#[1-5] |defaults' "$O/tune-r$r-k$K.txt" | sed 's/align_runs.*min_blocks=1 //; s/pair_rows.*unroll_k=0//' | head -6
  done
done
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf tunes.tgz tune-* db-* && rm -f tune-* db-*; ls
