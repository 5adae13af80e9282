#!/usr/bin/env bash
# Run 89: fused-pipe K = 12's fuse_k x persistent x unroll_k x pair_rows at its other defaults (both GPUs' tunes
# put fuse_k=2 persistent=1 unroll_k=2 first: H100 run 84 with pair_rows=0, H200 run 88 with pair_rows=1),
# exhaustive, twice in separate processes. From the repository root: OUT=... bash bench/exp88/k12.sh
set -uo pipefail
O=$OUT/k12; mkdir -p "$O"
nvidia-smi --query-gpu=name,serial --format=csv,noheader | tee "$O/gpu.txt"
export MRA_KERNEL_CACHE=$(mktemp -d)
for round in 1 2; do
  target/release/mra-bench tune -l fused-pipe -K 12 --fix align_runs=0,buffers=2,bulk_copy=1,min_blocks=1,pad_a=4,stack=1,threads=128 --strategy exhaustive -n 100 -r 5 --top 6 --db "$O/db-$round.json" > "$O/round-$round.txt" 2>&1
  echo "== round $round"; grep -E "^  #|^  defaults|copy floor" "$O/round-$round.txt" | sed 's/align_runs=0 buffers=2 bulk_copy=1 //; s/min_blocks=1 pad_a=4 //; s/stack=1 threads=128 //' | cut -c1-140
done
tar -C "$OUT" -czf "$OUT/k12.tgz" k12 && rm -rf "$O"
