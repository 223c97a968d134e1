#!/usr/bin/env bash
# Repeatability of the quick throughput test (issue 4): runs
# `softrouter bench --test throughput` N times on the same DUT, each on a
# fresh testbed with a fresh calibration, and reports per frame size and
# goal (NDR and PDR) the spread (max - min) / mean of the rates and the
# largest deviation from their median.
#
# Usage: bench/repeat/repeat.sh [--runs N] [--dut KIND] [-- extra bench flags]
# Writes bench/repeat/results/<dut>-run<i>.json and repeat-<dut>.json.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
runs=3
dut=softrouter
bin="$root/target/release/softrouter"
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs="$2"; shift 2 ;;
        --dut) dut="$2"; shift 2 ;;
        --) shift; break ;;
        *) echo "repeat.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -x "$bin" ] || (cd "$root" && cargo build --locked --release -p softrouter)
mkdir -p "$here/results"
for i in $(seq 1 "$runs"); do
    "$bin" bench --dut "$dut" --test throughput --sizes 64,512,1518,imix \
        --trial-seconds 1 --pause-seconds 0.5 --resolution-pct 1 --quiet \
        --json "$here/results/$dut-run$i.json" "$@" >/dev/null
done
python3 - "$here/results" "$dut" "$runs" <<'PY'
# Schema 2: one file per run of the bench, the DUT's run in runs[0];
# throughput as ndr and pdr goals. Per goal and size: every run's rate,
# the spread (max - min) / mean, and the largest deviation from the median
# (issue 8's target: within 5 % of the median).
import json, statistics, sys
d, dut, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
by = {}
for i in range(1, runs + 1):
    r = json.load(open(f"{d}/{dut}-run{i}.json"))
    for t in r["runs"][0]["tests"]:
        if t["test"] != "throughput":
            continue
        res = t["result"]
        for goal in ("ndr", "pdr"):
            g = res[goal]
            key = (goal, f'{t["size"]} v{t["ip"]}')
            by.setdefault(key, []).append((g.get("fps"), bool(g.get("lower_bound"))))
summary = {"ndr": {}, "pdr": {}}
for (goal, k), v in by.items():
    fps = [f for f, _ in v if f]
    mean = sum(fps) / len(fps) if fps else 0
    spread = (max(fps) - min(fps)) / mean * 100 if fps else None
    med = statistics.median(fps) if fps else None
    dev = max(abs(f - med) / med * 100 for f in fps) if fps else None
    summary[goal][k] = {"fps": [f for f, _ in v], "lower_bound": [l for _, l in v],
                        "spread_pct": spread, "max_dev_from_median_pct": dev}
    lim = " (some lower bounds)" if any(l for _, l in v) else ""
    shown = "  ".join(f"{f/1e6:.4f}" for f in fps)
    if fps:
        print(f"{goal.upper()} {k:10s} {shown}  Mpps  spread {spread:.1f} %  max dev from median {dev:.1f} %{lim}")
    else:
        print(f"{goal.upper()} {k:10s} no rate passed")
json.dump({"dut": dut, "runs": runs, "goals": summary}, open(f"{d}/repeat-{dut}.json", "w"), indent=2)
PY
