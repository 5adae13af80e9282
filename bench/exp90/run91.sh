#!/usr/bin/env bash
# Run 91: fused-cluster with clusters of 5, 6, 7 at K = 25..31 (binary carried). Per K an exhaustive
# tune over cluster x split_cols x threads with that K's other defaults fixed (levels/fusedc.rs),
# into $OUT/db.json; then sweeps of copy + fused-cluster untuned and tuned, validate with the db.
set -uo pipefail
B=target/release/mra-bench
export MRA_TUNING_DB=$OUT/db.json
# A database from an earlier call of this run (carried in the tree) continues there.
[ -f bench/exp90/db.json ] && cp bench/exp90/db.json $OUT/db.json && chmod u+w $OUT/db.json
{ nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version --format=csv; $B --version; date -u +%FT%TZ; } > $OUT/gpu.txt
cat $OUT/gpu.txt
fix() { # K -> the K's defaults other than cluster, split_cols, threads
  case $1 in
    25) echo buffers=3,async_exchange=0,min_blocks=1,late_wait=0,fuse_k=1 ;;
    26) echo buffers=3,async_exchange=0,min_blocks=1,late_wait=1,fuse_k=1 ;;
    27) echo buffers=4,async_exchange=0,min_blocks=1,late_wait=0,fuse_k=1 ;;
    28) echo buffers=4,async_exchange=1,min_blocks=1,late_wait=1,fuse_k=1 ;;
    29) echo buffers=3,async_exchange=0,min_blocks=2,late_wait=1,fuse_k=1 ;;
    30) echo buffers=3,async_exchange=1,min_blocks=1,late_wait=1,fuse_k=2 ;;
    31) echo buffers=3,async_exchange=0,min_blocks=1,late_wait=1,fuse_k=2 ;;
  esac
}
for K in ${KS:-28 26 25 27 31 30 29}; do
  timeout 75 $B tune -l fused-cluster -K $K --strategy exhaustive --fix pad_a=4,unroll_rows=1,pair_rows=0,$(fix $K) --top 5 > $OUT/tune-k$K.txt 2>&1
  echo "== K=$K exit $?"; grep -E "^ +[0-9]|best|wrong|reject" $OUT/tune-k$K.txt | head -8
done
# K = 28 around call 1's best (cluster 7, 128 threads): the steps that were fixed there.
if [ -n "${REFINE28:-}" ]; then
  timeout 150 $B tune -l fused-cluster -K 28 --strategy exhaustive --fix pad_a=4,unroll_rows=1,pair_rows=0,cluster=7,late_wait=1,min_blocks=1 --top 8 > $OUT/tune-k28-refine.txt 2>&1
  echo "== K=28 refine exit $?"; grep -v "^  fused-cluster" $OUT/tune-k28-refine.txt | tail -14
fi
[ -n "${NO_SWEEP:-}" ] && exit 0
echo "== sweep untuned"
$B sweep -K 25,26,27,28,29,30,31 -l copy,fused-cluster -n 50 --untuned --json $OUT/sweep-untuned.json > $OUT/sweep-untuned.txt 2>&1; tail -n 28 $OUT/sweep-untuned.txt
echo "== sweep tuned"
$B sweep -K 25,26,27,28,29,30,31 -l copy,fused-cluster -n 50 --json $OUT/sweep-tuned.json > $OUT/sweep-tuned.txt 2>&1; tail -n 28 $OUT/sweep-tuned.txt
echo "== validate tuned"
$B validate -l fused-cluster -K 25,26,27,28,29,30,31 -N 1,3,2047 > $OUT/validate.txt 2>&1; tail -n 3 $OUT/validate.txt
