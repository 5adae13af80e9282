#!/usr/bin/env bash
# Run 107 on a GPU machine with nvcc, from the repository root: is fused-1buf the better block-level
# function at K = 25..30 on sm_90? (1) mra-bench's sweep of copy, fused-1buf, L7-breg and
# fused-cluster at K = 25, 26, 28, 29, 30 (the levels as launchers, the seed's harness); (2) the
# exported transform_block in a caller's kernel (bench/exp107/time_block.cu), -l fused-1buf against
# -l L7-breg, two rounds.
set -uo pipefail
O=${OUT:-/tmp/run107}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-107.json
$B sweep -K 25,26,28,29,30 -l copy,fused-1buf,L7-breg,fused-cluster -n 100 --json "$O/sweep.json" > "$O/sweep.txt" 2>&1; echo "sweep rc=$?"
grep -E "^(copy|fused-1buf|L7-breg|fused-cluster) " "$O/sweep.txt"
for v in fused-1buf L7-breg; do
  rm -rf /tmp/exp107-$v
  $B export --arch sm_90 -K 25,28,30 -l $v -o /tmp/exp107-$v 2>> "$O/build.log"
  nvcc -arch=sm_90 -O3 -std=c++17 -DLEVEL="\"$v\"" -I/tmp/exp107-$v bench/exp107/time_block.cu -o /tmp/time-block-$v >> "$O/build.log" 2>&1 || { echo "build $v failed"; tail -5 "$O/build.log"; }
done
for r in 1 2; do for v in fused-1buf L7-breg; do /tmp/time-block-$v | sed "s/^/$r /" | tee -a "$O/block.txt"; done; done
