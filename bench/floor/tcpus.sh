#!/usr/bin/env bash
# The xdp tester's scaling with its CPUs (issue 21 item 2, --tester-cpus):
# the calibrated zero-loss maximum in loopback at 64 B on one tester CPU
# (the last) and on two (the last two: both CPUs of a 2-CPU machine), one
# generator and one receive queue per CPU, per round.
#
# Usage: bench/floor/tcpus.sh [--rounds R]
# Writes bench/floor/results/tcpus-<stamp>/round-<i>.txt and prints each
# round's maxima and ratio and the median ratio. Needs root and two CPUs;
# about 12 s a round.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
rounds=3
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds="$2"; shift 2 ;;
        *) echo "tcpus.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
out="$here/results/tcpus-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
cd "$root"
bin=$(cargo test --release -p softrouter-traffic --test tester_cpus --no-run 2>&1 |
    sed -n 's/.*Executable tests\/tester_cpus.rs (\(.*\))/\1/p')
[ -x "$bin" ] || { echo "tcpus.sh: building the tester_cpus test failed" >&2; exit 1; }
echo "$0 --rounds $rounds" >"$out/command.txt"
for i in $(seq 1 "$rounds"); do
    "$bin" --ignored --nocapture --exact scaling 2>"$out/round-$i.log" | grep '^tcpus ' >"$out/round-$i.txt"
    echo "round $i: $(tr '\n' ' ' <"$out/round-$i.txt")"
done
ratios=$(cat "$out"/round-*.txt | sed -n 's/^tcpus ratio=//p' | sort -n)
n=$(echo "$ratios" | wc -l)
echo "median ratio (2 CPUs / 1): $(echo "$ratios" | sed -n "$(( (n + 1) / 2 ))p") over $n rounds; raw results in $out"
