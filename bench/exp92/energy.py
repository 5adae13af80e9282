#!/usr/bin/env python3
"""Run 92, call 8: energy per task from energy.sh's logs. For each mra-bench run (windows.txt) the
samples in the last 60% of its window (the timed repetitions follow a 3 s warm-up) give the median
power; µs per task is the median of the seed's Time(us) lines / the tasks per repetition. For floor.cu's lines the
timed window is printed. Energy per task = power x time. Usage: energy.py DIR"""
import os, re, statistics, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smi as smi_csv

d = sys.argv[1]
smi = smi_csv.load(d)


def window(t0, t1):
    return smi_csv.window(smi, t0, t1)


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
