#!/usr/bin/env bash
# The XDP tier with ten routes and with the full table (~900k IPv4 +
# 160k IPv6 prefixes from ../shared/data/routes, every one via the tester
# on port p1), one after the other on the bench's testbed.
# Usage: bench/fastpath/full-table/run.sh [softrouter binary] [results folder]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:-$here/../../../target/release/softrouter}"
out="${2:-$here/../results}"
table="${TABLE:-$here/../../../../shared/data/routes/full-table.txt.gz}"
zcat "$table" | awk '{ if (index($1, ":") > 0) print $1 " 2001:2:0:1::2"; else print $1 " 198.18.1.2" }' \
    > "$here/full.txt"
trap 'rm -f "$here/full.txt"' EXIT
for v in ten full; do
    "$bin" bench --dut softrouter --router-config "$here/$v.toml" --test throughput \
        --sizes 64 --trial-seconds 1 --quiet --json "$out/ft-$v.json" | tee "$out/ft-$v.log"
done
