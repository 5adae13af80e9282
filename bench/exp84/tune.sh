#!/usr/bin/env bash
# Run 84, call 2: tune fused-pipe, fused and fused-groups at K = 10, 12 on this GPU in the seed's
# harness (a fresh database), then time defaults (--untuned) against the tuned configurations in
# separate processes, alternating, twice each. On the device, from the repository root:
#   OUT=... bash bench/exp84/tune.sh
set -uo pipefail
O=$OUT/tune; mkdir -p "$O"
B=target/release/mra-bench
nvidia-smi --query-gpu=name,serial,power.limit,clocks.max.sm,driver_version --format=csv > "$O/gpu.txt" 2>&1
export MRA_KERNEL_CACHE=$(mktemp -d)
export MRA_TUNING_DB=$O/tune-db.json
date -u +%FT%TZ > "$O/start.txt"
$B tune -l fused-pipe -K 10,12 --fix stack=1,buffers=2 --budget ${PIPE_BUDGET:-200s} --top 5 > "$O/tune-pipe.txt" 2>&1; echo "tune pipe exit $?" >> "$O/tune-pipe.txt"
$B tune -l fused,fused-groups -K 10,12 --strategy exhaustive --budget ${OTHER_BUDGET:-80s} --top 3 > "$O/tune-other.txt" 2>&1; echo "tune other exit $?" >> "$O/tune-other.txt"
for round in 1 2; do
  for mode in untuned tuned; do
    flag=; [ $mode = untuned ] && flag=--untuned
    $B sweep -K 10,12 -l copy,fused,fused-pipe,fused-groups -n 100 --no-peak $flag --json "$O/sweep-$mode-$round.json" > "$O/sweep-$mode-$round.txt" 2>&1
    echo "$mode $round exit $?"; grep -E "^(copy|fused)" "$O/sweep-$mode-$round.txt"
  done
done
grep -A12 -E "^(defaults|level) " "$O/tune-pipe.txt" | tail -14
tar -C "$OUT" -czf "$OUT/tune.tgz" tune && rm -rf "$O"
