B=target/release/mra-bench-exp98
nvidia-smi --query-gpu=name,serial --format=csv,noheader | tee $OUT/gpu.txt; $B --version >> $OUT/gpu.txt
for r in 1 2; do
  export MRA_TUNING_DB=/tmp/db98-$r.json; rm -f $MRA_TUNING_DB
  $B tune -l fused-pipe -K 12 --strategy exhaustive --fix align_runs=0,buffers=2,bulk_copy=1,fuse_k=1,pad_a=4,pair_rows=1,persistent=0,stack=1,threads=128,unroll_k=0 > $OUT/tune-k12-r$r.txt 2>&1; echo "k12 r$r rc=$?"
  $B tune -l fused-pipe -K 10 --strategy exhaustive --fix align_runs=0,buffers=2,bulk_copy=1,fuse_k=2,pad_a=0,pair_rows=0,persistent=0,stack=1,threads=128,unroll_k=0 > $OUT/tune-k10-r$r.txt 2>&1; echo "k10 r$r rc=$?"
  grep -E "min_blocks=.*us/task|#[0-9]|defaults" $OUT/tune-k12-r$r.txt $OUT/tune-k10-r$r.txt | grep -v "^.*Tuning" | head -24
done
