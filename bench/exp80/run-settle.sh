#!/usr/bin/env bash
# Run 80, follow-up: the K on whatever Hopper is lent (asked for an H200), each stream-data
# mode with the usual 200 ms warm-up and with --warmup settle. One archive under $OUT.
set -uo pipefail
BIN=${BIN:-target/release/mra-bench}
O=${OUT:-/tmp/run80s}
mkdir -p "$O"
export MRA_KERNEL_CACHE=$(mktemp -d)
nvidia-smi --query-gpu=name,serial,power.limit,driver_version,clocks.max.sm --format=csv | tee "$O/gpu.txt"
KS=6,8,10,12,16,20,24,32
LV=fused,fused-pipe,fused-groups,fused-cluster
for w in 200ms settle; do
  for d in shared private; do
    echo "== --warmup $w --stream-data $d"
    timeout $([ $w = settle ] && echo 200 || echo 90) "$BIN" sweep -K $KS -l $LV --no-peak --warmup $w --stream-data $d --json "$O/sweep-$d-$w.json" > "$O/sweep-$d-$w.txt" 2> "$O/sweep-$d-$w.err"
    echo "rc $?"; grep -E "^\S+ +[0-9]+ .*\*$|Still moving" "$O/sweep-$d-$w.txt"
  done
done
tar -C "$O" -czf "$O/../run80s.tgz" . && rm -rf "$O"
