#!/usr/bin/env python3
"""Summary of one bench/floor/floor.sh run (its results folder): the raw XDP
generator + drop counter against the bench's calibrated maximum, and what the
bench offered and got back through each DUT at its top load. Writes
summary.json next to the raw files and prints a table."""
import glob
import json
import os
import re
import statistics
import sys


def raw_rates(path):
    """raw.py drop's per-second counts, frames/s, without the first and
    last second (the generator starts and stops inside them)."""
    rates = [float(l.split()[1]) for l in open(path, errors="replace") if l.startswith("rx_per_s")]
    return [r for r in rates[1:-1] if r > 0]


def raw_sent(path):
    """raw.py gen's sending rate, frames/s ("sent N in T s: R fps")."""
    for line in open(path, errors="replace"):
        m = re.match(r"sent \d+ in [\d.]+ s: (\d+) fps", line)
        if m:
            return float(m.group(1))
    return None


def bound_cycles(t, g):
    """The DUT's cycles per packet in the trial carrying the first goal's
    lower bound (as the comparison takes them)."""
    name = (g.get("goal") or {}).get("name")
    for x in t["trials"]:
        if not x.get("discarded") and name in x.get("bound_for", []):
            cpu = ((x["outcome"].get("dut_stats") or {}).get("cpu") or {})
            return cpu.get("soak_cycles_per_packet") or cpu.get("dut_cycles_per_packet")
    return None


def perf_counts(path):
    """perf stat's counts by event (tester CPU), if the file is there."""
    out = {}
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            if len(f) >= 2 and f[0].replace(",", "").isdigit():
                out[f[1]] = int(f[0].replace(",", ""))
    return out


def bench_runs(path):
    doc = json.load(open(path))
    mode = "defer" if "/bench-defer-" in path else "default"
    perf = perf_counts(path.replace("/bench-", "/perf-").replace(".json", ".txt"))
    comp = {}
    for row in doc.get("comparison", []):
        for d in row["duts"]:
            comp[(d["dut"], d.get("round", 1))] = d
    out = []
    for run in doc["runs"]:
        meta = run["meta"]
        gen_alone = None
        for n in meta.get("notes", []):
            m = re.search(r"generator alone ([\d.]+) M[fp]ps", n)
            if m:
                gen_alone = float(m.group(1)) * 1e6
        t = next(t for t in run["tests"] if t["test"] == "throughput")
        res = t["result"]
        g = res["goals"][0]
        trials = [x for x in t["trials"] if not x.get("discarded")]
        top = max(trials, key=lambda x: x["spec"]["rate_fps"])
        o = top["outcome"]
        secs = top["spec"]["duration"]
        name = meta["dut"].get("name") or meta["dut"]["kind"]
        c = comp.get((name, meta.get("round", 1)), {})
        out.append({
            "dut": name,
            "wakeups": mode,
            "tester_cpu_events": perf,
            "calibrated_max_fps": res["max_rate_fps"],
            "max_rate_source": meta.get("max_rate_source"),
            "generator_alone_fps": gen_alone,
            "fps": g.get("fps"),
            "lower_bound": g.get("lower_bound"),
            "tester_limited": g.get("tester_limited"),
            "top_offered_fps": top["spec"]["rate_fps"],
            "top_achieved_tx_fps": o.get("achieved_tx_rate_fps"),
            "top_received_fps": o["received"] / secs if secs else None,
            "top_tester_limit_reason": o.get("tester_limit_reason"),
            "cycles_per_packet": c.get("cycles_per_packet") or bound_cycles(t, g),
            # At the highest load offered, the same for every DUT of the
            # run (what "cyc xF" divides).
            "cycles_at_top": c.get("cycles_at_top"),
            "projection": res.get("projection"),
            "x_floor": c.get("x_floor"),
        })
    return out


def main():
    d = sys.argv[1]
    def per_round(pattern):
        # By round number: "raw-10" after "raw-9".
        files = sorted(glob.glob(os.path.join(d, pattern)),
                       key=lambda p: int(re.findall(r"(\d+)\.txt$", p)[0]) if re.findall(r"(\d+)\.txt$", p) else 0)
        return [statistics.median(r) for r in map(raw_rates, files) if r]
    raw = per_round("raw-*.txt")
    # The same generator and counter with the plainest floor between them
    # (floor.sh's raw_floor_round): the reference in the bench's own
    # placement, since its maximum is taken through the floor DUT.
    raw_floor = per_round("rawfloor-[0-9]*.txt")
    # ... and with the generator stamping and the counter reading each
    # frame (raw.py --touch): a tester's touch of the frame alone.
    raw_touch = per_round("rawfloortouch-[0-9]*.txt")
    # What each generator sends unpaced through the floor, loss allowed:
    # the raw one (raw.py gen) and the bench's ("generator alone" in its
    # calibration). Like for like, this is the tester's generating
    # capacity against the raw pair's, apart from the zero-loss criterion
    # and the host stalls that decide the calibrated maximum.
    raw_floor_sent = [x for x in map(raw_sent, sorted(glob.glob(os.path.join(d, "rawfloor-gen-*.txt")))) if x]
    runs = [r for p in sorted(glob.glob(os.path.join(d, "bench-*.json"))) for r in bench_runs(p)]
    raw_med = statistics.median(raw) if raw else None
    raw_floor_med = statistics.median(raw_floor) if raw_floor else None
    floor = [r for r in runs if r["dut"] == "floor" and r["wakeups"] == "default"]
    cal = statistics.median([r["calibrated_max_fps"] for r in runs]) if runs else None
    # In round order (each round calibrates anew), each text once.
    source = list(dict.fromkeys(r["max_rate_source"] for r in runs if r.get("max_rate_source")))
    ref = raw_floor_med if raw_floor_med and any("through the floor" in x for x in source) else raw_med
    # The target is per round: each round's calibrated maximum over the
    # reference measured in the same round, minutes apart at most (the
    # host moves both by tens of percent between rounds).
    def round_no(path):
        return int(re.search(r"bench-(\d+)\.json$", path).group(1))
    default_runs = [p for p in glob.glob(os.path.join(d, "bench-*.json"))
                    if re.search(r"bench-\d+\.json$", p)]
    round_cal = [statistics.median([r["calibrated_max_fps"] for r in bench_runs(p)] or [0])
                 for p in sorted(default_runs, key=round_no)]
    round_ref = raw_floor if ref is raw_floor_med else raw
    per_round_ratio = [c / r if c and r else None for c, r in zip(round_cal, round_ref)]
    summary = {
        "calibrated_over_raw_per_round": per_round_ratio,
        "raw_xdp_median_fps_per_round": raw,
        "raw_xdp_median_fps": raw_med,
        "raw_xdp_through_floor_median_fps_per_round": raw_floor,
        "raw_xdp_through_floor_median_fps": raw_floor_med,
        "raw_xdp_through_floor_touching_median_fps_per_round": raw_touch,
        "bench_calibrated_max_fps": cal,
        "bench_max_rate_source": source,
        "calibrated_over_raw": cal / ref if cal and ref else None,
        "calibrated_over_raw_reference": "through the floor" if ref is raw_floor_med else "loopback",
        "raw_generator_sent_through_floor_fps_per_round": raw_floor_sent,
        "generator_alone_over_raw_generator": (
            statistics.median([r["generator_alone_fps"] for r in runs if r["generator_alone_fps"]])
            / statistics.median(raw_floor_sent)
            if raw_floor_sent and any(r["generator_alone_fps"] for r in runs) else None),
        "floor_received_over_calibrated": statistics.median(
            [r["top_received_fps"] / r["calibrated_max_fps"] for r in floor]) if floor else None,
        "runs": runs,
    }
    json.dump(summary, open(os.path.join(d, "summary.json"), "w"), indent=2)
    m = lambda v: "-" if v is None else f"{v / 1e6:.3f}"
    print(f"results: {d}")
    print(f"raw XDP generator + drop counter, one CPU: {m(raw_med)} Mfps (median of rounds {[m(x) for x in raw]})")
    if raw_floor:
        print(f"  the same through the plainest floor on the DUT's CPU: {m(raw_floor_med)} Mfps "
              f"(median of rounds {[m(x) for x in raw_floor]})")
    if raw_touch:
        print(f"  ... with each frame stamped by the generator and read by the counter: "
              f"{m(statistics.median(raw_touch))} Mfps (median of rounds {[m(x) for x in raw_touch]})")
    print(f"bench calibrated maximum ({', '.join(source) or 'loopback'}): {m(cal)} Mfps = "
          f"{summary['calibrated_over_raw'] or 0:.2f}x raw {summary['calibrated_over_raw_reference']} "
          f"(target >= 0.8)")
    if per_round_ratio:
        met = sum(1 for x in per_round_ratio if x is not None and x >= 0.8)
        print(f"  per round: {', '.join('-' if x is None else f'{x:.2f}x' for x in per_round_ratio)} "
              f"(met in {met} of {len(per_round_ratio)})")
    if summary["generator_alone_over_raw_generator"] is not None:
        print(f"  generators unpaced through the floor (loss allowed): the bench's sends "
              f"{summary['generator_alone_over_raw_generator']:.2f}x the raw one's "
              f"({m(statistics.median(raw_floor_sent))} Mfps)")
    if summary["floor_received_over_calibrated"] is not None:
        print(f"through the floor at the top load: received {summary['floor_received_over_calibrated']:.2f}x "
              f"the calibrated maximum (target >= 0.9)")
    print(f"{'DUT (wake-ups)':<24}{'rate Mpps':>11}{'top offered':>13}{'top sent':>10}{'top recv':>10}{'cyc/pkt':>9}"
          f"{'cyc top':>9}{'projected':>11}{'rate xF':>9}{'cyc xF':>8}{'cap xF':>8}")
    for r in runs:
        x = r["x_floor"] or {}
        f = lambda v: "-" if v is None else f"{v:.2f}"
        p = r["projection"]
        print(f"{r['dut'] + ' (' + r['wakeups'] + ')':<24}{m(r['fps']) + ('+' if r['lower_bound'] else ''):>11}{m(r['top_offered_fps']):>13}"
              f"{m(r['top_achieved_tx_fps']):>10}{m(r['top_received_fps']):>10}"
              f"{'-' if r['cycles_per_packet'] is None else round(r['cycles_per_packet']):>9}"
              f"{'-' if r.get('cycles_at_top') is None else round(r['cycles_at_top']):>9}"
              f"{('~' + m(p['projected_fps'])) if p else '-':>11}{f(x.get('fps')):>9}"
              f"{f(x.get('cycles_per_packet')):>8}{f(x.get('capacity')):>8}")
    for r in runs:
        e = r["tester_cpu_events"]
        if e:
            print(f"tester CPU during {r['dut']} ({r['wakeups']}): "
                  + ", ".join(f"{k.split(':')[-1]} {v}" for k, v in e.items()))
    print("(+ = lower bound; ~ = PROJECTED from the DUT CPUs' busy share, not measured; xF = x the floor)")


if __name__ == "__main__":
    main()
