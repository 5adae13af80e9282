#!/usr/bin/env bash
# Run 78, second call: the chain prototype as NVRTC compiles it (chain_k32.ptx from
# nvrtc_ptx.py, ptxas here: 128 registers, no spills) against the nvcc build and fused-cluster.
set -uo pipefail
cd "$(dirname "$0")"
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version --format=csv | tee $O/gpu.txt
date -u +%FT%TZ | tee -a $O/gpu.txt
nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -lgomp -lcuda -o /tmp/run78 main.cu > $O/build.txt 2>&1 || { cat $O/build.txt; exit 1; }
ptxas -v -arch=sm_90a chain_k32.ptx -o /tmp/chain.cubin 2>&1 | grep -E "Used|spill"
echo "== nvcc build of the chain"; /tmp/run78 2 2>&1 | tee $O/timing-nvcc.txt | tail -7
echo "== NVRTC build of the chain"; CHAIN_CUBIN=/tmp/chain.cubin /tmp/run78 2 2>&1 | tee $O/timing-nvrtc.txt | grep -vE "^validate (copy|fused)"
CHAIN_CUBIN=/tmp/chain.cubin timeout 150 ncu --clock-control none --launch-skip 10 --launch-count 1 -k regex:mra_chain --section SourceCounters --section WarpStateStats --print-details all /tmp/run78 prof > $O/ncu-chain-src.txt 2>&1; echo "ncu rc=$?"
grep -iE "Duration|Warp Cycles Per Issued|stall|Excessive" $O/ncu-chain-src.txt | head -30
