#!/usr/bin/env bash
# A/B of two builds of the `stages` bench (crates/dataplane/benches/
# stages.rs), interleaved A B A B ... on one pinned core, so that both see
# the same machine load: prints each run's median cycles per packet of a
# poll round and, per build, the median over its runs; raw lines in
# results/stages-ab-<table>-<time>.txt (gitignored).
# Build each side with `cargo bench -p softrouter-dataplane --bench stages
# --no-run` and copy the executable it names (target/release/deps/stages-*).
#
# usage: bench/l3fwd/stages-ab.sh BIN_A BIN_B [--table small|full]
#                                 [--pairs N] [--seconds S] [--core C]
#                                 [--budget B]   (default 64; builds from
#                                 before --budget existed use 256)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
[ $# -ge 2 ] || { sed -n 2,14p "$0"; exit 2; }
A="$1"; B="$2"; shift 2
TABLE=small
PAIRS=4
SECS=2
CORE=1
BUDGET=64
while [ $# -gt 0 ]; do
    case "$1" in
        --table) TABLE="$2"; shift 2 ;;
        --pairs) PAIRS="$2"; shift 2 ;;
        --seconds) SECS="$2"; shift 2 ;;
        --core) CORE="$2"; shift 2 ;;
        --budget) BUDGET="$2"; shift 2 ;;
        *) echo "stages-ab.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

cd "$REPO"
mkdir -p results
OUT="results/stages-ab-$TABLE-$(date -u +%Y%m%dT%H%M%SZ).txt"
{
    echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) A=$A B=$B" \
        "cmd: taskset -c $CORE BIN --bench --table $TABLE --seconds $SECS --rounds 1 --budget $BUDGET"
    for i in $(seq "$PAIRS"); do
        for side in A B; do
            bin="$A"; [ "$side" = B ] && bin="$B"
            taskset -c "$CORE" "$bin" --bench --table "$TABLE" --seconds "$SECS" --rounds 1 --budget "$BUDGET" |
                sed "s/^stages /ab side=$side pair=$i /"
        done
    done
} | tee "$OUT" | grep -o 'side=[AB] pair=[0-9]* .*cyc_round_med=[0-9.]*' | sed 's/table=[a-z]* round=0 //'
python3 - "$OUT" <<'PY'
import statistics, sys
rows = [dict(kv.split("=", 1) for kv in l.split()[1:])
        for l in open(sys.argv[1]) if l.startswith("ab ")]
for side in "AB":
    v = [float(r["cyc_round_med"]) for r in rows if r["side"] == side]
    if v:
        print(f"{side}: median cycles/packet of a poll round {statistics.median(v):.1f} "
              f"over {len(v)} runs (min {min(v):.1f}, max {max(v):.1f})")
PY
