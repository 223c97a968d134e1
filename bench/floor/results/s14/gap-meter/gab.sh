#!/bin/sh
# gab.sh LABEL: the gap meter's programs' own cost per event (bpf_stats) during a floor search
cd /work/main
L=$1
target/release/softrouter bench --dut floor --test throughput --sizes 64 --ip 4 --repeat 3 --json /tmp/exp/gab-$L.json > /tmp/exp/gab-$L.log 2>&1 &
B=$!
while ! grep -q "trial 2 " /tmp/exp/gab-$L.log; do sleep 0.5; done
sysctl -qw kernel.bpf_stats_enabled=1
sleep 10
bpftool prog show -j > /tmp/exp/gab-$L-progs.json
sysctl -qw kernel.bpf_stats_enabled=0
wait $B
python3 - "$L" <<'PY'
import json,sys
L=sys.argv[1]
p=json.load(open(f'/tmp/exp/gab-{L}-progs.json'))
for x in p:
    n=x.get('name','')
    if n.startswith('sr_gap') or n.startswith('sr_floor') or n.startswith('sr_count') or n.startswith('sr_gen'):
        c=x.get('run_cnt',0); t=x.get('run_time_ns',0)
        print(L, n, 'runs', c, 'ns/run %.1f'%(t/c if c else 0))
PY
