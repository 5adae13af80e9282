#!/usr/bin/env bash
# Run 103, third call: fused-split with 12 warps (w12: 384 threads, <= 168 registers, spills)
# against the generated 8-warp kernel. Sabotaged w12 must fail validation; then validation at
# N = 1, 3, 17, 64, 2047, 2048 and each alone in its own process, two rounds, N = 64 and 2048.
set -uo pipefail
O=${OUT:-/tmp/run103c}; V=bench/exp103/v
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -lgomp -lcuda -o /tmp/run103 bench/exp103/main.cu > "$O/build.txt" 2>&1 || { cat "$O/build.txt"; exit 1; }
W12=":229984:384"
echo "== sabotaged w12 (must FAIL, exit 1)"
VARIANTS=w12bad=$V/gen-w12bad.cubin$W12 VAL_NS=3 N=3 /tmp/run103 1 > "$O/bad.txt" 2>&1; echo "bad rc=$?"; grep -E "variant|validate|FAILED" "$O/bad.txt"
ALL="gen=$V/gen.cubin,w12=$V/gen-w12.cubin$W12"
echo "== validation"
VARIANTS=$ALL VAL_NS=1,3,17,64,2047,2048 N=64 M=512 /tmp/run103 0 > "$O/validate.txt" 2>&1; echo "rc=$?"; grep -E "variant" "$O/validate.txt"; grep -c PASS "$O/validate.txt"; grep -E "FAIL" "$O/validate.txt"
for NM in "64 512" "2048 512"; do
  set -- $NM
  echo "== alone: N $1, M $2 (µs/task: copy, kernel)"
  for r in 1 2; do for k in gen w12; do
    line=$(NOVAL=1 ONLY=$k VARIANTS=$ALL N=$1 M=$2 /tmp/run103 1 2>&1 | grep -E "^ +0 " | awk '{print $2, $3}' | tr '\n' ' ')
    echo "$r $line" | tee -a "$O/alone-n$1-m$2.txt"
  done; done
done
