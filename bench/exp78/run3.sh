#!/usr/bin/env bash
# Run 78: build, then (1) copy, fused-cluster and the chain prototype in one process after
# validation, three interleaved rounds; (2) each kernel alone in its process with the SM clock
# and power read by nvidia-smi every 50 ms (the third H100 call and the H200 call).
# Logs under $EXP_OUT (else $OUT, else /tmp): gpu.txt, build.txt, timing.txt, smi.txt.
set -uo pipefail
cd "$(dirname "$0")"
O=${EXP_OUT:-${OUT:-/tmp}}
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version --format=csv | tee $O/gpu.txt
nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -lgomp -lcuda -o /tmp/run78 main.cu > $O/build.txt 2>&1 || { cat $O/build.txt; exit 1; }
ptxas -arch=sm_90a chain_k32.ptx -o /tmp/chain.cubin
echo "== all three in one process, validated first"
CHAIN_CUBIN=/tmp/chain.cubin /tmp/run78 3 > $O/timing.txt 2>&1
grep -E "^validate|^ +[0-9]|FAIL" $O/timing.txt
for k in fused-cluster chain fused-cluster chain; do
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader -lms 50 > /tmp/smi.txt &
  P=$!
  CHAIN_CUBIN=/tmp/chain.cubin NOVAL=1 ONLY=$k /tmp/run78 3 > /tmp/t.txt 2>&1
  kill $P; wait $P 2>/dev/null
  { echo "== alone: $k"; cat /tmp/t.txt; } >> $O/timing.txt; { echo "== $k"; cat /tmp/smi.txt; } >> $O/smi.txt
  echo "== alone: $k"; grep -E "^ +[0-9]" /tmp/t.txt
  # busy samples only (power above 300 W): median clock, power, reasons
  awk -F', ' '{p=$3+0; if (p > 300) {print $2+0, p, $5}}' /tmp/smi.txt | sort -n | awk '{c[NR]=$1; p[NR]=$2; r[$3]++} END {print "busy samples", NR, "median MHz", c[int((NR+1)/2)], "min", c[1], "max", c[NR]; for (k in r) print "  reason", k, r[k]}'
  awk -F', ' '{p=$3+0; if (p > 300) print p}' /tmp/smi.txt | sort -n | awk '{a[NR]=$1} END {print "power median", a[int((NR+1)/2)], "max", a[NR]}'
done
