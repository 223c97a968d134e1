//! `[router] forwarding = "cross-connect"` (the papers' I/O baseline):
//! every frame received on port 0 leaves on port 1 and the reverse,
//! whatever it holds (TTL 1, ARP, a frame for the router, a runt IP
//! header), with only its source MAC rewritten; nothing is routed,
//! answered or dropped but frames too short for an Ethernet header.

mod common;

use common::*;

const XC: &str = r#"
[router]
workers = 1
forwarding = "cross-connect"
pool_frames = 1024

[[port]]
name = "p0"
driver = "pcap"
mac = "02:00:00:00:00:10"
addresses = ["198.18.0.1/24"]

[[port]]
name = "p1"
driver = "pcap"
mac = "02:00:00:00:00:11"
addresses = ["198.19.0.1/24"]
"#;

#[test]
fn every_frame_crosses_to_the_paired_port_with_only_its_source_mac_changed() {
    let far = [2, 0, 0, 0, 0, 0x77];
    let frames0 = vec![
        udp4(
            HOST0,
            far,
            "198.18.0.2",
            "203.0.113.9",
            1,
            1000,
            b"ttl one",
            false,
        ),
        udp4(
            HOST0,
            MAC0,
            "198.18.0.2",
            "198.18.0.1",
            64,
            1001,
            b"for the router",
            false,
        ),
        arp_frame(
            HOST0,
            [0xff; 6],
            1,
            HOST0,
            "198.18.0.2",
            [0; 6],
            "198.18.0.1",
        ),
        vec![0u8; 10],
    ];
    let frames1 = vec![udp4(
        far,
        HOST0,
        "198.19.0.7",
        "198.18.0.2",
        9,
        2000,
        b"back",
        false,
    )];
    let mut rig = Rig::new(XC, vec![frames0.clone(), frames1.clone()]);
    rig.run();
    let with_src = |f: &[u8], mac: [u8; 6]| {
        let mut v = f.to_vec();
        v[6..12].copy_from_slice(&mac);
        v
    };
    let expected1: Vec<Vec<u8>> = frames0[..3].iter().map(|f| with_src(f, MAC1)).collect();
    assert_frames("out of p1", &rig.sent(1), &expected1);
    assert_frames("out of p0", &rig.sent(0), &[with_src(&frames1[0], MAC0)]);
    let s = rig.stats();
    assert_eq!(s.ports[0].forwarded, 3);
    assert_eq!(s.ports[1].forwarded, 1);
    assert_eq!(
        s.ports[0].drops.values().sum::<u64>(),
        1,
        "the 10-byte runt"
    );
    assert_eq!(s.ports[0].local + s.ports[1].local, 0);
}

#[test]
fn a_cross_connect_needs_paired_ports_and_no_xdp_tier() {
    let odd = format!(
        "{XC}\n[[port]]\nname = \"p2\"\ndriver = \"pcap\"\nmac = \"02:00:00:00:00:12\"\naddresses = [\"198.18.1.1/24\"]\n"
    );
    let e = config::parse(&odd, std::path::Path::new("x.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("x.toml:4") && e.contains("3 ports cannot be paired"),
        "{e}"
    );
    let xdp = XC.replace("workers = 1", "workers = 1\nfast_path = \"xdp\"");
    let e = config::parse(&xdp, std::path::Path::new("x.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("fast_path") && e.contains("cross-connect"),
        "{e}"
    );
    let c = config::parse(XC, std::path::Path::new("x.toml")).unwrap();
    assert_eq!(c.router.fast_path, config::FastPath::Off);
}
