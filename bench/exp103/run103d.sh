#!/usr/bin/env bash
# Run 103, upper bounds: fused-split without slice copies after each tensor's first (noslice) and
# without the end-of-tensor barrier (nobar), both wrong on purpose and so not validated, against
# the generated kernel; each alone in its own process, two rounds, N = 64 and 2048.
set -uo pipefail
O=${OUT:-/tmp/run103d}; V=bench/exp103/v
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -lgomp -lcuda -o /tmp/run103 bench/exp103/main.cu > "$O/build.txt" 2>&1 || { cat "$O/build.txt"; exit 1; }
ALL="gen=$V/gen.cubin,noslice=$V/gen-noslice.cubin,nobar=$V/gen-nobar.cubin"
for NM in "64 512" "2048 512"; do
  set -- $NM
  echo "== alone: N $1, M $2 (µs/task: copy, kernel)"
  for r in 1 2; do for k in gen noslice nobar; do
    line=$(NOVAL=1 ONLY=$k VARIANTS=$ALL N=$1 M=$2 /tmp/run103 1 2>&1 | grep -E "^ +0 " | awk '{print $2, $3}' | tr '\n' ' ')
    echo "$r $line" | tee -a "$O/alone-n$1-m$2.txt"
  done; done
done
