#!/usr/bin/env bash
# Run 145: fused-pipe K = 10 with swap_operands(1) over threads x min_blocks x pad x fuse_k x bulk_copy (128 candidates,
# -r 15), then the three fastest against the default in two more processes each.
set -uo pipefail
O=${OUT:-/tmp/run145}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
export MRA_TUNING_DB=/tmp/nodb-145.json
$B tune -l fused-pipe -K 10 --strategy exhaustive --fix swap_operands=1,persistent=0,buffers=2,align_runs=0 -r 15 -n 500 --db "$O/all.json" > "$O/all.txt" 2>&1; echo "all rc=$?"
grep -E "candidates \(|^  (#[1-8]|defaults) " "$O/all.txt" | cut -c1-200
grep -E "^  #[1-3] " "$O/all.txt" | sed -E 's/^  #[0-9] +//; s/ +[0-9.]+ us\/task.*//; s/ /,/g' > "$O/top.txt"
for r in 1 2; do
  while read -r cfg; do
    $B tune -l fused-pipe -K 10 --strategy exhaustive --fix "$cfg" -r 21 -n 500 --db "$O/top-r$r-$(echo $cfg | md5sum | cut -c1-6).json" > "$O/top-r$r-$(echo $cfg | md5sum | cut -c1-6).txt" 2>&1
    grep -E "^  (#1|defaults) " "$O/top-r$r-$(echo $cfg | md5sum | cut -c1-6).txt" | sed -E 's/align_runs=0 buffers=2 //; s/persistent=0 stack=1 //' | cut -c1-170
  done < "$O/top.txt"
done
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf run145.tgz *.txt *.json && find . \( -name "*.txt" -o -name "*.json" \) ! -name gpu.txt -delete; ls
