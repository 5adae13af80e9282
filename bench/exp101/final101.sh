#!/usr/bin/env bash
# Run 101's closing GPU call: gpu-check (every level validated, fused-split included), the full
# sweep for the README table, fused-split against fused-cluster alone in their processes, the
# sabotaged fused-split build (pass 0's k-slots swapped) that validation must fail,
# compute-sanitizer memcheck and racecheck of fused-split, and a tune of its parameters.
# Run from the repository root with target/release/mra-bench and mra-bench-broken; logs in $OUT.
set -uo pipefail
B=target/release/mra-bench
O=${OUT:-/tmp/final101}
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-final.json
OUT="$O/gpu-check" KS="10 12 32" LEVELS="fused-pipe fused-cluster fused-split" scripts/gpu-check.sh "$B" > "$O/gpu-check.log" 2>&1; echo "gpu-check rc=$?"
grep -E "passed|failed|exit" "$O/gpu-check.log" | tail -5
echo "== sweep"
mkdir -p "$O/sweep"
$B sweep -K 6,8,10,12,16,20,24,32 -l all -n 100 --json "$O/sweep/sweep.json" --plot "$O/sweep/sweep.svg" > "$O/sweep/sweep.txt" 2>&1; echo "sweep rc=$?"
grep -E "^(copy|bound|fused-pipe|fused-cluster|fused-split) " "$O/sweep/sweep.txt"
echo "== alone, alternating (-n 100 -r 5)"
for r in 1 2; do for l in fused-cluster fused-split; do
  $B -l $l -K 32 -n 100 -r 5 > "$O/alone-$l-$r.txt" 2>&1
  grep -E "copy|$l" "$O/alone-$l-$r.txt" | grep -iE "µs|us|floor|Time" | tail -3
done; done
echo "== sabotaged fused-split (pass 0's k-slots swapped): validation must fail"
target/release/mra-bench-broken validate -l fused-split -K 32 -N 3 > "$O/broken.txt" 2>&1; echo "broken rc=$?"; tail -2 "$O/broken.txt"
echo "== compute-sanitizer"
for tool in memcheck racecheck; do
  timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 $B validate -l fused-split -K 32 -N 3 > "$O/sanitizer-$tool.txt" 2>&1; echo "$tool rc=$?"; tail -3 "$O/sanitizer-$tool.txt"
done
echo "== tune"
MRA_TUNING_DB="$O/tune-db.json" $B tune -l fused-split -K 32 > "$O/tune.txt" 2>&1; echo "tune rc=$?"; tail -8 "$O/tune.txt"
# One archive (the device returns at most 8 files).
cd "$O" && tar czf final101.tgz --exclude final101.tgz . && find . -mindepth 1 ! -name final101.tgz ! -name gpu.txt -exec rm -rf {} + 2>/dev/null; ls
