#!/usr/bin/env bash
# Run 92, call 10: mra-bench's board power (NVML field 186, read by the binary) against nvidia-smi's
# power.draw.instant sampled every 50 ms by another process over the same seconds. A sustained run of
# fused-cluster K = 32 and fused-pipe K = 12 (3 s warm-up, >= 1 s timed), then a sweep with the W column.
set -uo pipefail
B=target/release/mra-bench
export MRA_TUNING_DB=/tmp/nodb.json
{ nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv; $B --version; date -u +%FT%TZ; } > $OUT/gpu.txt
echo "# timestamp,power.draw.instant,clocks.sm" > $OUT/smi.csv
nvidia-smi --query-gpu=timestamp,power.draw.instant,clocks.sm --format=csv,noheader,nounits -lms 50 >> $OUT/smi.csv &
SMI=$!
run() {  # label, tasks, mra-bench arguments
  local t0 t1; t0=$(date +%s.%N)
  $B "${@:3}" --warmup 3s -n $2 -r 30 > $OUT/$1.out 2> $OUT/$1.err; echo "exit $?" >> $OUT/$1.err
  t1=$(date +%s.%N); echo "$1 $t0 $t1 $2" >> $OUT/windows.txt
}
run k32 100 -l fused-cluster -K 32
run k12 5000 -l fused-pipe -K 12
kill $SMI
$B sweep -K 10,12,32 -l copy,fused-pipe,fused-cluster -n 100 --json $OUT/sweep.json --csv $OUT/sweep.csv > $OUT/sweep.txt 2> $OUT/sweep.err; echo "sweep exit $?" >> $OUT/sweep.txt
