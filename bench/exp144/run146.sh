#!/usr/bin/env bash
# Run 146: why run 81's hand-written swap was 9-11% slower and the generated one is 3-8% faster: the generated K = 10
# kernel (gen10.cu, as emitted at 8da76ae) against two edits of it, each one of run 81's choices: shared stores through
# (i / K) * W_STRIDE + (i % K) * K + j (div10.cu) and a wave's two tiles WAVES apart (strided10.cu). Experiment build
# (bench/exp141/patch.diff: MRA_EXP_SOURCE replaces the generated source); each process validates before timing.
set -uo pipefail
O=${OUT:-/tmp/run146}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-146.json
for r in 1 2 3; do
  for v in gen10 div10 strided10; do
    MRA_EXP_SOURCE=bench/exp144/$v.cu $B -l fused-pipe -K 10 -n 500 -r 21 > "$O/r$r-$v.txt" 2>&1; echo "round $r $v rc=$? $(grep -E '^# validated fused-pipe' "$O/r$r-$v.txt" | cut -c1-60) $(grep -E '^# fused-pipe: median' "$O/r$r-$v.txt")"
  done
done
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf run146.tgz *.txt && find . -name "*.txt" ! -name gpu.txt -delete; ls
