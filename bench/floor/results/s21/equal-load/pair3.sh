#!/bin/bash
# pair3.sh DUT TAG RATE: perf -C 0 for 8 s inside the first 20 s loss trial at RATE; records when.
cd /work/main
D=$1; T=$2; R=$3
target/release/softrouter bench --dut $D --test loss --sizes 64 --ip 4 --max-rate-fps $R --trial-seconds 20 > /tmp/prof/$T.log 2>&1 &
P=$!
for i in $(seq 120); do grep -q "loss IPv4 64" /tmp/prof/$T.log && break; sleep 0.25; done
tl=$(date +%s.%N)
sleep 7
tp=$(date +%s.%N)
perf record -C 0 -F 10000 -o /tmp/prof/$T.data -- sleep 8 > /dev/null 2>&1
for i in $(seq 120); do grep -q "trial 1 " /tmp/prof/$T.log && break; sleep 0.25; done
te=$(date +%s.%N)
echo "loss_line $tl perf_start $tp trial_line $te perf_start_after_line $(echo "$tp - $tl" | bc) trial_line_after_perf_end $(echo "$te - $tp - 8" | bc)" > /tmp/prof/$T.times
pkill -INT -f "softrouter bench"
wait $P
