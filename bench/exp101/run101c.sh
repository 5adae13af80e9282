#!/usr/bin/env bash
# Run 101, the level: mra-bench's generated fused-split (gen_fused_split_k32.cu, from --emit-src)
# compiled by nvcc and by NVRTC (mra-bench's own cubin, $GEN_NVRTC if given), against the
# prototype's third version, each alone in its process. Logs under $OUT.
set -uo pipefail
cd "$(dirname "$0")"
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,serial --format=csv,noheader | tee $O/gpu.txt
NV="nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -lgomp -lcuda"
$NV -o /tmp/run101 main.cu > $O/build.txt 2>&1 || { cat $O/build.txt; exit 1; }
nvcc -cubin -O3 -arch=sm_90a -Xptxas -v -o /tmp/gen-nvcc.cubin gen_fused_split_k32.cu >> $O/build.txt 2>&1 || { cat $O/build.txt; exit 1; }
grep -E "registers" $O/build.txt | tail -1
for cub in /tmp/gen-nvcc.cubin ${GEN_NVRTC:-}; do
  echo "== validation of $cub"; GEN_CUBIN=$cub /tmp/run101 0 2>&1 | grep -E "^validate gen|FAIL|^gen"
done
for k in zsplit3: gen:/tmp/gen-nvcc.cubin gen:${GEN_NVRTC:-/tmp/gen-nvcc.cubin} zsplit3: gen:/tmp/gen-nvcc.cubin gen:${GEN_NVRTC:-/tmp/gen-nvcc.cubin}; do
  name=${k%%:*}; cub=${k#*:}
  echo "== alone: $name $cub"; GEN_CUBIN=$cub NOVAL=1 ONLY=$name /tmp/run101 2 2>&1 | grep -E "^ +[0-9]" | grep -v copy
done
