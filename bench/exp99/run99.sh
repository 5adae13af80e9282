#!/usr/bin/env bash
# Run 99: copy, bound and the fastest levels with shared and with private stream data on one GPU,
# two rounds (shared, private, shared, private), default timing. From the repository root on the
# device machine, logs under $OUT.
set -uo pipefail
B=target/release/mra-bench
{ nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version --format=csv; $B --version; date -u +%FT%TZ; } > $OUT/gpu.txt
for round in 1 2; do
  for mode in shared private; do
    $B sweep -K ${KS:-10,12,16,32} -l copy,bound,fused-pipe,fused-cluster -n 100 --stream-data $mode \
      --json $OUT/sweep-$mode-$round.json > $OUT/sweep-$mode-$round.txt 2>&1
    echo "sweep exit $? $(date -u +%FT%TZ)" >> $OUT/sweep-$mode-$round.txt
  done
done
