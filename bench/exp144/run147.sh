#!/usr/bin/env bash
# Run 147: fused-pipe's generated kernels at K = 13, 14, 18, 22 (pad 0 defaults) against the same with the shared stores
# at i * K + j (plain{K}.cu); experiment build (MRA_EXP_SOURCE); each process validates before timing. Two rounds.
set -uo pipefail
O=${OUT:-/tmp/run147}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-147.json
for r in 1 2; do
  for k in 13 14 18 22; do
    for v in gen plain; do
      MRA_EXP_SOURCE=bench/exp144/$v$k.cu $B -l fused-pipe -K $k -n 300 -r 21 > "$O/r$r-$v$k.txt" 2>&1; echo "round $r K=$k $v rc=$? $(grep -E '^# validated fused-pipe' "$O/r$r-$v$k.txt" | cut -c1-60) $(grep -E '^# fused-pipe: median' "$O/r$r-$v$k.txt")"
    done
  done
done
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf run147.tgz *.txt && find . -name "*.txt" ! -name gpu.txt -delete; ls
