#!/usr/bin/env python3
"""Run 92: joins floor.txt's timed windows (wall t0-t1) with nvidia-smi's samples (smi.csv:
timestamp, power.draw, clocks.sm, clocks_event_reasons.active) -> median W, MHz and how many
samples had the sw-power-cap reason (0x4), per line. Usage: power.py DIR"""
import os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smi as smi_csv

d = sys.argv[1]
smi = smi_csv.load(d)
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
    got = smi_csv.window(smi, t0, t1)
    if got is None:
        continue
    w, mhz, cap, n = got
    print(f"{m.group(1):5} K={m.group(2):>2} {variant:7} {float(m.group(3)):9.2f} us  {w:5.0f} W  {mhz:5.0f} MHz  power-capped {cap}/{n}")
