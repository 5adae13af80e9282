#!/usr/bin/env bash
set -u
B=.gpu/final/mra-bench
export MRA_KERNEL_CACHE=$(mktemp -d) MRA_TUNING_DB=/tmp/nodb.json
W=$(mktemp -d)
nvidia-smi --query-gpu=name,serial,driver_version,power.limit --format=csv,noheader > $OUT/gpu.txt
$B --version >> $OUT/gpu.txt; date -u +%FT%TZ >> $OUT/gpu.txt
{
echo "== README main job"; $B -K 16 -N 2048 -n 100 -r 5 -l 3 2>&1 | grep -E "median|rc"; echo "rc=${PIPESTATUS[0]}"
echo "== validate"; $B validate -l fused-pipe,fused-cluster,3 -K 7,20,32 -N 3,2047 2>&1 | tail -1; echo "rc=${PIPESTATUS[0]}"
echo "== transform GPU vs reference (f64 K=13 N=1031, f32 K=9 N=77)"
$B npy-random --shape 1031,13,13,13 --seed 7 -o $W/A.npy && $B npy-random --shape 13,13 --seed 8 -o $W/B.npy
$B transform --input $W/A.npy --matrix $W/B.npy --output $W/C.npy 2>&1 | tail -1
$B transform --input $W/A.npy --matrix $W/B.npy --output $W/R.npy --reference 2>&1 | tail -1
$B npy-compare $W/C.npy $W/R.npy; echo "compare rc=$?"
$B npy-random --shape 77,9,9,9 --dtype f32 --seed 9 -o $W/a.npy && $B npy-random --shape 9,9 --dtype f32 --seed 10 -o $W/b.npy
$B transform --input $W/a.npy --matrix $W/b.npy --output $W/c.npy --dtype f32 2>&1 | tail -1
$B transform --input $W/a.npy --matrix $W/b.npy --output $W/r.npy --dtype f32 --reference 2>&1 | tail -1
$B npy-compare $W/c.npy $W/r.npy --dtype f32; echo "compare f32 rc=$?"
echo "== usage errors exit 2"; $B validate -K 0 2>&1; echo "rc=$?"
} > $OUT/check.txt 2>&1
cat $OUT/check.txt
