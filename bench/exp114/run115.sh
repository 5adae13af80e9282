#!/usr/bin/env bash
# Run 115: fused-cluster's bulk_copy(1) at odd K (slices and C shifted onto the 16-byte grid): validation over
# configurations, validate, compute-sanitizer, then bulk_copy 0 against 1 at each odd K's defaults, two rounds.
set -uo pipefail
O=${OUT:-/tmp/out115}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
# 1. correctness: random candidates with bulk_copy=1 (each validated at N = 67 against the FP64 reference)
for K in 25 27 29 31; do
  $B tune -l fused-cluster -K $K --strategy random --max-configs 12 --fix "bulk_copy=1,unroll_rows=1" -r 1 -n 5 --db "$O/db-random.json" >> "$O/tune-random.txt" 2>&1
  echo "random K=$K rc=$?"
done
echo "random: $(grep -cE '^  fused-cluster K=' "$O/tune-random.txt") candidates, $(grep -ciE 'wrong|mismatch|failed' "$O/tune-random.txt") lines naming failures"; grep -E "candidates \(" "$O/tune-random.txt"
# the defaults with bulk_copy=1, then validate and the sanitizers with them
CASES="25:128:3:1:7:1:0:1 27:512:4:4:4:1:0:1 29:256:3:2:8:2:1:1 31:512:3:4:4:1:1:2"
for c in $CASES; do
  IFS=: read K T BU SC CLU MB LW FK <<< "$c"
  $B tune -l fused-cluster -K $K --strategy exhaustive --fix "bulk_copy=1,threads=$T,buffers=$BU,split_cols=$SC,cluster=$CLU,min_blocks=$MB,late_wait=$LW,fuse_k=$FK,async_exchange=0,unroll_rows=1,pad_a=4,pair_rows=0" -r 1 -n 5 --db "$O/db-valid.json" >> "$O/tune-valid.txt" 2>&1
done
MRA_TUNING_DB="$O/db-valid.json" $B validate -l fused-cluster -K 25,27,29,31 -N 1,3,2047,2048 > "$O/validate.txt" 2>&1; echo "validate rc=$?"; tail -n 1 "$O/validate.txt"
echo "bulk_copy=1 configurations used: $(grep -c 'bulk_copy=1' "$O/validate.txt")"
for tool in memcheck racecheck synccheck; do
  MRA_TUNING_DB="$O/db-valid.json" timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $B validate -l fused-cluster -K 25,29 -N 3 > "$O/sanitize-$tool.txt" 2>&1
  echo "$tool rc=$?"; grep -E "SUMMARY|passed" "$O/sanitize-$tool.txt" | tail -n 2
done
# 2. timing: bulk_copy 0 against 1 at each K's defaults
for r in 1 2; do
  for c in $CASES; do
    IFS=: read K T BU SC CLU MB LW FK <<< "$c"
    $B tune -l fused-cluster -K $K --strategy exhaustive --fix "threads=$T,buffers=$BU,split_cols=$SC,cluster=$CLU,min_blocks=$MB,late_wait=$LW,fuse_k=$FK,async_exchange=0,unroll_rows=1,pad_a=4,pair_rows=0" -r 5 --top 2 --db "$O/db-r$r.json" > "$O/tune-r$r-k$K.txt" 2>&1
    echo "r$r K=$K rc=$? $(grep -E '^  fused-cluster K=' "$O/tune-r$r-k$K.txt" | sed 's/.*bulk_copy=\([01]\).*: \([0-9.]*\) us.*/b\1 \2/' | tr '\n' ' ')"
  done
done
cd "$O" && tar czf tunes.tgz tune-* db-* validate.txt sanitize-* && rm -f tune-* db-* validate.txt sanitize-*; ls
