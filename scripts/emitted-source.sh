#!/usr/bin/env bash
# The emitted source of every level x K 1..32 x arch x dtype, comments stripped, as one
# `sha256  file` line per kernel: run it before and after a change that must not change a
# single generated kernel (a refactor, tuned defaults moved to data) and diff the two lists.
#
#   scripts/emitted-source.sh [MRA_BENCH] > before.txt    # at the old commit
#   scripts/emitted-source.sh [MRA_BENCH] > after.txt     # at the new one
#   diff before.txt after.txt && wc -l < after.txt        # identical, and how many kernels
#
# `--untuned` keeps a tuning database out of it; the shipped tuned defaults are part of the
# product and stay in. Comments are stripped so that a moved line (the `// [levels/x.rs:N]`
# provenance) or a reworded comment is no difference; a pair that cannot run is listed with
# its refusal line, so a level that gains or loses a K shows too.
set -euo pipefail
bench=${1:-target/release/mra-bench}
archs=$("$bench" --help | sed -n 's/.*\[possible values: \(sm_80.*\)\]/\1/p' | head -n 1 | tr -d ',')
ks=$(seq -s, 1 32)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for arch in $archs; do
    for dtype in f64 f32 f16 bf16; do
        dir="$work/$arch-$dtype"
        mkdir -p "$dir"
        # A refusal per skipped pair on stderr; a dtype the arch cannot run at all is one line.
        "$bench" --arch "$arch" --dtype "$dtype" -K "$ks" -l all --emit-src --untuned -o "$dir/" 2>"$dir.err" >/dev/null || true
        # One line per skipped pair (`skipped L at K=1,2 on ...` lists several K).
        perl -ne 'print map { "skipped  $1_k${_}_'"${arch}_${dtype}"'\n" } split /,/, $2 if /^mra-bench: skipped (\S+) at K=([\d,]+) on /' "$dir.err"
        for f in "$dir"/*; do
            [ -e "$f" ] || continue
            # Strip // and /* */ comments, then blank lines.
            sum=$(perl -0777 -pe 's{/\*.*?\*/}{}gs; s{//[^\n]*}{}g; s{[ \t]+\n}{\n}g; s{\n+}{\n}g' "$f" | sha256sum | cut -c1-16)
            echo "$sum  $(basename "$f")"
        done
    done
done | sort -k2
