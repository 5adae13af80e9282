#!/usr/bin/env bash
# Run 83, last: the kernels as NVRTC builds them (mra-bench's compiler; nvrtc_k10.cubin made here by
# nvrtc_cubin.py) beside the nvcc builds, six rounds so every kernel takes every position.
set -uo pipefail
cd "$(dirname "$0")"
O=${OUT:-/tmp}/r83n; mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv > "$O/gpu.txt"
nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -lgomp -lcuda -o /tmp/run83n main.cu > "$O/build.txt" 2>&1 || { cat "$O/build.txt"; exit 1; }
NVRTC_CUBIN=nvrtc_k10.cubin /tmp/run83n 6 2>&1 | tee "$O/interleaved.txt" | grep -E "FAIL|^ +[0-9]|from"
tar -C "$O" -czf "${OUT:-/tmp}/run83n.tgz" . && rm -rf "$O"
