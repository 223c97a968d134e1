#!/usr/bin/env bash
# softrouter's side of compare.sh in one process, no DPDK, no root: one
# worker forwarding compare.sh's 4,096 frames (or, with --table full, frames
# spread over the full table) from `mem` ports, pinned to one core, several
# short rounds; prints Mpps and cycles per packet per stage (rx / process /
# tx, the worker's TSC counters) for each round and their medians, and keeps
# the raw lines in results/stages-<table>-<time>.txt (gitignored).
# The quick before/after check of a change to the per-packet path
# (crates/dataplane/benches/stages.rs); compare.sh stays the reference.
#
# usage: bench/l3fwd/stages.sh [--table small|full] [--seconds S]
#                              [--rounds R] [--core C] [--budget B]
# (--budget: frames per RX queue and poll round, default 64 as the router's)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
TABLE=small
SECS=3
ROUNDS=5
CORE=1
BUDGET=64
while [ $# -gt 0 ]; do
    case "$1" in
        --table) TABLE="$2"; shift 2 ;;
        --seconds) SECS="$2"; shift 2 ;;
        --rounds) ROUNDS="$2"; shift 2 ;;
        --core) CORE="$2"; shift 2 ;;
        --budget) BUDGET="$2"; shift 2 ;;
        -h|--help) sed -n 2,13p "$0"; exit 0 ;;
        *) echo "stages.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

cd "$REPO"
mkdir -p results
OUT="results/stages-$TABLE-$(date -u +%Y%m%dT%H%M%SZ).txt"
BIN="$(cargo bench -q -p softrouter-dataplane --bench stages --no-run --message-format=json |
    python3 -c 'import json, sys
for l in sys.stdin:
    j = json.loads(l)
    if j.get("executable") and j["target"]["name"] == "stages":
        print(j["executable"])')"
{
    echo "# $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo +dirty)" \
        "$(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)" \
        "cmd: taskset -c $CORE $BIN --bench --table $TABLE --seconds $SECS --rounds $ROUNDS --budget $BUDGET"
    taskset -c "$CORE" "$BIN" --bench --table "$TABLE" --seconds "$SECS" --rounds "$ROUNDS" --budget "$BUDGET"
} | tee "$OUT"
python3 - "$OUT" <<'EOF'
import statistics, sys
rows = [dict(kv.split("=", 1) for kv in l.split()[1:])
        for l in open(sys.argv[1]) if l.startswith("stages ")]
if rows:
    med = lambda k: statistics.median(float(r[k]) for r in rows)
    print(f"median of {len(rows)} rounds: cycles/packet of a poll round {med('cyc_round_med'):.1f} "
          f"(p10 {med('cyc_round_p10'):.1f}); window: {med('mpps'):.2f} Mpps, cycles/packet "
          f"wall {med('cyc_wall'):.1f}, on-CPU {med('cyc_cpu'):.1f} (share {med('cpu_share'):.2f}), "
          f"stages rx {med('rx'):.1f} / process {med('process'):.1f} "
          f"/ tx {med('tx'):.1f} (sum {med('total'):.1f})")
EOF
