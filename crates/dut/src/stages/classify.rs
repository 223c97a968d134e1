//! Which stage of paper 001's Table II a sampled function belongs to, and
//! whose work a sample is (the DUT's, or the soakers', idle's, perf's or
//! another process's): one table, [`STAGES`], and the rules around it.

/// The stages of paper 001's Table II, and `other`: the fields of a
/// trial's split in the results.
pub const STAGE_NAMES: [&str; 6] = schema::dut_sample::StageFigures::NAMES;

/// Symbol patterns and their stage, first match wins. A pattern is a
/// name, `prefix*`, `*suffix` or `*infix*`; it is matched against the
/// symbol without compiler suffixes (`.isra.0`, `.constprop.0`, `.cold`).
/// `[u]` entries apply to user-space symbols only, `[ctx]` entries only
/// in the DUT's contexts (its threads, NAPI threads, ksoftirqd, the soakers,
/// idle; see [`classify`]).
///
/// The two `[ctx]` entries are the interrupt entry of the receive path
/// with threaded NAPI (which the bench's xdp tester needs): the tester's
/// transmit wakes the DUT's NAPI thread with an IPI, which preempts the
/// soaker. That interrupt runs with interrupts disabled, so `cpu-clock`
/// charges it to where they are enabled again: on the way back to the
/// interrupted task (`irqentry_exit_to_user_mode`) or after the switch to
/// the NAPI thread (`finish_task_switch`).
pub const STAGES: &[(&str, &[&str])] = &[
    // ---- TX: from dev_queue_xmit down, with the qdisc; on veth also the
    // hand-over to the peer's receive queue (see the module docs).
    (
        "tx",
        &[
            "__dev_queue_xmit",
            "dev_queue_xmit*",
            "sch_direct_xmit",
            "dev_hard_start_xmit",
            "*qdisc*",
            "pfifo_*",
            "netdev_core_pick_tx",
            "netdev_pick_tx",
            "netif_skb_features",
            "validate_xmit_*",
            "skb_network_protocol",
            "dev_xmit_*",
            "txq_*",
            "veth_xmit",
            "veth_forward_skb",
            "veth_xdp_xmit",
            "veth_xdp_rx",
            "veth_skb_is_eligible_for_gro",
            "__dev_forward_skb*",
            "dev_forward_skb*",
            "netif_rx*",
            "__netif_rx",
            "enqueue_to_backlog",
            "__napi_schedule*",
            "____napi_schedule",
            "napi_schedule*",
            "net_rps_send_ipi",
            "br_dev_queue_push_xmit",
            "packet_sendmsg",
            "packet_snd",
            "packet_direct_xmit",
            "*sys_sendto",
            "*sys_sendmsg",
            "*sys_sendmmsg",
            "sock_sendmsg*",
            "__sock_sendmsg",
            "[u] netdev_linux_send*",
            "[u] netdev_send*",
            "[u] sendmmsg",
            "[u] sendmsg",
            "[u] sendto",
            "[u] __libc_send*",
        ],
    ),
    // ---- RX: driver and stack receive, with softirq/IPI entry.
    (
        "rx",
        &[
            "*netif_receive_skb*",
            "__netif_receive*",
            "netif_receive_*",
            "net_rx_action",
            "__napi_poll",
            "napi_poll",
            "napi_threaded_poll*",
            "napi_thread_wait",
            "napi_complete_done",
            "napi_gro_*",
            "napi_busy_loop*",
            "process_backlog",
            "rps_trigger_softirq",
            "veth_*",
            "*gro_receive*",
            "*gro_complete*",
            "gro_*",
            "dev_gro_*",
            "eth_type_trans",
            "skb_defer_rx_timestamp",
            "__do_softirq",
            "handle_softirqs",
            "do_softirq*",
            "__irq_exit_rcu",
            "irq_exit*",
            "*sysvec_call_function*",
            "generic_smp_call_function_single_interrupt",
            "__flush_smp_call_function_queue",
            "[ctx] irqentry_exit*",
            "[ctx] finish_task_switch*",
            "packet_rcv",
            "tpacket_rcv",
            "packet_recvmsg",
            "*sys_recvfrom",
            "*sys_recvmsg",
            "*sys_recvmmsg",
            "do_recvmmsg",
            "sock_recvmsg*",
            "__skb_recv_datagram",
            "__skb_try_recv_datagram",
            "skb_copy_datagram_iter",
            "__skb_datagram_iter",
            "xdp_do_*",
            "bpf_prog_*",
            "[u] netdev_linux_rxq_*",
            "[u] netdev_rxq_recv",
            "[u] recvmmsg",
            "[u] recvmsg",
            "[u] recvfrom",
            "[u] __libc_recv*",
        ],
    ),
    // ---- Memory: allocating and freeing packet memory (not skb init).
    (
        "memory",
        &[
            "kmem_cache_*",
            "__kmem_cache_*",
            "kfree",
            "kfree_skbmem",
            "__kmalloc*",
            "kmalloc*",
            "*slab_alloc*",
            "*slab_free*",
            "__slab_*",
            "slab_*",
            "page_pool_*",
            "__page_pool_*",
            "napi_pp_*",
            "skb_pp_*",
            "napi_skb_cache_*",
            "skb_free_head",
            "*alloc_skb*",
            "*page_frag*",
            "__alloc_pages*",
            "alloc_pages*",
            "__free_pages*",
            "free_pages*",
            "free_unref_page*",
            "*free_frozen_pages*",
            "get_page_from_freelist",
            "rmqueue*",
            "__folio_put",
            "put_page",
            "__put_page",
            "[u] dp_packet_new*",
            "[u] dp_packet_delete*",
            "[u] dp_packet_uninit",
            "[u] malloc",
            "[u] free",
            "[u] cfree",
            "[u] _int_malloc",
            "[u] _int_free*",
            "[u] xmalloc*",
            "[u] xzalloc*",
        ],
    ),
    // ---- Processing: everything that reaches the forwarding decision
    // (IP, FIB, neighbours, netfilter, the bridge, OVS).
    (
        "processing",
        &[
            "ip_*",
            "__ip_*",
            "ip6_*",
            "__ip6_*",
            "ipv4_*",
            "ipv6_*",
            "fib_*",
            "fib4_*",
            "fib6_*",
            "__fib_*",
            "rt6_*",
            "l3mdev_*",
            "neigh_*",
            "__neigh_*",
            "dst_*",
            "nf_*",
            "__nf_*",
            "ipt_*",
            "ip6t_*",
            "xt_*",
            "br_*",
            "__br_*",
            "nbp_*",
            "fdb_*",
            "ovs_*",
        ],
    ),
    // ---- skb: initialising, releasing or changing an skbuff (not the
    // memory it lives in).
    ("skb", &["*skb*"]),
];

/// Where a sample goes: a stage, or left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Stage(&'static str),
    /// A soaker's own spinning (user space of an `sr-soak-*` thread).
    Soaker,
    /// The idle loop.
    Idle,
    /// perf itself.
    Profiler,
    /// Another process's work: its user space, or kernel work in its
    /// context that is no part of the network stack (a compiler's page
    /// faults, say; see [`classify`]).
    Foreign,
}

/// Threads in whose context the kernel does the DUT's work: NAPI threads,
/// ksoftirqd, the soakers (softirqs interrupt them) and the idle task.
const DUT_CONTEXTS: &[&str] = &["napi/*", "ksoftirqd/*", "sr-soak-*", "swapper*"];

/// ovs-vswitchd's threads (its netdev datapath polls system ports in the
/// main thread; the others are its upcall handlers and RCU).
pub const OVS_THREADS: &[&str] = &[
    "ovs-vswitchd",
    "handler*",
    "revalidator*",
    "urcu*",
    "pmd*",
    "ct_clean*",
    "ipf_clean*",
];

/// The idle loop's functions (left out).
const IDLE: &[&str] = &[
    "default_idle*",
    "*safe_halt",
    "native_halt",
    "cpuidle_*",
    "do_idle",
    "cpu_startup_entry",
    "cpu_idle_poll*",
    "arch_cpu_idle*",
    "acpi_idle*",
    "acpi_safe_halt",
    "intel_idle*",
    "mwait_idle*",
    "poll_idle",
];

/// `pat` (see [`STAGES`]) matches `name`.
fn glob(pat: &str, name: &str) -> bool {
    match (pat.strip_prefix('*'), pat.strip_suffix('*')) {
        (Some(_), Some(_)) if pat.len() >= 2 => name.contains(&pat[1..pat.len() - 1]),
        (Some(suffix), None) => name.ends_with(suffix),
        (None, Some(prefix)) => name.starts_with(prefix),
        _ => name == pat,
    }
}

/// The symbol without compiler suffixes: `veth_xdp_rcv_bulk_skb.isra.0`
/// -> `veth_xdp_rcv_bulk_skb`. C++/Rust names with `::` keep theirs.
fn base_name(sym: &str) -> &str {
    let s = sym.trim();
    if s.contains("::") {
        return s;
    }
    s.split('.').next().unwrap_or(s)
}

/// The stage of symbol `sym` (`user`: sampled in user space).
pub fn stage_of(sym: &str, user: bool) -> &'static str {
    stage_in(sym, user, false)
}

/// [`stage_of`], `ctx`: the sample is in one of the DUT's contexts.
fn stage_in(sym: &str, user: bool, ctx: bool) -> &'static str {
    let name = base_name(sym);
    if name.is_empty() || name.starts_with("0x") || name.starts_with("[unknown]") {
        return if user { "processing" } else { "other" };
    }
    for (stage, pats) in STAGES {
        for p in pats.iter() {
            let (u_only, p) = match p.strip_prefix("[u] ") {
                Some(p) => (true, p),
                None => (false, *p),
            };
            if u_only && !user {
                continue;
            }
            let (ctx_only, p) = match p.strip_prefix("[ctx] ") {
                Some(p) => (true, p),
                None => (false, p),
            };
            if ctx_only && (!ctx || user) {
                continue;
            }
            if glob(p, name) {
                return stage;
            }
        }
    }
    if user {
        "processing"
    } else {
        "other"
    }
}

/// The class of a sample of thread `comm` in `sym`; `dut_threads`: the
/// DUT's own user-space threads (patterns as in [`STAGES`]; none for the
/// kernel's forwarding and the bridge, [`OVS_THREADS`] for OVS).
///
/// The DUT CPUs are shared with whatever else the machine runs (the bench's
/// own unpinned threads, a compiler): user-space samples of any other
/// thread are [`Class::Foreign`], and so are its kernel samples unless
/// they are in the network stack (a softirq that interrupted it: on the
/// DUT's CPUs all network work is the DUT's).
pub fn classify(comm: &str, sym: &str, user: bool, dut_threads: &[&str]) -> Class {
    if comm.starts_with("sr-soak-") && user {
        return Class::Soaker;
    }
    if comm == "perf" || comm.starts_with("perf-") {
        return Class::Profiler;
    }
    if !user && IDLE.iter().any(|p| glob(p, base_name(sym))) {
        return Class::Idle;
    }
    let own = dut_threads.iter().any(|p| glob(p, comm));
    if user && !own {
        return Class::Foreign;
    }
    let ctx = own || DUT_CONTEXTS.iter().any(|p| glob(p, comm));
    let stage = stage_in(sym, user, ctx);
    if stage == "other" && !ctx {
        return Class::Foreign;
    }
    Class::Stage(stage)
}
