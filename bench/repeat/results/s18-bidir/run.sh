#!/usr/bin/env bash
# Interleaved: kernel DUT, 64 B throughput, one-to-one vs bidirectional, N rounds.
set -u
cd "$(dirname "$0")/../../../.."
out=${OUT:-bench/repeat/results/s18-bidir}
for i in $(seq ${2:-1} ${1:-3}); do
  for p in one-to-one bidirectional; do
    m=1200000; [ $p = bidirectional ] && m=600000
    s=$(date +%s)
    target/release/softrouter bench --dut linux --test throughput --sizes 64 --pattern $p --max-rate-fps $m --quiet --json $out/$p-$i.json >/dev/null 2>$out/$p-$i.err
    echo "$p $i rc=$? $(( $(date +%s)-s )) s" >> $out/log
  done
done
