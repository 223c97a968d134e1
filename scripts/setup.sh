#!/usr/bin/env bash
# Installs everything softrouter needs on a fresh Debian 12 machine (run as
# root). Idempotent: packages already present are skipped quickly.
set -euo pipefail

packages=(
    build-essential pkg-config   # cc for build scripts
    clang libbpf-dev             # the tester's BPF programs (crates/tester/bpf), built by build.rs
    iproute2 ethtool             # ip netns / veth testbed, queue counts
    iputils-ping traceroute      # integration tests use the tools people use
    netcat-openbsd socat         # TCP/UDP transfers through the router
    tcpdump                      # debugging captures of the testbed
    bpftool                      # bench/floor/tier.sh --stats: the programs' run-time stats (optional)
    linux-perf                   # perf stat for DUT cycle figures (optional)
    curl ca-certificates         # rustup, when the machine has no Rust yet
    python3                      # bench/ scripts summarise their JSON
    openvswitch-switch           # the bench's ovs DUT (paper 001), user-space datapath
    bird2                        # the control-plane test: BGP over softrouter's port (tests/bird.rs)
    chromium                     # tests/report.rs renders `softrouter report`'s page headless
)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup.sh: need root to install: ${missing[*]}" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Rust: the workspace pins rust-version; rustup provides cargo on the machine.
if ! command -v cargo >/dev/null 2>&1; then
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    elif command -v curl >/dev/null 2>&1 &&
        curl -sSf https://sh.rustup.rs -o /tmp/rustup-init.sh 2>/dev/null; then
        sh /tmp/rustup-init.sh -y --profile minimal --default-toolchain 1.95.0
        export PATH="$HOME/.cargo/bin:$PATH"
    else
        echo "setup.sh: cargo not found and rustup unreachable; install Rust 1.95 first" >&2
        exit 1
    fi
fi

# BIRD and Open vSwitch: the tests and the bench start their own, in
# namespaces, from private folders; the distribution's services would run
# in the root namespace (BIRD programming its table), so they stay off.
if [ -d /run/systemd/system ]; then
    for unit in bird openvswitch-switch; do
        systemctl disable --now "$unit" >/dev/null 2>&1 || true
    done
fi

# BPF filesystem (AF_XDP maps are not pinned, but bpftool-style debugging wants it).
mountpoint -q /sys/fs/bpf 2>/dev/null || mount -t bpf bpf /sys/fs/bpf 2>/dev/null || true
