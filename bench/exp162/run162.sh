#!/usr/bin/env bash
# Run 162, on an H200 only (exits at once on another GPU): co_schedule 1 against 0 at K = 32 and the K = 32 sweep twice
# (bench/exp160/run160g.sh), then issue 9's proof sweep (bench/exp121/proof.sh), all in one lease.
set -uo pipefail
O=${OUT:-/tmp/run162}; mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu0.txt"
grep -q H200 "$O/gpu0.txt" || { echo "not an H200: nothing run"; exit 0; }
OUT=$O/g bash bench/exp160/run160g.sh
OUT=$O/proof bash bench/exp121/proof.sh
cd "$O/proof" && tar czf proof.tgz sweep/sweep.txt sweep/sweep.svg && cp sweep/sweep.json proof-sweep.json && rm -rf sweep
