#!/usr/bin/env bash
# Run 133: run 132's pad candidates against the defaults with longer timing: each process times one candidate (tune --fix
# of its whole configuration) and the default in the same process, 15 repetitions of 100 tasks; three rounds, alternating.
set -uo pipefail
O=${OUT:-/tmp/out133}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
for r in 1 2 3; do
  for c in 9:2:3 11:1:2 11:1:3 19:2:1; do
    IFS=: read K FK PAD <<< "$c"
    $B tune -l fused-pipe -K $K --strategy exhaustive --fix "align_runs=0,buffers=2,bulk_copy=1,fuse_k=$FK,min_blocks=1,pad_a=$PAD,pair_rows=0,persistent=0,stack=1,threads=128,unroll_k=0" -r 15 --db "$O/db-r$r-k$K-p$PAD.json" > "$O/t-r$r-k$K-p$PAD.txt" 2>&1
    cand=$(grep -E '#1 ' "$O/t-r$r-k$K-p$PAD.txt" | head -1 | sed 's/.* \([0-9.]*\) us\/task.*/\1/')
    def=$(grep -E '^  defaults' "$O/t-r$r-k$K-p$PAD.txt" | head -1 | sed 's/.* \([0-9.]*\) us\/task.*/\1/')
    echo "r$r K=$K pad $PAD: $cand  default $def"
  done
done
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf runs.tgz t-* db-* && rm -f t-* db-*; ls
