"""Run 92: nvidia-smi's samples (smi.csv: timestamp, power, clocks.sm, clocks_event_reasons.active)
and their medians over a wall-clock window, shared by power.py and energy.py."""
import datetime, statistics


def load(d):
    """[(unix seconds, W, MHz, reason bits)] from DIR/smi.csv; lines that do not parse are skipped."""
    smi = []
    for line in open(f"{d}/smi.csv"):
        f = [x.strip() for x in line.split(",")]
        try:
            ts = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc).timestamp()
            smi.append((ts, float(f[1]), float(f[2]), int(f[3], 16)))
        except (ValueError, IndexError):
            continue
    return smi


def window(smi, t0, t1):
    """(median W, median MHz, samples with the sw-power-cap reason 0x4, samples) in [t0, t1], or None."""
    rows = [r for r in smi if t0 <= r[0] <= t1]
    if not rows:
        return None
    return statistics.median(r[1] for r in rows), statistics.median(r[2] for r in rows), sum(1 for r in rows if r[3] & 4), len(rows)
