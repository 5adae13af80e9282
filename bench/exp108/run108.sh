#!/usr/bin/env bash
# Run 108: fused with coalesce_c(1) (C staged in the free shared buffer, stored in whole lines)
# against coalesce_c(0), on one GPU in one call (NOTES.md run 108 has the prediction):
#  1. correctness: every candidate `tune` times is validated first; then `validate` of fused with
#     coalesce_c=1 (the only tuned configuration in its database) at odd and even K, N = 1, 3,
#     2047, 2048, and compute-sanitizer memcheck / racecheck / synccheck at K = 7, 12, N = 3 and 64;
#  2. `tune --fix` at K = 10, 12, 14, 16 with every other parameter at fused's default, so the
#     two candidates differ only in coalesce_c and are timed in one process with the copy, two
#     rounds (a fresh database each);
#  3. the README's harness (`-n 100 -r 5`), one process per level and variant, alternating, two
#     rounds, at K = 10, 12, 14 (the copy floor in every process);
#  4. ncu: L2 write requests and sectors, duration, of one launch of each variant at K = 12.
set -uo pipefail
O=${OUT:-/tmp/out108}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"
DEF="pad_a=4,unroll_k=0,min_blocks=1,align_runs=0"
# 1. correctness
$B tune -l fused -K 5,7,12,13 --strategy exhaustive --fix "coalesce_c=1,$DEF" -r 1 -n 10 --db "$O/db-valid.json" > "$O/tune-valid.txt" 2>&1; echo "tune-valid rc=$?"
MRA_TUNING_DB="$O/db-valid.json" $B validate -l fused -K 5,7,12,13 -N 1,3,2047,2048 > "$O/validate.txt" 2>&1; echo "validate rc=$?"; tail -n 3 "$O/validate.txt"
grep -c "coalesce_c=1" "$O/validate.txt"
for tool in memcheck racecheck synccheck; do
  MRA_TUNING_DB="$O/db-valid.json" timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $B validate -l fused -K 7,12 -N 3,64 > "$O/sanitize-$tool.txt" 2>&1
  echo "$tool rc=$?"; grep -E "SUMMARY|passed" "$O/sanitize-$tool.txt" | tail -n 2
done
# 2. tune --fix, two rounds
for r in 1 2; do
  for kt in "10 128" "12 128" "14 128" "16 256"; do
    set -- $kt
    $B tune -l fused -K $1 --strategy exhaustive --fix "threads=$2,$DEF" -r 5 --top 2 --db "$O/db-r$r.json" > "$O/tune-r$r-k$1.txt" 2>&1
    echo "tune r$r K=$1 rc=$?"; grep -E "coalesce_c|copy" "$O/tune-r$r-k$1.txt" | tail -n 4
  done
done
# 3. the README's harness, alternating processes
for K in 10 12 14; do
  $B tune -l fused -K $K --strategy exhaustive --fix "coalesce_c=1,threads=128,$DEF" -r 1 -n 10 --db "$O/db-on-k$K.json" > /dev/null 2>&1
done
for r in 1 2; do
  for K in 10 12 14; do
    $B --untuned -l fused -K $K -n 100 -r 5 > "$O/run-r$r-k$K-off.txt" 2>&1
    MRA_TUNING_DB="$O/db-on-k$K.json" $B -l fused -K $K -n 100 -r 5 > "$O/run-r$r-k$K-on.txt" 2>&1
    for v in off on; do echo "r$r K=$K $v: $(grep -E '^# fused|^# copy|floor' "$O/run-r$r-k$K-$v.txt" | grep -E 'median' | tr '\n' ' ')"; done
  done
done
# 4. ncu at K = 12
M=gpu__time_duration.sum,lts__t_requests_srcunit_tex_op_write.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
timeout 120 ncu --clock-control none -k regex:mra_fused_k12 --launch-skip 40 --launch-count 1 --metrics $M $B --untuned -K 12 -l fused -n 60 -r 1 -s 1 > "$O/ncu-k12-off.txt" 2>&1; echo "ncu off rc=$?"
MRA_TUNING_DB="$O/db-on-k12.json" timeout 120 ncu --clock-control none -k regex:mra_fused_k12 --launch-skip 40 --launch-count 1 --metrics $M $B -K 12 -l fused -n 60 -r 1 -s 1 > "$O/ncu-k12-on.txt" 2>&1; echo "ncu on rc=$?"
timeout 120 ncu --clock-control none -k regex:mra_copy_k12 --launch-skip 40 --launch-count 1 --metrics $M $B -K 12 -l copy -n 60 -r 1 -s 1 > "$O/ncu-k12-copy.txt" 2>&1; echo "ncu copy rc=$?"
grep -hE "^  mra_|duration|requests|sectors|inst_executed|wavefronts" "$O"/ncu-k12-*.txt
cd "$O" && tar czf rest.tgz tune-* run-* sanitize-* db-* ncu-* && rm -f tune-* run-* sanitize-* db-*; ls
