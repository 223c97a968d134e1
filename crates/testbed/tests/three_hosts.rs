//! Integration tests: real namespaces and veths (root only; skipped with a
//! message otherwise). Each test checks that nothing it created remains.

use std::process::Command;

use testbed::netns::process_prefix;
use testbed::topology::three_hosts_addr::*;
use testbed::{require_root, star, three_hosts, three_hosts_with, TopologyOptions};

/// Namespaces and root-namespace links whose names carry our prefix.
fn leftovers() -> Vec<String> {
    let prefix = process_prefix();
    let mut left = Vec::new();
    for args in [&["netns", "list"][..], &["-o", "link", "show"][..]] {
        let out = Command::new("ip").args(args).output().unwrap();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            if line.contains(&prefix) {
                left.push(line.to_string());
            }
        }
    }
    left
}

#[test]
fn three_hosts_kernel_forwarding_ping_and_teardown() {
    if !require_root("three_hosts_kernel_forwarding_ping_and_teardown") {
        return;
    }
    let th = three_hosts().unwrap();
    let names: Vec<String> = th
        .testbed
        .namespaces()
        .map(|(_, n)| n.name().to_string())
        .collect();
    assert_eq!(names.len(), 3);
    for dst in [RECEIVER_V4, RECEIVER_V6] {
        let out = th
            .sender()
            .exec(&["ping", "-c", "2", "-i", "0.2", "-W", "2", dst])
            .unwrap();
        assert!(
            out.status.success(),
            "ping {dst} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // TTL shows the router hop: sender's 64 arrives as 63 at the receiver,
    // the reply likewise.
    let out = th.sender().run(&["ping", "-c", "1", RECEIVER_V4]).unwrap();
    assert!(out.contains("ttl=63"), "{out}");
    drop(th);
    let list = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    for n in names {
        assert!(!list.contains(&n), "namespace {n} remains");
    }
    // No veth of ours may ever appear in the root namespace.
    let root_links: Vec<String> = leftovers()
        .into_iter()
        .filter(|l| l.contains(": <") || l.contains("link/"))
        .collect();
    assert!(
        root_links.is_empty(),
        "links left in root ns: {root_links:?}"
    );
}

#[test]
fn three_hosts_no_forwarding_blocks_ping() {
    if !require_root("three_hosts_no_forwarding_blocks_ping") {
        return;
    }
    let th = three_hosts_with(TopologyOptions {
        ip_forward: false,
        ..TopologyOptions::default()
    })
    .unwrap();
    // The router itself answers, but nothing crosses it.
    let ok = th
        .sender()
        .exec(&["ping", "-c", "1", "-W", "1", ROUTER_IN_V4])
        .unwrap();
    assert!(ok.status.success());
    let out = th
        .sender()
        .exec(&["ping", "-c", "1", "-W", "1", RECEIVER_V4])
        .unwrap();
    assert!(!out.status.success(), "forwarded with ip_forward off");
}

#[test]
fn bare_router_has_no_addresses() {
    if !require_root("bare_router_has_no_addresses") {
        return;
    }
    let th = three_hosts_with(TopologyOptions::user_space_router(2)).unwrap();
    let addrs = th.router().ip(&["-4", "-o", "addr", "show"]).unwrap();
    assert!(!addrs.contains("198.1"), "{addrs}");
    let d = th
        .router()
        .ip(&["-d", "link", "show", &th.router_in])
        .unwrap();
    assert!(d.contains("numrxqueues 2"), "{d}");
}

#[test]
fn star_kernel_forwarding_between_ports() {
    if !require_root("star_kernel_forwarding_between_ports") {
        return;
    }
    let s = star(3).unwrap();
    assert_eq!(s.ports.len(), 3);
    // The DUT reaches each tester address and has a route per port.
    for p in &s.ports {
        let out = s
            .dut()
            .exec(&["ping", "-c", "1", "-W", "2", &p.tester_v4])
            .unwrap();
        assert!(out.status.success(), "ping {}", p.tester_v4);
        let r = s.dut().ip(&["route", "get", &p.dest_v4_host(5)]).unwrap();
        assert!(r.contains(&p.dut_if), "{r}");
        let r = s
            .dut()
            .ip(&["-6", "route", "get", &p.dest_v6_host(5)])
            .unwrap();
        assert!(r.contains(&p.dut_if), "{r}");
    }
}
