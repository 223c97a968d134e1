#!/usr/bin/env bash
# Run-to-run repeatability of the throughput search (issue 18): runs the
# same `softrouter bench` command N times, each on a fresh testbed with a
# fresh calibration, and reports per DUT, frame size and search goal every
# run's conditional throughput, its largest deviation from the median of
# the runs, and the ratio between the DUTs per run (each run against the
# comparison's baseline) with its deviation from its median.
#
# Usage: bench/repeat/repeat.sh [--runs N] [--name NAME] [-- bench flags]
# Default bench flags: --dut softrouter,linux --test throughput --sizes 64,imix
# Writes bench/repeat/results/NAME-run<i>.json and NAME-summary.json.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
runs=3
name=default
bin="$root/target/release/softrouter"
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs="$2"; shift 2 ;;
        --name) name="$2"; shift 2 ;;
        --) shift; break ;;
        *) echo "repeat.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ $# -gt 0 ] || set -- --dut softrouter,linux --test throughput --sizes 64,imix
[ -x "$bin" ] || (cd "$root" && cargo build --locked --release -p softrouter)
mkdir -p "$here/results"
for i in $(seq 1 "$runs"); do
    start=$(date +%s)
    "$bin" bench "$@" --quiet --json "$here/results/$name-run$i.json" >/dev/null
    echo "run $i: $(( $(date +%s) - start )) s" >&2
done
python3 "$here/summary.py" "$here/results/$name-summary.json" \
    $(for i in $(seq 1 "$runs"); do echo "$here/results/$name-run$i.json"; done)
