#!/usr/bin/env bash
# Run 92: the copy + minimum-DMMA bound (floor.cu) at the K, then mra-bench's copy and best
# levels at the same K in the same lease, with the SM clock and power sampled throughout.
# Binary carried: target/release/mra-bench (built at a clean, committed tree). Logs under $OUT.
set -uo pipefail
B=target/release/mra-bench
export MRA_TUNING_DB=/tmp/nodb.json
{ nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version --format=csv; $B --version; date -u +%FT%TZ; } > $OUT/gpu.txt
cat $OUT/gpu.txt
Q=timestamp,power.draw.instant,power.draw.average,clocks.sm,clocks_event_reasons.active
nvidia-smi --query-gpu=$Q --format=csv,noheader -c 1 >/dev/null 2>&1 || Q=timestamp,power.draw,clocks.sm,clocks_event_reasons.active
echo "# $Q" > $OUT/smi.csv
nvidia-smi --query-gpu=$Q --format=csv,noheader,nounits -lms 50 >> $OUT/smi.csv &
SMI=$!
nvcc -O3 -arch=sm_90a -Xptxas -v -o /tmp/floor bench/exp92/floor.cu 2>&1 | tee $OUT/ptxas.txt; test -x /tmp/floor || { kill $SMI; exit 1; }
for K in ${KS:-32 10 12 16 20 24 8 6}; do
  for T in ${THREADS:-128 256 512}; do
    for C in ${CHAINS:-4}; do
      for O in ${OPS:-dmma}; do
        /tmp/floor $K $T 0 $C $O 2>&1 | tee -a $OUT/floor.txt
      done
    done
  done
done
echo "== mra-bench sweep" | tee -a $OUT/floor.txt
date +%s.%N >> $OUT/floor.txt
$B sweep -K ${SWEEP_KS:-6,8,10,12,16,20,24,32} -l ${SWEEP_LEVELS:-copy,fused,fused-ring,fused-pipe,fused-cluster,L7-breg} -n 100 --json $OUT/sweep.json > $OUT/sweep.txt 2> $OUT/sweep.err
echo "sweep exit $?" >> $OUT/sweep.txt
date +%s.%N >> $OUT/floor.txt
kill $SMI
cat $OUT/sweep.txt
