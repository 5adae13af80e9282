#!/usr/bin/env bash
# Run 103 on the device: build the harness, check that the sabotaged variant fails validation,
# then validate and time the fused-split variants (cubins in $V) at N = 2048 and N = 64, and
# mra-bench's sweep at N = 64 for the bound. Run from the repository root; logs under $OUT.
set -uo pipefail
O=${OUT:-/tmp/run103}; V=bench/exp103/v
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
target/release/mra-bench --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -lgomp -lcuda -o /tmp/run103 bench/exp103/main.cu > "$O/build.txt" 2>&1 || { cat "$O/build.txt"; exit 1; }
echo "== sabotaged variant (must FAIL, exit 1)"
VARIANTS=bad=$V/gen-bad.cubin VAL_NS=3 N=3 /tmp/run103 1 > "$O/bad.txt" 2>&1; echo "bad rc=$?"; grep -E "validate|FAILED" "$O/bad.txt"
ALL="gen=$V/gen.cubin,peel=$V/gen-peel.cubin,unroll=$V/gen-unroll.cubin"
echo "== N 2048, M 512"
VARIANTS=$ALL /tmp/run103 3 > "$O/n2048.txt" 2>&1; echo "rc=$?"; grep -vE "^span" "$O/n2048.txt" | grep -E "variant|validate.*FAIL|^ +[0-9]" ; grep -c PASS "$O/n2048.txt"
for M in 32 128; do
  echo "== N 64, M $M"
  VARIANTS=$ALL VAL_NS=64 N=64 M=$M /tmp/run103 3 > "$O/n64-m$M.txt" 2>&1; echo "rc=$?"; grep -E "FAIL|^ +[0-9]" "$O/n64-m$M.txt"
done
export MRA_TUNING_DB=/tmp/nodb-103.json
for M in 512 32; do
  echo "== mra-bench sweep N 64 M $M"
  target/release/mra-bench sweep -K 32 -N 64 -M $M -l copy,bound,fused-cluster,fused-split -n 100 --json "$O/sweep-n64-m$M.json" > "$O/sweep-n64-m$M.txt" 2>&1; echo "rc=$?"
  grep -E "^(copy|bound|fused-cluster|fused-split) " "$O/sweep-n64-m$M.txt"
done
