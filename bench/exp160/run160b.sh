#!/usr/bin/env bash
# Run 160, second call: the persistent grid validated at odd N (the first call's validate used the database's
# persistent=0), memcheck, ncu DRAM bytes and L2 hit rate of one launch of each grid, and alternating timing.
set -uo pipefail
O=${OUT:-/tmp/run160b}; B=target/release/mra-bench
mkdir -p "$O"; P=bench/exp160/persistent-db.json; N0=/tmp/nodb-160.json; rm -f $N0
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
{
MRA_TUNING_DB=$P $B validate -l fused-split -K 32 -N 1,3,17,300,2047 2>&1 | grep -v "^# fused-split K=32: tuned" | tail -7
MRA_TUNING_DB=$P timeout 200 compute-sanitizer --tool memcheck $B validate -l fused-split -K 32 -N 300 2>&1 | tail -3
for cfg in default persistent; do
  db=$N0; [ $cfg = persistent ] && db=$P
  MRA_TUNING_DB=$db timeout 200 ncu --clock-control none -k regex:mra_fused_split --launch-skip 40 --launch-count 1 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,launch__grid_size \
    $B -l fused-split -K 32 -n 60 -r 1 -s 1 2>&1 | grep -E "gpu__time|dram__|lts__|grid_size" | sed "s/^/$cfg ncu: /"
done
for r in 1 2; do
  MRA_TUNING_DB=$P $B sweep -K 32 -l copy,fused-split -n 100 --json "$O/persistent-r$r.json" > "$O/persistent-r$r.txt" 2>&1
  MRA_TUNING_DB=$N0 $B sweep -K 32 -l copy,fused-split -n 100 --json "$O/default-r$r.json" > "$O/default-r$r.txt" 2>&1
done
} 2>&1 | tee "$O/log.txt"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && for f in persistent-r*.json default-r*.json; do python3 -c "import json,sys; d=json.load(open('$f')); print('$f', [(r['level'], round(r['us_per_task'],2), r['sm_clock']['sm_mhz_median'], r['sm_clock']['power_w_median']) for r in d['rows']])"; done
tar czf run160b.tgz *-r*.json *-r*.txt && rm -f *-r*.json *-r*.txt; ls
