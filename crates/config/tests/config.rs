//! The configuration language: the example from the documentation parses to
//! what it says, and every kind of mistake is reported with its line.

use config::*;
use std::path::Path;

const EXAMPLE: &str = r#"
[router]
workers = 1                 # worker threads (cores)

[[port]]
name = "p0"
driver = "pcap"
rx_pcap = "in0.pcap"
tx_pcap = "out0.pcap"
mac = "02:00:00:00:00:10"
addresses = ["198.18.0.1/24", "2001:2:0:1::1/64"]
mtu = 1500

[[port]]
name = "p1"
driver = "pcap"
tx_pcap = "out1.pcap"
mac = "02:00:00:00:00:11"
addresses = ["198.19.0.1/24", "2001:2:0:2::1/64"]

[[route]]
prefix = "198.19.0.0/16"
via = ["198.19.0.2", "198.19.0.3"]

[[neighbor]]
address = "198.19.0.2"
mac = "02:00:00:00:00:22"
port = "p1"
"#;

fn parse(text: &str) -> Result<Config, ConfigError> {
    config::parse(text, Path::new("/etc/sr/router.toml"))
}

#[test]
fn example_parses() {
    let c = parse(EXAMPLE).unwrap();
    assert_eq!(c.router.workers, 1);
    assert_eq!(c.router.mode, Mode::Adaptive);
    assert_eq!(c.ports.len(), 2);
    assert_eq!(
        c.ports[0].rx_pcap.as_deref(),
        Some(Path::new("/etc/sr/in0.pcap"))
    );
    assert_eq!(c.ports[1].rx_pcap, None);
    assert_eq!(c.ports[0].mac, Some([2, 0, 0, 0, 0, 0x10]));
    assert_eq!(c.ports[0].mtu, Some(1500));
    assert_eq!(c.ports[1].mtu, None);
    assert_eq!(
        c.routes[0].via,
        vec![
            ("198.19.0.2".parse().unwrap(), 1),
            ("198.19.0.3".parse().unwrap(), 1)
        ]
    );
    assert_eq!(c.neighbors[0].port, 1);
}

/// Replaces `from` in the example and expects an error on `line` whose
/// message contains `needle`.
fn expect_error(from: &str, to: &str, line: usize, needle: &str) {
    assert!(EXAMPLE.contains(from), "test bug: {from:?} not in example");
    let text = EXAMPLE.replacen(from, to, 1);
    let e = parse(&text).expect_err(&format!("accepted: {to}"));
    assert_eq!(e.line, line, "wrong line for {to:?}: {e}");
    assert!(e.message.contains(needle), "{e} lacks {needle:?}");
    assert!(
        e.to_string()
            .starts_with(&format!("/etc/sr/router.toml:{line}: ")),
        "{e}"
    );
}

#[test]
fn errors_name_line_and_field() {
    expect_error("workers = 1", "workers = 0", 3, "workers");
    expect_error("workers = 1", "wrokers = 1", 3, "wrokers");
    expect_error(
        "driver = \"pcap\"\nrx_pcap",
        "driver = \"dpdk\"\nrx_pcap",
        7,
        "driver",
    );
    expect_error("02:00:00:00:00:10", "02:00:00:00:00:1g", 10, "mac");
    expect_error("\"198.18.0.1/24\"", "\"198.18.0.1/40\"", 11, "addresses");
    expect_error("mtu = 1500", "mtu = 20", 12, "mtu");
    expect_error("name = \"p1\"", "name = \"p0\"", 15, "another port");
    expect_error("198.19.0.0/16", "198.19.0.1/16", 22, "host bits");
    expect_error("\"198.19.0.3\"]", "\"198.20.0.3\"]", 23, "no port's subnet");
    expect_error("\"198.19.0.3\"]", "\"2001:2::9\"]", 23, "family");
    expect_error("port = \"p1\"", "port = \"p9\"", 28, "no port is named");
    expect_error(
        "mac = \"02:00:00:00:00:22\"",
        "mac = \"nope\"",
        27,
        "neighbor",
    );
    expect_error("tx_pcap = \"out1.pcap\"", "tx_pcap = 3", 17, "tx_pcap");
    expect_error("198.19.0.1/24", "198.18.0.9/24", 19, "overlaps");
}

#[test]
fn syntax_errors_have_lines() {
    let e = parse("[router]\nworkers = \n").unwrap_err();
    assert_eq!(e.line, 2, "{e}");
}

#[test]
fn live_ports_need_an_interface_and_take_their_mac_from_it() {
    let e = parse("[[port]]\nname = \"e0\"\ndriver = \"afxdp\"\n").unwrap_err();
    assert!(e.message.contains("iface"), "{e}");
    let c = parse(
        "[[port]]\nname = \"e0\"\ndriver = \"afxdp\"\niface = \"veth0\"\nxdp_mode = \"generic\"\n",
    )
    .unwrap();
    assert_eq!(c.ports[0].mac, None);
    assert_eq!(c.ports[0].xdp_mode, XdpMode::Generic);
    let e = parse("[[port]]\nname = \"e0\"\ndriver = \"pcap\"\nxdp_mode = \"generic\"\nmac=\"02:00:00:00:00:01\"\n").unwrap_err();
    assert_eq!(e.line, 4, "{e}");
}

#[test]
fn queue_map_defines_workers() {
    let text = format!(
        "{EXAMPLE}\n[[queue]]\nport = \"p0\"\nqueue = 0\ncore = 1\n[[queue]]\nport = \"p1\"\nqueue = 0\ncore = 0\n"
    )
    .replace("workers = 1 ", "workers = 2 ");
    let c = parse(&text).unwrap();
    assert_eq!(c.router.workers, 2);
    assert_eq!(c.router.cores, vec![1, 0]);
    assert_eq!(
        c.router.queue_map[1],
        QueueMap {
            port: 1,
            queue: 0,
            worker: 1
        }
    );
    let bad = text.replace(
        "port = \"p1\"\nqueue = 0\ncore = 0",
        "port = \"p0\"\nqueue = 0\ncore = 0",
    );
    assert!(parse(&bad).unwrap_err().message.contains("assigned twice"));
}

#[test]
fn missing_routes_file_is_reported() {
    let e = parse(&format!("{EXAMPLE}\n[routes_file]\npath = \"nope.txt\"\n")).unwrap_err();
    assert!(e.message.contains("nope.txt"), "{e}");
}

/// Appends `extra` to the example and expects an error on `line` whose
/// message contains `needle`.
fn expect_error_appended(extra: &str, line: usize, needle: &str) {
    let text = format!("{EXAMPLE}{extra}");
    let e = parse(&text).expect_err(&format!("accepted: {extra}"));
    assert_eq!(e.line, line, "wrong line for {extra:?}: {e}");
    assert!(e.message.contains(needle), "{e} lacks {needle:?}");
}

// Issue 12: configurations that were accepted and must not be, one test
// each, with file:line:field errors.

#[test]
fn static_neighbor_at_the_routers_own_address() {
    expect_error(
        "address = \"198.19.0.2\"",
        "address = \"198.19.0.1\"",
        26,
        "own address",
    );
}

#[test]
fn route_to_the_routers_own_host_address() {
    expect_error("198.19.0.0/16", "198.19.0.1/32", 22, "own address");
    let v6 = "\n[[route]]\nprefix = \"2001:2:0:2::1/128\"\nvia = [\"2001:2:0:2::2\"]\n";
    expect_error_appended(v6, 31, "own address");
}

#[test]
fn route_over_a_connected_subnet() {
    expect_error("198.19.0.0/16", "198.19.0.0/24", 22, "connected subnet");
    expect_error(
        "198.19.0.0/16",
        "198.19.0.128/25",
        22,
        "inside port \"p1\"'s connected subnet",
    );
    // Less specific than a connected subnet is fine (a default route).
    parse(&EXAMPLE.replace("198.19.0.0/16", "0.0.0.0/0")).unwrap();
}

#[test]
fn same_route_twice_with_different_next_hops() {
    let again = "\n[[route]]\nprefix = \"198.19.0.0/16\"\nvia = [\"198.19.0.4\"]\n";
    expect_error_appended(again, 31, "first at line 22");
    // The very same route twice is harmless.
    let same = "\n[[route]]\nprefix = \"198.19.0.0/16\"\nvia = [\"198.19.0.2\", \"198.19.0.3\"]\n";
    assert_eq!(parse(&format!("{EXAMPLE}{same}")).unwrap().routes.len(), 1);
}

#[test]
fn same_neighbor_twice_with_different_values() {
    let again =
        "\n[[neighbor]]\naddress = \"198.19.0.2\"\nmac = \"02:00:00:00:00:23\"\nport = \"p1\"\n";
    expect_error_appended(again, 31, "first at line 26");
    let same =
        "\n[[neighbor]]\naddress = \"198.19.0.2\"\nmac = \"02:00:00:00:00:22\"\nport = \"p1\"\n";
    assert_eq!(
        parse(&format!("{EXAMPLE}{same}")).unwrap().neighbors.len(),
        1
    );
}

#[test]
fn off_link_static_neighbor() {
    expect_error(
        "address = \"198.19.0.2\"",
        "address = \"198.20.0.2\"",
        26,
        "not on a subnet of port \"p1\"",
    );
    // On a subnet, but another port's.
    expect_error(
        "address = \"198.19.0.2\"",
        "address = \"198.18.0.2\"",
        26,
        "port \"p0\"'s subnet",
    );
    expect_error(
        "address = \"198.19.0.2\"",
        "address = \"198.19.0.255\"",
        26,
        "broadcast",
    );
}

#[test]
fn multicast_or_all_zero_port_macs() {
    expect_error("02:00:00:00:00:10", "01:00:5e:00:00:10", 10, "mac");
    expect_error("02:00:00:00:00:10", "00:00:00:00:00:00", 10, "all-zero");
    expect_error("02:00:00:00:00:10", "ff:ff:ff:ff:ff:ff", 10, "multicast");
    expect_error(
        "mac = \"02:00:00:00:00:22\"",
        "mac = \"33:33:00:00:00:01\"",
        27,
        "unicast",
    );
}

#[test]
fn subnet_network_and_broadcast_addresses() {
    expect_error(
        "\"198.18.0.1/24\"",
        "\"198.18.0.0/24\"",
        11,
        "network address",
    );
    expect_error(
        "\"198.18.0.1/24\"",
        "\"198.18.0.255/24\"",
        11,
        "broadcast address",
    );
    // Point-to-point /31 and host /32 have neither.
    parse(&EXAMPLE.replace("\"198.18.0.1/24\"", "\"198.18.0.0/31\"")).unwrap();
    parse(&EXAMPLE.replace("\"198.18.0.1/24\"", "\"198.18.0.1/32\"")).unwrap();
    // A next hop at a subnet's broadcast address.
    expect_error("\"198.19.0.3\"]", "\"198.19.0.255\"]", 23, "broadcast");
}

/// IPv6 has no broadcast, but its network address is the subnet's
/// Subnet-Router anycast address (RFC 4291 2.6.1): every router on the
/// link answers it, so it is no host's, and the router never resolves it
/// as one. It cannot be a port's address, a next hop or a static
/// neighbor; /127 (RFC 6164) and /128 have none.
#[test]
fn ipv6_subnet_router_anycast_addresses() {
    expect_error(
        "\"2001:2:0:1::1/64\"",
        "\"2001:2:0:1::/64\"",
        11,
        "Subnet-Router anycast",
    );
    parse(&EXAMPLE.replace("\"2001:2:0:1::1/64\"", "\"2001:2:0:1::/127\"")).unwrap();
    parse(&EXAMPLE.replace("\"2001:2:0:1::1/64\"", "\"2001:2:0:1::/128\"")).unwrap();
    let route = "\n[[route]]\nprefix = \"2001:db8::/32\"\nvia = [\"2001:2:0:2::\"]\n";
    expect_error_appended(route, 32, "Subnet-Router anycast");
    let neighbor =
        "\n[[neighbor]]\naddress = \"2001:2:0:2::\"\nmac = \"02:00:00:00:00:23\"\nport = \"p1\"\n";
    expect_error_appended(neighbor, 31, "Subnet-Router anycast");
}

#[test]
fn loopback_and_default_as_port_addresses() {
    expect_error("\"198.18.0.1/24\"", "\"127.0.0.1/8\"", 11, "loopback");
    expect_error("\"2001:2:0:1::1/64\"", "\"::1/128\"", 11, "loopback");
    expect_error("\"198.18.0.1/24\"", "\"198.18.0.1/0\"", 11, "/0");
    expect_error("\"2001:2:0:1::1/64\"", "\"2001:2:0:1::1/0\"", 11, "/0");
}

#[test]
fn duplicate_cores() {
    let e = parse(&EXAMPLE.replace("workers = 1 ", "cores = [1, 1]")).unwrap_err();
    assert_eq!(e.line, 3, "{e}");
    assert!(e.message.contains("core 1 is listed twice"), "{e}");
    parse(&EXAMPLE.replace("workers = 1 ", "cores = [1, 0]")).unwrap();
}

#[test]
fn two_ports_writing_one_capture() {
    expect_error(
        "tx_pcap = \"out1.pcap\"",
        "tx_pcap = \"out0.pcap\"",
        17,
        "also port \"p0\"'s tx_pcap",
    );
    // Spelled differently, the same file.
    expect_error(
        "tx_pcap = \"out1.pcap\"",
        "tx_pcap = \"./x/../out0.pcap\"",
        17,
        "tx_pcap",
    );
    expect_error(
        "tx_pcap = \"out1.pcap\"",
        "tx_pcap = \"/etc/sr/out0.pcap\"",
        17,
        "tx_pcap",
    );
    // Writing another port's input.
    expect_error(
        "tx_pcap = \"out1.pcap\"",
        "tx_pcap = \"in0.pcap\"",
        17,
        "rx_pcap",
    );
}

#[test]
fn messages_quote_only_an_excerpt() {
    let huge = "z".repeat(10 << 20);
    for (from, to) in [
        ("02:00:00:00:00:10", huge.as_str()),
        ("198.19.0.0/16", huge.as_str()),
        ("\"198.19.0.3\"]", &format!("\"{huge}\"]")),
    ] {
        let text = EXAMPLE.replacen(from, to, 1);
        let e = parse(&text).unwrap_err();
        assert!(e.to_string().len() < 500, "{} bytes", e.to_string().len());
    }
    // A type error quotes the value in serde's words; capped as well.
    let e = parse(&EXAMPLE.replace("workers = 1", &format!("workers = \"{huge}\""))).unwrap_err();
    assert!(e.to_string().len() < 500, "{} bytes", e.to_string().len());
    assert_eq!(e.line, 3);
}

#[test]
fn control_socket_defaults_resolves_and_turns_off() {
    let c = parse(EXAMPLE).unwrap();
    assert_eq!(
        c.control.socket.as_deref(),
        Some(Path::new(config::DEFAULT_CONTROL_SOCKET))
    );
    assert_eq!((c.control.group, c.metrics), (None, None));
    let c = parse(&format!(
        "{EXAMPLE}\n[control]\nsocket = \"run/ctl.sock\"\ngroup = \"netadm\"\n[metrics]\nlisten = \"127.0.0.1:9469\"\n"
    ))
    .unwrap();
    assert_eq!(
        c.control.socket.as_deref(),
        Some(Path::new("/etc/sr/run/ctl.sock"))
    );
    assert_eq!(c.control.group.as_deref(), Some("netadm"));
    assert_eq!(c.metrics, Some("127.0.0.1:9469".parse().unwrap()));
    let off = parse(&format!("{EXAMPLE}\n[control]\nsocket = \"off\"\n")).unwrap();
    assert_eq!(off.control.socket, None);
}

#[test]
fn bad_control_and_metrics_values_name_their_line() {
    // The appended text starts with an empty line, then the table.
    let base = EXAMPLE.lines().count();
    expect_error_appended(
        "\n[control]\nsocket = \"\"\n",
        base + 3,
        "control: socket: empty",
    );
    expect_error_appended("\n[control]\ngroup = \"a:b\"\n", base + 3, "control: group");
    expect_error_appended("\n[control]\nsokcet = \"x\"\n", base + 3, "unknown field");
    expect_error_appended(
        "\n[metrics]\nlisten = \"localhost\"\n",
        base + 3,
        "metrics: listen: \"localhost\" is not an address and port",
    );
}

/// A route given at run time is judged like a `[[route]]`: same checks,
/// same words, no line.
#[test]
fn runtime_routes_are_judged_like_file_routes() {
    let c = parse(EXAMPLE).unwrap();
    let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
    let r = config::runtime_route(&c, "198.20.0.0/16", &[ip("198.19.0.2")]).unwrap();
    assert_eq!(r.via, [(ip("198.19.0.2"), c.port_index("p1").unwrap())]);
    let err = |p: &str, via: &[&str]| {
        let via: Vec<_> = via.iter().map(|v| ip(v)).collect();
        config::runtime_route(&c, p, &via).unwrap_err()
    };
    assert!(err("198.20.0.1/16", &["198.19.0.2"]).contains("host bits are set"));
    assert!(err("198.20.0.0/16", &[]).contains("needs at least one next hop"));
    assert!(err("198.20.0.0/16", &["2001:2::1"]).contains("not of the prefix's address family"));
    assert!(err("198.20.0.0/16", &["198.19.0.2", "198.19.0.2"]).contains("listed twice"));
    assert!(err("198.20.0.0/16", &["203.0.113.9"]).starts_with("route 198.20.0.0/16: via: "));
    assert!(err("nonsense", &["198.19.0.2"]).starts_with("route: prefix: "));
}

/// `[kernel] local` hands the router's own traffic to the kernel from the
/// XDP program: without the tier on every port it is refused, naming the
/// field and its line.
#[test]
fn kernel_local_needs_the_xdp_tier_on_every_port() {
    let live = "[[port]]\nname = \"e0\"\ndriver = \"afxdp\"\niface = \"veth0\"\n\
                [[port]]\nname = \"e1\"\ndriver = \"afxdp\"\niface = \"veth1\"\n";
    let kernel = "[kernel]\nroutes = true\nlocal = true\n";
    let c = parse(&format!("{live}{kernel}")).unwrap();
    assert!(c.kernel_local);
    assert_eq!(c.kernel_routes, Some(254));
    assert!(!parse(live).unwrap().kernel_local);
    assert!(
        !parse(&format!("{live}[kernel]\nlocal = false\n"))
            .unwrap()
            .kernel_local
    );

    let off = format!("[router]\nfast_path = \"off\"\n{live}{kernel}");
    let e = parse(&off).unwrap_err();
    assert_eq!(e.line, 13, "{e}");
    assert!(e.message.starts_with("kernel: local: "), "{e}");
    assert!(e.message.contains("fast_path = \"xdp\""), "{e}");

    let mixed = live.replacen("\"afxdp\"", "\"afpacket\"", 1);
    let e = parse(&format!("{mixed}{kernel}")).unwrap_err();
    assert_eq!(e.line, 11, "{e}");
    assert!(e.message.contains("port \"e0\" has driver afpacket"), "{e}");

    let e = parse(&format!("{EXAMPLE}\n{kernel}")).unwrap_err();
    assert!(e.message.contains("port \"p0\" has driver pcap"), "{e}");
}

#[test]
fn hugepages_setting_defaults_to_auto_and_names_a_bad_value() {
    assert_eq!(parse(EXAMPLE).unwrap().router.hugepages, HugePages::Auto);
    for (v, want) in [
        ("auto", HugePages::Auto),
        ("require", HugePages::Require),
        ("off", HugePages::Off),
    ] {
        let text = EXAMPLE.replacen(
            "workers = 1",
            &format!("workers = 1\nhugepages = \"{v}\""),
            1,
        );
        assert_eq!(parse(&text).unwrap().router.hugepages, want, "{v}");
    }
    expect_error(
        "workers = 1",
        "workers = 1\nhugepages = \"always\"",
        4,
        "router: hugepages: ",
    );
    expect_error(
        "workers = 1",
        "workers = 1\nhugepages = true",
        4,
        "hugepages",
    );
}
