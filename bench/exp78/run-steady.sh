#!/usr/bin/env bash
# Run 78, eighth call: how long until the clock settles under fused-cluster K = 32 (and the chain,
# and the copy): each kernel alone in its process from a rested GPU (3 s idle before), one
# untimed repetition, then 150 timed repetitions of 100 tasks (~6 s), nvidia-smi every 20 ms.
set -uo pipefail
cd "$(dirname "$0")"
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,serial,power.limit,driver_version --format=csv | tee $O/gpu.txt
nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -lgomp -lcuda -o /tmp/run78 main.cu > $O/build.txt 2>&1 || { cat $O/build.txt; exit 1; }
ptxas -arch=sm_90a chain_k32.ptx -o /tmp/chain.cubin
export CHAIN_CUBIN=/tmp/chain.cubin NOVAL=1 WARM_MS=0 REPS=150
for k in fused-cluster chain copy; do
  sleep 3
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active --format=csv,noheader -lms 20 > $O/smi-$k.txt &
  P=$!
  ONLY=$k /tmp/run78 1 > $O/reps-$k.txt 2>&1
  kill $P; wait $P 2>/dev/null
done
python3 - "$O" <<'PY'
import sys, re
o = sys.argv[1]
for k in ("fused-cluster", "chain", "copy"):
    for line in open(f"{o}/reps-{k}.txt"):
        m = re.match(r"\s+0 (\S+)\s+[\d.]+\s+\(([^)]*)\)", line)
        if m and m.group(1) == k:
            v = [float(x) for x in m.group(2).split()]
            seg = lambda a, b: sorted(v[a:b])[len(v[a:b]) // 2]
            print(f"{k:14s} reps {len(v)}: median of reps 1-5 {seg(0,5):.1f}, 6-25 {seg(5,25):.1f}, 26-50 {seg(25,50):.1f}, 51-100 {seg(50,100):.1f}, 101-150 {seg(100,150):.1f} us/task")
    c = []
    for line in open(f"{o}/smi-{k}.txt"):
        f = [x.strip() for x in line.split(",")]
        try: c.append((float(f[1].split()[0]), float(f[2].split()[0])))
        except Exception: pass
    busy = [x for x in c if x[1] > 300]
    n = len(busy)
    if n:
        parts = [busy[i * n // 5:(i + 1) * n // 5] for i in range(5)]
        print("   SM MHz by fifth of the busy time:", [sorted(p)[len(p) // 2][0] if p else None for p in parts], " W:", [sorted(x[1] for x in p)[len(p) // 2] if p else None for p in parts])
PY
