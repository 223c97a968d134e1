#!/usr/bin/env bash
# Does the tester hold, with zero loss, a share of what the raw pair
# reaches through the floor, in the same placement? (issue 21's first
# target, measured pair by pair.)
#
# floor.sh sets a calibration (a search of 15-30 s) beside one raw run
# a minute away; the host moves the vCPUs between placements every few
# seconds to minutes, and the tester's capacity through a DUT with them
# (1.4-3.3 Mfps within four minutes), so that ratio mixes placements.
# Here each pair is two measurements a few seconds apart, with the
# placement probed before, between and after (crates/testbed/examples/
# placement.rs: a cache line's round trip between the two CPUs):
#
#   1. raw: the plainest generator and drop counter on the tester's CPU
#      through the plainest floor on the DUT's (bench/floor/raw.py, as in
#      floor.sh): what it received, the median of its inner seconds;
#   2. bench: the bench's tester (crates/traffic/tests/floor_return.rs,
#      floor_ladder: the bench's generator, counter and floor DUT in the
#      bench's placement, shield raised) at SHARE x that rate, TRIALS
#      trials of 1 s, each "held" as calibration judges a trial (sent, not
#      tester-limited, nothing lost but in the DUT).
#
# A pair counts for its placement when the three probes agree (all near
# or all far); the summary gives, per placement, the pairs and the trials
# held. The target holds where the tester holds SHARE (0.8) of the raw
# pair's rate in most trials of the pairs in one placement.
#
# Usage: bench/floor/pair.sh [--pairs N] [--share X] [--trials T] [--seconds S]
# Writes bench/floor/results/pair-<stamp>/ (raw-floor-<i>*.txt,
# bench-<i>.txt, pairs.txt, summary.txt) and prints the summary. Needs root
# and python3. About 20 s a pair.
set -euo pipefail
here=/work/main/bench/floor
root=/work/main
pairs=6
share=0.8
trials=3
seconds=3
while [ $# -gt 0 ]; do
    case "$1" in
        --pairs) pairs="$2"; shift 2 ;;
        --share) share="$2"; shift 2 ;;
        --trials) trials="$2"; shift 2 ;;
        --seconds) seconds="$2"; shift 2 ;;
        *) echo "pair.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
out="/tmp/exp/pairab-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
cd "$root"
bin=/tmp/exp/floor_base; bin2=/tmp/exp/floor_slack
[ -x "$bin" ] || { echo "pair.sh: building the floor_return test failed" >&2; exit 1; }
cargo build --release -p softrouter-testbed --example placement 2>/dev/null
probe="$root/target/release/examples/placement"
cpu=$(($(nproc) - 1))
dut_cpu=0
. "$here/rawlib.sh"
# The bench holds the CPUs awake (PM QoS 0 µs) for its trials; so does
# this script for the raw runs and the probes, or an idle vCPU is one the
# host moves.
exec 9>/dev/cpu_dma_latency
printf '\0\0\0\0' >&9
rt() { { "$probe" "$cpu" "$dut_cpu" || true; } | sed -n 's/^round_trip_ns=\([0-9-]*\) near=\([01]\).*/\1:\2/p'; }
echo "$0 --pairs $pairs --share $share --trials $trials --seconds $seconds" >"$out/command.txt"
for i in $(seq 1 "$pairs"); do
    p0=$(rt)
    raw_floor_round "$i"
    raw=$(python3 -c "
import sys; sys.path.insert(0, '$here'); import statistics, summary
r = summary.raw_rates('$out/rawfloor-$i.txt'); print(int(statistics.median(r)) if r else 0)")
    p1=$(rt)
    rate=$(python3 -c "print(int($raw * $share))")
    if [ "$rate" -le 0 ]; then
        echo "pair.sh: pair $i: the raw pair received nothing" >&2
        continue
    fi
    rates=$(python3 -c "print(','.join(['$rate'] * $trials))")
    for v in $( [ $((i % 2)) = 0 ] && echo "base slack" || echo "slack base"); do
        b=$bin; [ $v = slack ] && b=$bin2
        SR_FLOOR_RATES="$rates" SR_FLOOR_SECONDS=1 "$b" --ignored --nocapture --exact floor_ladder \
            2>"$out/bench-$v-$i.log" | grep "^floor_ladder offered" >"$out/bench-$v-$i.txt" || true
    done
    p2=$(rt)
    hb=$(grep -c " held=1 " "$out/bench-base-$i.txt" || true)
    hs=$(grep -c " held=1 " "$out/bench-slack-$i.txt" || true)
    ab=$(grep -o "achieved=[0-9]*" "$out/bench-base-$i.txt" | cut -d= -f2 | tr '\n' ',')
    as=$(grep -o "achieved=[0-9]*" "$out/bench-slack-$i.txt" | cut -d= -f2 | tr '\n' ',')
    line="pair=$i placement_ns=${p0%:*},${p1%:*},${p2%:*} near=${p0#*:}${p1#*:}${p2#*:} raw_rx=$raw rate=$rate base=$hb/$trials slack=$hs/$trials ach_base=$ab ach_slack=$as"
    echo "$line" | tee -a "$out/pairs.txt" >&2
done
