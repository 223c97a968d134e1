#!/usr/bin/env bash
# Window length A/B for the kernel's 64 B NDR (fifteenth session): the
# same linux throughput search with trials as 0.1, 0.05 and 0.02 s windows
# of 1 s streams (2 s duration sums, 50 % exceed ratio), interleaved
# A B C A B C ... so that every arm meets the host's phases alike.
set -euo pipefail
cd "$(dirname "$0")"
bin=../../../../target/release/softrouter
rounds=${1:-5}
for i in $(seq 1 "$rounds"); do
    for w in 0.1 0.05 0.02; do
        "$bin" bench --dut linux --test throughput --sizes 64 --ip 4 --max-rate-fps 1500000 \
            --goals "${w}f2d0l50e2w,${w}f2d0.5l50e2w" --quiet --json "w$w-$i.json" >/dev/null 2>"w$w-$i.log"
        echo "round $i window $w done $(date +%T)"
    done
done
