//! What `softrouter ctl route show` / `neigh show` read, and `neigh del`.

mod common;

use std::net::IpAddr;
use std::path::Path;

use common::{infos, CONFIG};
use dataplane::inspect::RouteKind;
use dataplane::Router;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn router() -> Router {
    let cfg = config::parse(CONFIG, Path::new("test.toml")).unwrap();
    Router::new(&cfg, &infos(&cfg)).unwrap()
}

#[test]
fn routes_are_listed_with_what_they_do() {
    let r = router();
    let routes = r.routes();
    let find = |p: &str| {
        routes
            .iter()
            .find(|x| x.prefix.to_string() == p)
            .unwrap_or_else(|| panic!("{p} not in {routes:?}"))
            .kind
            .clone()
    };
    assert_eq!(
        find("198.19.128.0/17"),
        RouteKind::Forward(vec![(ip("198.19.0.2"), 1)])
    );
    assert_eq!(
        find("198.19.64.0/18"),
        RouteKind::Forward(vec![(ip("198.19.0.2"), 1), (ip("198.19.0.3"), 1)])
    );
    assert_eq!(find("198.18.0.0/24"), RouteKind::Connected(0));
    assert_eq!(find("198.18.0.1/32"), RouteKind::Local);
    assert_eq!(
        find("2001:2:0:8000::/49"),
        RouteKind::Forward(vec![(ip("2001:2:0:2::2"), 1)])
    );
    // IPv4 first, then IPv6, each sorted.
    let v6_at = routes.iter().position(|x| x.prefix.addr.is_ipv6()).unwrap();
    assert!(routes[..v6_at].iter().all(|x| x.prefix.addr.is_ipv4()));
    // Longest match.
    let m = r.route_for(ip("198.19.70.1")).unwrap();
    assert_eq!(m.prefix.to_string(), "198.19.64.0/18");
    assert_eq!(
        r.route_for(ip("198.19.0.77")).unwrap().kind,
        RouteKind::Connected(1)
    );
    assert!(r.route_for(ip("203.0.113.1")).is_none());
    // A route added at run time shows, a removed one goes.
    r.add_route(
        dataplane::RouteSource::Config,
        "198.18.128.0/17".parse().unwrap(),
        &[(ip("198.18.1.2"), 2)],
    )
    .unwrap();
    assert_eq!(
        r.route_for(ip("198.18.200.1")).unwrap().prefix.to_string(),
        "198.18.128.0/17"
    );
    r.remove_route("198.18.128.0/17".parse().unwrap()).unwrap();
    assert!(r.route_for(ip("198.18.200.1")).is_none());
}

#[test]
fn neighbours_are_listed_and_removed() {
    let r = router();
    let ns = r.neighbors();
    let n = ns.iter().find(|n| n.address == ip("198.19.0.2")).unwrap();
    assert_eq!((n.port, n.state, n.dynamic), (1, "static", false));
    assert_eq!(n.mac, Some([2, 0, 0, 0, 0, 0x22]));
    // A gateway without a static MAC: incomplete until resolved.
    let g = ns.iter().find(|n| n.address == ip("198.19.0.9")).unwrap();
    assert_eq!((g.state, g.mac), ("incomplete", None));
    // Removing a static neighbour forgets its MAC; the route keeps it as
    // a gateway to resolve.
    assert_eq!(r.remove_neighbor(ip("198.19.0.2")).unwrap(), 1);
    let n2 = r
        .neighbors()
        .into_iter()
        .find(|n| n.address == ip("198.19.0.2"))
        .unwrap();
    assert_eq!((n2.state, n2.mac), ("incomplete", None));
    assert!(r.remove_neighbor(ip("198.19.0.200")).is_err());
}
