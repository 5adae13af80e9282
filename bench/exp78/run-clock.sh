#!/usr/bin/env bash
# Run 78, seventh call: the SM clock and power (nvidia-smi every 20 ms) through an interleaved
# process (copy, fused-cluster, chain) and a reversed one (copy, chain, fused-cluster), to see
# whether the chain's climb after fused-cluster is the clock.
set -uo pipefail
cd "$(dirname "$0")"
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv | tee $O/gpu.txt
nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -lgomp -lcuda -o /tmp/run78 main.cu > $O/build.txt 2>&1 || { cat $O/build.txt; exit 1; }
ptxas -arch=sm_90a chain_k32.ptx -o /tmp/chain.cubin
export CHAIN_CUBIN=/tmp/chain.cubin NOVAL=1
for mode in forward reverse; do
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active --format=csv,noheader -lms 20 > $O/smi-$mode.txt &
  P=$!
  if [ $mode = reverse ]; then REVERSE=1 /tmp/run78 2 > /tmp/t.txt 2>&1; else /tmp/run78 2 > /tmp/t.txt 2>&1; fi
  kill $P; wait $P 2>/dev/null
  echo "== $mode"; grep -E "^ +[0-9]" /tmp/t.txt | tee -a $O/clock.txt
done
# The clock in each busy stretch (power > 300 W), in order: stretches separated by idle samples.
for mode in forward reverse; do
  echo "== $mode: busy stretches (samples, median MHz, median W)"
  awk -F', ' '{p=$3+0; c=$2+0; if (p > 300) {n++; cs[n]=c; ps[n]=p} else if (n > 5) {asort(cs); asort(ps); print n, cs[int((n+1)/2)], ps[int((n+1)/2)]; n=0; delete cs; delete ps} else {n=0}} END {if (n > 5) {asort(cs); asort(ps); print n, cs[int((n+1)/2)], ps[int((n+1)/2)]}}' $O/smi-$mode.txt
done
