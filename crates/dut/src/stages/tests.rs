//! The parser, the classification, the split and a real perf run.

use super::*;

/// Part of a real `perf report` of the linux DUT's CPU (threaded
/// NAPI, xdp tester), with a soaker, idle and perf line added.
const REPORT: &str = "\
    29.62%          1002  napi/sr4019x4b-  [k] __napi_schedule
    11.56%           391  sr-soak-0        [.] std::sys::backtrace::__rust_begin_short_backtrace
     3.72%           126  napi/sr4019x4b-  [k] veth_xmit
     2.75%            93  napi/sr4019x4b-  [k] csum_partial
     2.48%            84  napi/sr4019x4b-  [k] netif_receive_skb_list_internal
     2.42%            82  napi/sr4019x4b-  [k] __dev_queue_xmit
     2.34%            79  napi/sr4019x4b-  [k] ip_sublist_rcv
     2.10%            71  napi/sr4019x4b-  [k] ip_forward
     2.07%            70  napi/sr4019x4b-  [k] veth_xdp_rcv
     1.83%            62  napi/sr4019x4b-  [k] napi_skb_cache_get_bulk
     1.36%            46  sr-soak-0        [k] __sysvec_call_function_single
     1.06%            36  napi/sr4019x4b-  [k] veth_xdp_rcv_bulk_skb.isra.0
     1.03%            35  napi/sr4019x4b-  [k] __xdp_build_skb_from_frame
     0.98%            33  napi/sr4019x4b-  [k] skb_defer_rx_timestamp
     0.74%            25  napi/sr4019x4b-  [k] __kmem_cache_alloc_bulk
     0.50%            17  swapper          [k] pv_native_safe_halt
     0.30%            10  perf             [k] perf_output_sample
     0.20%             7  ovs-vswitchd     [.] miniflow_extract
     0.10%             3  my thread name   [.] 0x00007f0000001234
     0.10%             4  rustc            [k] irqentry_exit_to_user_mode
     0.10%             5  rustc            [k] net_rx_action
";

#[test]
fn parses_perf_report_rows() {
    let rows = parse_report(REPORT);
    assert_eq!(rows.len(), 21);
    assert_eq!(
        rows[0],
        Row {
            samples: 1002,
            comm: "napi/sr4019x4b-".into(),
            kernel: true,
            sym: "__napi_schedule".into(),
        }
    );
    assert!(!rows[1].kernel);
    assert_eq!(rows[1].comm, "sr-soak-0");
    assert_eq!(rows[18].comm, "my thread name", "comms with spaces");
    assert_eq!(rows[18].sym, "0x00007f0000001234");
    // Headers, blank lines and warnings are skipped.
    let noisy = format!("# Samples: 3K\n#\n\nWarning: lost samples\n{REPORT}");
    assert_eq!(parse_report(&noisy).len(), 21);
}

#[test]
fn classifies_symbols_by_the_table() {
    let k = |s| stage_of(s, false);
    for s in [
        "veth_xmit",
        "__dev_queue_xmit",
        "sch_direct_xmit",
        "dev_hard_start_xmit",
        "pfifo_fast_enqueue",
        "__qdisc_run",
        "__napi_schedule",
        "__dev_forward_skb2",
        "netif_rx_internal",
    ] {
        assert_eq!(k(s), "tx", "{s}");
    }
    for s in [
        "veth_poll",
        "veth_xdp_rcv_bulk_skb.isra.0",
        "napi_threaded_poll",
        "__netif_receive_skb_core.constprop.0",
        "netif_receive_skb_list_internal",
        "net_rx_action",
        "process_backlog",
        "dev_gro_receive",
        "eth_type_trans",
        "handle_softirqs",
        "__sysvec_call_function_single",
    ] {
        assert_eq!(k(s), "rx", "{s}");
    }
    for s in [
        "kmem_cache_alloc_bulk",
        "__kmem_cache_alloc_bulk",
        "kmem_cache_free",
        "kfree",
        "__kmalloc_node_track_caller",
        "page_pool_put_unrefed_page",
        "napi_skb_cache_get_bulk",
        "__alloc_skb",
        "__napi_alloc_skb",
        "skb_free_head",
        "kfree_skbmem",
    ] {
        assert_eq!(k(s), "memory", "{s}");
    }
    for s in [
        "__build_skb_around",
        "__xdp_build_skb_from_frame",
        "skb_release_data",
        "kfree_skb_reason",
        "consume_skb",
        "napi_consume_skb",
        "skb_clone",
        "__copy_skb_header",
    ] {
        assert_eq!(k(s), "skb", "{s}");
    }
    for s in [
        "ip_forward",
        "ip_rcv_finish_core.isra.0",
        "ip_skb_dst_mtu",
        "fib_table_lookup",
        "ip6_forward",
        "neigh_resolve_output",
        "nf_hook_slow",
        "br_handle_frame",
        "br_fdb_find_rcu",
    ] {
        assert_eq!(k(s), "processing", "{s}");
    }
    for s in [
        "csum_partial",
        "_raw_spin_lock",
        "memcpy",
        "0xffffffff81000000",
    ] {
        assert_eq!(k(s), "other", "{s}");
    }
    // OVS user space.
    let u = |s| stage_of(s, true);
    assert_eq!(u("miniflow_extract"), "processing");
    assert_eq!(u("dpcls_lookup"), "processing");
    assert_eq!(u("0x00007f0000001234"), "processing");
    assert_eq!(u("netdev_linux_rxq_recv"), "rx");
    assert_eq!(u("netdev_linux_send"), "tx");
    assert_eq!(u("dp_packet_delete"), "memory");
    assert_eq!(u("free"), "memory");
    assert_eq!(k("free"), "other", "[u] patterns are user space only");
    // Left out.
    assert_eq!(
        classify("sr-soak-1", "dut::soak::soak", true, &[]),
        Class::Soaker
    );
    assert_eq!(
        classify("sr-soak-1", "__sysvec_call_function_single", false, &[]),
        Class::Stage("rx"),
        "kernel work in the soaker's context is the DUT's"
    );
    assert_eq!(
        classify("swapper", "pv_native_safe_halt", false, &[]),
        Class::Idle
    );
    assert_eq!(
        classify("swapper", "net_rx_action", false, &[]),
        Class::Stage("rx")
    );
    assert_eq!(
        classify("perf", "perf_output_sample", false, &[]),
        Class::Profiler
    );
    // Other processes' work is not the DUT's, but the network stack
    // in their context (an interrupting softirq) is.
    assert_eq!(
        classify("rustc", "computeKnownBits", true, &[]),
        Class::Foreign
    );
    assert_eq!(
        classify("rustc", "irqentry_exit_to_user_mode", false, &[]),
        Class::Foreign
    );
    assert_eq!(
        classify("rustc", "__netif_receive_skb_core", false, &[]),
        Class::Stage("rx")
    );
    assert_eq!(
        classify("napi/sr1x4b-0", "_raw_spin_lock", false, &[]),
        Class::Stage("other")
    );
    // Interrupt entry: rx in the DUT's contexts only.
    assert_eq!(
        classify("sr-soak-0", "irqentry_exit_to_user_mode", false, &[]),
        Class::Stage("rx")
    );
    assert_eq!(
        classify("napi/sr1x4b-0", "finish_task_switch.isra.0", false, &[]),
        Class::Stage("rx")
    );
    assert_eq!(stage_of("finish_task_switch.isra.0", false), "other");
    assert_eq!(
        classify("ovs-vswitchd", "miniflow_extract", true, OVS_THREADS),
        Class::Stage("processing")
    );
    assert_eq!(
        classify("handler3", "__memcpy_avx_unaligned", true, OVS_THREADS),
        Class::Stage("processing")
    );
    assert_eq!(
        classify("ovs-vswitchd", "miniflow_extract", true, &[]),
        Class::Foreign
    );
    // Every stage of the table is one of the names.
    for (st, _) in STAGES {
        assert!(STAGE_NAMES.contains(st), "{st}");
    }
}

#[test]
fn splits_shares_and_cycles() {
    let split = Split::of(&parse_report(REPORT), OVS_THREADS);
    assert_eq!(split.soaker, 391);
    assert_eq!(split.idle, 17);
    assert_eq!(split.profiler, 10);
    assert_eq!(split.foreign, 3 + 4);
    let n = split.samples();
    assert_eq!(
        n,
        1002 + 126 + 93 + 84 + 82 + 79 + 71 + 70 + 62 + 46 + 36 + 35 + 33 + 25 + 7 + 5
    );
    assert_eq!(
        split.threads[0],
        ("napi/sr4019x4b-".to_string(), n - 46 - 7 - 5)
    );
    let cpu = CpuFigures {
        soak_cycles_per_packet: Some(2000.0),
        dut_cycles_per_packet: Some(2500.0),
        ..CpuFigures::default()
    };
    let v = split.report("perf cpu-clock 2999 Hz", Some(&[0]), &cpu);
    assert_eq!(v.samples, n);
    assert_eq!(v.excluded.other_processes, 7);
    assert_eq!(v.cycles_per_packet_of, "soak_cycles_per_packet");
    let sum_share: f64 = STAGE_NAMES
        .iter()
        .map(|s| v.share_pct.get(s).unwrap())
        .sum();
    assert!((sum_share - 100.0).abs() < 1e-9, "{v:?}");
    let sum_cyc: f64 = STAGE_NAMES
        .iter()
        .map(|s| v.cycles_per_packet.get(s).unwrap())
        .sum();
    assert!((sum_cyc - 2000.0).abs() < 1e-6, "{v:?}");
    let tx = 1002 + 126 + 82;
    let want = tx as f64 * 100.0 / n as f64;
    assert!((v.share_pct.tx.unwrap() - want).abs() < 1e-9);
    assert_eq!(v.top.len(), 10);
    assert_eq!(v.top[0].symbol, "__napi_schedule");
    assert_eq!(v.top[0].stage, "tx");
    // Without soakers: the tick-based figure.
    let tick = |c: Option<f64>| CpuFigures {
        dut_cycles_per_packet: c,
        ..CpuFigures::default()
    };
    let v = split.report("x", None, &tick(Some(1000.0)));
    assert_eq!(v.cycles_per_packet_of, "dut_cycles_per_packet");
    assert!(v.cycles_per_packet.rx.unwrap() > 0.0);
    // Nothing forwarded: shares, no cycles.
    let v = split.report("x", None, &tick(None));
    assert!(v.cycles_per_packet.rx.is_none());
    assert!(v.share_pct.rx.is_some());
}

/// perf for real, on one CPU, with a busy thread there: it starts,
/// enables, stops and reports, and the busy thread's samples are in.
#[test]
fn profiles_a_cpu_for_real() {
    if !testbed::require_root("stage profiler") {
        return;
    }
    if check_perf().is_err() {
        eprintln!("profiles_a_cpu_for_real: skipped (no perf)");
        return;
    }
    let cpu = 0;
    let mut p = StageProfiler::new(Some(vec![cpu]))
        .unwrap()
        .with_dut_threads(&["sr-test-busy"]);
    // The thread exists (named) before perf starts, as a DUT's do:
    // perf learns the names of threads that exist when it starts.
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let busy = std::thread::Builder::new()
        .name("sr-test-busy".into())
        .spawn(move || {
            // SAFETY: plain data and syscall on this thread.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu, &mut set);
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            }
            go_rx.recv().unwrap();
            let t = Instant::now();
            let mut x = 1u64;
            while t.elapsed() < Duration::from_millis(300) {
                x = std::hint::black_box(x.wrapping_mul(3).wrapping_add(1));
            }
        })
        .unwrap();
    let t = Instant::now();
    p.begin().unwrap();
    let started = t.elapsed();
    go_tx.send(()).unwrap();
    busy.join().unwrap();
    let cpu = CpuFigures {
        soak_cycles_per_packet: Some(100.0),
        ..CpuFigures::default()
    };
    let v = p.end(&cpu).unwrap();
    eprintln!("started in {started:?}: {v:#?}");
    let v = v.split().expect("a split");
    assert!(v.samples > 100, "{v:?}");
    assert_eq!(v.threads[0].thread, "sr-test-busy", "{v:?}");
    assert_eq!(v.source, format!("perf cpu-clock {DEFAULT_FREQ} Hz"));
    let sum: f64 = STAGE_NAMES
        .iter()
        .map(|s| v.cycles_per_packet.get(s).unwrap())
        .sum();
    assert!((sum - 100.0).abs() < 1e-6, "{v:?}");
    // The same profiler again (a second trial).
    p.begin().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert!(p.end(&CpuFigures::default()).is_ok());
}

/// A profile that cannot start (no such CPU) is an error in the
/// trial's `stages`, not a failed trial.
#[test]
fn a_failed_start_is_noted_not_fatal() {
    if !testbed::require_root("stage profiler") || check_perf().is_err() {
        return;
    }
    let mut p = StageProfiler::new(Some(vec![4095])).unwrap();
    p.begin_or_note();
    let v = p.end_or_error(&CpuFigures::default());
    assert!(
        matches!(&v, StageReport::Failed { error, .. } if !error.is_empty()),
        "{v:?}"
    );
    // In the results: the source and the error, nothing else.
    let j = serde_json::to_value(&v).unwrap();
    assert!(j["error"].is_string() && j["share_pct"].is_null(), "{j}");
}
