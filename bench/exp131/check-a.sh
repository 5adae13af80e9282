#!/usr/bin/env bash
# Run 131, part A (closing checks): fused-cluster validated at K = 23-31 x N = 1, 3, 2047 (this session's pads, the
# skipped empty tiles, K = 27's fuse_k 2 and late_wait 1); K = 27's new default against the old in separate processes,
# two rounds; scripts/export-check.sh.
set -uo pipefail
O=${OUT:-/tmp/check131a}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-131a.json
$B validate -l fused-cluster -K 23,24,25,26,27,28,29,30,31 -N 1,3,2047 > "$O/validate-k23-31.txt" 2>&1; echo "validate K 23-31 rc=$?"; tail -n 1 "$O/validate-k23-31.txt"
old27="async_exchange=0,buffers=3,bulk_copy=1,cluster=7,fuse_k=1,late_wait=0,min_blocks=1,pad_a=0,pair_rows=0,split_cols=1,threads=128,unroll_rows=1"
for r in 1 2; do
  n=$($B -l fused-cluster -K 27 -n 100 2>&1 | tee "$O/new-k27-r$r.txt" | grep median | sed 's/.*median \([0-9.]*\) us.*/\1/')
  $B tune -l fused-cluster -K 27 --strategy exhaustive --fix "$old27" -r 5 --db "$O/db-old27-r$r.json" > "$O/old-k27-r$r.txt" 2>&1
  o=$(grep -E '#1 ' "$O/old-k27-r$r.txt" | head -1 | sed 's/.* \([0-9.]*\) us\/task.*/\1/')
  echo "r$r K=27 new $n old $o"
done
OUT="$O/export-check" timeout 300 scripts/export-check.sh "$B" > "$O/export-check.txt" 2>&1; echo "export-check rc=$?"; tail -n 3 "$O/export-check.txt"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf checks.tgz export-check *.txt db-*.json && rm -rf export-check validate-k23-31.txt new-* old-* export-check.txt db-*.json; ls
