#!/usr/bin/env bash
# Run 101: build; a sabotaged build must fail validation; copy, fused-cluster and the z-split
# validated then timed in one process (3 interleaved rounds); each alone in its process
# (alternating, nvidia-smi every 50 ms); ncu of one z-split and one fused-cluster launch.
# Logs under $OUT: gpu.txt, build.txt, timing.txt, smi.txt, ncu.txt.
set -uo pipefail
cd "$(dirname "$0")"
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version --format=csv | tee $O/gpu.txt
date -u +%FT%TZ >> $O/gpu.txt
NV="nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -lgomp -lcuda"
$NV -Xptxas -v -o /tmp/run101 main.cu > $O/build.txt 2>&1 || { cat $O/build.txt; exit 1; }
grep -A2 "zsplit" $O/build.txt | grep -E "registers|spill"
$NV -DZS_BREAK -o /tmp/run101-broken main.cu >> $O/build.txt 2>&1 || { tail $O/build.txt; exit 1; }
echo "== sabotaged (pass 0's k-slots swapped): must fail"
/tmp/run101-broken 1 2>&1 | grep -E "^validate|FAILED" | tee $O/broken.txt
echo "== all three in one process, validated first"
/tmp/run101 3 > $O/timing.txt 2>&1; echo "rc=$?"
grep -E "^kernel|^validate|^ +[0-9]|FAIL" $O/timing.txt
grep -q "VALIDATION FAILED" $O/timing.txt && exit 1
for k in fused-cluster zsplit4 zsplit3 fused-cluster zsplit4 zsplit3; do
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader -lms 50 > /tmp/smi.txt &
  P=$!
  NOVAL=1 ONLY=$k /tmp/run101 3 > /tmp/t.txt 2>&1
  kill $P; wait $P 2>/dev/null
  { echo "== alone: $k"; cat /tmp/t.txt; } >> $O/timing.txt; { echo "== $k"; cat /tmp/smi.txt; } >> $O/smi.txt
  echo "== alone: $k"; grep -E "^ +[0-9]" /tmp/t.txt
  awk -F', ' '{p=$3+0; if (p > 300) {print $2+0, p, $5}}' /tmp/smi.txt | sort -n | awk '{c[NR]=$1; p[NR]=$2; r[$3]++} END {print "busy samples", NR, "median MHz", c[int((NR+1)/2)], "min", c[1], "max", c[NR]; for (k in r) print "  reason", k, r[k]}'
done
M="regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed"
for k in zsplit4 zsplit3; do
  timeout 150 ncu --clock-control none --launch-skip 5 --launch-count 1 -k regex:"mra_${k}_" --metrics "$M" /tmp/run101 prof > /tmp/ncu.txt 2>&1; echo "ncu $k rc=$?"
  { echo "== $k"; cat /tmp/ncu.txt; } >> $O/ncu.txt
  grep -E "issue_stalled|gpu__time|per_second|tensor|warps_active|issue_active|wavefronts|dram" /tmp/ncu.txt | awk '{print $1, $NF}' | sort -k2 -g -r | head -16
done
