#!/usr/bin/env bash
# Run 160, third call: why the persistent grid loses in the harness. One stream against four (the persistent grid's
# pairs split across the four launches?), and the pair co-scheduled as a cluster of 2 (fs32_c2.cu: the generated
# kernel with __cluster_dims__(2, 1, 1), nothing else) in the default and the persistent grid.
set -uo pipefail
O=${OUT:-/tmp/run160c}; B=target/release/mra-bench; D=bench/exp160
mkdir -p "$O"; P=$D/persistent-db.json; N0=/tmp/nodb-160c.json; rm -f $N0
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
run() { local name=$1 db=$2; shift 2; MRA_TUNING_DB=$db $B -l fused-split -K 32 -n 100 "$@" > "$O/$name.txt" 2>&1; echo "$name rc=$? $(grep -E 'us/task|µs' "$O/$name.txt" | grep -v '^#' | tail -2 | tr '\n' ' ')"; }
{
MRA_TUNING_DB=$N0 $B validate -l fused-split -K 32 -N 1,3,2047 --source $D/fs32_c2.cu 2>&1 | grep -E "PASS|FAIL|passed|error" | tail -4
MRA_TUNING_DB=$P $B validate -l fused-split -K 32 -N 1,3,300,2047 --source $D/fs32_c2.cu 2>&1 | grep -E "PASS|FAIL|passed|error" | tail -5
run s1-default $N0 -s 1
run s1-persistent $P -s 1
for r in 1 2 3; do
  run default-r$r $N0
  run c2-r$r $N0 --source $D/fs32_c2.cu
  run persistent-r$r $P
  run persistent-c2-r$r $P --source $D/fs32_c2.cu
done
} 2>&1 | tee "$O/log.txt"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf run160c.tgz s1-*.txt *-r?.txt && rm -f s1-*.txt *-r?.txt; ls
