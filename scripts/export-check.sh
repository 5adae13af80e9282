#!/usr/bin/env bash
# The GPU check of `mra-bench export` and `mra-bench transform`, for a machine with an NVIDIA GPU
# and nvcc. Run from the repository root:
#
#   bash scripts/export-check.sh path/to/mra-bench            # logs and results under $OUT
#
# 1. exports K = 5, 8, 9, 10, 11, 13, 16, 20, 28, 32 for the GPU's arch (default launchers on sm_90: fused-pipe, with the
#    split strides at 9 and 11, the transposed passes (swap_operands) at 10, fused-cluster at 28, fused-split at 32, with L7-breg's block-level function beside the
#    last two);
# 2. compiles examples/export_demo.cu with nvcc against the export and runs it: mra_transform(K)
#    and a kernel of its own calling the block-level device function, each checked against a
#    CPU reference in the program (exit status 0 only if all pass);
# 2b. exports K = 6, 8, 10, 12, 16, 20, 24, 32 and times examples/export_timing.cu: each K's
#    mra_transform once over 2 GiB per repetition against a device-to-device copy of the same
#    bytes (the API regime as a code sees it; the lines go into the summary);
# 3. mra-bench transform on .npy files of N = 2048 (K = 5, 8, 11, 13, 16, 28, 32; f64, f32, a named level,
#    the (N, K^3) shape), each compared with `mra-bench transform --reference` on the same files.
# Exit status 0 only if every step passed; the summary is $OUT/export-check.txt.
set -uo pipefail

if [ $# -ne 1 ]; then
    echo "usage: bash scripts/export-check.sh path/to/mra-bench   (from the repository root)" >&2
    exit 2
fi
BIN=$(realpath "$1")
[ -x "$BIN" ] || { echo "export-check: $1 is not an executable mra-bench" >&2; exit 2; }
[ -f examples/export_demo.cu ] || { echo "export-check: run from the repository root (examples/export_demo.cu not found)" >&2; exit 2; }
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
SUMMARY="$OUT/export-check.txt"
: >"$SUMMARY"
failures=0

say() { echo "$*" | tee -a "$SUMMARY"; }
# step NAME CMD...: runs CMD with its output in $OUT/NAME.log; records PASS/FAIL.
step() {
    local name=$1
    shift
    if "$@" >"$OUT/$name.log" 2>&1; then
        say "PASS $name"
    else
        say "FAIL $name (exit $?; see $name.log)"
        tail -n 20 "$OUT/$name.log" | sed 's/^/    /' | tee -a "$SUMMARY"
        failures=$((failures + 1))
    fi
}

NVCC=$(command -v nvcc || true)
for c in /usr/local/cuda/bin/nvcc /opt/cuda/bin/nvcc; do
    [ -z "$NVCC" ] && [ -x "$c" ] && NVCC=$c
done
[ -n "$NVCC" ] || { echo "export-check: nvcc not found (PATH, /usr/local/cuda/bin)" >&2; exit 2; }
CAP=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
ARCH=sm_${CAP:-90}

# The commit is the binary's (its --version, below), not the tree's: a copied tree's .git may be stale.
say "# export-check: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
say "# GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1), arch $ARCH"
say "# nvcc: $("$NVCC" --version | tail -n 1)"
say "# mra-bench: $BIN ($("$BIN" --version))"

# 1. The export (a fresh directory: export refuses a non-empty one).
EXPORT="$OUT/mra_export"
rm -rf "$EXPORT"
step export "$BIN" export --arch "$ARCH" -K 5,8,9,10,11,13,16,20,28,32 -o "$EXPORT"

# 2. The C++ program against it.
step nvcc_build "$NVCC" -arch="$ARCH" -O3 -std=c++17 -I"$EXPORT" examples/export_demo.cu "$EXPORT"/*.cu -o "$OUT/export_demo"
# A user's build of the export warns about nothing (the generated constants no kernel reads are
# [[maybe_unused]]; before f416ca2 nvcc printed 30 #177-D warnings here).
if grep -q "warning" "$OUT/nvcc_build.log"; then
    say "FAIL nvcc_build_warnings: $(grep -c "warning" "$OUT/nvcc_build.log") warning lines"
    grep "warning" "$OUT/nvcc_build.log" | head -n 5 | sed 's/^/    /' | tee -a "$SUMMARY"
    failures=$((failures + 1))
else
    say "PASS nvcc_build_warnings"
fi
if [ -x "$OUT/export_demo" ]; then
    step export_demo "$OUT/export_demo" 1031
    grep -E '^(K=|errors:|#)' "$OUT/export_demo.log" | sed 's/^/    /' | tee -a "$SUMMARY" >/dev/null
fi

# 2b. The API regime as a code sees it: each K's mra_transform once over 2 GiB per repetition, against
# a device-to-device copy of the same bytes (examples/export_timing.cu).
TIMED="$OUT/mra_export_timing"
rm -rf "$TIMED"
step export_timing_export "$BIN" export --arch "$ARCH" -K 6,8,10,12,16,20,24,32 -o "$TIMED"
step export_timing_build "$NVCC" -arch="$ARCH" -O3 -std=c++17 -I"$TIMED" examples/export_timing.cu "$TIMED"/*.cu -o "$OUT/export_timing"
if [ -x "$OUT/export_timing" ]; then
    step export_timing "$OUT/export_timing" 2
    grep -E '^(K=|#)' "$OUT/export_timing.log" | sed 's/^/    /' | tee -a "$SUMMARY"
fi

# 3. mra-bench transform on .npy files, N = 2048, against --reference on the same files.
NPY="$OUT/npy"
mkdir -p "$NPY"
transform_case() {  # name K dtype shape-kind [level]
    local name=$1 k=$2 dtype=$3 kind=$4 level=${5:-}
    local shape="2048,$k,$k,$k"
    [ "$kind" = flat ] && shape="2048,$((k * k * k))"
    local a="$NPY/$name.A.npy" b="$NPY/$name.B.npy"
    "$BIN" npy-random --shape "$shape" --dtype "$dtype" -o "$a" &&
        "$BIN" npy-random --shape "$k,$k" --dtype "$dtype" -o "$b" &&
        "$BIN" transform --input "$a" --matrix "$b" --output "$NPY/$name.C.npy" --dtype "$dtype" ${level:+-l "$level"} &&
        "$BIN" transform --input "$a" --matrix "$b" --output "$NPY/$name.ref.npy" --dtype "$dtype" --reference &&
        "$BIN" npy-compare "$NPY/$name.C.npy" "$NPY/$name.ref.npy" --dtype "$dtype"
}
step npy_k5_f64 transform_case k5_f64 5 f64 cube
step npy_k8_f64 transform_case k8_f64 8 f64 cube
step npy_k11_f64 transform_case k11_f64 11 f64 cube
step npy_k13_f64_flat transform_case k13_f64_flat 13 f64 flat
step npy_k16_f64 transform_case k16_f64 16 f64 cube
step npy_k16_f64_L3 transform_case k16_f64_L3 16 f64 cube L3
step npy_k13_f32 transform_case k13_f32 13 f32 cube
# The default level at K = 28 and 32 on sm_90 spreads a tensor over several blocks (fused-cluster,
# fused-split): the runtime's launch of those, from files.
step npy_k28_f64 transform_case k28_f64 28 f64 cube
step npy_k32_f64 transform_case k32_f64 32 f64 cube
for f in "$OUT"/npy_*.log; do grep -h 'PASS\|FAIL\|error' "$f" | sed 's/^/    /' | tee -a "$SUMMARY" >/dev/null; done
rm -f "$NPY"/*.npy  # large; the logs hold the comparisons

say "# export-check: $failures failure(s)"
[ "$failures" -eq 0 ]
