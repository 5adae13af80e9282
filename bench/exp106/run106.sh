#!/usr/bin/env bash
# Run 106 on a GPU machine with nvcc, from the repository root: scripts/export-check.sh (the
# export's launchers and block functions checked against a CPU reference, K = 28 and 32 now
# fused-cluster and fused-split beside L7-breg's transform_block), then the exported
# mra_transform(K) at K = 28, 32 timed, the default export against one with -l L7-breg.
set -uo pipefail
O=${OUT:-/tmp/run106}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-106.json
OUT="$O/export-check" bash scripts/export-check.sh "$B" > "$O/export-check.log" 2>&1; echo "export-check rc=$?"
cat "$O/export-check/export-check.txt"
for v in default L7-breg; do
  rm -rf /tmp/exp-$v
  if [ $v = default ]; then $B export --arch sm_90 -K 28,32 -o /tmp/exp-$v 2>> "$O/time.log"; else $B export --arch sm_90 -K 28,32 -l $v -o /tmp/exp-$v 2>> "$O/time.log"; fi
  nvcc -arch=sm_90 -O3 -std=c++17 -I/tmp/exp-$v bench/exp106/time_export.cu /tmp/exp-$v/*.cu -o /tmp/time-$v >> "$O/time.log" 2>&1 || { echo "build $v failed"; tail "$O/time.log"; }
done
for r in 1 2; do for v in default L7-breg; do echo "$r $v $(/tmp/time-$v 28 32 | tr '\n' ' ')" | tee -a "$O/time.txt"; done; done
