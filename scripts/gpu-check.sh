#!/usr/bin/env bash
# One GPU call: validate every level, time every level against the copy floor, measure cold
# and warm compile. Run on a machine with an NVIDIA GPU, from the repository root:
#   scripts/gpu-check.sh [path/to/mra-bench]
# Environment: OUT (where logs and results.json go, default ./gpu-check-out),
#   MRA_COMMIT (commit the binary was built from; default: what its --version says), KS (bench K list), LEVELS, TASKS, VALIDATE_KS, VALIDATE_NS,
#   STREAM_DATA (shared: the seed's harness, the default; private: an A and a C per stream, see README "Whose floor"),
#   SANITIZE=1 (compute-sanitizer memcheck, racecheck, synccheck of the fused levels; SANITIZE_KS, SANITIZE_LEVELS, SANITIZE_SECONDS).
# A level listed in LEVELS that the planner refuses at a K of KS on this GPU (e.g. fused-cluster below
# K = 13) is not run: cannot-run.txt and results.json "cannot_run" give the reason; it fails nothing.
set -uo pipefail
BIN=${1:-target/release/mra-bench}
OUT=${OUT:-gpu-check-out}
mkdir -p "$OUT"
KS=${KS:-"6 8 10 12 16 20 32"}
LEVELS=${LEVELS:-"1 2 3"}
TASKS=${TASKS:-100}
STREAM_DATA=${STREAM_DATA:-shared}
VALIDATE_KS=${VALIDATE_KS:-1,5,6,7,8,10,12,13,16,20,24,25,28,32}
VALIDATE_NS=${VALIDATE_NS:-1,3,2048}
VALIDATE_LEVELS=${VALIDATE_LEVELS:-all}
export MRA_KERNEL_CACHE=${MRA_KERNEL_CACHE:-$(mktemp -d)}
# The commit the results name: the binary's own (`mra-bench --version`) unless given.
export MRA_COMMIT=${MRA_COMMIT:-$("$BIN" --version 2>/dev/null | sed -n 's/.*(commit \(.*\))$/\1/p')}
status=0

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader > "$OUT/device.txt" 2>&1
echo "== device: $(cat "$OUT/device.txt")"

echo "== cold and warm start (fresh kernel cache $MRA_KERNEL_CACHE)"
for run in cold warm; do
  start=$(date +%s%N)
  "$BIN" -K 16 -l 3 -n 10 -r 1 > /dev/null 2> "$OUT/start-$run.txt"
  end=$(date +%s%N)
  echo "$run: process wall $(( (end - start) / 1000000 )) ms; $(grep -h 'L3-regblk (K=16' "$OUT/start-$run.txt")" | tee -a "$OUT/start.txt"
done

echo "== errors a user can hit on a GPU machine (each must be one line, non-zero exit)"
for args in "-K 32 -N 3000000 -n 1" "--arch sm_80 -K 8 -n 1"; do
  "$BIN" $args > /dev/null 2> "$OUT/err.txt"; rc=$?
  echo "mra-bench $args -> exit $rc: $(cat "$OUT/err.txt")" | tee -a "$OUT/errors.txt"
  [ $rc -ne 0 ] && ! grep -q panicked "$OUT/err.txt" || status=1
done

echo "== validate levels=$VALIDATE_LEVELS K=$VALIDATE_KS N=$VALIDATE_NS"
"$BIN" validate -l "$VALIDATE_LEVELS" -K "$VALIDATE_KS" -N "$VALIDATE_NS" --json > "$OUT/validate.jsonl" 2> "$OUT/validate.err" || status=1
tail -n 1 "$OUT/validate.err"
grep '"pass":false' "$OUT/validate.jsonl" && status=1

# The kernels validated above went through NVRTC, whose own cache (12.9 on) would skip ptxas for
# the same source and leave its -v report out unless mra-bench passes --no-cache: --compile-only
# must still report registers for them.
ARCH=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
echo "== compile-only after those compiles: -K 10,16 -l 3,fused-pipe --arch $ARCH"
"$BIN" --arch "$ARCH" -K 10,16 -l 3,fused-pipe --compile-only > "$OUT/compile-only.txt" 2>&1 || { cat "$OUT/compile-only.txt"; status=1; }
[ "$(grep -c ' registers, ' "$OUT/compile-only.txt")" = 4 ] || { echo "FAILED: compile-only reported no registers"; status=1; }

echo "== bench K in {$KS}, levels {$LEVELS}, N=2048, -n $TASKS, --stream-data $STREAM_DATA"
: > "$OUT/bench.jsonl"
: > "$OUT/cannot-run.txt"
# A level asked for at a K (or on a GPU) it cannot run at is planned first, offline for this GPU's
# arch, and left out with the planner's one-line reason: a "-" in the table, not a failed check.
for K in $KS; do
  for L in copy $LEVELS; do
    if [ "$ARCH" != sm_ ] && ! "$BIN" -K "$K" -l "$L" --emit-src --arch "$ARCH" > /dev/null 2> "$OUT/plan.err"; then
      echo "cannot run: -K $K -l $L on $ARCH: $(sed 's/^mra-bench: error: //' "$OUT/plan.err")" | tee -a "$OUT/cannot-run.txt"
      continue
    fi
    "$BIN" -K "$K" -N 2048 -n "$TASKS" -r 5 -l "$L" --stream-data "$STREAM_DATA" --json >> "$OUT/bench.jsonl" 2>> "$OUT/bench.err" || { echo "FAILED: -K $K -l $L"; tail -n 2 "$OUT/bench.err"; status=1; }
  done
done

# SANITIZE=1: compute-sanitizer's memcheck, racecheck (shared-memory hazards) and synccheck (barrier
# misuse) on the levels with shared memory and barriers, at SANITIZE_KS with N = 3 tensors; any error
# it reports fails the check (--error-exitcode). Minutes, so off by default.
if [ "${SANITIZE:-0}" = 1 ]; then
  SAN_KS=${SANITIZE_KS:-7,12,16,25,32}
  SAN_LEVELS=${SANITIZE_LEVELS:-fused,fused-1buf,fused-pipe,fused-groups,fused-ring,fused-cluster,fused-split}
  for tool in memcheck racecheck synccheck; do
    levels=$SAN_LEVELS
    # synccheck (CUDA 13.0) loses track of a block's mbarriers once the kernel issues
    # cp.async.bulk.prefetch.L2 ("overflow of tracked cuda::barrier structures", then a launch
    # failure under the tool), which fused-split's prefetch_l2(2) does; with prefetch_l2(0) it is
    # clean. Left out of synccheck's default list.
    [ "$tool" = synccheck ] && [ -z "${SANITIZE_LEVELS:-}" ] && levels=${SAN_LEVELS/,fused-split/}
    echo "== compute-sanitizer --tool $tool: validate -l $levels -K $SAN_KS -N 3"
    timeout "${SANITIZE_SECONDS:-300}" compute-sanitizer --tool "$tool" --error-exitcode 9 "$BIN" validate -l "$levels" -K "$SAN_KS" -N 3 > "$OUT/sanitize-$tool.txt" 2>&1
    rc=$?
    grep -E "passed|SUMMARY" "$OUT/sanitize-$tool.txt" | tail -n 2
    [ $rc -eq 0 ] || { echo "FAILED: compute-sanitizer --tool $tool (exit $rc; $OUT/sanitize-$tool.txt)"; status=1; }
  done
fi

python3 - "$OUT" <<'PY'
import json, sys, statistics, datetime, os
out = sys.argv[1]
rows = [json.loads(l) for l in open(f"{out}/bench.jsonl") if l.startswith("{")]
val = [v for v in (json.loads(l) for l in open(f"{out}/validate.jsonl") if l.startswith("{")) if "pass" in v]
by = {}
for r in rows:
    by.setdefault((r["level"], r["K"]), []).append(r)
summary = []
for (level, k), rs in sorted(by.items(), key=lambda x: (x[0][1], x[0][0])):
    us = statistics.median(r["us_per_task"] for r in rs)
    floor = rs[0]["floor_us_per_task"]
    summary.append({"level": level, "K": k, "us_per_task": us, "floor_us_per_task": floor,
                    "fraction_of_floor": floor / us, "gflops": statistics.median(r["gflops"] for r in rs)})
device = rows[0]["device"] if rows else open(f"{out}/device.txt").read().strip()
doc = {"device": device, "device_info": open(f"{out}/device.txt").read().strip(),
       "commit": os.environ.get("MRA_COMMIT", "unknown"),
       "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
       "harness": {"N": 2048, "M": 512, "streams": 4, "tasks": rows[0]["tasks"] if rows else None, "reps": 5,
                   "stream_data": rows[0]["stream_data"] if rows else os.environ.get("STREAM_DATA", "shared")},
       "validation": {"cases": len(val), "failed": sum(not v["pass"] for v in val),
                      "worst_rel_err": max((v["max_rel_err"] for v in val if v["level"] != "copy"), default=None)},
       "bench": summary, "reps": rows,
       # (K, level) pairs asked for that the planner refused for this GPU, with its reason
       "cannot_run": [l.strip() for l in open(f"{out}/cannot-run.txt") if l.strip()]}
json.dump(doc, open(f"{out}/results.json", "w"), indent=1)
levels = sorted({s["level"] for s in summary})
ks = sorted({s["K"] for s in summary})
print(f"\n{device}: us/task (fraction of copy floor), N=2048")
print("K    " + "".join(f"{l:>22}" for l in levels))
for k in ks:
    cells = []
    for l in levels:
        s = next((s for s in summary if s["K"] == k and s["level"] == l), None)
        cells.append(f"{s['us_per_task']:>12.1f} ({s['fraction_of_floor']:.3f})" if s else f"{'-':>22}")
    print(f"{k:<5}" + "".join(f"{c:>22}" for c in cells))
print(f"validation: {doc['validation']}")
if doc["cannot_run"]:
    print(f"not run (the planner's refusals, in cannot-run.txt): {len(doc['cannot_run'])}")
PY
exit $status
