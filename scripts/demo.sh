#!/usr/bin/env bash
# Sets up the machine, builds softrouter and runs the quick RFC 2544 suite:
# softrouter and Linux kernel forwarding side by side on a namespace testbed.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
cargo build --locked --release -p softrouter
exec ./target/release/softrouter bench "$@"
