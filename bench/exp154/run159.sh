#!/usr/bin/env bash
# Run 159: runs 154, 155 and 158's K = 32 prototypes on an H200, through `--source`: validation of the ring, then three
# alternating rounds of the generated kernel, the ring, mc3 and latebar.
set -uo pipefail
O=${OUT:-/tmp/run159}; B=target/release/mra-bench
mkdir -p "$O"; export MRA_TUNING_DB=/tmp/nodb-159.json
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
$B validate -l fused-split -K 32 -N 1,3,2047 --source bench/exp154/fs32_ring.cu > "$O/validate-ring.txt" 2>&1; echo "validate ring rc=$?"; tail -1 "$O/validate-ring.txt"
for r in 1 2 3; do
  for v in generated ring mc3 latebar; do
    if [ $v = generated ]; then a=(); else a=(--source bench/exp154/fs32_$v.cu); fi
    $B -l fused-split -K 32 -n 100 -r 11 "${a[@]}" > "$O/r$r-$v.txt" 2>&1; echo "round $r $v rc=$?"
    grep -E "median|SM clock" "$O/r$r-$v.txt" | cut -c1-200
  done
done
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf run159.tgz *.txt && find . -name "*.txt" ! -name gpu.txt -delete; ls
