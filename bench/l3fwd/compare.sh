#!/usr/bin/env bash
# Side-by-side: DPDK l3fwd (LPM, one lcore, net_pcap infinite RX from memory)
# vs softrouter (one `mem` worker) on the same 64-byte frames, same machine,
# alternating rounds.  See bench/l3fwd/README.md.
#
# usage: bench/l3fwd/compare.sh [--seconds N] [--rounds R] [--warmup W]
#                               [--core C] [--flows F] [--softrouter-bin PATH]
#                               [--no-softrouter] [--out FILE]
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
SECONDS_PER_RUN=10
ROUNDS=3
WARMUP=2
CORE=1
FLOWS=4096
SR_BIN="${SOFTROUTER_BIN:-}"
NO_SR=0
SR_NOTE=""
OUT="$REPO/results/l3fwd-compare.json"
BUILD="$REPO/target/l3fwd-build"      # gitignored (/target); never committed

while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) SECONDS_PER_RUN="$2"; shift 2 ;;
        --rounds) ROUNDS="$2"; shift 2 ;;
        --warmup) WARMUP="$2"; shift 2 ;;
        --core) CORE="$2"; shift 2 ;;
        --flows) FLOWS="$2"; shift 2 ;;
        --softrouter-bin) SR_BIN="$2"; shift 2 ;;
        --no-softrouter) NO_SR=1; shift ;;
        --out) OUT="$2"; shift 2 ;;
        -h|--help) sed -n 2,8p "$0"; exit 0 ;;
        *) echo "compare.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

log() { echo "compare.sh: $*" >&2; }

# ---- 1. packages (idempotent; needs root only when something is missing) ----
PKGS="dpdk dpdk-dev libdpdk-dev dpdk-doc pkg-config build-essential python3"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    [ "$(id -u)" = 0 ] || { log "need root to install:$missing"; exit 1; }
    log "installing:$missing"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q $PKGS >/dev/null
fi
[ "$(id -u)" = 0 ] || { log "l3fwd needs root (EAL, /var/run/dpdk)"; exit 1; }

# ---- 2. build l3fwd out of tree (DPDK's example source from dpdk-doc) ----
SRC=/usr/share/dpdk/examples
mkdir -p "$BUILD"
L3FWD="$BUILD/l3fwd/build/l3fwd"
stamp="$(dpkg-query -W -f='${Version}' dpdk-doc)-$(sha1sum "$0" | cut -c1-12)"
if [ ! -x "$L3FWD" ] || [ "$(cat "$BUILD/stamp" 2>/dev/null)" != "$stamp" ]; then
    log "building l3fwd in $BUILD"
    rm -rf "$BUILD/l3fwd" "$BUILD/common"
    cp -r "$SRC/l3fwd" "$BUILD/l3fwd"
    [ -d "$SRC/common" ] && cp -r "$SRC/common" "$BUILD/common"
    # The example asks for RX checksum offload unconditionally; net_pcap
    # advertises no RX offloads, so rte_eth_dev_configure() fails with
    # -EINVAL.  Ask for none (l3fwd then does no checksum check at all).
    sed -i 's/\.offloads = RTE_ETH_RX_OFFLOAD_CHECKSUM,/.offloads = 0, \/* net_pcap: no Rx offload capa *\//' \
        "$BUILD/l3fwd/main.c"
    grep -q 'offloads = 0, /\* net_pcap' "$BUILD/l3fwd/main.c" || { log "offload patch did not apply"; exit 1; }
    make -C "$BUILD/l3fwd" -j"$(nproc)" >"$BUILD/make.log" 2>&1 || { tail -20 "$BUILD/make.log"; exit 1; }
    echo "$stamp" >"$BUILD/stamp"
fi
cc -O2 -o "$BUILD/tsc_hz" "$HERE/tsc_hz.c"

# ---- 3. input frames ----
PCAP="$BUILD/in-$FLOWS.pcap"
python3 "$HERE/gen_pcap.py" "$PCAP" --count "$FLOWS" --dst-net 1

# ---- 4. softrouter ----
if [ "$NO_SR" = 1 ]; then
    SR_BIN=""; SR_NOTE="--no-softrouter"
elif [ -z "$SR_BIN" ]; then
    log "cargo build --release -p softrouter"
    if (cd "$REPO" && cargo build --release -p softrouter >"$BUILD/cargo.log" 2>&1); then
        SR_BIN="$REPO/target/release/softrouter"
    else
        log "softrouter build FAILED (see $BUILD/cargo.log); measuring l3fwd only"
        tail -5 "$BUILD/cargo.log" >&2
        SR_BIN=""; SR_NOTE="cargo build failed, see $BUILD/cargo.log"
    fi
fi
if [ -n "$SR_BIN" ] && ! "$SR_BIN" run --help 2>/dev/null | grep -q -- --stats-json; then
    log "$SR_BIN has no 'run --stats-json' yet; measuring l3fwd only"
    SR_NOTE="$SR_BIN has no 'run --stats-json'"; SR_BIN=""
fi

mkdir -p "$(dirname "$OUT")"
exec python3 "$HERE/run_compare.py" \
    --l3fwd "$L3FWD" --tsc-hz "$("$BUILD/tsc_hz")" --pcap "$PCAP" \
    --softrouter="${SR_BIN:-}" --softrouter-note="$SR_NOTE" --work "$BUILD" --seconds "$SECONDS_PER_RUN" \
    --rounds "$ROUNDS" --warmup "$WARMUP" --core "$CORE" --out "$OUT"
