#!/usr/bin/env bash
# Run 162b: NVRTC's own cache (12.9 on) against --compile-only's ptxas report. Each phase has its own NVRTC / driver
# compute cache (CUDA_CACHE_PATH) and kernel cache; "old" is the binary of 7882a2d (no --no-cache), "new" a087d90's.
# Per phase: validate L3 and fused-pipe at K = 10, 16 (which compiles them through NVRTC), then --compile-only of the
# same four kernels, counting the lines that report registers (4 = every one).
set -uo pipefail
O=${OUT:-/tmp/run162b}; NEW=target/release/mra-bench; OLD=target/old/mra-bench; T=$(mktemp -d)
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$NEW --version | tee -a "$O/gpu.txt"; $OLD --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
ARCH=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d ' .')
phase() {  # name binary cache-dir [validate: 1|0]
  local name=$1 bin=$2 cc=$3 val=${4:-1}
  export CUDA_CACHE_PATH=$T/$cc MRA_KERNEL_CACHE=$T/kc-$name
  if [ "$val" = 1 ]; then $bin validate -l 3,fused-pipe -K 10,16 -N 3 2>&1 | tail -n 1; fi
  $bin --arch "$ARCH" -K 10,16 -l 3,fused-pipe --compile-only > "$O/$name.txt" 2>&1; local rc=$?
  echo "$name: compile-only rc=$rc, lines reporting registers: $(grep -c ' registers, ' "$O/$name.txt") of 4; cache $(du -sh $T/$cc 2>/dev/null | cut -f1)"
  grep -v ' registers, ' "$O/$name.txt" | cut -c1-220
}
phase old-fresh-cache "$OLD" a 0     # nothing compiled before: the report is there
phase old "$OLD" a                   # after the validate compiled the same kernels: expected missing
phase new "$NEW" b                   # the fix, its own cache
phase new-on-old-cache "$NEW" a      # the fix, on the cache the old binary filled
date -u +%FT%TZ | tee -a "$O/gpu.txt"
