#!/usr/bin/env bash
# Run 156: `--source` on a GPU (the generated fused-split K = 32 emitted and given back unedited, run 155's and run 154's
# prototypes through the supported path, a file of another K refused), then the closing checks: scripts/gpu-check.sh and
# scripts/export-check.sh.
set -uo pipefail
O=${OUT:-/tmp/run156}; B=target/release/mra-bench
mkdir -p "$O"; export MRA_TUNING_DB=/tmp/nodb-156.json
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
S=$O/src; mkdir -p "$S"
$B --emit-src -l fused-split -K 32 --arch sm_90 -o "$S/fs32.cu" 2>&1; echo "emit rc=$?"
$B validate -l fused-split -K 32 -N 1,3,2047 --source "$S/fs32.cu" > "$O/validate-source.txt" 2>&1; echo "validate --source rc=$?"; cat "$O/validate-source.txt" | tail -4
$B validate -l fused-split -K 32 -N 3 --source bench/exp154/fs32_latebar.cu > "$O/validate-latebar.txt" 2>&1; echo "validate latebar rc=$?"; tail -2 "$O/validate-latebar.txt"
$B -l fused-split -K 31 -n 10 --source "$S/fs32.cu" > "$O/wrong-k.txt" 2>&1; echo "wrong K rc=$? (1 expected)"; cat "$O/wrong-k.txt"
for r in 1 2; do
  for v in generated emitted latebar mc3; do
    case $v in generated) a=();; emitted) a=(--source "$S/fs32.cu");; latebar) a=(--source bench/exp154/fs32_latebar.cu);; mc3) a=(--source bench/exp154/fs32_mc3.cu);; esac
    $B -l fused-split -K 32 -n 100 -r 11 "${a[@]}" > "$O/r$r-$v.txt" 2>&1; echo "round $r $v rc=$?"
    grep -E "^# (fused-split|validated|.*median)" "$O/r$r-$v.txt" | cut -c1-230
  done
done
$B -l fused-split -K 32 -n 10 -r 1 --json --source "$S/fs32.cu" 2>/dev/null | head -1 | grep -o '"source":"[^"]*"'; echo "json rc=${PIPESTATUS[0]}"
OUT="$O/gpu-check" timeout 360 scripts/gpu-check.sh "$B" > "$O/gpu-check.log" 2>&1; echo "gpu-check rc=$?"
grep -E "passed|failed|cannot run|exit" "$O/gpu-check.log" | tail -4
OUT="$O/export" timeout 150 bash scripts/export-check.sh "$B" > "$O/export-check.log" 2>&1; echo "export-check rc=$?"
tail -3 "$O/export-check.log"
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf run156.tgz *.txt src gpu-check export gpu-check.log export-check.log && rm -rf src gpu-check export *.log && find . -name "*.txt" ! -name gpu.txt -delete; ls
