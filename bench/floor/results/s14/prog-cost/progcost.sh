#!/bin/sh
# in-situ cost of the floor's and the tier's programs (bpf_stats), 10 s each
cd /work/main
target/release/softrouter bench --dut floor,softrouter --test throughput --sizes 64 --ip 4 --repeat 2 --json /tmp/exp/pc.json > /tmp/exp/pc.log 2>&1 &
B=$!
snap() { # $1 label, waits for "$2" in the log
  while ! grep -q "$2" /tmp/exp/pc.log; do sleep 0.5; done
  sleep 2; sysctl -qw kernel.bpf_stats_enabled=1; sleep 10
  bpftool prog show -j > /tmp/exp/pc-$1.json; sysctl -qw kernel.bpf_stats_enabled=0
}
snap floor "\[floor, DUT 1 of 2, round 1 of 2\] trial 2 "
snap tier "\[softrouter, DUT 2 of 2, round 1 of 2\] trial 2 "
wait $B
for L in floor tier; do python3 - "$L" <<'PY'
import json,sys
L=sys.argv[1]
for x in json.load(open(f'/tmp/exp/pc-{L}.json')):
    n=x.get('name','')
    if n.startswith('sr_') and x.get('run_cnt'):
        print(L, n, x['run_cnt'], 'ns/run %.1f'%(x['run_time_ns']/x['run_cnt']))
PY
done
