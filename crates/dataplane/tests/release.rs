//! Gateway next hops and their neighbour entries are released when no
//! route holds them any more, and their ids are reused after the readers'
//! grace period (issue 22, defect 4: before, 65,520 routes via distinct
//! gateways, added and deleted, left 65,529 entries and the table full).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::Path;

use config::Cidr;
use dataplane::{RouteSource, Router};

const CONFIG: &str = r#"
[[port]]
name = "a"
driver = "pcap"
mac = "02:00:00:00:00:10"
addresses = ["198.18.0.1/24", "2001:2::1/64"]

[[port]]
name = "b"
driver = "pcap"
mac = "02:00:00:00:00:11"
addresses = ["198.19.0.1/16", "2001:2:0:1::1/64"]

[[route]]
prefix = "198.20.0.0/16"
via = ["198.19.0.2", "198.19.0.3"]

[[neighbor]]
address = "198.19.0.2"
mac = "02:00:00:00:00:22"
port = "b"
"#;

fn router() -> Router {
    let cfg = config::parse(CONFIG, Path::new("r.toml")).unwrap();
    let infos: Vec<netio::PortInfo> = cfg
        .ports
        .iter()
        .map(|p| netio::PortInfo {
            name: p.name.clone(),
            mac: p.mac.unwrap(),
            mtu: 1500,
            rx_queues: 1,
        })
        .collect();
    Router::new(&cfg, &infos).unwrap()
}

/// Gateway `i` on port b: IPv4 in 198.19.0.0/16 for even `i`, IPv6 in
/// 2001:2:0:1::/64 for odd ones.
fn gateway(i: u32) -> IpAddr {
    if i.is_multiple_of(2) {
        IpAddr::V4(Ipv4Addr::from(0xc613_0000 + 16 + (i / 2) % 65_000))
    } else {
        IpAddr::V6(Ipv6Addr::from(
            0x2001_0002_0000_0001u128 << 64 | u128::from(i),
        ))
    }
}

/// A distinct prefix for route `i`, of `gateway(i)`'s family.
fn prefix(i: u32) -> Cidr {
    if i.is_multiple_of(2) {
        Cidr {
            addr: IpAddr::V4(Ipv4Addr::from(0x0a00_0000 | (i << 8))),
            len: 24,
        }
    } else {
        Cidr {
            addr: IpAddr::V6(Ipv6Addr::from(
                0x2001_0002_8000u128 << 80 | u128::from(i) << 64,
            )),
            len: 64,
        }
    }
}

/// (next hops in use, neighbour entries, ECMP groups).
fn sizes(r: &Router) -> (u64, usize, u64) {
    let u = r.shared().next_hop_use();
    (u.used, r.neighbors().len(), u.ecmp_groups)
}

/// Routes via distinct gateways, added and deleted in rounds, through
/// more gateways in all than the next-hop table has ids (65,536): every
/// round's gateways are released, their ids reused after the registered
/// reader's quiescent point; afterwards the tables are back to their
/// size before and a route via a new gateway is installed.
/// `SR_RELEASE_ROUTES` sets the total (default 70,000; the issue's
/// figure, 100,000, by hand).
#[test]
fn routes_via_distinct_gateways_release_their_next_hops() {
    let total: u32 = std::env::var("SR_RELEASE_ROUTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(70_000);
    let r = router();
    let sh = r.shared();
    let reader = sh.next_hop_reader().register();
    let before = sizes(&r);
    let round = 5000;
    let mut i = 0;
    while i < total {
        let end = (i + round).min(total);
        for k in i..end {
            r.add_route(RouteSource::Kernel, prefix(k), &[(gateway(k), 1)])
                .unwrap_or_else(|e| panic!("route {k}: {e:#}"));
        }
        assert_eq!(sizes(&r).0, before.0 + u64::from(end - i));
        for k in i..end {
            r.remove_route(prefix(k)).unwrap();
        }
        assert_eq!(sizes(&r), before, "after round {i}..{end}");
        reader.quiescent();
        i = end;
    }
    let u = sh.next_hop_use();
    assert_eq!(u.by_source["kernel"], 0, "{u:?}");
    // A new gateway, after the table's ids have all been used once.
    r.add_route(
        RouteSource::Ctl,
        "198.21.0.0/16".parse().unwrap(),
        &[("198.19.200.1".parse().unwrap(), 1)],
    )
    .unwrap();
    assert_eq!(sizes(&r).0, before.0 + 1);
}

/// Released ids wait for the readers: with a reader that has not passed a
/// quiescent point, the ids of removed routes' gateways are retired, not
/// reused, and the neighbour entry is dead at once.
#[test]
fn released_ids_wait_for_a_grace_period() {
    let r = router();
    let sh = r.shared();
    let reader = sh.next_hop_reader().register();
    let gw: IpAddr = "198.19.7.7".parse().unwrap();
    let p: Cidr = "198.22.0.0/16".parse().unwrap();
    r.add_route(RouteSource::Ctl, p, &[(gw, 1)]).unwrap();
    assert!(r.neighbors().iter().any(|n| n.address == gw));
    r.remove_route(p).unwrap();
    assert!(!r.neighbors().iter().any(|n| n.address == gw));
    assert_eq!(sh.next_hop_use().retired, 1);
    // The periodic collection reclaims what passed its grace period.
    sh.collect_neighbors(0);
    assert_eq!(sh.next_hop_use().retired, 1, "the reader may still hold it");
    reader.quiescent();
    sh.collect_neighbors(0);
    assert_eq!(
        sh.next_hop_use().retired,
        0,
        "reclaimed after the grace period"
    );
}

/// A route replaced by one via another gateway releases the old gateway;
/// a gateway two routes share stays until the second goes; a static
/// neighbour's entry stays while it is static; ECMP groups go with their
/// last route.
#[test]
fn shared_gateways_and_groups_stay_while_held() {
    let r = router();
    let before = sizes(&r);
    let (g1, g2, g3): (IpAddr, IpAddr, IpAddr) = (
        "198.19.1.1".parse().unwrap(),
        "198.19.1.2".parse().unwrap(),
        "198.19.0.2".parse().unwrap(),
    );
    let (p1, p2): (Cidr, Cidr) = (
        "198.30.0.0/16".parse().unwrap(),
        "198.31.0.0/16".parse().unwrap(),
    );
    r.add_route(RouteSource::Ctl, p1, &[(g1, 1)]).unwrap();
    r.add_route(RouteSource::Ctl, p2, &[(g1, 1), (g2, 1)])
        .unwrap();
    assert_eq!(sizes(&r), (before.0 + 2, before.1 + 2, before.2 + 1));
    r.add_route(RouteSource::Ctl, p2, &[(g1, 1), (g2, 1)])
        .unwrap();
    assert_eq!(
        sizes(&r),
        (before.0 + 2, before.1 + 2, before.2 + 1),
        "same again"
    );
    r.add_route(RouteSource::Ctl, p1, &[(g2, 1)]).unwrap();
    assert_eq!(sizes(&r).0, before.0 + 2, "g1 still in the group");
    r.remove_route(p2).unwrap();
    assert_eq!(
        sizes(&r),
        (before.0 + 1, before.1 + 1, before.2),
        "g1 and the group gone"
    );
    r.remove_route(p1).unwrap();
    assert_eq!(sizes(&r), before);
    // The static neighbour 198.19.0.2 (also a configured gateway) stays
    // when the configured route goes, and goes when its setting does.
    r.remove_route("198.20.0.0/16".parse().unwrap()).unwrap();
    assert_eq!(sizes(&r), (before.0 - 1, before.1 - 1, before.2 - 1));
    assert!(r
        .neighbors()
        .iter()
        .any(|n| n.address == g3 && n.state == "static"));
    r.remove_neighbor(g3).unwrap();
    assert_eq!(sizes(&r), (before.0 - 2, before.1 - 2, before.2 - 1));
}

/// A gateway whose MAC traffic still uses becomes a dynamic entry when
/// its last route goes (a flapping route keeps its MAC), and the
/// collector ages it out like any other.
#[test]
fn a_used_gateway_stays_as_a_dynamic_neighbour() {
    let cfg = config::parse(CONFIG, Path::new("r.toml")).unwrap();
    let infos: Vec<netio::PortInfo> = cfg
        .ports
        .iter()
        .map(|p| netio::PortInfo {
            name: p.name.clone(),
            mac: p.mac.unwrap(),
            mtu: 1500,
            rx_queues: 1,
        })
        .collect();
    // Idle entries are collected however few there are.
    let limits = dataplane::NeighLimits {
        gc_min: 0,
        ..Default::default()
    };
    let r = Router::with_neighbor_limits(&cfg, &infos, limits).unwrap();
    let sh = r.shared();
    let before = sizes(&r);
    let gw: IpAddr = "198.19.9.9".parse().unwrap();
    let p: Cidr = "198.23.0.0/16".parse().unwrap();
    r.add_route(RouteSource::Kernel, p, &[(gw, 1)]).unwrap();
    let now = sh.epoch().elapsed().as_millis() as u64 + 1000;
    assert!(sh.neighbor_seen(1, gw, [2, 0, 0, 0, 0, 9], now));
    r.remove_route(p).unwrap();
    let n = r.neighbors();
    let e = n.iter().find(|n| n.address == gw).expect("kept");
    assert!(e.dynamic && e.state == "reachable", "{e:?}");
    assert_eq!(sh.neighbor_counts(), vec![0, 1]);
    // Back to a route: permanent again, nothing new allocated.
    r.add_route(RouteSource::Kernel, p, &[(gw, 1)]).unwrap();
    assert_eq!(sizes(&r).0, before.0 + 1);
    assert_eq!(sh.neighbor_counts(), vec![0, 0]);
    r.remove_route(p).unwrap();
    // Unused for longer than the stale time: collected.
    let later = now + 10 * 60_000;
    sh.collect_neighbors(later);
    assert_eq!(sizes(&r), before);
}

/// Run-time sources have limits, and the refusal says which: `ctl` may
/// hold 4,096 gateways.
#[test]
fn run_time_sources_have_limits() {
    let r = router();
    let limit = RouteSource::Ctl.limit().unwrap();
    for k in 0..limit {
        r.add_route(RouteSource::Ctl, prefix(2 * k), &[(gateway(2 * k), 1)])
            .unwrap();
    }
    let e = r
        .add_route(
            RouteSource::Ctl,
            prefix(2 * limit),
            &[(gateway(2 * limit), 1)],
        )
        .unwrap_err();
    let e = format!("{e:#}");
    assert!(
        e.contains("ctl routes and neighbours already hold 4096 gateway next hops"),
        "{e}"
    );
    // An existing gateway is still fine, and another source too.
    r.add_route(RouteSource::Ctl, prefix(2 * limit), &[(gateway(0), 1)])
        .unwrap();
    r.add_route(
        RouteSource::Kernel,
        prefix(2 * limit + 2),
        &[(gateway(2 * limit + 2), 1)],
    )
    .unwrap();
    let u = r.shared().next_hop_use();
    assert_eq!((u.by_source["ctl"], u.by_source["kernel"]), (4096, 1));
    assert_eq!(u.limits["ctl"], 4096);
}

/// A kernel drop route (blackhole, unreachable, prohibit) that replaces a
/// route via gateways releases them, and the route it replaces with one
/// via a gateway holds that gateway again: the shared blackhole next hop
/// takes no count of its own.
#[test]
fn a_drop_route_replacing_a_gateway_route_releases_the_gateway() {
    let r = router();
    let before = sizes(&r);
    let p = prefix(4);
    r.add_route(RouteSource::Kernel, p, &[(gateway(4), 1)])
        .unwrap();
    r.add_blackhole(p).unwrap();
    let with_drop = sizes(&r);
    // The blackhole next hop is one shared entry, not the gateway's.
    assert!(with_drop.0 <= before.0 + 1, "{before:?} -> {with_drop:?}");
    assert_eq!(r.shared().next_hop_use().by_source["kernel"], 0);
    r.add_route(RouteSource::Kernel, p, &[(gateway(4), 1)])
        .unwrap();
    assert_eq!(r.shared().next_hop_use().by_source["kernel"], 1);
    r.remove_route(p).unwrap();
    assert_eq!(r.shared().next_hop_use().by_source["kernel"], 0);
}
