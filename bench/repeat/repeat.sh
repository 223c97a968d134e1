#!/usr/bin/env bash
# Repeatability of the quick throughput test (issue 4): runs
# `softrouter bench --test throughput` N times on the same DUT, each on a
# fresh testbed with a fresh calibration, and reports per frame size the
# spread (max - min) / mean of the throughputs.
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
import json, sys
d, dut, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
by = {}
for i in range(1, runs + 1):
    r = json.load(open(f"{d}/{dut}-run{i}.json"))
    for t in r["tests"]:
        res = t["result"]
        key = f'{t["size"]} v{t["ip"]}'
        by.setdefault(key, []).append((res.get("fps"), bool(res.get("tester_limited"))))
summary = {}
for k, v in by.items():
    fps = [f for f, _ in v if f]
    mean = sum(fps) / len(fps) if fps else 0
    spread = (max(fps) - min(fps)) / mean * 100 if fps else None
    summary[k] = {"fps": [f for f, _ in v], "tester_limited": [l for _, l in v], "spread_pct": spread}
    lim = " (some tester-limited)" if any(l for _, l in v) else ""
    print(f"{k:10s} " + "  ".join(f"{f/1e6:.4f}" for f in fps) + f"  Mpps  spread {spread:.1f} %{lim}")
json.dump({"dut": dut, "runs": runs, "sizes": summary}, open(f"{d}/repeat-{dut}.json", "w"), indent=2)
PY
