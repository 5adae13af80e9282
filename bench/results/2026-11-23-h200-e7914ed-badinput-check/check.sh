#!/usr/bin/env bash
# Final check of the bad-input session's binary on a GPU: every level validated, the README's
# main job, a sweep with its three outputs, transform and tune on the GPU (each exit code kept).
set -u
B=.gpu/e7914ed/mra-bench
export MRA_KERNEL_CACHE=$(mktemp -d) MRA_TUNING_DB=/tmp/nodb.json
W=$(mktemp -d)
nvidia-smi --query-gpu=name,serial,driver_version,power.limit,clocks.max.sm --format=csv,noheader > $OUT/gpu.txt
$B --version >> $OUT/gpu.txt; date -u +%FT%TZ >> $OUT/gpu.txt
{
echo "== README main job"; $B -K 16 -N 2048 -n 100 -r 5 -l 3; echo "rc=$?"
echo "== validate all levels"; $B validate -l all -K 7,10,12,13,20,24,32 -N 3,2047; echo "rc=$?"
echo "== sweep with --json --csv --plot"; $B sweep -K 10,12,20,32 -l copy,fused-pipe,fused-cluster,3 -n 100 --json $OUT/sweep.json --csv $OUT/sweep.csv --plot $OUT/sweep.svg; echo "rc=$?"
echo "== transform on the GPU against the CPU reference"
$B npy-random --shape 1031,13,13,13 --seed 7 -o $W/A.npy && $B npy-random --shape 13,13 --seed 8 -o $W/B.npy
$B transform --input $W/A.npy --matrix $W/B.npy --output $W/C.npy; echo "gpu rc=$?"
$B transform --input $W/A.npy --matrix $W/B.npy --output $W/R.npy --reference; echo "ref rc=$?"
$B npy-compare $W/C.npy $W/R.npy; echo "compare rc=$?"
$B transform --input $W/A.npy --matrix $W/B.npy --output $W/A.npy; echo "output=input rc=$? (must be 1)"
$B transform --input $W/A.npy --matrix $W/B.npy --output /nonexist/C.npy; echo "missing dir rc=$? (must be 1)"
echo "== tune: a few candidates, then one that tunes nothing"
$B tune -l fused-pipe -K 12 --max-configs 3 -n 50 -r 3 --db $W/db.json; echo "tune rc=$?"
$B tune -l fused-pipe -K 12 --budget 0.001s --db $W/db2.json; echo "tiny budget rc=$? (must be 1)"; ls -la $W/db2.json 2>&1
$B tune --list -l all | head -1 > /dev/null; echo "tune --list | head: pipestatus ${PIPESTATUS[*]}"
} > $OUT/check.txt 2>&1
grep -E "^== |rc=|Transform;level=L3|passed|best|PASS|FAIL" $OUT/check.txt | grep -v "^PASS" | head -60
