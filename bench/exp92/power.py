#!/usr/bin/env python3
"""Run 92: joins floor.txt's timed windows (wall t0-t1) with nvidia-smi's samples (smi.csv:
timestamp, power.draw, clocks.sm, clocks_event_reasons.active) -> median W, MHz and how many
samples had the sw-power-cap reason (0x4), per line. Usage: power.py DIR"""
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
variant = ""
for line in open(f"{d}/floor.txt"):
    if line.startswith("#"):
        m = re.search(r"threads=(\d+)(?: chains=(\d+))?(?: (dfma))?", line)
        variant = f"t{m.group(1)}" + (f"c{m.group(2)}" if m.group(2) else "") + (" dfma" if m.group(3) else "")
        continue
    m = re.search(r"^(\w+)\s+K=\s*(\d+)\s+([\d.]+) us/task.*wall ([\d.]+)-([\d.]+)", line)
    if not m:
        continue
    t0, t1 = float(m.group(4)), float(m.group(5))
    rows = [r for r in smi if t0 <= r[0] <= t1]
    if not rows:
        continue
    w = statistics.median(r[1] for r in rows)
    mhz = statistics.median(r[2] for r in rows)
    cap = sum(1 for r in rows if r[3] & 4)
    print(f"{m.group(1):5} K={m.group(2):>2} {variant:7} {float(m.group(3)):9.2f} us  {w:5.0f} W  {mhz:5.0f} MHz  power-capped {cap}/{len(rows)}")
