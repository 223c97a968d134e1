#!/usr/bin/env bash
# The XDP tier beside the floor DUT through the veth testbed (issue 21 item
# 3): `softrouter bench --dut floor,softrouter --repeat R` at 64 B IPv4,
# short trials (the first at the tester's calibrated maximum). The bench's
# own tables give each round's "x the floor" and, with R > 1, its median
# and range over the rounds. With --stats, also the kernel's run-time
# statistics of both XDP programs during the run
# (kernel.bpf_stats_enabled; ns per program run on the real frames; needs
# bpftool). The switch is the whole machine's: while it is on, every BPF
# program run pays two clock reads (~70 ns a run on this VM, others' too),
# so the cycle figures of such a run are not the plain ones; it is set
# back when the script ends.
#
# Usage: bench/floor/tier.sh [--rounds R] [--softrouter BIN] [--label NAME] [--soak] [--stats]
# Writes bench/floor/results/tier-<stamp>[-NAME]/ (command.txt, exp.toml,
# bench.{json,txt}, stats.txt, summary.txt) and prints summary.txt: the
# bench's comparison and the programs' ns a run. Needs root. About 30-40 s a round.
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
echo "$0 --rounds $rounds --softrouter $bin ${soak[*]} ${stats:+--stats} (load $(cut -d' ' -f1-3 /proc/loadavg))" >"$out/command.txt"
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
spid=
cleanup() {
    [ -n "$spid" ] && kill "$spid" 2>/dev/null || true
    sysctl -qw kernel.bpf_stats_enabled="$old_stats"
}
trap cleanup EXIT
if [ -n "$stats" ]; then
    sysctl -qw kernel.bpf_stats_enabled=1
    # Every half second: run_time_ns and run_cnt of the two XDP programs.
    while :; do
        bpftool prog show 2>/dev/null | grep -E "name (sr_fwd|sr_floor) " || true
        sleep 0.5
    done >"$out/stats.txt" &
    spid=$!
fi
"$bin" bench -e "$out/exp.toml" --dut floor,softrouter --test throughput --sizes 64 --ip 4 \
    --repeat "$rounds" "${soak[@]}" --quiet --json "$out/bench.json" >"$out/bench.txt" 2>&1 || {
    echo "tier.sh: the bench failed, see $out/bench.txt" >&2; exit 1; }
# ns a run of each program instance (a DUT's start loads its own) that ran
# more than 100,000 times: its last sample's totals over its first's.
programs() {
    awk '{ t = c = ""
           for (i = 1; i < NF; i++) {
               if ($i == "name") n = $(i + 1)
               if ($i == "run_time_ns") t = $(i + 1)
               if ($i == "run_cnt") c = $(i + 1)
           }
           if (c == "") next
           id = $1; sub(":", "", id); k = n " (program " id ")"
           if (!(k in t0)) { t0[k] = t; c0[k] = c; order[++m] = k }
           t1[k] = t; c1[k] = c }
         END { for (j = 1; j <= m; j++) { k = order[j]
                   if (c1[k] - c0[k] > 100000)
                       printf "programs: %s: %.1f ns a run over %d runs\n", k,
                           (t1[k] - t0[k]) / (c1[k] - c0[k]), c1[k] - c0[k] } }' "$out/stats.txt"
}
{
    cat "$out/command.txt"
    sed -n '/^throughput, Mpps (conditional throughput)/,$p' "$out/bench.txt"
    if [ -n "$stats" ]; then programs; fi
} | tee "$out/summary.txt"
