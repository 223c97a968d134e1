#!/usr/bin/env bash
set -u
cd "$(dirname "$0")/../../../.."
out=${OUT:-bench/floor/results/s18-floor-bidir}
for i in $(seq ${2:-1} ${1:-3}); do
  for p in one-to-one bidirectional; do
    s=$(date +%s)
    target/release/softrouter bench --dut floor --test throughput --sizes 64 --pattern $p --json $out/$p-$i.json >/dev/null 2>$out/$p-$i.err
    echo "$p $i rc=$? $(( $(date +%s)-s )) s" >> $out/log
  done
done
