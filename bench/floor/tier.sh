#!/usr/bin/env bash
# The XDP tier beside the floor DUT through the veth testbed (issue 21 item
# 3): `softrouter bench --dut floor,softrouter` at 64 B IPv4, short trials
# (the first at the tester's calibrated maximum), R rounds; per round each
# DUT's NDR, DUT cycles per packet and "x the floor" from the bench's own
# comparison, and with --stats the kernel's run-time statistics of both XDP
# programs during the run (kernel.bpf_stats_enabled; ns per program run on
# the real frames; needs bpftool). The switch is the whole machine's: while
# it is on, every BPF program run pays two clock reads (~70 ns a run on
# this VM, others' too), so the cycle figures of such a run are not the
# plain ones; it is set back when the script ends.
#
# Usage: bench/floor/tier.sh [--rounds R] [--softrouter BIN] [--label NAME] [--soak] [--stats]
# Writes bench/floor/results/tier-<stamp>[-NAME]/ (command.txt, exp.toml,
# bench-<i>.{json,txt}, stats-<i>.txt, summary.txt) and prints the summary.
# Needs root and python3. About 30-40 s a round.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
rounds=1
bin="$root/target/release/softrouter"
label=
soak=()
stats=
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds="$2"; shift 2 ;;
        --softrouter) bin="$2"; shift 2 ;;
        --label) label="-$2"; shift 2 ;;
        --soak) soak=(--soak); shift ;;
        --stats) stats=1; shift ;;
        *) echo "tier.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -x "$bin" ] || (cd "$root" && cargo build --locked --release -p softrouter)
out="$here/results/tier-$(date -u +%Y%m%dT%H%M%SZ)$label"
mkdir -p "$out"
cat >"$out/exp.toml" <<'EXP'
trial_seconds = 0.5
pause_seconds = 0.1
drain_seconds = 0.5
goals = [{ name = "ndr", final_trial_seconds = 0.5, duration_sum_seconds = 1.0, width_pct = 2.0 }]
EXP
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
spid=
cleanup() {
    [ -n "$spid" ] && kill "$spid" 2>/dev/null || true
    sysctl -qw kernel.bpf_stats_enabled="$old_stats"
}
trap cleanup EXIT
# Every half second: run_cnt and run_time_ns of the two XDP programs.
sample() {
    while :; do
        { bpftool prog show 2>/dev/null | grep -E "name (sr_fwd|sr_floor) " || true; } |
            sed "s/^/$(date +%s.%N) /"
        sleep 0.5
    done
}
for i in $(seq 1 "$rounds"); do
    if [ -n "$stats" ]; then
        sysctl -qw kernel.bpf_stats_enabled=1
        sample >"$out/stats-$i.txt" & spid=$!
    fi
    "$bin" bench -e "$out/exp.toml" --dut floor,softrouter --test throughput --sizes 64 --ip 4 \
        "${soak[@]}" --quiet --json "$out/bench-$i.json" >"$out/bench-$i.txt" 2>&1 || {
        echo "tier.sh: the bench failed, see $out/bench-$i.txt" >&2; exit 1; }
    if [ -n "$spid" ]; then kill "$spid"; wait "$spid" 2>/dev/null || true; spid=; fi
done
echo "$0 --rounds $rounds --softrouter $bin ${soak[*]} ${stats:+--stats} (load $(cut -d' ' -f1-3 /proc/loadavg))" >"$out/command.txt"
python3 - "$out" <<'PY' | tee "$out/summary.txt"
import glob, json, os, re, sys
out = sys.argv[1]
print(open(os.path.join(out, "command.txt")).read().strip())
print(f"{'round':>5} {'dut':>10} {'NDR Mpps':>9} {'cyc/pkt':>8} {'x floor cyc':>11} {'x floor cap':>11} {'prog ns/run':>11}")
for b in sorted(glob.glob(os.path.join(out, "bench-*.json"))):
    i = re.search(r"bench-(\d+)", b).group(1)
    ns = {}
    s = os.path.join(out, f"stats-{i}.txt")
    if os.path.exists(s):
        first, last = {}, {}
        for line in open(s):
            m = re.search(r"^\S+ (\d+): xdp\s+name (\S+).*run_time_ns (\d+) run_cnt (\d+)", line)
            if m:
                key = (m.group(2), m.group(1))
                v = (int(m.group(3)), int(m.group(4)))
                first.setdefault(key, v)
                last[key] = v
        for (name, _), (t1, c1) in last.items():
            t0, c0 = first[(name, _)]
            if c1 - c0 > 100000:
                ns[name] = (t1 - t0) / (c1 - c0)
    doc = json.load(open(b))
    for row in doc.get("comparison", []):
        for d in row["duts"]:
            x = d.get("x_floor") or {}
            g = d["goals"][0]
            prog = ns.get("sr_floor" if d["dut"] == "floor" else "sr_fwd")
            f = lambda v, p: "-" if v is None else f"{v:.{p}f}"
            print(f"{i:>5} {d['dut']:>10} {f(g['fps'] / 1e6, 3):>8}{'+' if g.get('lower_bound') else ' '} "
                  f"{f(d.get('cycles_per_packet'), 0):>8} {f(x.get('cycles_per_packet'), 2):>11} "
                  f"{f(x.get('capacity'), 2):>11} {f(prog, 1):>11}")
PY
