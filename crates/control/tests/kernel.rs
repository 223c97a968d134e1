//! Following a kernel routing table in a network namespace: the dump,
//! then adds, ECMP, replaces, deletes, other tables and route types,
//! metrics and next-hop objects, and a bulk load timed.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use control::kernel::{
    AddHow, KernelNextHop, KernelRoute, KernelRoutes, NextHopObject, RouteAction, RouteEvent,
};
use testbed::{Netns, VethPair};

fn enter(ns: &Netns) {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(format!("/run/netns/{}", ns.name())).unwrap();
    // SAFETY: setns on a valid netns fd; affects this thread only.
    assert_eq!(unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) }, 0);
}

fn ifindex(ns: &Netns, dev: &str) -> u32 {
    ns.run(&["cat", &format!("/sys/class/net/{dev}/ifindex")])
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// A veth pair inside `ns` (no dummy driver on every kernel), its first
/// end addressed; returns the pair and that end's name.
fn net(ns: &Netns) -> (VethPair, String) {
    let v = VethPair::new(ns, ns, 1).unwrap();
    let d0 = v.a.clone();
    ns.add_addr(&d0, "198.18.0.1/24").unwrap();
    ns.ip(&["-6", "addr", "add", "2001:2::1/64", "dev", &d0, "nodad"])
        .unwrap();
    (v, d0)
}

fn a(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// Events until `want` of them arrived (or 5 s).
fn events(k: &mut KernelRoutes, want: usize) -> Vec<RouteEvent> {
    let mut out = Vec::new();
    let t = Instant::now();
    while out.len() < want && t.elapsed() < Duration::from_secs(5) {
        out.extend(k.poll(Duration::from_millis(100)).unwrap());
    }
    out
}

#[test]
fn follows_the_main_table() {
    if !testbed::require_root("follows_the_main_table") {
        return;
    }
    let ns = Netns::new("krt").unwrap();
    let (_veth, dev) = net(&ns);
    let d0 = ifindex(&ns, &dev);
    let ns2 = &ns;
    std::thread::scope(|s| {
        s.spawn(move || {
            enter(ns2);
            let mut k = KernelRoutes::open(KernelRoutes::MAIN).unwrap();
            ns2.ip(&["route", "add", "198.19.0.0/16", "via", "198.18.0.2"])
                .unwrap();
            let dump = k.dump().unwrap().routes;
            let gw = |g: &str| KernelNextHop {
                gateway: Some(a(g)),
                ifindex: d0,
            };
            let route = |p: &str, l: u8, metric: u32, action: RouteAction| KernelRoute {
                prefix: (a(p), l),
                metric,
                action,
                nhid: None,
            };
            let fwd = |p: &str, l: u8, hops: Vec<KernelNextHop>| {
                route(p, l, 0, RouteAction::Forward(hops))
            };
            assert!(
                dump.contains(&fwd("198.19.0.0", 16, vec![gw("198.18.0.2")])),
                "{dump:?}"
            );
            // The connected route: on-link.
            let onlink = KernelNextHop {
                gateway: None,
                ifindex: d0,
            };
            assert!(
                dump.contains(&fwd("198.18.0.0", 24, vec![onlink])),
                "{dump:?}"
            );
            // The add before the dump is also an event (subscribed first).
            let e = events(&mut k, 1);
            assert!(e.contains(&RouteEvent::Add(
                fwd("198.19.0.0", 16, vec![gw("198.18.0.2")]),
                AddHow::Create
            )));

            ns2.ip(&[
                "route",
                "add",
                "198.20.0.0/16",
                "nexthop",
                "via",
                "198.18.0.2",
                "nexthop",
                "via",
                "198.18.0.3",
            ])
            .unwrap();
            ns2.ip(&["route", "replace", "198.19.0.0/16", "via", "198.18.0.4"])
                .unwrap();
            ns2.ip(&[
                "-6",
                "route",
                "add",
                "2001:2:0:100::/56",
                "via",
                "2001:2::2",
            ])
            .unwrap();
            ns2.ip(&["route", "add", "blackhole", "198.21.0.0/16"])
                .unwrap();
            ns2.ip(&["route", "add", "unreachable", "198.22.0.0/16"])
                .unwrap();
            ns2.ip(&["route", "add", "prohibit", "198.22.0.0/16", "metric", "7"])
                .unwrap();
            ns2.ip(&[
                "route",
                "add",
                "198.23.0.0/16",
                "via",
                "198.18.0.2",
                "table",
                "100",
            ])
            .unwrap();
            ns2.ip(&["route", "del", "198.19.0.0/16"]).unwrap();
            let e = events(&mut k, 7);
            assert_eq!(
                e,
                [
                    RouteEvent::Add(
                        fwd("198.20.0.0", 16, vec![gw("198.18.0.2"), gw("198.18.0.3")]),
                        AddHow::Create
                    ),
                    RouteEvent::Add(
                        fwd("198.19.0.0", 16, vec![gw("198.18.0.4")]),
                        AddHow::Replace
                    ),
                    RouteEvent::Add(
                        route(
                            "2001:2:0:100::",
                            56,
                            1024,
                            RouteAction::Forward(vec![gw("2001:2::2")])
                        ),
                        AddHow::Create
                    ),
                    RouteEvent::Add(
                        route("198.21.0.0", 16, 0, RouteAction::Blackhole),
                        AddHow::Create
                    ),
                    RouteEvent::Add(
                        route("198.22.0.0", 16, 0, RouteAction::Unreachable),
                        AddHow::Create
                    ),
                    RouteEvent::Add(
                        route("198.22.0.0", 16, 7, RouteAction::Prohibit),
                        AddHow::Create
                    ),
                    RouteEvent::Del(fwd("198.19.0.0", 16, vec![gw("198.18.0.4")])),
                ],
                "table 100 and the kernel's local routes are not followed"
            );

            // IPv6 multipath: an appended next hop comes with its
            // siblings, a deleted one alone.
            let p6 = |hops: &[&str]| {
                route(
                    "2001:2:0:100::",
                    56,
                    1024,
                    RouteAction::Forward(hops.iter().map(|h| gw(h)).collect()),
                )
            };
            ns2.ip(&["-6", "route", "append", "2001:2:0:100::/56", "via", "2001:2::3"])
                .unwrap();
            ns2.ip(&["-6", "route", "del", "2001:2:0:100::/56", "via", "2001:2::2"])
                .unwrap();
            let e = events(&mut k, 2);
            assert!(
                matches!(&e[0], RouteEvent::Add(r, _) if r.prefix == p6(&[]).prefix
                    && matches!(&r.action, RouteAction::Forward(h) if h.contains(&gw("2001:2::3")))),
                "{e:?}"
            );
            assert_eq!(e[1], RouteEvent::Del(p6(&["2001:2::2"])), "{e:?}");

            // Next-hop objects and a route using a group of them.
            ns2.ip(&["nexthop", "add", "id", "1", "via", "198.18.0.2", "dev", &dev])
                .unwrap();
            ns2.ip(&["nexthop", "add", "id", "2", "blackhole"]).unwrap();
            ns2.ip(&["nexthop", "add", "id", "3", "via", "198.18.0.3", "dev", &dev])
                .unwrap();
            ns2.ip(&["nexthop", "add", "id", "10", "group", "1/3"])
                .unwrap();
            ns2.ip(&["route", "add", "198.24.0.0/16", "nhid", "10", "metric", "5"])
                .unwrap();
            ns2.ip(&["nexthop", "del", "id", "10"]).unwrap();
            let e = events(&mut k, 6);
            assert_eq!(
                e[..4],
                [
                    RouteEvent::NextHop(1, NextHopObject::Single(gw("198.18.0.2"))),
                    RouteEvent::NextHop(2, NextHopObject::Blackhole),
                    RouteEvent::NextHop(3, NextHopObject::Single(gw("198.18.0.3"))),
                    RouteEvent::NextHop(10, NextHopObject::Group(vec![1, 3])),
                ],
                "{e:?}"
            );
            assert!(
                matches!(&e[4], RouteEvent::Add(r, AddHow::Create) if r.nhid == Some(10) && r.metric == 5),
                "{e:?}"
            );
            assert_eq!(e[5], RouteEvent::NextHopDel(10), "{e:?}");
            let t = k.dump().unwrap();
            assert_eq!(t.nexthops.len(), 3, "{t:?}");
        });
    });
}

/// 100,000 routes (IPv4 and IPv6) added with `ip -batch`: how long until every event is
/// here (prints the rate).
#[test]
fn a_bulk_load_arrives_whole() {
    if !testbed::require_root("a_bulk_load_arrives_whole") {
        return;
    }
    const N: usize = 100_000;
    let ns = Netns::new("krb").unwrap();
    let _veth = net(&ns);
    let dir = tempfile::tempdir().unwrap();
    let batch = dir.path().join("routes");
    // Half IPv4 host routes in 198.19.0.0/16, half IPv6 /64s in
    // 2001:2::/48 (the test ranges).
    let lines: String = (0..N / 2)
        .map(|i| {
            format!(
                "route add 198.19.{}.{}/32 via 198.18.0.2\nroute add 2001:2:0:{:x}::/64 via 2001:2::2\n",
                i >> 8,
                i & 0xff,
                0x100 + i
            )
        })
        .collect();
    std::fs::write(&batch, lines).unwrap();
    let ns2 = &ns;
    std::thread::scope(|s| {
        s.spawn(move || {
            enter(ns2);
            let mut k = KernelRoutes::open(KernelRoutes::MAIN).unwrap();
            let t = Instant::now();
            // Concurrently, as a routing daemon would install them.
            let mut ip = ns2
                .spawn(&["ip", "-batch", batch.to_str().unwrap()])
                .unwrap();
            let mut adds = 0;
            while adds < N && t.elapsed() < Duration::from_secs(30) {
                for e in k.poll(Duration::from_millis(100)).unwrap() {
                    match e {
                        RouteEvent::Add(..) => adds += 1,
                        RouteEvent::Resync => panic!("events lost"),
                        _ => {}
                    }
                }
            }
            let secs = t.elapsed().as_secs_f64();
            assert!(ip.wait().unwrap().success());
            eprintln!(
                "{adds} route events in {secs:.2} s ({:.0}/s, ip -batch included)",
                adds as f64 / secs
            );
            assert_eq!(adds, N);
            assert!(k.dump().unwrap().routes.len() > N);
        });
    });
}
