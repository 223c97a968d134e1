#!/usr/bin/env python3
"""Per round of a `softrouter bench --dut floor,softrouter,linux --soak
--repeat N --json F` run, issue 21's figures for the tier against the
floor and the kernel: the floor's and the tier's DUT cycles a packet at
the top load, the tier's x the floor (cycles, projected capacity), the
kernel's NDR and cycles a packet at it, and tier : linux, floor : linux.

usage: bench/floor/rounds.py F.json [F.json ...]
"""
import json
import sys


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


def main():
    print("| run | round | floor cycles at top | tier cycles at top / x floor / capacity x floor"
          " | linux NDR / cycles at its NDR | tier : linux | floor : linux |")
    print("|---|---|---|---|---|---|---|")
    for path in sys.argv[1:]:
        for size, r, d in rounds(path):
            f, t, k = d.get("floor"), d.get("softrouter"), d.get("linux")
            if not (f and t and k):
                continue
            kc = k["cycles_per_packet"]
            print(f"| {path.rsplit('/', 1)[-1]} {size} B | {r} | {f['cycles_at_top']:.0f} | "
                  f"{t['cycles_at_top']:.0f} / {t['x_floor']['cycles_per_packet']:.2f}x / "
                  f"{t['x_floor']['capacity']:.2f}x | {ndr(k) / 1e6:.3f} / {kc:,.0f} | "
                  f"1/{kc / t['cycles_at_top']:.2f} | 1/{kc / f['cycles_at_top']:.2f} |")


if __name__ == "__main__":
    main()
