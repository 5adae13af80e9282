#!/usr/bin/env bash
# Run 163: the closing checks at this session's final code (bench/exp160/run160e.sh: gpu-check and export-check), then,
# on an H200 only, run 162 (co_schedule and the proof sweep).
set -uo pipefail
O=${OUT:-/tmp/run163}; mkdir -p "$O"
OUT=$O/closing bash bench/exp160/run160e.sh
tar xzf "$O/closing/run160e.tgz" -O export/export-check.txt 2>/dev/null | grep -E "nvcc_build|failure" | head -4
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then OUT=$O/h200 bash bench/exp162/run162.sh; fi
