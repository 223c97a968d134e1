#!/usr/bin/env bash
# Runs the paper experiments one after the other and times each:
#
#   experiments/run.sh [--quick] [NAME...]     (NAME: 000, 001, 002, 004, 004b)
#
# Each writes experiments/results/<file>[-quick].{json,html,log}. After
# each run it checks that nothing was left behind: no network namespace,
# no softrouter, ovsdb-server or ovs-vswitchd process of the run, and the
# global netdev_budget back to what it was (on a machine where nothing
# else runs softrouter or Open vSwitch). A run over 15 minutes (the
# experiments' budget) or anything left behind fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=()
suffix=""
if [ "${1:-}" = "--quick" ]; then
    quick=(--quick)
    suffix="-quick"
    shift
fi
bin=./target/release/softrouter
[ -x "$bin" ] || cargo build --locked --release -p softrouter
mkdir -p experiments/results
budget_before=$(cat /proc/sys/net/core/netdev_budget)
netns_before=$(ip netns list | wc -l)
status=0
files=()
if [ $# -eq 0 ]; then
    files=(experiments/[0-9]*.toml)
else
    for n in "$@"; do files+=(experiments/"$n"-*.toml); done
fi
for f in "${files[@]}"; do
    name=$(basename "$f" .toml)$suffix
    out=experiments/results/$name
    start=$(date +%s)
    rc=0
    "$bin" bench -e "$f" "${quick[@]}" --quiet --json "$out.json" --report "$out.html" \
        >"$out.log" 2>&1 || rc=$?
    secs=$(($(date +%s) - start))
    left=""
    [ "$(ip netns list | wc -l)" = "$netns_before" ] || left+=" network namespaces"
    [ "$(cat /proc/sys/net/core/netdev_budget)" = "$budget_before" ] || left+=" netdev_budget"
    pgrep -f "softrouter run|ovs-vswitchd|ovsdb-server" >/dev/null && left+=" processes"
    printf '%-28s rc %d  %3d min %02d s%s\n' "$name" "$rc" $((secs / 60)) $((secs % 60)) \
        "${left:+  LEFT BEHIND:$left}"
    if [ "$rc" != 0 ] || [ -n "$left" ] || [ "$secs" -gt 900 ]; then status=1; fi
done
exit $status
