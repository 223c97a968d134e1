#!/usr/bin/env bash
# The testbed's limit, measured side by side (issue 21), at 64 B:
#
#  1. raw: the plainest XDP generator and drop counter on the tester's CPU
#     in the bench's placement (bench/floor/raw.py: `return XDP_TX` run with
#     BPF_PROG_TEST_RUN live frames into a veth whose peer runs `return
#     XDP_DROP`, that end's NAPI threaded and pinned to the same CPU at
#     SCHED_FIFO 50, as the bench places its counter): the most this CPU
#     sends and counts with XDP. (xdp-tools' xdp-trafficgen and xdp-bench,
#     the issue's reference, do not load on this kernel from Debian 12's
#     package: see raw.py.)
#  1b. raw through the floor: the same generator and drop counter on the
#     tester's CPU with the plainest floor between them on the DUT's CPU
#     (raw.py fwd: the MACs rewritten and `bpf_redirect` to the drop end's
#     veth, that end's NAPI threaded on the DUT's CPU at SCHED_FIFO 40, as
#     the bench places its DUTs'): the most this CPU sends and counts
#     through a DUT that forwards everything, the reference for the bench's
#     maximum through the floor. Then the same with --touch: the
#     generator writes a time stamp into each frame and the counter reads
#     it (raw.py touching): what a tester's per-frame touch of the frame,
#     a line the other CPU wrote last, costs by itself.
#  2. bench: `softrouter bench` through the floor DUT (an XDP redirect
#     with the MAC rewrite and nothing else) and, with --duts, other DUTs:
#     the tester's calibrated maximum (loopback), what it actually offered
#     and got back at the top load through each DUT, the DUTs' rates and
#     cycles per packet, their projections and "x the floor".
#
#  3. with --defer-us U: the bench again with the tester ends' NAPI
#     wake-ups deferred (SOFTROUTER_TESTER_DEFER=U: a U µs timer on the
#     tester's CPU polls them instead of a wake-up from the DUT's CPU per
#     flush), with `perf stat` counts of the tester CPU's reschedule IPIs,
#     timer interrupts and context switches beside each bench run.
#
# Usage: bench/floor/floor.sh [--seconds N] [--rounds R] [--duts LIST] [--defer-us U] [--softrouter BIN]
# Writes bench/floor/results/<stamp>/ (raw-<i>.txt, bench-<i>.json, summary.json)
# and prints the summary (bench/floor/summary.py). Needs root and python3.
# Keep each round short on a shared machine.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
seconds=8
rounds=1
duts=floor
defer=
bin="$root/target/release/softrouter"
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds="$2"; shift 2 ;;
        --rounds) rounds="$2"; shift 2 ;;
        --duts) duts="$2"; shift 2 ;;
        --defer-us) defer="$2"; shift 2 ;;
        --softrouter) bin="$2"; shift 2 ;;
        *) echo "floor.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -x "$bin" ] || (cd "$root" && cargo build --locked --release -p softrouter)
out="$here/results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
# The bench's split: the last CPU is the tester's.
cpu=$(($(nproc) - 1))
dut_cpu=0
# raw_round, raw_floor_round (raw.py in namespaces of their own).
. "$here/rawlib.sh"

# Short trials: a search of a few dozen seconds per DUT.
cat >"$out/exp.toml" <<'EXP'
trial_seconds = 0.5
pause_seconds = 0.1
drain_seconds = 0.5
goals = [{ name = "ndr", final_trial_seconds = 0.5, duration_sum_seconds = 1.0, width_pct = 2.0 }]
EXP
for i in $(seq 1 "$rounds"); do
    echo "floor.sh: round $i: raw XDP generator and drop counter on CPU $cpu, ${seconds} s" >&2
    raw_round "$i"
    echo "floor.sh: round $i: raw generator and drop counter through the plainest floor on CPU $dut_cpu" >&2
    raw_floor_round "$i"
    echo "floor.sh: round $i: the same, the generator stamping and the counter reading each frame" >&2
    raw_floor_round "$i" --touch
    for mode in default ${defer:+defer}; do
        tag=$i; [ "$mode" = defer ] && tag="defer-$i"
        echo "floor.sh: round $i: softrouter bench --dut $duts ($mode wake-ups)" >&2
        stat=()
        command -v perf >/dev/null && stat=(perf stat -C "$cpu" -o "$out/perf-$tag.txt" -e
            irq_vectors:reschedule_entry,irq_vectors:local_timer_entry,sched:sched_switch --)
        ( [ "$mode" = defer ] && export SOFTROUTER_TESTER_DEFER="$defer"
          "${stat[@]}" "$bin" bench -e "$out/exp.toml" --dut "$duts" --test throughput --sizes 64 \
              --ip 4 --quiet --json "$out/bench-$tag.json" >"$out/bench-$tag.txt" 2>&1 ) || {
            echo "floor.sh: the bench failed, see $out/bench-$tag.txt" >&2; exit 1; }
    done
done
echo "$0 --seconds $seconds --rounds $rounds --duts $duts ${defer:+--defer-us $defer}" >"$out/command.txt"
python3 "$here/summary.py" "$out"
