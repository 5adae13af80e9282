#!/usr/bin/env bash
# Run 80, second follow-up: only the K that miss somewhere (10, 12, 32), both stream-data modes,
# 200 ms warm-up, on whatever Hopper is lent (asked for an H200). One archive under $OUT.
set -uo pipefail
BIN=${BIN:-target/release/mra-bench}
O=${OUT:-/tmp/run80m}
mkdir -p "$O"
export MRA_KERNEL_CACHE=$(mktemp -d)
nvidia-smi --query-gpu=name,serial,power.limit,driver_version,clocks.max.sm --format=csv | tee "$O/gpu.txt"
for round in 1 2; do
  for d in shared private; do
    echo "== round $round --stream-data $d"
    timeout 90 "$BIN" sweep -K 10,12,32 -l fused,fused-pipe,fused-groups,fused-cluster --no-peak --stream-data $d --json "$O/sweep-$d-$round.json" > "$O/sweep-$d-$round.txt" 2> "$O/sweep-$d-$round.err"
    echo "rc $?"; grep -E "^copy|\*$" "$O/sweep-$d-$round.txt"
  done
done
tar -C "$O" -czf "$O/../run80m.tgz" . && rm -rf "$O"
