#!/usr/bin/env bash
# Run 135: `tune --fix` with the defaults left out times them first as the baseline (a check of 0d3901f on a GPU:
# a fresh database, then the same command again, where every record comes from the database), then issue 9's
# proof sweep at this commit on whatever GPU the lease gives (bench/exp121/proof.sh).
set -uo pipefail
O=${OUT:-/tmp/run135}; B=target/release/mra-bench
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv,noheader | tee "$O/gpu.txt"
$B --version | tee -a "$O/gpu.txt"; date -u +%FT%TZ | tee -a "$O/gpu.txt"
# fused-pipe K = 10's default pad is 0; --fix pad_a=4 leaves the defaults out. Three candidates, 15 repetitions.
T="$B tune -l fused-pipe -K 10 --fix pad_a=4,threads=128,stack=1 --strategy exhaustive --max-configs 3 -r 15 -n 100 --db $O/tune-db.json"
$T --out "$O/tune-1.json" > "$O/tune-1.txt" 2>&1; echo "tune 1 rc=$?"
$T --out "$O/tune-2.json" > "$O/tune-2.txt" 2>&1; echo "tune 2 rc=$?"
grep -E "^fused-pipe|^  (#|defaults)|^\| fused-pipe" "$O/tune-1.txt" "$O/tune-2.txt"
mkdir -p "$O/proof"; OUT="$O/proof" bash bench/exp121/proof.sh
date -u +%FT%TZ | tee -a "$O/gpu.txt"
cd "$O" && tar czf proof.tgz proof && rm -rf proof
