#!/usr/bin/env python3
"""Per round of a `softrouter bench --dut floor,softrouter,linux --soak
--repeat N --json F` run, issue 21's figures for the tier against the
floor and the kernel: the floor's and the tier's DUT cycles a packet at
the top load, the tier's x the floor (cycles, projected capacity), the
kernel's NDR and cycles a packet at it, and tier : linux, floor : linux;
then which of the tier's three targets each round meets and how many
rounds meet each, over all the files given, and the median (min-max) of
each ratio over those rounds: one round is one phase of the host, the
median over many is the figure that repeats.

usage: bench/floor/rounds.py F.json [F.json ...]
"""
import json
import statistics
import sys

# Issue 21's targets for the tier, per round.
MAX_X_FLOOR_CYCLES = 1.25
MIN_X_FLOOR_CAPACITY = 0.8
MIN_LINUX_OVER_TIER = 5.0


def rounds(path):
    doc = json.load(open(path))
    for comp in doc["comparison"]:
        by = {}
        for d in comp["duts"]:
            by.setdefault(d.get("round", 1), {})[d["dut"]] = d
        for r, duts in sorted(by.items()):
            yield comp["size"], r, duts


def ndr(d):
    return next(g["fps"] for g in d["goals"] if g["goal"] == "ndr")


def met(x_cycles, x_capacity, linux_over_tier):
    """The three targets, in the table's order."""
    return (
        x_cycles <= MAX_X_FLOOR_CYCLES,
        x_capacity >= MIN_X_FLOOR_CAPACITY,
        linux_over_tier >= MIN_LINUX_OVER_TIER,
    )


def spread(name, values, fmt):
    """`name: median (min-max)` of `values`, each shown with `fmt`."""
    return (f"{name} {fmt(statistics.median(values))} "
            f"({fmt(min(values))}-{fmt(max(values))})")


def main():
    print("| run | round | floor cycles at top | tier cycles at top / x floor / capacity x floor"
          " | linux NDR / cycles at its NDR | tier : linux | floor : linux | targets met |")
    print("|---|---|---|---|---|---|---|---|")
    counts = [0, 0, 0]
    all_three = total = 0
    ratios = {"x_cycles": [], "x_capacity": [], "tier": [], "floor": []}
    for path in sys.argv[1:]:
        for size, r, d in rounds(path):
            f, t, k = d.get("floor"), d.get("softrouter"), d.get("linux")
            if not (f and t and k):
                continue
            kc = k["cycles_per_packet"]
            xc, xk = t["x_floor"]["cycles_per_packet"], t["x_floor"]["capacity"]
            ok = met(xc, xk, kc / t["cycles_at_top"])
            for key, v in (("x_cycles", xc), ("x_capacity", xk),
                           ("tier", kc / t["cycles_at_top"]), ("floor", kc / f["cycles_at_top"])):
                ratios[key].append(v)
            total += 1
            all_three += all(ok)
            counts = [c + m for c, m in zip(counts, ok)]
            marks = " ".join("yes" if m else "no" for m in ok)
            print(f"| {'/'.join(path.split('/')[-2:])} {size} B | {r} | {f['cycles_at_top']:.0f} | "
                  f"{t['cycles_at_top']:.0f} / {xc:.2f}x / {xk:.2f}x | "
                  f"{ndr(k) / 1e6:.3f} / {kc:,.0f} | "
                  f"1/{kc / t['cycles_at_top']:.2f} | 1/{kc / f['cycles_at_top']:.2f} | {marks} |")
    print()
    print(f"{total} rounds: tier <= {MAX_X_FLOOR_CYCLES}x the floor's cycles in {counts[0]}, "
          f">= {MIN_X_FLOOR_CAPACITY}x its capacity in {counts[1]}, <= 1/{MIN_LINUX_OVER_TIER:g} "
          f"of the kernel's cycles in {counts[2]}, all three in {all_three}")
    if total:
        x = lambda v: f"{v:.2f}x"
        inv = lambda v: f"1/{v:.2f}"
        print("medians over those rounds (min-max): "
              + "; ".join([spread("tier x floor cycles", ratios["x_cycles"], x),
                           spread("capacity x floor", ratios["x_capacity"], x),
                           spread("tier : linux", ratios["tier"], inv),
                           spread("floor : linux", ratios["floor"], inv)]))


if __name__ == "__main__":
    main()
