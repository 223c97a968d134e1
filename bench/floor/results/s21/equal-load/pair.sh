#!/bin/bash
cd /work/main
D=$1; T=$2
target/release/softrouter bench --dut $D --test loss --sizes 64 --ip 4 --max-rate-fps 2000000 --trial-seconds 20 --json /tmp/prof/$T.json > /tmp/prof/$T.log 2>&1 &
P=$!
sleep 13
perf record -C 0 -F 10000 -o /tmp/prof/$T.data -- sleep 8 > /dev/null 2>&1
pkill -INT -f "softrouter bench"
wait $P
