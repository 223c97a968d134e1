#!/usr/bin/env bash
# Side-by-side: DPDK l3fwd (LPM, one lcore, net_pcap infinite RX from memory)
# vs softrouter (one `mem` worker) on the same 64-byte frames, same machine,
# alternating rounds.  See bench/l3fwd/README.md.
#
# usage: bench/l3fwd/compare.sh [--seconds N] [--rounds R] [--warmup W]
#                               [--core C] [--flows F] [--softrouter-bin PATH]
#                               [--no-softrouter] [--no-nohuge] [--hugepages N]
#                               [--table small|full] [--routes FILE] [--scaling]
#                               [--out FILE]
# --table full: both load the full routing table (--routes, default
# ../shared/data/routes/full-table.txt.gz) and the frames' destinations are
# spread over it.  --scaling: softrouter with 1 and with 2 workers (no
# l3fwd), alternating, and their ratio.
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
NOHUGE_ROW=1       # also measure l3fwd --no-huge (an extra, labelled row)
HUGEPAGES=512      # 2 MB pages wanted (1 GiB): l3fwd's -m 512 plus softrouter's tables
SR_NOTE=""
OUT=""             # default results/l3fwd-compare[-full][-scaling].json
BUILD="$REPO/target/l3fwd-build"      # gitignored (/target); never committed
TABLE=small        # small: l3fwd's two default routes; full: the full routing table
ROUTES="$REPO/../shared/data/routes/full-table.txt.gz"
SCALING=0          # 1: softrouter 1 vs 2 workers instead of l3fwd

while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) SECONDS_PER_RUN="$2"; shift 2 ;;
        --rounds) ROUNDS="$2"; shift 2 ;;
        --warmup) WARMUP="$2"; shift 2 ;;
        --core) CORE="$2"; shift 2 ;;
        --flows) FLOWS="$2"; shift 2 ;;
        --softrouter-bin) SR_BIN="$2"; shift 2 ;;
        --no-softrouter) NO_SR=1; shift ;;
        --no-nohuge) NOHUGE_ROW=0; shift ;;
        --hugepages) HUGEPAGES="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        --table) TABLE="$2"; shift 2 ;;
        --routes) ROUTES="$2"; shift 2 ;;
        --scaling) SCALING=1; shift ;;
        -h|--help) sed -n 2,13p "$0"; exit 0 ;;
        *) echo "compare.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

log() { echo "compare.sh: $*" >&2; }
if [ -z "$OUT" ]; then
    OUT="$REPO/results/l3fwd-compare"
    [ "$TABLE" = full ] && OUT="$OUT-full"
    [ "$SCALING" = 1 ] && OUT="$OUT-scaling"
    OUT="$OUT.json"
fi

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
# The full table needs room: l3fwd's LPM is sized for 1024 IPv4 rules and
# 256 tbl8 groups; a second build (only for --table full) makes that 2^21
# rules and 2^16 groups, DPDK's own figures for a full table.
L3FWD_FULL="$BUILD/l3fwd-full/build/l3fwd"
if [ "$TABLE" = full ] && { [ ! -x "$L3FWD_FULL" ] || [ "$(cat "$BUILD/stamp-full" 2>/dev/null)" != "$stamp" ]; }; then
    log "building l3fwd for the full table in $BUILD/l3fwd-full"
    rm -rf "$BUILD/l3fwd-full"
    cp -r "$BUILD/l3fwd" "$BUILD/l3fwd-full"
    rm -rf "$BUILD/l3fwd-full/build"
    sed -i -e 's/^#define IPV4_L3FWD_LPM_MAX_RULES .*/#define IPV4_L3FWD_LPM_MAX_RULES (1 << 21)/' \
           -e 's/^#define IPV4_L3FWD_LPM_NUMBER_TBL8S .*/#define IPV4_L3FWD_LPM_NUMBER_TBL8S (1 << 16)/' \
        "$BUILD/l3fwd-full/l3fwd_lpm.c"
    grep -q 'IPV4_L3FWD_LPM_MAX_RULES (1 << 21)' "$BUILD/l3fwd-full/l3fwd_lpm.c" || { log "full-table patch did not apply"; exit 1; }
    make -C "$BUILD/l3fwd-full" -j"$(nproc)" >"$BUILD/make-full.log" 2>&1 || { tail -20 "$BUILD/make-full.log"; exit 1; }
    echo "$stamp" >"$BUILD/stamp-full"
fi
cc -O2 -o "$BUILD/tsc_hz" "$HERE/tsc_hz.c"

# ---- 3. input frames ----
TABLE_ARGS=(--table "$TABLE" --scaling "$SCALING")
case "$TABLE" in
    small)
        PCAP="$BUILD/in-$FLOWS.pcap"
        python3 "$HERE/gen_pcap.py" "$PCAP" --count "$FLOWS" --dst-net 1 ;;
    full)
        [ -r "$ROUTES" ] || { log "no routing table at $ROUTES (--routes FILE)"; exit 1; }
        FT="$BUILD/full-$FLOWS"
        python3 "$HERE/full_table.py" "$ROUTES" "$FT" --count "$FLOWS" >&2
        PCAP="$FT/in.pcap"
        python3 "$HERE/gen_pcap.py" "$PCAP" --count "$FLOWS" --dst-file "$FT/dst.txt"
        L3FWD="$L3FWD_FULL"
        TABLE_ARGS+=(--rule-ipv4 "$FT/routes4.l3fwd" --rule-ipv6 "$FT/routes6.l3fwd"
                     --sr-routes "$FT/routes4.softrouter") ;;
    *) log "--table small|full, not $TABLE"; exit 2 ;;
esac

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

# ---- 5. huge pages, as DPDK's users run it ----
# l3fwd gets 2 MB huge pages (EAL's default); reserve them if the host has
# too few free, say so, and put the previous count back on every exit path.
NR=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
FREE=/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages
HUGE_MNT=""
PREV_NR="$(cat "$NR")"
restore_huge() {
    if [ "$(cat "$NR")" != "$PREV_NR" ]; then
        echo "$PREV_NR" >"$NR" || true
        log "huge pages: restored nr_hugepages to $PREV_NR (now $(cat "$NR"))"
    fi
    if [ -n "$HUGE_MNT" ]; then umount "$HUGE_MNT" 2>/dev/null && rmdir "$HUGE_MNT" 2>/dev/null || true; fi
}
trap restore_huge EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
free_now="$(cat "$FREE")"
if [ "$free_now" -lt "$HUGEPAGES" ]; then
    want=$((PREV_NR + HUGEPAGES - free_now))
    log "huge pages: $free_now free 2 MB pages, reserving: nr_hugepages $PREV_NR -> $want (restored at exit)"
    echo "$want" >"$NR"
    got="$(cat "$FREE")"
    [ "$got" -ge "$HUGEPAGES" ] || log "huge pages: only $got free after reserving (memory fragmented?); l3fwd may fail"
else
    log "huge pages: $free_now free 2 MB pages, enough; nothing reserved"
fi
if ! awk '$3 == "hugetlbfs" { found = 1 } END { exit !found }' /proc/mounts; then
    HUGE_MNT="$(mktemp -d /tmp/l3fwd-huge.XXXXXX)"
    mount -t hugetlbfs -o pagesize=2M nodev "$HUGE_MNT"
    log "huge pages: no hugetlbfs mounted, mounted one on $HUGE_MNT (unmounted at exit)"
fi
HUGE_DIR="$(awk '$3 == "hugetlbfs" { print $2; exit }' /proc/mounts)"

mkdir -p "$(dirname "$OUT")"
python3 "$HERE/run_compare.py" \
    --l3fwd "$L3FWD" --tsc-hz "$("$BUILD/tsc_hz")" --pcap "$PCAP" \
    --softrouter="${SR_BIN:-}" --softrouter-note="$SR_NOTE" --work "$BUILD" --seconds "$SECONDS_PER_RUN" \
    --rounds "$ROUNDS" --warmup "$WARMUP" --core "$CORE" --out "$OUT" \
    --huge-dir "$HUGE_DIR" --nohuge-row "$NOHUGE_ROW" "${TABLE_ARGS[@]}" \
    --huge-note "nr_hugepages $PREV_NR -> $(cat "$NR") during the run, $free_now free before"
