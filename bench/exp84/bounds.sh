#!/usr/bin/env bash
# Run 87: the binaries before (target/release/mra-bench-before, ca1b8f5) and after (mra-bench) the one-block
# launch bounds above 256 threads, alternating processes, twice: every default kernel the change touches on
# sm_90. Then fused at K = 22, 23 validated by the new binary. From the repository root: OUT=... bash bench/exp84/bounds.sh
set -uo pipefail
O=$OUT/bounds; mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version --format=csv > "$O/gpu.txt" 2>&1
export MRA_KERNEL_CACHE=$(mktemp -d)
export MRA_TUNING_DB=$(mktemp -d)/tuning.json
for round in 1 2; do
  for which in before after; do
    B=target/release/mra-bench; [ $which = before ] && B=target/release/mra-bench-before
    $B sweep -K 20,22,23,24 -l copy,fused,fused-pipe -n 100 --no-peak > "$O/$which-$round-a.txt" 2>&1
    $B sweep -K 25,27,28,31 -l copy,fused-cluster -n 100 --no-peak > "$O/$which-$round-b.txt" 2>&1
    echo "== $which $round"; grep -hE "^(copy|fused)" "$O/$which-$round-a.txt" "$O/$which-$round-b.txt" | awk '{print $1, $2, $3, $6, $7, $8}' | tr '\n' ';'; echo
  done
done
target/release/mra-bench validate -l fused -K 22,23 -N 3,2047 > "$O/validate-after.txt" 2>&1; tail -1 "$O/validate-after.txt"
tar -C "$OUT" -czf "$OUT/bounds.tgz" bounds && rm -rf "$O"
