# The raw generator and drop counter runs (bench/floor/raw.py), shared by
# floor.sh and pair.sh. Source it with these set: here (this directory),
# out (the results directory), seconds (a run's length), cpu (the
# tester's CPU), dut_cpu (the floor's). Each round makes its namespaces
# and veths ($$-suffixed names) and removes them; the EXIT trap removes
# what an interrupted round left.
# shellcheck shell=bash
gen="srfloor-g$$"
drop="srfloor-d$$"
mid="srfloor-f$$"
cleanup() {
    [ -n "${dpid:-}" ] && kill "$dpid" 2>/dev/null || true
    [ -n "${fpid:-}" ] && kill "$fpid" 2>/dev/null || true
    ip netns del "$gen" 2>/dev/null || true
    ip netns del "$drop" 2>/dev/null || true
    ip netns del "$mid" 2>/dev/null || true
}
# The NAPI threads of IFNAME (threaded now) in namespace NS: on CPU C at
# SCHED_FIFO P.
thread_napi() {
    local ns=$1 ifname=$2 c=$3 prio=$4 p
    ip netns exec "$ns" sh -c "echo 1 > /sys/class/net/$ifname/threaded"
    for p in $(pgrep "napi/$ifname-" || true); do
        taskset -pc "$c" "$p" >/dev/null
        chrt -f -p "$prio" "$p"
    done
}
trap cleanup EXIT

raw_round() {
    local i=$1
    ip netns add "$gen"
    ip netns add "$drop"
    ip link add fl-g$$ netns "$gen" type veth peer name fl-d$$ netns "$drop"
    ip -n "$gen" link set fl-g$$ up
    ip -n "$drop" link set fl-d$$ up
    local dmac
    dmac=$(ip netns exec "$drop" cat /sys/class/net/fl-d$$/address)
    ip netns exec "$drop" python3 "$here/raw.py" drop fl-d$$ "$((seconds + 2))" >"$out/raw-$i.txt" 2>&1 &
    dpid=$!
    until grep -q attached "$out/raw-$i.txt" 2>/dev/null; do sleep 0.2; done
    # The drop end's NAPI (it has one once XDP is attached): threaded, on
    # the tester CPU, above the generator.
    thread_napi "$drop" "fl-d$$" "$cpu" 50
    ip netns exec "$gen" taskset -c "$cpu" python3 "$here/raw.py" gen fl-g$$ "$seconds" "$dmac" \
        >"$out/gen-$i.txt" 2>&1
    wait "$dpid" || true
    dpid=
    ip netns del "$gen"
    ip netns del "$drop"
}

# generator (fg, tester CPU) -> fa [floor, DUT CPU] fb -> fd (drop
# counter, tester CPU)
raw_floor_round() {
    local i=$1 touch=${2:-} amac dmac tag=rawfloor
    [ -n "$touch" ] && tag=rawfloortouch
    ip netns add "$gen"
    ip netns add "$mid"
    ip netns add "$drop"
    ip link add fg$$ netns "$gen" type veth peer name fa$$ netns "$mid"
    ip link add fb$$ netns "$mid" type veth peer name fd$$ netns "$drop"
    ip -n "$gen" link set fg$$ up
    ip -n "$mid" link set fa$$ up
    ip -n "$mid" link set fb$$ up
    ip -n "$drop" link set fd$$ up
    dmac=$(ip netns exec "$drop" cat /sys/class/net/fd$$/address)
    amac=$(ip netns exec "$mid" cat /sys/class/net/fa$$/address)
    ip netns exec "$drop" python3 "$here/raw.py" drop fd$$ "$((seconds + 2))" $touch \
        >"$out/$tag-$i.txt" 2>&1 &
    dpid=$!
    until grep -q attached "$out/$tag-$i.txt" 2>/dev/null; do sleep 0.2; done
    ip netns exec "$mid" python3 "$here/raw.py" fwd fa$$ "$((seconds + 2))" fb$$ "$dmac" \
        >"$out/$tag-fwd-$i.txt" 2>&1 &
    fpid=$!
    until grep -q attached "$out/$tag-fwd-$i.txt" 2>/dev/null; do
        kill -0 "$fpid" 2>/dev/null || { cat "$out/$tag-fwd-$i.txt" >&2; exit 1; }
        sleep 0.2
    done
    thread_napi "$drop" "fd$$" "$cpu" 50
    thread_napi "$mid" "fa$$" "$dut_cpu" 40
    ip netns exec "$gen" taskset -c "$cpu" python3 "$here/raw.py" gen fg$$ "$seconds" "$amac" $touch \
        >"$out/$tag-gen-$i.txt" 2>&1
    wait "$dpid" || true
    kill "$fpid" 2>/dev/null || true
    wait "$fpid" 2>/dev/null || true
    dpid= fpid=
    ip netns del "$gen"
    ip netns del "$mid"
    ip netns del "$drop"
}
