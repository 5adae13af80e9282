#!/usr/bin/env bash
# Run 111: exhaustive tune of fused-pipe's pad x align_runs x pair_rows at every odd K from 9 to 23,
# every other parameter at its default (the --fix below), two rounds with fresh databases.
set -uo pipefail
O=${OUT:-/tmp/out111}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
COMMON="buffers=2,stack=1,unroll_k=0,min_blocks=1,bulk_copy=0"
for r in 1 2; do
  for kf in "9 128 2 0" "11 128 1 0" "13 128 2 0" "15 128 2 0" "17 128 2 0" "19 128 2 0" "21 128 2 1" "23 384 2 1"; do
    set -- $kf
    $B tune -l fused-pipe -K $1 --strategy exhaustive --fix "threads=$2,fuse_k=$3,persistent=$4,$COMMON" -r 3 --top 3 --db "$O/db-r$r.json" > "$O/tune-r$r-k$1.txt" 2>&1
    echo "r$r K=$1 rc=$? $(grep '^| fused-pipe' "$O/tune-r$r-k$1.txt")"
  done
done
cd "$O" && tar czf tunes.tgz tune-* db-* && rm -f tune-* db-*; ls
