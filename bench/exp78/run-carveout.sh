#!/usr/bin/env bash
# Run 78, sixth call: is the chain's climb after fused-cluster the shared-memory carveout?
# Interleaved (no validation) with the driver's carveout choice, then with every kernel asking
# for the largest carveout (CARVEOUT=100), then the chain alone with it.
set -uo pipefail
cd "$(dirname "$0")"
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv | tee $O/gpu.txt
nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -lgomp -lcuda -o /tmp/run78 main.cu > $O/build.txt 2>&1 || { cat $O/build.txt; exit 1; }
ptxas -arch=sm_90a chain_k32.ptx -o /tmp/chain.cubin
export CHAIN_CUBIN=/tmp/chain.cubin NOVAL=1
for i in 1 2; do
  echo "== interleaved, driver's carveout"; /tmp/run78 2 2>&1 | tee -a $O/carveout.txt | grep -E "^ +[0-9]"
  echo "== interleaved, CARVEOUT=100"; CARVEOUT=100 /tmp/run78 2 2>&1 | tee -a $O/carveout.txt | grep -E "^ +[0-9]"
  echo "== chain alone, CARVEOUT=100"; CARVEOUT=100 ONLY=chain /tmp/run78 2 2>&1 | tee -a $O/carveout.txt | grep -E "^ +[0-9]"
done
