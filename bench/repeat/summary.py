"""Run-to-run spread of `softrouter bench` results (schema 3).

Usage: summary.py OUT.json RUN1.json RUN2.json ...

Per DUT, size and goal: each run's conditional throughput and the largest
deviation from the median of the runs; per size and goal, the ratio of
each DUT to the baseline run in every run and its largest deviation from
the median ratio; per DUT and size, its cost at its NDR in each search
(cycles a packet, and the NDR times them). Issue 18's targets: rates within 10 % of the median,
ratios within 15 % (three separate runs); medians of two `--repeat 3`
runs within 5 % of each other.
"""
import json
import re
import statistics
import sys

if len(sys.argv) < 3 or not sys.argv[1].endswith("summary.json"):
    # The first argument is written: a results file there would be lost.
    sys.exit("usage: summary.py OUT-summary.json RUN1.json [RUN2.json ...]")
out, files = sys.argv[1], sys.argv[2:]
rates, ratios, medians, hosts, maxima, costs = {}, {}, {}, [], [], {}


def cost_at(trials, ndr):
    """A DUT's cost at its NDR in one search: the median DUT cycles a
    packet over the trials offered 0.9-1.1x the NDR, and the NDR times
    that (cycles a second the DUT spent on forwarding there, GHz). When
    the rate moves between runs and the cycles move with it while the
    product holds, the DUT's own cost a packet moved (a CPU-bound DUT's
    rate is its CPU's cycles over its cycles a packet), not the search."""
    cyc = [tr["outcome"]["dut_stats"]["cpu"]["dut_cycles_per_packet"] for tr in trials
           if ((tr["outcome"].get("dut_stats") or {}).get("cpu") or {}).get("dut_cycles_per_packet")
           and 0.9 * ndr <= tr["outcome"]["offered_rate_fps"] <= 1.1 * ndr]
    if not cyc:
        return None
    c = statistics.median(cyc)
    return {"cycles_per_packet": c, "ghz": ndr * c / 1e9, "trials": len(cyc)}
# "64 B 2.09 Mfps through the floor DUT (loopback 3.80)" in meta.max_rate_source.
MAX_RE = re.compile(r"(\S+)(?: B)? ([0-9.]+) Mfps(?: a port of \d+)? (through the floor DUT|in loopback)")
for f in files:
    doc = json.load(open(f))
    # The tester's calibrated maxima of the run, one per round (each
    # round calibrates afresh): a tester-limited DUT's figure is this,
    # so its spread over the runs is the tester's.
    seen = set()
    for run in doc["runs"]:
        rnd = run["meta"].get("round", 1)
        if rnd in seen:
            continue
        seen.add(rnd)
        src = run["meta"].get("max_rate_source") or ""
        maxima.append({"file": f, "round": rnd, "max_fps": {m.group(1): float(m.group(2)) * 1e6
                                                            for m in MAX_RE.finditer(src)}})
    # How fast the host was before each DUT's run (absent in older files),
    # beside the DUT's cost: what moves between runs that no search removes.
    for run in doc["runs"]:
        hp = run["meta"].get("host_probe")
        trials = [tr for t in run["tests"] for tr in t.get("trials", [])]
        rts = [tr["outcome"].get("noise", {}).get("cpu_round_trip_ns") for tr in trials]
        rts = [x for x in rts if x]
        waited = sum(tr["outcome"].get("noise", {}).get("placement_wait_ms") or 0 for tr in trials)
        moved = sum("CPUs apart" in (tr["outcome"].get("measurement_fault") or "") for tr in trials)
        hosts.append({"file": f, "dut": run["meta"]["dut"].get("name") or run["meta"]["dut"]["kind"],
                      "round": run["meta"].get("round", 1), "host_probe": hp,
                      "round_trip_ns": [min(rts), statistics.median(rts), max(rts)] if rts else None,
                      "placement_wait_s": waited / 1e3, "moved_apart_trials": moved})
    # `--repeat N` files: the medians of their rounds (`repeats[]`).
    for row in doc.get("repeats") or []:
        for d in row["duts"]:
            for g in d["goals"]:
                key = (d["dut"], f'{row["size"]} v{row["ip"]}', g["goal"])
                medians.setdefault(key, []).append(g.get("median_fps"))
                rkey = (f'{d["dut"]}/{row["baseline"]}', f'{row["size"]} v{row["ip"]}', g["goal"])
                if d["dut"] != row["baseline"]:
                    medians.setdefault(rkey, []).append(g.get("ratio"))
    for run in doc["runs"]:
        dut = run["meta"]["dut"].get("name") or run["meta"]["dut"]["kind"]
        for t in run["tests"]:
            if t["test"] != "throughput":
                continue
            for g in t["result"]["goals"]:
                key = (dut, f'{t["size"]} v{t["ip"]}', g["goal"]["name"])
                rates.setdefault(key, []).append((g.get("fps"), g.get("lower_bound", False)))
                if g["goal"]["name"] == "ndr" and g.get("fps") and not g.get("tester_limited"):
                    costs.setdefault(key[:2], []).append(cost_at(t["trials"], g["fps"]))
    for row in doc.get("comparison", []):
        for d in row["duts"]:
            if d["dut"] == row["baseline"]:
                continue
            for g in d["goals"]:
                key = (f'{d["dut"]}/{row["baseline"]}', f'{row["size"]} v{row["ip"]}', g["goal"])
                ratios.setdefault(key, []).append(g.get("ratio"))


def spread(values):
    v = [x for x in values if x]
    if not v:
        return None, None
    med = statistics.median(v)
    return med, max(abs(x - med) / med * 100 for x in v)


summary = {"files": files, "rates": [], "ratios": []}
for (dut, size, goal), v in sorted(rates.items()):
    med, dev = spread([f for f, _ in v])
    lb = " (some lower bounds)" if any(l for _, l in v) else ""
    shown = "  ".join("-" if not f else f"{f / 1e6:.4f}" for f, _ in v)
    if med:
        print(f"{dut:18s} {size:10s} {goal:8s} {shown}  Mpps  median {med / 1e6:.4f}  max dev {dev:.1f} %{lb}")
    else:
        print(f"{dut:18s} {size:10s} {goal:8s} no rate")
    summary["rates"].append({"dut": dut, "size": size, "goal": goal, "fps": [f for f, _ in v],
                             "lower_bound": [l for _, l in v], "median": med, "max_dev_pct": dev})
for (pair, size, goal), v in sorted(ratios.items()):
    med, dev = spread(v)
    shown = "  ".join("-" if not x else f"{x:.2f}" for x in v)
    if med:
        print(f"{pair:18s} {size:10s} {goal:8s} {shown}  median {med:.2f}  max dev {dev:.1f} %")
    summary["ratios"].append({"pair": pair, "size": size, "goal": goal, "ratio": v,
                              "median": med, "max_dev_pct": dev})
if costs:
    print("each DUT's cost at its NDR (not tester-limited), per search: median DUT cycles a packet at "
          "0.9-1.1x the NDR, and NDR x cycles, GHz (what it spent a second there); the cycles' "
          "largest deviation from their median beside the rate's:")
    summary["cost_at_ndr"] = []
    for (dut, size), v in sorted(costs.items()):
        present = [c for c in v if c]
        if not present:
            continue
        _, cdev = spread([c["cycles_per_packet"] for c in present])
        _, gdev = spread([c["ghz"] for c in present])
        shown = "  ".join("-" if not c else f'{c["cycles_per_packet"]:.0f}/{c["ghz"]:.2f}' for c in v)
        print(f"{dut:18s} {size:10s} {'ndr':8s} {shown}  cycles max dev {cdev:.1f} %  GHz max dev {gdev:.1f} %")
        summary["cost_at_ndr"].append({"dut": dut, "size": size, "per_search": v,
                                       "cycles_max_dev_pct": cdev, "ghz_max_dev_pct": gdev})
if medians:
    print("medians of each file's --repeat rounds, their largest deviation from the median of the files, "
          "and how far apart they are (largest over smallest, the measure of issue 18's 5 % target):")
    summary["repeat_medians"] = []
    for (who, size, goal), v in sorted(medians.items()):
        med, dev = spread(v)
        present = [x for x in v if x]
        apart = (max(present) / min(present) - 1) * 100 if present else None
        shown = "  ".join("-" if not x else (f"{x / 1e6:.4f}" if x > 100 else f"{x:.2f}") for x in v)
        if med:
            print(f"{who:18s} {size:10s} {goal:8s} {shown}  max dev {dev:.1f} %  apart {apart:.1f} %")
        summary["repeat_medians"].append({"who": who, "size": size, "goal": goal, "values": v,
                                          "max_dev_pct": dev, "apart_pct": apart})
sizes = sorted({k for m in maxima for k in m["max_fps"]})
if sizes:
    print("the tester's calibrated maximum of each run and round (the 100 % rate; a tester-limited figure is this):")
    for size in sizes:
        v = [m["max_fps"].get(size) for m in maxima]
        med, dev = spread(v)
        shown = "  ".join("-" if not x else f"{x / 1e6:.4f}" for x in v)
        if med:
            print(f"{'tester maximum':18s} {size:10s} {'':8s} {shown}  Mfps  median {med / 1e6:.4f}  max dev {dev:.1f} %")
    summary["tester_maxima"] = maxima
probed = [h for h in hosts if h["host_probe"]]
if probed:
    print("host before each run (probe ns: ALU step, load within the caches, beyond them; "
          "CPU round trip ns min/median/max over the trials, s waited for the near placement, "
          "trials run again because the CPUs moved apart; pauses over 250 us / over 1 ms and the "
          "longest, us, in the probe's spin):")
    for h in probed:
        p = h["host_probe"]
        rt = "/".join(f"{x:.0f}" for x in h["round_trip_ns"]) if h["round_trip_ns"] else "-"
        print(f'{h["file"].rsplit("/", 1)[-1]:28s} {h["dut"]:18s} round {h["round"]}  '
              f'{p["alu_ns"]:.2f}  {p["cache_load_ns"]:.1f}  {p["memory_load_ns"]:.0f}  '
              f'rt {rt}  waited {h["placement_wait_s"]:.1f} s  moved {h["moved_apart_trials"]}'
              + (f'  pauses {p["pauses_over_250us"]}/{p["pauses_over_1ms"]} '
                 f'{p["longest_pause_us"]:.0f}' if p.get("pause_watch_s") else ''))
    summary["host_probes"] = probed
json.dump(summary, open(out, "w"), indent=2)
