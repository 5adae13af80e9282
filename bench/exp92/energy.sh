#!/usr/bin/env bash
# Run 92, call 8: the power each fastest level draws over several seconds (run's --warmup 3s, then
# -r 30 timed repetitions of >= 35 ms), next to the copy's, with nvidia-smi sampling every 50 ms, so that energy
# per task can be compared with the bound's (floor.cu at the same K). Logs under $OUT.
set -uo pipefail
B=target/release/mra-bench
export MRA_TUNING_DB=/tmp/nodb.json
{ nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version --format=csv; $B --version; date -u +%FT%TZ; } > $OUT/gpu.txt
for f in power.draw.instant power.draw.average; do nvidia-smi --query-gpu=$f --format=csv,noheader >> $OUT/gpu.txt 2>&1; done
Q=timestamp,power.draw,clocks.sm,clocks_event_reasons.active
nvidia-smi --query-gpu=timestamp,power.draw.instant --format=csv,noheader -c 1 >/dev/null 2>&1 && Q=timestamp,power.draw.instant,clocks.sm,clocks_event_reasons.active
echo "# $Q" > $OUT/smi.csv
nvidia-smi --query-gpu=$Q --format=csv,noheader,nounits -lms 50 >> $OUT/smi.csv &
SMI=$!
nvcc -O3 -arch=sm_90a -o /tmp/floor bench/exp92/floor.cu || { kill $SMI; exit 1; }
run() {  # label, then mra-bench arguments
  local t0 t1; t0=$(date +%s.%N)
  $B "${@:2}" --warmup 3s -n $TASKS -r 30 > $OUT/$1.out 2> $OUT/$1.err; echo "exit $?" >> $OUT/$1.err
  t1=$(date +%s.%N)
  echo "$1 $t0 $t1 $TASKS" >> $OUT/windows.txt
}
for K in 10 12 32; do
  L=fused-pipe; TASKS=5000; [ $K = 32 ] && L=fused-cluster && TASKS=100  # >= 1 s of timed repetitions
  run copy-k$K -l copy -K $K
  run level-k$K -l $L -K $K
done
for K in 10 12 32; do /tmp/floor $K 128 0 2 >> $OUT/floor.txt 2>&1; done
kill $SMI
