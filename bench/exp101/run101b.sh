#!/usr/bin/env bash
# Run 101, later calls: the z-split's third version against fused-cluster, alone in their
# processes, alternating (the fourth version built with PF=2 to separate its two changes);
# ncu of one launch of the third version. Logs under $OUT.
set -uo pipefail
cd "$(dirname "$0")"
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version --format=csv | tee $O/gpu.txt
date -u +%FT%TZ >> $O/gpu.txt
NV="nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -lgomp -lcuda"
$NV -o /tmp/run101 main.cu > $O/build.txt 2>&1 || { cat $O/build.txt; exit 1; }
$NV -DPF=2 -o /tmp/run101-pf2 main.cu >> $O/build.txt 2>&1 || { cat $O/build.txt; exit 1; }
echo "== validation (one process; fused-cluster and every z-split version, PF=2 build)"
/tmp/run101-pf2 0 > $O/validate.txt 2>&1; echo "rc=$?"; grep -E "^validate|FAIL" $O/validate.txt | grep -vE "zsplit2?\s" 
for k in fused-cluster:run101 zsplit3:run101 zsplit4:run101-pf2 fused-cluster:run101 zsplit3:run101 zsplit4:run101-pf2; do
  name=${k%%:*}; bin=${k##*:}
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader -lms 50 > /tmp/smi.txt &
  P=$!
  NOVAL=1 ONLY=$name /tmp/$bin 3 > /tmp/t.txt 2>&1
  kill $P; wait $P 2>/dev/null
  { echo "== alone: $name ($bin)"; cat /tmp/t.txt; } >> $O/timing.txt; { echo "== $name ($bin)"; cat /tmp/smi.txt; } >> $O/smi.txt
  echo "== alone: $name ($bin)"; grep -E "^ +[0-9]" /tmp/t.txt | grep -v copy; grep -E "^ +[0-9] copy" /tmp/t.txt | awk '{printf "copy %s ", $3} END {print ""}'
  awk -F', ' '{p=$3+0; if (p > 300) {print $2+0, p, $5}}' /tmp/smi.txt | sort -n | awk '{c[NR]=$1; p[NR]=$2; r[$3]++} END {print "busy samples", NR, "median MHz", c[int((NR+1)/2)], "min", c[1], "max", c[NR]; for (k in r) print "  reason", k, r[k]}'
done
M="regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed"
for k in zsplit3 fused_cluster; do
  timeout 150 ncu --clock-control none --launch-skip 5 --launch-count 1 -k regex:"mra_${k}_" --metrics "$M" /tmp/run101 prof > /tmp/ncu.txt 2>&1; echo "ncu $k rc=$?"
  { echo "== $k"; cat /tmp/ncu.txt; } >> $O/ncu.txt
  grep -E "issue_stalled|gpu__time|per_second|tensor|warps_active|issue_active|wavefronts|dram" /tmp/ncu.txt | awk '{print $1, $NF}' | sort -k2 -g -r | head -8
done
