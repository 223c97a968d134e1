#!/usr/bin/env bash
# What ran on each CPU while the DUT's receive work stalled: a loss series
# at a low rate under the kernel's scheduler trace (ftrace's sched_switch
# into a large ring buffer, CLOCK_MONOTONIC; nothing reads it during the
# run, so the tracing itself runs no task), then for each trial's longest
# receive gap (the gap meter's debug log gives its start) the tasks that
# ran on each CPU in that window, with their run time there.
#
#   bench/stall/stall.sh [--dut linux|softrouter] [--rate FPS] [--out DIR] [-- extra bench flags]
set -euo pipefail
cd "$(dirname "$0")/../.."
dut=softrouter rate=60000 out=bench/stall/results/$(date +%Y%m%d-%H%M%S)
while [ $# -gt 0 ]; do
    case "$1" in
        --dut) dut=$2; shift 2 ;;
        --rate) rate=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --) shift; break ;;
        *) echo "stall.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
mkdir -p "$out"
bin=./target/release/softrouter
[ -x "$bin" ] || cargo build --locked --release -p softrouter
T=/sys/kernel/tracing
[ -e "$T/trace" ] || T=/sys/kernel/debug/tracing
old_clock=$(sed 's/.*\[\(.*\)\].*/\1/' "$T/trace_clock")
old_kb=$(cat "$T/buffer_size_kb" | cut -d' ' -f1)
restore() {
    echo 0 > "$T/tracing_on"
    echo 0 > "$T/events/sched/sched_switch/enable"
    echo "$old_clock" > "$T/trace_clock"
    echo "$old_kb" > "$T/buffer_size_kb"
}
trap restore EXIT
echo 0 > "$T/tracing_on"
echo mono > "$T/trace_clock"
echo 65536 > "$T/buffer_size_kb"
echo > "$T/trace"
echo 1 > "$T/events/sched/sched_switch/enable"
echo 1 > "$T/tracing_on"
RUST_LOG=traffic=debug "$bin" bench --dut "$dut" --test loss --sizes 64 \
    --max-rate-fps "$rate" --trial-seconds 1 --json "$out/bench.json" --quiet "$@" \
    2> "$out/bench.log" >/dev/null
echo 0 > "$T/tracing_on"
cat "$T/trace" > "$out/trace.txt"
restore
trap - EXIT
python3 bench/stall/windows.py "$out/bench.log" "$out/trace.txt" | tee "$out/summary.txt"
