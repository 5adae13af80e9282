#!/usr/bin/env python3
"""Run 92, call 8: energy per task from energy.sh's logs. For each mra-bench run (windows.txt) the
samples in the last 60% of its window (the timed repetitions follow a 3 s warm-up) give the median
power; µs per task is the median of the seed's Time(us) lines / the tasks per repetition. For floor.cu's lines the
timed window is printed. Energy per task = power x time. Usage: energy.py DIR"""
import datetime, re, statistics, sys

d = sys.argv[1]
smi = []
for line in open(f"{d}/smi.csv"):
    f = [x.strip() for x in line.split(",")]
    try:
        ts = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc).timestamp()
        smi.append((ts, float(f[1]), float(f[2]), int(f[3], 16)))
    except (ValueError, IndexError):
        continue

def window(t0, t1):
    rows = [r for r in smi if t0 <= r[0] <= t1]
    return statistics.median(r[1] for r in rows), statistics.median(r[2] for r in rows), sum(1 for r in rows if r[3] & 4), len(rows)

for line in open(f"{d}/windows.txt"):
    name, t0, t1, tasks = line.split()
    t0, t1 = float(t0), float(t1)
    times = [float(m.group(1)) / int(tasks) for m in re.finditer(r"Time\(us\)=([\d.]+)", open(f"{d}/{name}.out").read())]
    if not times:
        print(f"{name}: no timings"); continue
    us = statistics.median(times)
    w, mhz, cap, n = window(t0 + 0.4 * (t1 - t0), t1)
    print(f"{name:10} {us:9.2f} us  {w:5.0f} W  {mhz:5.0f} MHz  capped {cap}/{n}  {w * us / 1000:8.2f} mJ/task")
for line in open(f"{d}/floor.txt"):
    m = re.search(r"^(\w+)\s+K=\s*(\d+)\s+([\d.]+) us/task.*wall ([\d.]+)-([\d.]+)", line)
    if not m:
        continue
    us = float(m.group(3))
    w, mhz, cap, n = window(float(m.group(4)), float(m.group(5)))
    print(f"floor-{m.group(1):5} K={m.group(2):>2} {us:9.2f} us  {w:5.0f} W  {mhz:5.0f} MHz  capped {cap}/{n}  {w * us / 1000:8.2f} mJ/task")
