#!/usr/bin/env bash
# Run 78, fifth call: why the chain's repetitions climb in the interleaved process. Three
# processes each: (a) no validation, copy / fused-cluster / chain interleaved; (b) validation
# first, then the chain alone (ONLY=chain); (c) no validation, chain alone.
set -uo pipefail
cd "$(dirname "$0")"
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv | tee $O/gpu.txt
nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -lgomp -lcuda -o /tmp/run78 main.cu > $O/build.txt 2>&1 || { cat $O/build.txt; exit 1; }
ptxas -arch=sm_90a chain_k32.ptx -o /tmp/chain.cubin
export CHAIN_CUBIN=/tmp/chain.cubin
for i in 1 2; do
  echo "== (a) no validation, interleaved"; NOVAL=1 /tmp/run78 2 2>&1 | tee -a $O/order.txt | grep -E "^ +[0-9]"
  echo "== (b) validation, chain alone"; ONLY=chain /tmp/run78 2 2>&1 | tee -a $O/order.txt | grep -E "^ +[0-9]|FAIL"
  echo "== (c) no validation, chain alone"; NOVAL=1 ONLY=chain /tmp/run78 2 2>&1 | tee -a $O/order.txt | grep -E "^ +[0-9]"
done
