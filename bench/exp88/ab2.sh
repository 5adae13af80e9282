#!/usr/bin/env bash
# Run 88, part 3: the corrected register cap (warps rounded up to the 4 sub-partitions) and fused at 512 threads
# where one block fills the SM (target/release/mra-bench) against 1fe9411 (target/release/mra-bench-before),
# alternating processes, twice; validation and memcheck of the changed kernels; then `tune` of the best levels at
# K = 10, 12 and 32 on this GPU. From the repository root: OUT=... bash bench/exp88/ab2.sh
set -uo pipefail
O=$OUT/ab2; mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version --format=csv > "$O/gpu.txt" 2>&1; cat "$O/gpu.txt"
export MRA_KERNEL_CACHE=$(mktemp -d)
export MRA_TUNING_DB=$(mktemp -d)/tuning.json
B0=target/release/mra-bench-before; B1=target/release/mra-bench
$B0 --version; $B1 --version
for round in 1 2; do
  for which in before after; do
    B=$B1; [ $which = before ] && B=$B0
    $B sweep -K 20,22,24 -l copy,fused,fused-pipe -n 100 --no-peak > "$O/$which-$round.txt" 2>&1
    echo "== $which $round"; grep -hE "^(copy|fused)" "$O/$which-$round.txt" | awk '{print $1, $2, $3, $8}' | tr '\n' ';'; echo
  done
done
$B1 validate -l fused -K 17,19,20,21,22,23,24 -N 1,3,2047 > "$O/validate-fused.txt" 2>&1; echo "exit $?" >> "$O/validate-fused.txt"
$B1 validate -l fused-pipe,fused-cluster -K 20,21,22,23,24,25,27,28,31 -N 3,2047 > "$O/validate-capped.txt" 2>&1; echo "exit $?" >> "$O/validate-capped.txt"
tail -n 2 "$O/validate-fused.txt" "$O/validate-capped.txt"
for K in 20 23; do compute-sanitizer --tool memcheck $B1 validate -l fused -K $K -N 3 > "$O/memcheck-fused-k$K.txt" 2>&1; echo "memcheck K=$K exit $? $(grep -h "ERROR SUMMARY" "$O/memcheck-fused-k$K.txt")"; done
$B1 tune -l fused-pipe,fused,fused-groups -K 10,12 --budget 150s --db "$O/tune-db.json" > "$O/tune-10-12.txt" 2>&1; echo "tune exit $?"
$B1 tune -l fused-cluster -K 32 --budget 60s --db "$O/tune-db.json" > "$O/tune-32.txt" 2>&1; echo "tune exit $?"
grep -A12 "^Tuning on" "$O/tune-10-12.txt" "$O/tune-32.txt"
tar -C "$OUT" -czf "$OUT/ab2.tgz" ab2 && rm -rf "$O"
