#!/usr/bin/env bash
# Run 83, the built primitive: `stack(N)` in fused-pipe, through mra-bench on the GPU.
# 1. validate the default (stack 2 at K = 10) at odd and even N;
# 2. per K, one `tune --fix` process with every parameter at its default except stack (1..4):
#    each candidate validated against the FP64 reference at N = 67 (partial last groups), then
#    timed in the seed's harness with the copy in the same process;
# 3. K = 10: stack × pad_a in one process; then the default run (README-style) twice.
# Everything under $OUT/r, archived as one file.
set -uo pipefail
B=${BIN:-target/release/mra-bench}
O=${OUT:-/tmp/run83t}/r
mkdir -p "$O"
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv | tee "$O/gpu.txt"
git log -1 --format=%H > "$O/commit.txt" 2>/dev/null || true
$B validate -l fused-pipe -K 10 -N 1,2,3,17,2047,2048 2>&1 | tee "$O/validate.txt" | tail -4
fix_except() {  # K, names to leave free: the default config of fused-pipe at K without them
  $B -K "$1" -l fused-pipe --emit-src --arch sm_90 --untuned 2>/dev/null | grep -m1 "tunable parameters of this kernel:" \
    | sed 's/.*kernel: //' | tr ' ' '\n' | grep -v -E "^($2)=" | paste -sd, -
}
for K in ${KS:-3 5 6 7 9 10 11 12 13 14 15 16 18}; do
  F=$(fix_except $K stack)
  echo "== K=$K --fix $F" | tee -a "$O/tune.txt"
  $B tune -l fused-pipe -K $K --strategy exhaustive --fix "$F" --db "$O/db.json" --out "$O/tune-k$K.json" --top 4 2>&1 | tee -a "$O/tune.txt" | grep -E "stack=|copy|FAIL|error" | head -12
done
F=$(fix_except 10 "stack|pad_a")
echo "== K=10 stack x pad_a --fix $F" | tee -a "$O/tune.txt"
$B tune -l fused-pipe -K 10 --strategy exhaustive --fix "$F" --db "$O/db-pad.json" --out "$O/tune-k10-pad.json" --top 16 2>&1 | tee -a "$O/tune.txt" | grep -E "stack=|copy|FAIL|error" | head -20
for i in 1 2; do $B -K 10 -l fused-pipe --untuned 2>&1 | tee -a "$O/run-k10.txt" | tail -3; done
tar -C "$O" -czf "${OUT:-/tmp}/run83t.tgz" . && rm -rf "$O"
