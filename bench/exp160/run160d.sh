#!/usr/bin/env bash
# Run 160, fourth call: the generated co_schedule(1) fused-split K = 32 against co_schedule(0), validated and timed.
set -uo pipefail
O=${OUT:-/tmp/run160d}; B=target/release/mra-bench
mkdir -p "$O"; N0=/tmp/nodb-160d.json; Z=$O/apart-db.json; rm -f $N0 $Z
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
# A database whose only record is fused-split K = 32 at co_schedule 0 on this GPU (tune would keep the default).
python3 - "$Z" "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" <<'PY'
import json, sys
rec = {"device": {"gpu": sys.argv[2], "arch": "sm_90", "driver": "CUDA driver 13000", "compiler": "NVRTC 13.0"},
       "level": "fused-split", "k": 32, "dtype": "f64",
       "harness": {"nfuncs": 2048, "max_blocks": 512, "tasks": 100, "streams": 4, "reps": 3},
       "config": {"co_schedule": 0, "fuse_k": 2, "prefetch_l2": 2},
       "outcome": {"status": "timed", "us_per_task": 390.0, "copy_us_per_task": 370.0, "max_rel_err": 1e-15}, "at": 1795803918}
json.dump({"version": 1, "records": [rec]}, open(sys.argv[1], "w"), indent=1)
PY
run() { local name=$1 db=$2; shift 2; MRA_TUNING_DB=$db $B -l fused-split -K 32 -n 100 "$@" > "$O/$name.txt" 2>&1; echo "$name rc=$? $(grep -E '^# (fused-split|SM clock|fused-split \()' "$O/$name.txt" | grep -E 'median|clock' | tr '\n' ' ')"; }
{
MRA_TUNING_DB=$N0 $B validate -l fused-split -K 32 -N 1,3,17,2047,2048 2>&1 | grep -E "PASS|FAIL|passed|error" | tail -6
MRA_TUNING_DB=$Z $B validate -l fused-split -K 32 -N 1,2047 2>&1 | grep -E "PASS|FAIL|passed|error|tuned configuration" | tail -4
MRA_TUNING_DB=$N0 timeout 200 compute-sanitizer --tool memcheck $B validate -l fused-split -K 32 -N 3 2>&1 | tail -2
MRA_TUNING_DB=/tmp/tune-160d.json $B tune -l fused-split -K 32 --fix co_schedule=0,fuse_k=2,prefetch_l2=2 -n 100 2>&1 | grep -E "us/task" | head -4
for r in 1 2 3; do
  run cosched-r$r $N0
  run apart-r$r $Z
done
} 2>&1 | tee "$O/log.txt"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf run160d.tgz *-r?.txt && rm -f *-r?.txt; ls
