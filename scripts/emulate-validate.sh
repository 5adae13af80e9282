#!/usr/bin/env bash
# Emulated validation of every generated AMD kernel: every non-library level x every AMD arch x
# K in {1,5,8,10,13,16,20,32} x every dtype (levels refuse the ones they do not support there,
# printed as SKIP) x N in {1,3}, on the CPU wave emulator (mra-bench validate --emulate), which
# executes the generated HIP itself. Each (level, arch, K, dtype) is compiled once (in parallel,
# into the kernel cache) and run for both N. Exits non-zero if any case fails.
#
#   scripts/emulate-validate.sh [path/to/mra-bench] [output directory]
#
# Writes one JSON-lines file per arch and a PASS-count table (level x arch x K x dtype) to the
# output directory (default: a temporary one), and prints the table and the time taken.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BIN=${1:-target/debug/mra-bench}
OUT=${2:-$(mktemp -d)}
mkdir -p "$OUT"
KS=${MRA_EMULATE_KS:-1,5,8,10,13,16,20,32}  # MRA_EMULATE_KS: a shorter list for a quick check
# MRA_EMULATE_NS: the N list (the race check needs one N: what races is within a block).
NS=${MRA_EMULATE_NS:-1,3}
# MRA_EMULATE_RACES=1: ThreadSanitizer's race check instead of AddressSanitizer (validate --races).
RACES=()
if [ "${MRA_EMULATE_RACES:-0}" = 1 ]; then RACES=(--races); fi
ARCHS=(gfx90a gfx942 gfx1100 gfx1151 gfx1201)

if [ ! -x "$BIN" ]; then
    echo "emulate-validate: $BIN not found; build it first (cargo build -p mra-bench)" >&2
    exit 1
fi

start=$(date +%s)
# Two jobs at a time (each process also compiles its kernels two at a time). Each arch is two
# jobs, its largest K apart from the rest: that K costs about as much as all the others, and
# whole archs left one arch running alone at the end.
validate_part() {
    local arch=$1 part=$2 ks=$3 t0
    t0=$(date +%s)
    if "$BIN" validate --arch "$arch" --emulate "${RACES[@]}" -l all -K "$ks" -N "$NS" --dtype f64,f32,f16,bf16 --json > "$OUT/$arch.$part.jsonl" 2> "$OUT/$arch.$part.log"; then
        echo "$arch K=$ks: $(tail -n 1 "$OUT/$arch.$part.log") ($(( $(date +%s) - t0 )) s)"
    else
        echo "$arch K=$ks: FAILED ($(( $(date +%s) - t0 )) s): $(tail -n 1 "$OUT/$arch.$part.log")"
        grep -v '"pass":true' "$OUT/$arch.$part.jsonl" | grep -v '"skipped"' || true
        cat "$OUT/$arch.$part.log"
        return 1
    fi
}
largest=$(tr ',' '\n' <<<"$KS" | sort -n | tail -n 1)
rest=$(tr ',' '\n' <<<"$KS" | sort -n | sed '$d' | paste -sd, -)
pids=()
for arch in "${ARCHS[@]}"; do
    for part in largest rest; do
        ks=$([ "$part" = largest ] && echo "$largest" || echo "$rest")
        [ -n "$ks" ] || continue
        while [ "$(jobs -rp | wc -l)" -ge 2 ]; do sleep 1; done
        validate_part "$arch" "$part" "$ks" &
        pids+=($!)
    done
done
failed=0
for pid in "${pids[@]}"; do
    wait "$pid" || failed=1
done

python3 - "$OUT" "${ARCHS[@]}" <<'PY'
import collections, glob, json, sys
out, archs = sys.argv[1], sys.argv[2:]
passes = collections.Counter(); fails = collections.Counter(); ks = set()
for arch in archs:
    for line in (l for f in sorted(glob.glob(f"{out}/{arch}.*.jsonl")) for l in open(f)):
        c = json.loads(line)
        if "skipped" in c:
            continue
        key = (c["level"], arch, c.get("dtype", "f64"))
        ks.add(c["K"])
        (passes if c["pass"] else fails)[key + (c["K"],)] += 1
ks = sorted(ks)
print("PASS count per (level, arch, dtype) and K (each K: every N of the list; FAIL marked):")
print(f"{'level':<12} {'arch':<8} {'dtype':<5} " + " ".join(f"K={k:<3}" for k in ks) + "  total")
rows = sorted({k[:3] for k in list(passes) + list(fails)})
total = 0
for row in rows:
    cells = []
    for k in ks:
        p, f = passes[row + (k,)], fails[row + (k,)]
        cells.append(f"{p}{'!' + str(f) if f else '':<4}" if p or f else "-    ")
    n = sum(passes[row + (k,)] for k in ks); total += n
    print(f"{row[0]:<12} {row[1]:<8} {row[2]:<5} " + " ".join(cells) + f"  {n}")
print(f"total PASS: {total}, FAIL: {sum(fails.values())}")
PY

echo "emulated validation took $(( $(date +%s) - start )) s"
exit $failed
