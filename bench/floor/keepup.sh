#!/usr/bin/env bash
# Does the tester keep up with a DUT at its rate? (issue 21 item 2)
#
# Side by side, at 64 B and a ladder of rates, in the bench's placement
# (tester on the last CPU, DUT on the others):
#   loopback   tester port to tester port over one veth (as calibration runs)
#   floor      through the floor DUT (XDP redirect + MAC rewrite, DUT CPU)
#   floor-defer  the same with the tester ends' wake-ups deferred
#              (SOFTROUTER_TESTER_DEFER=U, only with --defer-us U)
#   With --dut linux the kernel DUT takes the floor's place (files
#   linux.txt, linux-defer.txt); with --dut softrouter the router with
#   its XDP tier (target/release/softrouter, or SR_SOFTROUTER_BIN).
# Each trial prints offered/achieved/sent/received, where frames were lost
# (tester_ring: the tester's own receive ring; dut_ring) and
# rx_ns_per_frame: the on-CPU time of the tester ends' NAPI threads
# (/proc/<pid>/schedstat) per frame received, a figure other load on the
# machine barely moves (it is the threads' own run time), and
# rx_frames_per_run: frames received per time those threads ran (a
# wake-up each); dut_ns_per_frame and dut_frames_per_run: the same for
# the DUT ends' NAPI threads (the DUT's receive-and-forward work, and
# how many frames each of its wake-ups found).
#
# Usage: bench/floor/keepup.sh [--rates R1,R2,..] [--seconds S] [--defer-us U] [--dut floor|linux|softrouter] [--shield]
#   --shield: keep the host's threads off the DUT's CPUs as the bench does
#   (on a shared machine that puts every compiler on the tester's CPU).
# Writes bench/floor/results/keepup-<stamp>/{loopback,DUT,DUT-defer}.txt
# and prints them. Needs root. About 10 s per rate and mode.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
rates=1000000,2000000,3000000,4000000
seconds=1
defer=
dut=floor
shield=
while [ $# -gt 0 ]; do
    case "$1" in
        --rates) rates="$2"; shift 2 ;;
        --seconds) seconds="$2"; shift 2 ;;
        --defer-us) defer="$2"; shift 2 ;;
        --dut) dut="$2"; shift 2 ;;
        --shield) shield=1; shift ;;
        *) echo "keepup.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
out="$here/results/keepup-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
cd "$root"
bin=$(cargo test --release -p softrouter-traffic --test floor_return --no-run 2>&1 |
    sed -n 's/.*Executable tests\/floor_return.rs (\(.*\))/\1/p')
[ -x "$bin" ] || { echo "keepup.sh: building the floor_return test failed" >&2; exit 1; }
case "$dut" in floor|linux|softrouter) ;; *) echo "keepup.sh: --dut floor, linux or softrouter" >&2; exit 2 ;; esac
export SR_FLOOR_RATES="$rates" SR_FLOOR_SECONDS="$seconds" SR_FLOOR_DUT="$dut"
[ -n "$shield" ] || export SR_FLOOR_NO_SHIELD=1
echo "$0 --rates $rates --seconds $seconds ${defer:+--defer-us $defer} --dut $dut ${shield:+--shield}" >"$out/command.txt"
run() {
    local name=$1 test=$2
    echo "keepup.sh: $name" >&2
    "$bin" --ignored --nocapture --exact "$test" 2>"$out/$name.log" | grep -E "^[a-z]+_ladder offered" >"$out/$name.txt" || true
}
run loopback loopback_ladder
run "$dut" floor_ladder
if [ -n "$defer" ]; then
    SOFTROUTER_TESTER_DEFER="$defer" run "$dut-defer" floor_ladder
fi
for f in "$out"/*.txt; do
    [ "$(basename "$f")" = command.txt ] && continue
    echo "== $(basename "$f" .txt)"
    sed -E 's/^[a-z_]+ //; s/ limited=.* (rx_ns_per_frame=)/ \1/' "$f"
done
echo "raw results in $out"
