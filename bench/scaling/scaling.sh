#!/usr/bin/env bash
# Multicore scaling of the share-nothing engine, measured side by side:
# softrouter with 1 and with 2 workers on `mem` ports (frames replayed from
# memory into each worker's own RX queue, every worker with its own TX
# queue), alternating rounds so drift and noise hit both equally.
#
# Why `mem` ports: on a two-core machine a traffic generator would take the
# second core from the router, so "does 2 workers forward 1.8x of 1 worker"
# can only be answered with the load generated inside the workers' own RX
# path (the DMA copy a NIC would do). The namespace benchmark
# (`softrouter bench --workers 2`) reports the same ratio, marked
# tester-limited when the tester is the bottleneck.
#
# Usage: bench/scaling/scaling.sh [--seconds N] [--rounds R] [--softrouter BIN]
# Writes bench/scaling/results/scaling.json and prints a summary.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
seconds=5
rounds=3
bin="$root/target/release/softrouter"
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds="$2"; shift 2 ;;
        --rounds) rounds="$2"; shift 2 ;;
        --softrouter) bin="$2"; shift 2 ;;
        *) echo "scaling.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
if [ ! -x "$bin" ]; then
    (cd "$root" && cargo build --locked --release -p softrouter)
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 "$root/bench/l3fwd/gen_pcap.py" "$work/in.pcap" --count 8192 --dst-net 1 >/dev/null

config() {
    cat <<CFG
[router]
workers = $1
mode = "poll"

[[port]]
name = "p0"
driver = "mem"
rx_pcap = "$work/in.pcap"
mac = "02:00:00:00:00:10"
addresses = ["198.18.255.1/24"]

[[port]]
name = "p1"
driver = "mem"
mac = "02:00:00:00:00:11"
addresses = ["198.19.0.1/24"]

[[route]]
prefix = "198.18.1.0/24"
via = ["198.19.0.2"]

[[neighbor]]
address = "198.19.0.2"
mac = "02:00:00:00:00:22"
port = "p1"
CFG
}
config 1 >"$work/w1.toml"
config 2 >"$work/w2.toml"
for r in $(seq 1 "$rounds"); do
    for w in 1 2; do
        "$bin" run --config "$work/w$w.toml" --duration "$seconds" --stats-json "$work/w$w-r$r.json" 2>/dev/null
    done
done
mkdir -p "$here/results"
python3 - "$work" "$rounds" "$seconds" "$here/results/scaling.json" <<'PY'
import json, statistics, sys
work, rounds, seconds, out = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
rows = []
for r in range(1, rounds + 1):
    for w in (1, 2):
        j = json.load(open(f"{work}/w{w}-r{r}.json"))
        tx = sum(p["tx_packets"] for p in j["ports"])
        rows.append({"workers": w, "round": r, "mpps": tx / j["elapsed_s"] / 1e6,
                     "cycles_per_packet": j["cycles_per_packet"]["total"],
                     "drops": j["drops"]})
med = lambda w, k: statistics.median(x[k] for x in rows if x["workers"] == w)
summary = {"mpps_1_worker": med(1, "mpps"), "mpps_2_workers": med(2, "mpps"),
           "cycles_per_packet_1_worker": med(1, "cycles_per_packet"),
           "cycles_per_packet_2_workers": med(2, "cycles_per_packet")}
summary["ratio_2_over_1"] = summary["mpps_2_workers"] / summary["mpps_1_worker"]
json.dump({"seconds": seconds, "rounds": rounds, "rows": rows, "summary": summary},
          open(out, "w"), indent=2)
print(f"1 worker : {summary['mpps_1_worker']:.2f} Mpps, {summary['cycles_per_packet_1_worker']:.0f} cycles/packet")
print(f"2 workers: {summary['mpps_2_workers']:.2f} Mpps, {summary['cycles_per_packet_2_workers']:.0f} cycles/packet")
print(f"ratio 2/1: {summary['ratio_2_over_1']:.2f} (median of {rounds} alternating rounds of {seconds:g} s)")
PY
