#!/usr/bin/env bash
# Run 78, seventh call: the SM clock and power (nvidia-smi every 20 ms) through an interleaved
# process (copy, fused-cluster, chain) and a reversed one (copy, chain, fused-cluster), to see
# whether the chain's climb after fused-cluster is the clock.
set -uo pipefail
cd "$(dirname "$0")"
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv | tee $O/gpu.txt
nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -lgomp -lcuda -o /tmp/run78 main.cu > $O/build.txt 2>&1 || { cat $O/build.txt; exit 1; }
ptxas -arch=sm_90a chain_k32.ptx -o /tmp/chain.cubin
export CHAIN_CUBIN=/tmp/chain.cubin NOVAL=1
for mode in forward reverse; do
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active --format=csv,noheader -lms 20 > $O/smi-$mode.txt &
  P=$!
  if [ $mode = reverse ]; then REVERSE=1 /tmp/run78 2 > /tmp/t.txt 2> $O/spans-$mode.txt; else /tmp/run78 2 > /tmp/t.txt 2> $O/spans-$mode.txt; fi
  kill $P; wait $P 2>/dev/null
  echo "== $mode"; grep -E "^ +[0-9]" /tmp/t.txt | tee -a $O/clock.txt
done
python3 - "$O" <<'PY'
import sys, datetime
o = sys.argv[1]
for mode in ("forward", "reverse"):
    smi = []
    for line in open(f"{o}/smi-{mode}.txt"):
        f = [x.strip() for x in line.split(",")]
        try:
            t = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc).timestamp()
            smi.append((t, float(f[1].split()[0]), float(f[2].split()[0])))
        except Exception:
            pass
    print(f"== {mode}: per kernel span, SM MHz and W (first third / last third of the span)")
    for line in open(f"{o}/spans-{mode}.txt"):
        if not line.startswith("span"): continue
        _, name, t0, t1 = line.split(); t0, t1 = float(t0), float(t1)
        s = [x for x in smi if t0 <= x[0] <= t1]
        if not s: print(name, "no samples"); continue
        n = len(s); a, b = s[: max(1, n // 3)], s[-max(1, n // 3):]
        med = lambda v: sorted(v)[len(v) // 2]
        print(f"{name:14s} {n:3d} samples  MHz {med([x[1] for x in a]):6.0f} -> {med([x[1] for x in b]):6.0f}   W {med([x[2] for x in a]):5.0f} -> {med([x[2] for x in b]):5.0f}")
PY
