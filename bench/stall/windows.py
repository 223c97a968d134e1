#!/usr/bin/env python3
"""For each "the DUT's longest receive gap" line of a bench debug log, the
tasks an ftrace sched_switch trace (trace_clock mono) shows running on
each CPU during that gap, longest first."""
import re
import sys
from collections import defaultdict

log, trace = sys.argv[1], sys.argv[2]
gaps = []
for line in open(log):
    m = re.search(r"longest_us=(\d+) began_mono_ns=(\d+)", line)
    if m:
        us, ns = int(m.group(1)), int(m.group(2))
        gaps.append((ns / 1e9, ns / 1e9 + us / 1e6, us))
sw = re.compile(r"\[(\d+)\].*?\s(\d+\.\d+): sched_switch: .*==> next_comm=(.*) next_pid=(\d+) next_prio=(\d+)")
runs = []  # (start, end, cpu, task)
current = {}
for line in open(trace):
    m = sw.search(line)
    if not m:
        continue
    cpu, t, comm, pid, prio = int(m.group(1)), float(m.group(2)), m.group(3), m.group(4), m.group(5)
    if cpu in current:
        s, task = current[cpu]
        runs.append((s, t, cpu, task))
    current[cpu] = (t, f"{comm}/{pid} prio {prio}")
for a, b, us in gaps:
    per = defaultdict(float)
    for s, e, cpu, task in runs:
        o = min(b, e) - max(a, s)
        if o > 0:
            per[(cpu, task)] += o
    top = sorted(per.items(), key=lambda kv: -kv[1])[:6]
    print(f"gap {us} us at {a:.6f}: " + "; ".join(f"cpu{c} {t} {o*1e6:.0f} us" for (c, t), o in top))
