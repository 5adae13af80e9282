#!/usr/bin/env bash
# Run 113: fused-pipe's bulk_copy(1) at odd K (tensors shifted onto the 16-byte grid): validation,
# compute-sanitizer, then tune --fix at every odd K from 9 to 23 over (bulk_copy, align_runs) with
# each K's other defaults, two rounds with fresh databases, then ncu of K = 23 both ways.
set -uo pipefail
O=${OUT:-/tmp/out113}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
COMMON="buffers=2,stack=1,unroll_k=0,min_blocks=1,pair_rows=0"
# K threads fuse_k persistent pad (fused-pipe's defaults)
CASES="5:128:1:0:0 7:128:1:0:4 9:128:2:0:2 11:128:1:0:0 13:128:2:0:0 15:128:2:0:4 17:128:2:0:2 19:128:2:0:0 21:128:2:1:0 23:384:2:1:4"
# 1. correctness: the bulk candidate alone in a database, then validate and the sanitizers with it
for c in $CASES; do
  IFS=: read K T F P PAD <<< "$c"
  $B tune -l fused-pipe -K $K --strategy exhaustive --fix "bulk_copy=1,align_runs=0,threads=$T,fuse_k=$F,persistent=$P,pad_a=$PAD,$COMMON" -r 1 -n 10 --db "$O/db-valid.json" >> "$O/tune-valid.txt" 2>&1
done
echo "tune-valid: $(grep -c 'wrong' "$O/tune-valid.txt") lines naming wrong results"; grep -E "^\| fused-pipe" "$O/tune-valid.txt" | cut -c1-60
MRA_TUNING_DB="$O/db-valid.json" $B validate -l fused-pipe -K 5,7,9,11,13,15,17,19,21,23 -N 1,3,2047,2048 > "$O/validate.txt" 2>&1; echo "validate rc=$?"; tail -n 1 "$O/validate.txt"
echo "bulk_copy=1 configurations used: $(grep -c 'bulk_copy=1' "$O/validate.txt")"
for tool in memcheck racecheck synccheck; do
  MRA_TUNING_DB="$O/db-valid.json" timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $B validate -l fused-pipe -K 7,13,23 -N 3,64 > "$O/sanitize-$tool.txt" 2>&1
  echo "$tool rc=$?"; grep -E "SUMMARY|passed" "$O/sanitize-$tool.txt" | tail -n 2
done
# 2. timing
for r in 1 2; do
  for c in 9:128:2:0:2 11:128:1:0:0 13:128:2:0:0 15:128:2:0:4 17:128:2:0:2 19:128:2:0:0 21:128:2:1:0 23:384:2:1:4; do
    IFS=: read K T F P PAD <<< "$c"
    $B tune -l fused-pipe -K $K --strategy exhaustive --fix "threads=$T,fuse_k=$F,persistent=$P,pad_a=$PAD,$COMMON" -r 5 --top 3 --db "$O/db-r$r.json" > "$O/tune-r$r-k$K.txt" 2>&1
    echo "r$r K=$K rc=$? $(grep -E '^  fused-pipe K=' "$O/tune-r$r-k$K.txt" | sed 's/buffers=2 //; s/min_blocks=1 //; s/stack=1 //; s/unroll_k=0//; s/pair_rows=0 //' | awk -F'us/task' '{print $1}' | sed 's/.*align_runs=\([01]\) bulk_copy=\([01]\).*: \(.*\)/a\1b\2 \3/' | tr '\n' ' ')"
  done
done
# 3. ncu at K = 23
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__inst_executed_op_ldgsts.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active
MRA_TUNING_DB="$O/db-valid.json" timeout 120 ncu --clock-control none -k regex:mra_fused_pipe_k23_ --launch-skip 40 --launch-count 1 --metrics $M $B -K 23 -l fused-pipe -n 60 -r 1 -s 1 > "$O/ncu-k23-bulk.txt" 2>&1; echo "ncu bulk rc=$?"
timeout 120 ncu --clock-control none -k regex:mra_fused_pipe_k23_ --launch-skip 40 --launch-count 1 --metrics $M $B --untuned -K 23 -l fused-pipe -n 60 -r 1 -s 1 > "$O/ncu-k23-default.txt" 2>&1; echo "ncu default rc=$?"
grep -hE "duration|inst_executed|tensor" "$O"/ncu-k23-*.txt
cd "$O" && tar czf rest.tgz tune-* db-* sanitize-* && rm -f tune-* db-* sanitize-*; ls
