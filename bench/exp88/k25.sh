#!/usr/bin/env bash
# Run 88: fused-cluster K = 25, where the register cap cost 2.3% (512 threads: 118 registers uncapped, 128 capped).
# threads x split_cols at the other defaults, the binary of 1fe9411 (uncapped) and the current one (capped),
# alternating twice on one machine. From the repository root: OUT=... bash bench/exp88/k25.sh
set -uo pipefail
O=$OUT/k25; mkdir -p "$O"
nvidia-smi --query-gpu=name,serial --format=csv,noheader | tee "$O/gpu.txt"
export MRA_KERNEL_CACHE=$(mktemp -d)
FIX=pad_a=4,buffers=3,unroll_rows=1,cluster=2,async_exchange=0,min_blocks=1,late_wait=0,pair_rows=0,fuse_k=1
for round in 1 2; do for which in before after; do
  B=target/release/mra-bench; [ $which = before ] && B=target/release/mra-bench-before
  $B tune -l fused-cluster -K 25 --fix $FIX --strategy exhaustive -n 50 -r 5 --db "$O/db-$which-$round.json" > "$O/$which-$round.txt" 2>&1
  echo "== $which $round"; grep -E "us/task \(|copy floor" "$O/$which-$round.txt" | sed 's/fused-cluster K=25 //; s/align_runs=0 //' | awk '{print $0}' | cut -c1-150
done; done
tar -C "$OUT" -czf "$OUT/k25.tgz" k25 && rm -rf "$O"
