#!/usr/bin/env bash
# Run 117: (a) run 116's new odd-K defaults against the old ones in other processes, two rounds; (b) K = 29 with
# min_blocks free; (c) buffers x late_wait x fuse_k at the new layouts of K = 25, 27, 31.
set -uo pipefail
O=${OUT:-/tmp/out117}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
C="async_exchange=0,unroll_rows=1,pad_a=4,pair_rows=0,bulk_copy=1"
OLD25="threads=128,buffers=3,split_cols=1,cluster=7,min_blocks=1,late_wait=0,fuse_k=1,$C"
OLD27="threads=512,buffers=4,split_cols=4,cluster=4,min_blocks=1,late_wait=0,fuse_k=1,$C"
OLD31="threads=512,buffers=3,split_cols=4,cluster=4,min_blocks=1,late_wait=1,fuse_k=2,$C"
for r in 1 2; do
  for K in 25 27 31; do
    eval F=\$OLD$K
    $B tune -l fused-cluster -K $K --strategy exhaustive --fix "$F" -r 5 --db "$O/db-a$r.json" > "$O/a-r$r-k$K.txt" 2>&1
    echo "a r$r K=$K rc=$? old $(grep -E '^  fused-cluster K=' "$O/a-r$r-k$K.txt" | sed 's/.*: \([0-9.]*\) us.*/\1/') new(default) $(grep -E '^  defaults' "$O/a-r$r-k$K.txt" | awk '{print $(NF-3)}')"
  done
done
$B tune -l fused-cluster -K 29 --strategy random --budget 150s --fix "buffers=3,late_wait=1,fuse_k=1,$C" -r 3 --top 3 --db "$O/db-b.json" > "$O/b-k29.txt" 2>&1
echo "b K=29 rc=$? $(grep -E '^\| fused-cluster' "$O/b-k29.txt" | cut -d'|' -f5-11)"
for c in 25:512:2:2 27:512:2:4 31:512:2:4; do
  IFS=: read K T SC CLU <<< "$c"
  $B tune -l fused-cluster -K $K --strategy exhaustive --fix "threads=$T,split_cols=$SC,cluster=$CLU,min_blocks=1,$C" -r 3 --top 3 --db "$O/db-c.json" > "$O/c-k$K.txt" 2>&1
  echo "c K=$K rc=$? $(grep -E '^\| fused-cluster' "$O/c-k$K.txt" | cut -d'|' -f5-11)"
done
cd "$O" && tar czf tunes.tgz a-* b-* c-* db-* && rm -f a-* b-* c-* db-*; ls
