#!/usr/bin/env bash
# Sets up the machine, builds softrouter and runs the quick RFC 2544 suite:
# softrouter and Linux kernel forwarding side by side on a namespace testbed.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
cargo build --locked --release -p softrouter
if [ $# -eq 0 ]; then
    # The quick suite, with every output: tables on the terminal; one JSON
    # and one CSV file holding both DUTs' runs, a chart and the HTML report, in results/.
    mkdir -p results
    set -- --json results/demo.json --csv results/demo.csv --plot results/demo.svg \
        --report results/demo.html
fi
exec ./target/release/softrouter bench "$@"
