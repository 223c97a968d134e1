#!/usr/bin/env bash
# The XDP tier's program against the floor DUT's, per code path (issue 21
# item 3): crates/fastpath/tests/tier_cost.rs runs both programs with
# BPF_PROG_TEST_RUN (repeat 250, the kernel times them) on the same 64 B
# IPv4 / 78 B IPv6 frames, tier and floor calls interleaved, and prints ns
# per run for each path, the floor's, the harness alone (the kernel's
# loop; subtracted in the last three columns) and the ratios.
#
# Usage: bench/fastpath/cost.sh [--rounds N] [--label NAME] [--base REV]
# --base REV: REV's bpf/fwd.bpf.c (compiled as bpf-build compiles it) runs
# beside the working tree's, call for call, with two more columns: the
# base's program ns and tier/base (REV's tables and maps must be this
# tree's). For a cut to the program: measured against the code before it
# in the same run.
# Writes bench/fastpath/results/cost-<stamp>[-NAME].txt (the command and
# the table) and prints the table. Needs root. About 15-30 s at the
# default 60 rounds (each call with repeat > 1 swaps the kernel's XDP
# dispatcher, an RCU grace period: the wall time is mostly waiting).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
rounds=60
label=
base=
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds="$2"; shift 2 ;;
        --label) label="-$2"; shift 2 ;;
        --base) base="$2"; shift 2 ;;
        *) echo "cost.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
mkdir -p "$here/results"
if [ -n "$base" ]; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    git -C "$root" archive "$base" crates/fastpath/bpf crates/bpf-build/include | tar -x -C "$tmp"
    "$root/crates/bpf-build/cc.sh" "$tmp" fastpath fwd "$tmp/base.o"
    export TIERCOST_BASE="$tmp/base.o"
fi
out="$here/results/cost-$(date -u +%Y%m%dT%H%M%SZ)$label.txt"
cmd=(cargo test -p softrouter-fastpath --test tier_cost -- --ignored --nocapture --test-threads 1)
{
    echo "# TIERCOST_ROUNDS=$rounds${base:+ TIERCOST_BASE=fwd.bpf.o@$base} ${cmd[*]}"
    echo "# $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet -- crates/fastpath/bpf || echo ' (fwd.bpf.c modified)'), $(uname -r), load: $(cut -d' ' -f1-3 /proc/loadavg)"
    (cd "$root" && TIERCOST_ROUNDS="$rounds" "${cmd[@]}" 2>&1) | sed -n 's/^.*\(tier_cost: \)/\1/p; /^\(path\|ipv\|punt\)/p'
} | tee "$out"
echo "cost.sh: $out" >&2
