//! The Rust side of the program's own maps: what user space writes into
//! them and reads back. The C side (`bpf/fwd.h`) is compiled against
//! `sr_layout.h`, generated from these (sizes, offsets, flags, counter
//! indices; `tests/vocabulary.rs`), and asserts its structs against it, so
//! a change here that the C lacks fails its build.
//!
//! The neighbour entries the program reads are the dataplane's
//! `NeighEntry`, described once, in `dataplane::neighbor::layout`.

/// Router ports the program serves (`FP_MAX_PORTS`).
pub const MAX_PORTS: usize = 64;
/// RX queues per port the program punts to (`FP_MAX_QUEUES`).
pub const MAX_QUEUES: usize = 64;

/// Slots of the ingress port cache (`FP_IN_SLOTS`, a power of two): an
/// interface's [`InSlot`] is slot `ifindex % IN_SLOTS`.
pub const IN_SLOTS: usize = 256;

/// `struct fp_in_slot`: which router port an interface is, in the
/// direct-mapped cache the program reads first for every frame. Why: the
/// hash of ifindexes (`in_ports`, which holds them all) costs a helper
/// call and a jhash per frame, about 30 ns on this machine (issue 21's
/// `tests/tier_cost.rs`); an array slot costs a load. Two interfaces
/// whose ifindexes share a slot: the last written has it, the other is
/// found in the hash.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InSlot {
    /// 0: empty (no interface has ifindex 0).
    pub ifindex: u32,
    pub port: u32,
}

/// Bytes of one value of the shared table maps (`struct u32x16` /
/// `struct u64x8`): 64, so the mapped array is contiguous.
pub const TABLE_VALUE: usize = 64;

/// `struct fp_port`: a router port as the program sees it.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortSlot {
    pub mac: [u8; 6],
    /// IP MTU (bytes of the IP packet, without Ethernet).
    pub mtu: u16,
    /// [`PORT_XDP_TX`] and future flags.
    pub flags: u32,
    pub _pad: u32,
}

/// The port takes redirected XDP frames (`FP_PORT_XDP_TX`).
pub const PORT_XDP_TX: u32 = 1;
/// `[kernel] local` (`FP_PORT_KERNEL_LOCAL`): the program passes the
/// kernel's share of the router's own traffic (all but ICMP echo
/// requests), ARP, ND, link-local and multicast to the kernel's stack.
pub const PORT_KERNEL_LOCAL: u32 = 2;

/// `struct fp_clock`: the workers' clock, so both tiers age neighbours
/// alike.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Clock {
    /// CLOCK_MONOTONIC at the workers' epoch, ns.
    pub epoch_ns: u64,
    /// Added to the program's milliseconds (the workers' test clock
    /// offset).
    pub offset_ms: u64,
    /// A REACHABLE neighbour confirmed longer ago than this is the
    /// workers' (they probe it).
    pub reachable_ms: u64,
}

impl Clock {
    /// CLOCK_MONOTONIC now, ns: the program's `bpf_ktime_get_coarse_ns`
    /// base. Read it when the workers take their epoch (`Instant::now()`
    /// is the same clock) to fill [`Clock::epoch_ns`].
    pub fn monotonic_ns() -> u64 {
        bpf::mono_ns()
    }
}

/// The program's counters (`enum fp_counter`, `FP_` and the name in
/// capitals), per port and CPU. Forwarded frames count on their ingress
/// port (`Rx*`) and egress port (`Tx*`); punts count on the ingress port by
/// reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Counter {
    /// Forwarded, counted on the ingress port.
    RxForwarded,
    RxForwardedBytes,
    /// Forwarded, counted on the egress port.
    Tx,
    TxBytes,
    /// Not to the port's MAC, or from a group MAC.
    PuntL2,
    /// ARP, 802.1Q, other EtherTypes.
    PuntNotIp,
    /// Any IP header check the workers must judge.
    PuntHeader,
    PuntNoRoute,
    /// For the router itself.
    PuntLocal,
    /// A host on a connected subnet, no host entry yet.
    PuntConnected,
    PuntBlackhole,
    /// TTL / hop limit <= 1.
    PuntTtl,
    /// Larger than the egress MTU.
    PuntMtu,
    /// Neighbour not REACHABLE or STATIC.
    PuntNeigh,
    /// The egress port cannot take XDP frames.
    PuntEgress,
    /// An id beyond a table (writer bug or resize).
    PuntTable,
    /// Redirected to this port and dropped by its driver (counted on the
    /// egress port by the `xdp_devmap_xmit` tracepoint program).
    XmitDrops,
    /// Passed to the kernel's stack (`[kernel] local`); neither forwarded
    /// nor punted, the workers never see them.
    ToKernel,
}

/// Number of counters (`FP_NCOUNTERS`).
pub const NCOUNTERS: usize = Counter::ToKernel as usize + 1;

impl Counter {
    /// Every counter, in index order (the C enum is generated from it).
    pub const ALL: [Counter; NCOUNTERS] = [
        Counter::RxForwarded,
        Counter::RxForwardedBytes,
        Counter::Tx,
        Counter::TxBytes,
        Counter::PuntL2,
        Counter::PuntNotIp,
        Counter::PuntHeader,
        Counter::PuntNoRoute,
        Counter::PuntLocal,
        Counter::PuntConnected,
        Counter::PuntBlackhole,
        Counter::PuntTtl,
        Counter::PuntMtu,
        Counter::PuntNeigh,
        Counter::PuntEgress,
        Counter::PuntTable,
        Counter::XmitDrops,
        Counter::ToKernel,
    ];

    /// Every punt reason, with its name in the statistics.
    pub const PUNTS: [(Counter, &'static str); 12] = [
        (Counter::PuntL2, "l2"),
        (Counter::PuntNotIp, "not_ip"),
        (Counter::PuntHeader, "header"),
        (Counter::PuntNoRoute, "no_route"),
        (Counter::PuntLocal, "local"),
        (Counter::PuntConnected, "connected"),
        (Counter::PuntBlackhole, "blackhole"),
        (Counter::PuntTtl, "ttl"),
        (Counter::PuntMtu, "mtu"),
        (Counter::PuntNeigh, "neighbour"),
        (Counter::PuntEgress, "egress"),
        (Counter::PuntTable, "table"),
    ];
}

/// `struct fp_counters`: one port's counters on one CPU.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters(pub [u64; NCOUNTERS]);

impl Counters {
    pub fn get(&self, c: Counter) -> u64 {
        self.0[c as usize]
    }

    /// Punted frames, all reasons.
    pub fn punted(&self) -> u64 {
        Counter::PUNTS.iter().map(|&(c, _)| self.get(c)).sum()
    }
}

/// `struct fp_identity`: the kernel ids the tracepoint programs know the
/// forwarding program's events by.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Identity {
    pub prog_id: u32,
    pub tx_map_id: u32,
    /// The router's network namespace (its `SO_NETNS_COOKIE`): ifindexes
    /// are per namespace, so the egress drop counter counts only flushes
    /// of devices in it.
    pub netns_cookie: u64,
}

// SAFETY: integers, no padding (4 + 4 + 8).
unsafe impl aya::Pod for Identity {}
// SAFETY: two integers.
unsafe impl aya::Pod for InSlot {}
// SAFETY: plain integers, any bit pattern valid (read from the kernel).
unsafe impl aya::Pod for Counters {}
// SAFETY: plain integers and bytes, no padding holes that matter.
unsafe impl aya::Pod for PortSlot {}

// The program takes the slot with a mask.
const _: () = assert!(IN_SLOTS.is_power_of_two());

// `Counter::ALL` lists each counter at its index.
const _: () = {
    let mut i = 0;
    while i < NCOUNTERS {
        assert!(Counter::ALL[i] as usize == i);
        i += 1;
    }
};
