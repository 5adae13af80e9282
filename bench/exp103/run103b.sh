#!/usr/bin/env bash
# Run 103, second call: the harness with nblocks = the grid (the copy failed validation below
# N = M before); every variant validated at N = 1, 3, 17, 64, 2047, 2048, the sabotaged one must
# fail; then each kernel alone in its own process with the copy (ONLY), alternating, two rounds,
# at N = 64 (M = 32 and 512) and N = 2048 (M = 512). Logs under $OUT.
set -uo pipefail
O=${OUT:-/tmp/run103b}; V=bench/exp103/v
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -lgomp -lcuda -o /tmp/run103 bench/exp103/main.cu > "$O/build.txt" 2>&1 || { cat "$O/build.txt"; exit 1; }
ALL="gen=$V/gen.cubin,peel=$V/gen-peel.cubin,unroll=$V/gen-unroll.cubin"
echo "== sabotaged variant (must FAIL, exit 1)"
VARIANTS=bad=$V/gen-bad.cubin VAL_NS=3 N=3 /tmp/run103 1 > "$O/bad.txt" 2>&1; echo "bad rc=$?"; grep -E "validate|FAILED" "$O/bad.txt"
echo "== validation"
VARIANTS=$ALL VAL_NS=1,3,17,64,2047,2048 N=64 M=512 /tmp/run103 0 > "$O/validate.txt" 2>&1; echo "rc=$?"; grep -c PASS "$O/validate.txt"; grep -E "FAIL" "$O/validate.txt"
for NM in "64 32" "64 512" "2048 512"; do
  set -- $NM
  echo "== alone: N $1, M $2 (µs/task: copy, kernel)"
  for r in 1 2; do for k in gen peel unroll fused-cluster; do
    line=$(NOVAL=1 ONLY=$k VARIANTS=$ALL N=$1 M=$2 /tmp/run103 1 2>&1 | grep -E "^ +0 " | awk '{print $2, $3}' | tr '\n' ' ')
    echo "$r $line" | tee -a "$O/alone-n$1-m$2.txt"
  done; done
done
