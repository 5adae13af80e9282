#!/usr/bin/env bash
# Run 165: on an H200, run 162 first (co_schedule and issue 9's proof sweep: the H200 has not been lent since run 159);
# on any GPU then the closing checks (bench/exp160/run160e.sh: gpu-check and export-check) when time is left in the call.
set -uo pipefail
O=${OUT:-/tmp/run165}; mkdir -p "$O"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  OUT=$O/h200 bash bench/exp162/run162.sh
  echo "run162 done at $SECONDS s; closing checks in the next call"; exit 0
fi
OUT=$O/closing bash bench/exp160/run160e.sh
tar xzf "$O/closing/run160e.tgz" -O export/export-check.txt 2>/dev/null | grep -E "nvcc_build|failure" | head -4
