#!/usr/bin/env python3
"""Issue 21's figure targets, round by round, over every file given.

- A `softrouter bench --dut floor,softrouter,linux --soak --repeat N
  --json F` file: per round, the floor's and the tier's DUT cycles a
  packet at the top load, the tier's x the floor (cycles, projected
  capacity), the kernel's NDR and cycles a packet at it, tier : linux and
  floor : linux, and which of the tier's three targets the round meets.
- A `floor.sh` run's `summary.json`: per round, the tester's calibrated
  maximum through the floor over the raw pair through the plainest floor,
  and per run, what came back at the top load over that maximum.

Then, over all the files, how many rounds meet each target and the median
(min-max) of each ratio: one round is one phase of the host, the median
over many is the figure that repeats.

usage: bench/floor/rounds.py F.json [F.json ...] [results/*/summary.json]
"""
import json
import statistics
import sys

# Issue 21's targets for the tier, per round.
MAX_X_FLOOR_CYCLES = 1.25
MIN_X_FLOOR_CAPACITY = 0.8
MIN_LINUX_OVER_TIER = 5.0
# ... and for the tester.
MIN_CALIBRATED_OVER_RAW = 0.8
MIN_RECEIVED_OVER_CALIBRATED = 0.9


def rounds(doc):
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


def tester(summaries):
    """The tester's two targets over `floor.sh` summaries: [(path, doc)]."""
    cal = [x for _, d in summaries for x in d.get("calibrated_over_raw_per_round") or [] if x]
    back = [d["floor_received_over_calibrated"] for _, d in summaries
            if d.get("floor_received_over_calibrated") is not None]
    print("| floor.sh run | calibrated maximum over the raw pair through the floor, per round |")
    print("|---|---|")
    for path, d in summaries:
        per = d.get("calibrated_over_raw_per_round") or []
        if per:
            print(f"| {path.split('/')[-2]} | {', '.join(f'{x:.2f}' for x in per if x)} |")
    print()
    if cal:
        q = statistics.quantiles(cal, n=4)
        print(f"{len(cal)} tester rounds: calibrated maximum >= {MIN_CALIBRATED_OVER_RAW}x the raw pair "
              f"in {sum(x >= MIN_CALIBRATED_OVER_RAW for x in cal)}; "
              + spread("median", cal, lambda v: f"{v:.2f}x") + f", quartiles {q[0]:.2f} and {q[2]:.2f}")
    if back:
        print(f"{len(back)} runs: received at the top load >= {MIN_RECEIVED_OVER_CALIBRATED}x the "
              f"calibrated maximum in {sum(x >= MIN_RECEIVED_OVER_CALIBRATED for x in back)}; "
              + spread("median", back, lambda v: f"{v:.2f}x"))
    print()


def main():
    docs = [(path, json.load(open(path))) for path in sys.argv[1:]]
    summaries = [(p, d) for p, d in docs if "calibrated_over_raw_per_round" in d]
    if summaries:
        tester(summaries)
    print("| run | round | floor cycles at top | tier cycles at top / x floor / capacity x floor"
          " | linux NDR / cycles at its NDR | tier : linux | floor : linux | targets met |")
    print("|---|---|---|---|---|---|---|---|")
    counts = [0, 0, 0]
    all_three = total = 0
    ratios = {"x_cycles": [], "x_capacity": [], "tier": [], "floor": []}
    for path, doc in docs:
        if "comparison" not in doc:
            continue
        for size, r, d in rounds(doc):
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
