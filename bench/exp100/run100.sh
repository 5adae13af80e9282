#!/usr/bin/env bash
# Run 100: fused-pipe at K = 10 and 12 with -M 132 .. 512 (the copy at the same M in each process),
# and the copy at M = 512, two rounds, default timing. From the repository root on the device
# machine, logs under $OUT.
set -uo pipefail
B=target/release/mra-bench
{ nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version --format=csv; $B --version; date -u +%FT%TZ; } > $OUT/gpu.txt
for round in 1 2; do
  for K in 12 10; do
    for M in 512 396 264 198 132; do
      echo "== round $round K $K M $M $(date -u +%T)"
      $B -l fused-pipe -K $K -M $M -n 100 2>&1
    done
  done
done > $OUT/runs.txt 2>&1
echo "exit $?" >> $OUT/runs.txt
