#!/usr/bin/env bash
# Run 119: run 118's fused-cluster defaults at K = 23 and 27 against the old ones, in separate processes, two rounds.
set -uo pipefail
O=${OUT:-/tmp/out119}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-119.json
$B validate -l fused-cluster -K 23,27 -N 1,3,2047 > "$O/validate.txt" 2>&1; echo "validate rc=$?"; tail -n 1 "$O/validate.txt"
C="async_exchange=0,unroll_rows=1,pad_a=4,pair_rows=0,min_blocks=1,late_wait=0,fuse_k=1"
t() { $B tune -l fused-cluster -K $1 --strategy exhaustive --fix "$2" -r 5 --db "$O/db-$3.json" > "$O/$3.txt" 2>&1; grep -E '^  fused-cluster K=' "$O/$3.txt" | sed 's/.*: \([0-9.]*\) us.*/\1/'; }
for r in 1 2; do
  echo "r$r K=23 new $($B -l fused-cluster -K 23 -n 100 2>&1 | grep median | sed 's/.*median \([0-9.]*\) us.*floor[^0-9]*\([0-9.]*\).*/\1 (copy \2)/')"
  echo "r$r K=23 old $(t 23 "cluster=4,threads=256,buffers=3,split_cols=1,bulk_copy=0,$C" old23-r$r)"
  echo "r$r K=23 cluster 3 bulk_copy 0 $(t 23 "cluster=3,threads=256,buffers=3,split_cols=1,bulk_copy=0,$C" nobulk23-r$r)"
  echo "r$r K=23 fused-pipe $($B -l fused-pipe -K 23 -n 100 2>&1 | grep median | sed 's/.*median \([0-9.]*\) us.*/\1/')"
  echo "r$r K=27 new $($B -l fused-cluster -K 27 -n 100 2>&1 | grep median | sed 's/.*median \([0-9.]*\) us.*floor[^0-9]*\([0-9.]*\).*/\1 (copy \2)/')"
  echo "r$r K=27 old $(t 27 "cluster=4,threads=512,buffers=4,split_cols=2,bulk_copy=1,$C" old27-r$r)"
done
cd "$O" && tar czf runs.tgz *.txt db-*.json && rm -f db-*.json old* nobulk* validate.txt; ls
