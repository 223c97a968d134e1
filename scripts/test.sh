#!/usr/bin/env bash
# Sets up the machine, then runs every test of the workspace: unit, property,
# golden-pcap, fuzz-corpus replays and the network-namespace integration
# tests (these need root; without it they skip themselves and say so).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
# One build: the tests run the `softrouter` binary cargo builds for them
# (test profile, optimised), not a separate release build.
# No harness flags: criterion benches (run once each in test mode) reject
# them; netns tests serialize themselves where they must.
# The bench's runs in the tests check behaviour, not figures: no waiting
# for the host to place the tester's and the DUT's CPUs near (up to a
# minute a DUT's run; `docs/reading-results.md`).
export SOFTROUTER_PLACEMENT_WAIT=0
# Nor to pin the tester's maximum down to 3 %: a coarse calibration takes
# about a third of the time (docs/bench-testbed.md).
export SOFTROUTER_CALIBRATION=coarse
# Nor to watch the DUT's CPU for the host's pauses before each DUT's run
# (2 s each, `meta.host_probe`).
export SOFTROUTER_PAUSE_WATCH=0
cargo test --locked --workspace --all-targets
