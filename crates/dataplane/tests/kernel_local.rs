//! `[kernel] local`: the workers send no ARP or ND; what they would
//! solicit is asked of the kernel, whose answers (and forgetting) drive
//! the router's neighbour entries (`dataplane::kernel_neigh`).

mod common;

use common::*;
use dataplane::NeighLimits;
use std::net::IpAddr;
use std::path::Path;

const KMAC: [u8; 6] = [2, 0, 0, 0, 0x0c, 0x09];

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// The test configuration with `kernel_local` set (the validator allows it
/// only on afxdp ports; the workers do not care which).
fn rig(inputs: Vec<Vec<Vec<u8>>>) -> Rig {
    let mut cfg = config::parse(CONFIG, Path::new("test.toml")).unwrap();
    cfg.kernel_local = true;
    Rig::with_config(&cfg, inputs, NeighLimits::default())
}

fn to(dst: &str) -> Vec<u8> {
    udp4(HOST0, MAC0, "198.18.0.2", dst, 64, 1000, &[0; 18], false)
}

#[test]
fn unresolved_next_hops_are_asked_of_the_kernel_and_use_its_answer() {
    // 198.19.32.0/19 is via 198.19.0.9, which has no static MAC.
    let f = to("198.19.40.1");
    let mut r = rig(vec![vec![f.clone()]]);
    let requests = r.router.kernel_requests().expect("a request queue");
    assert!(r.router.kernel_requests().is_none(), "taken once");
    r.run();
    assert!(r.sent(1).is_empty(), "no ARP request from the workers");
    assert_eq!(requests.try_recv().unwrap(), (1, ip("198.19.0.9")));
    assert_eq!(r.stats().ports[0].held, 1);

    // The kernel resolved it: the held packet goes to its MAC.
    assert!(r.router.kernel_neighbor(1, ip("198.19.0.9"), KMAC).unwrap());
    r.run();
    assert_frames("released", &r.sent(1), &[forwarded4(&f, MAC1, KMAC)]);
    let n = r.router.neighbors();
    let g = n.iter().find(|n| n.address == ip("198.19.0.9")).unwrap();
    assert_eq!((g.state, g.mac), ("static", Some(KMAC)));
    // In use: handed to the kernel again to confirm.
    assert!(r
        .router
        .kernel_in_use(60_000)
        .contains(&(1, ip("198.19.0.9"))));

    // The kernel forgot it: the gateway resolves again, through the
    // kernel, a solicitation interval later.
    assert!(r.router.forget_kernel_neighbor(1, ip("198.19.0.9")));
    r.advance(1000);
    r.feed(vec![vec![f.clone()]]);
    r.run();
    assert!(r.sent(1).is_empty());
    assert_eq!(requests.try_recv().unwrap(), (1, ip("198.19.0.9")));

    // A connected host: a dynamic entry, asked of the kernel, removed
    // with its host route when the kernel forgets it.
    let h = to("198.19.0.77");
    r.feed(vec![vec![h.clone()]]);
    r.run();
    assert_eq!(requests.try_recv().unwrap(), (1, ip("198.19.0.77")));
    assert!(r
        .router
        .kernel_neighbor(1, ip("198.19.0.77"), KMAC)
        .unwrap());
    r.run();
    assert_frames("host", &r.sent(1), &[forwarded4(&h, MAC1, KMAC)]);
    assert_eq!(
        r.router.route_for(ip("198.19.0.77")).unwrap().prefix.len,
        32
    );
    assert!(r.router.forget_kernel_neighbor(1, ip("198.19.0.77")));
    assert_eq!(
        r.router.route_for(ip("198.19.0.77")).unwrap().prefix.len,
        24
    );
    // An address the router has no entry for is only remembered by the
    // caller.
    assert!(!r
        .router
        .kernel_neighbor(1, ip("198.19.0.78"), KMAC)
        .unwrap());

    // A route added at run time asks for its gateway at once.
    r.router
        .add_route(
            dataplane::RouteSource::Config,
            "198.20.0.0/16".parse().unwrap(),
            &[(ip("198.19.0.50"), 1)],
        )
        .unwrap();
    assert_eq!(requests.try_recv().unwrap(), (1, ip("198.19.0.50")));
}
