//! A real routing daemon drives softrouter (issue 10): Debian's BIRD 2 in
//! namespaces `peer` | `router` | `sink`.
//!
//! softrouter owns the router's interfaces (afxdp, XDP tier) with
//! `[kernel] routes = true` and `local = true`; the kernel has the same
//! addresses. A BIRD in the router namespace holds a BGP session with a
//! BIRD in the peer namespace *through softrouter's port* (its TCP reaches
//! the kernel because of `local`), and exports what it learns to the
//! kernel table, which softrouter mirrors. The peer announces N host
//! routes (static, benchmarking space) with itself as next hop; UDP from
//! the sink to a sample of them must reach the peer; when the peer
//! withdraws them the traffic stops and the sink gets ICMP net
//! unreachable from softrouter. Next hops nobody has resolved (a kernel
//! route's gateway, a connected host) are resolved by the kernel at
//! softrouter's request (`NTF_USE`): the workers send no ARP or ND; when
//! the sink stops answering for the gateway, the kernel's probes fail it
//! and softrouter forgets its MAC (printed: how long that took). Ping
//! to the router is answered by softrouter. Once over IPv4, once over
//! IPv6 (session, prefixes and next hops in 2001:2::/48).
//!
//! Printed: the convergence, from `enable` of the peer's static protocol
//! to softrouter holding all N routes, and the withdrawal likewise.
//! N is `SR_BIRD_PREFIXES` (default [`DEFAULT_N`]).
//!
//! Needs root and `bird`/`birdc` (scripts/setup.sh installs bird2);
//! skipped with a message otherwise.

mod common;

use common::in_ns;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::RouterProcess;
use control::protocol::{Request, Response};
use testbed::three_hosts_addr::*;
use testbed::{Netns, RouterMode, TopologyOptions};

/// Prefixes announced unless `SR_BIRD_PREFIXES` says otherwise.
const DEFAULT_N: u32 = 100_000;
/// Destinations the traffic check sends to.
const SAMPLES: u32 = 8;
const UDP_PORT: u16 = 5003;

/// One address family's addresses and words.
#[derive(Clone, Copy)]
struct Family {
    v6: bool,
    peer: &'static str,
    router: &'static str,
    /// Sink-side hosts that never sent anything: a kernel route's
    /// gateway, and a connected host (resolved by the kernel on demand).
    gateway: &'static str,
    host: &'static str,
    /// The kernel route through `gateway` (clear of the announced ones).
    via_gateway: (&'static str, &'static str),
}

const V4: Family = Family {
    v6: false,
    peer: SENDER_V4,
    router: ROUTER_IN_V4,
    gateway: "198.19.0.3",
    host: "198.19.0.4",
    via_gateway: ("198.19.250.0/24", "198.19.250.5"),
};

const V6: Family = Family {
    v6: true,
    peer: SENDER_V6,
    router: ROUTER_IN_V6,
    gateway: "2001:2:0:1::3",
    host: "2001:2:0:1::4",
    via_gateway: ("2001:2:0:fa::/64", "2001:2:0:fa::5"),
};

impl Family {
    fn name(self) -> &'static str {
        if self.v6 {
            "ipv6"
        } else {
            "ipv4"
        }
    }

    fn host_len(self) -> u8 {
        if self.v6 {
            128
        } else {
            32
        }
    }

    /// The index of an announced host route (the inverse of
    /// [`Family::prefix`]).
    fn index(self, a: IpAddr) -> Option<u32> {
        match a {
            IpAddr::V6(a) if self.v6 => {
                let base: u128 = "2001:2:0:100::".parse::<Ipv6Addr>().unwrap().into();
                u32::try_from(u128::from(a).checked_sub(base)?).ok()
            }
            IpAddr::V4(a) if !self.v6 => {
                let a = u32::from(a);
                match a {
                    0xc612_0100..0xc613_0000 => Some(a - 0xc612_0100),
                    0xc613_0100.. => Some(a - 256 - 0xc612_0100),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The i-th announced host route. IPv4: 198.18.1.0 upwards over
    /// 198.18.0.0/15, skipping the two links' /24s; IPv6: in
    /// 2001:2:0:100::/64.
    fn prefix(self, i: u32) -> IpAddr {
        if self.v6 {
            let base: u128 = "2001:2:0:100::".parse::<Ipv6Addr>().unwrap().into();
            IpAddr::V6((base + u128::from(i)).into())
        } else {
            let a = 0xc612_0100 + i;
            IpAddr::V4(Ipv4Addr::from(if a >= 0xc613_0000 { a + 256 } else { a }))
        }
    }
}

/// A BIRD in a namespace, with its own configuration, control socket and
/// pid file in `dir`; killed on drop (also when the test fails).
struct Bird {
    child: Child,
    sock: PathBuf,
}

impl Bird {
    fn start(ns: &Netns, dir: &Path, name: &str, conf: &str) -> Bird {
        let file = |ext: &str| dir.join(format!("{name}.{ext}"));
        std::fs::write(file("conf"), conf).unwrap();
        let sock = file("ctl");
        let (c, s, p) = (file("conf"), sock.clone(), file("pid"));
        let child = ns
            .command(
                "bird",
                &[
                    "-f",
                    "-c",
                    c.to_str().unwrap(),
                    "-s",
                    s.to_str().unwrap(),
                    "-P",
                    p.to_str().unwrap(),
                ],
            )
            .stdin(std::process::Stdio::null())
            .spawn()
            .expect("starting bird");
        let bird = Bird { child, sock };
        wait_for(&format!("{name} BIRD up"), Duration::from_secs(10), || {
            bird.birdc(&["show", "status"]).contains("Daemon is up")
        });
        bird
    }

    fn birdc(&self, args: &[&str]) -> String {
        let out = Command::new("birdc")
            .arg("-s")
            .arg(&self.sock)
            .args(args)
            .output()
            .expect("birdc");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Bird {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_for(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) -> Duration {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < timeout, "{what}: not within {timeout:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    t.elapsed()
}

fn show(sock: &Path, prefix: Option<String>) -> Vec<serde_json::Value> {
    let req = Request::RouteShow {
        prefix,
        longest: None,
    };
    match control::client::request(sock, req) {
        Ok(Response::Ok { data }) => data.as_array().cloned().unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// How many of the N announced prefixes softrouter has a route for (other
/// host routes, such as the entries of connected hosts, do not count).
fn announced(sock: &Path, f: Family, n: u32) -> usize {
    show(sock, None)
        .iter()
        .filter_map(|r| r["prefix"].as_str()?.split_once('/'))
        .filter(|(a, len)| {
            len.parse() == Ok(f.host_len())
                && a.parse()
                    .ok()
                    .and_then(|a| f.index(a))
                    .is_some_and(|i| i < n)
        })
        .count()
}

/// softrouter routes packets to the i-th prefix by its host route: a
/// longest-match lookup (cheap, where listing the table at 100k routes
/// takes most of a second and holds the router's writer lock).
fn has(sock: &Path, f: Family, i: u32) -> bool {
    let req = Request::RouteShow {
        prefix: None,
        longest: Some(f.prefix(i)),
    };
    match control::client::request(sock, req) {
        Ok(Response::Ok { data }) => {
            data[0]["prefix"].as_str() == Some(&format!("{}/{}", f.prefix(i), f.host_len()))
        }
        _ => false,
    }
}

/// Waits until softrouter routes all N prefixes (`present`) or none, and
/// returns when (since `t`) by probes and when confirmed. The probes are
/// longest-match lookups of 1 in 100 prefixes (strided over the
/// announcement) and the last; the confirmation lists the whole table,
/// which at 100k routes takes most of a second, so it is not the figure.
fn converge(sock: &Path, f: Family, n: u32, t: Instant, present: bool) -> (Duration, Duration) {
    let probes: Vec<u32> = (0..n).step_by(100).chain([n - 1]).collect();
    let timeout = Duration::from_secs(30 + u64::from(n) / 500);
    let (mut probed, mut confirmed) = (Duration::ZERO, Duration::ZERO);
    let what = format!(
        "{} {n} routes in softrouter",
        if present { "all" } else { "none of" }
    );
    wait_for(&what, timeout, || {
        if !probes.iter().all(|&i| has(sock, f, i) == present) {
            return false;
        }
        probed = t.elapsed();
        let count = announced(sock, f, n);
        confirmed = t.elapsed();
        count == if present { n as usize } else { 0 }
    });
    (probed, confirmed)
}

/// softrouter's neighbour state for `ip` (`None`: no entry).
fn neigh_state(sock: &Path, ip: &str) -> Option<String> {
    match control::client::request(sock, Request::NeighShow) {
        Ok(Response::Ok { data }) => data
            .as_array()?
            .iter()
            .find(|n| n["address"] == ip)
            .and_then(|n| n["state"].as_str().map(String::from)),
        _ => None,
    }
}

/// The unspecified address of `a`'s family.
fn any(a: IpAddr) -> IpAddr {
    match a {
        IpAddr::V4(_) => Ipv4Addr::UNSPECIFIED.into(),
        IpAddr::V6(_) => Ipv6Addr::UNSPECIFIED.into(),
    }
}

/// Sends 10 datagrams from namespace `from` to each of `dsts` and counts,
/// per destination, those namespace `to` received; and the ICMP net
/// unreachable errors the senders' sockets (IP_RECVERR) saw.
fn traffic(from: &str, to: &str, dsts: &[IpAddr]) -> (Vec<usize>, usize) {
    let n = dsts.len();
    let v6 = dsts[0].is_ipv6();
    let any = any(dsts[0]);
    let receiver = in_ns(to, move || {
        let s = UdpSocket::bind((any, UDP_PORT)).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(1500)))
            .unwrap();
        let mut got = vec![0; n];
        let mut buf = [0u8; 64];
        while let Ok(len) = s.recv(&mut buf) {
            if len > 0 && (buf[0] as usize) < n {
                got[buf[0] as usize] += 1;
            }
        }
        got
    });
    std::thread::sleep(Duration::from_millis(200));
    let dsts = dsts.to_vec();
    let errors = in_ns(from, move || {
        let mut errors = 0;
        for (k, d) in dsts.iter().enumerate() {
            let s = UdpSocket::bind((any, 0)).unwrap();
            let (level, opt) = if v6 {
                (libc::IPPROTO_IPV6, libc::IPV6_RECVERR)
            } else {
                (libc::IPPROTO_IP, libc::IP_RECVERR)
            };
            let on: libc::c_int = 1;
            // SAFETY: setsockopt with a valid int option.
            unsafe {
                libc::setsockopt(
                    std::os::fd::AsRawFd::as_raw_fd(&s),
                    level,
                    opt,
                    &on as *const libc::c_int as *const libc::c_void,
                    4,
                )
            };
            s.connect(SocketAddr::new(*d, UDP_PORT)).unwrap();
            s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
            for _ in 0..10 {
                let _ = s.send(&[k as u8; 32]);
                let mut b = [0u8; 64];
                if let Err(e) = s.recv(&mut b) {
                    if e.raw_os_error() == Some(libc::ENETUNREACH) {
                        errors += 1;
                    }
                }
            }
        }
        errors
    })
    .join()
    .unwrap();
    (receiver.join().unwrap(), errors)
}

/// Serial: each scenario runs softrouter, two BIRDs and 100k routes.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn bird_drives_softrouter_over_bgp_ipv4() {
    scenario(V4);
}

#[test]
fn bird_drives_softrouter_over_bgp_ipv6() {
    scenario(V6);
}

fn scenario(f: Family) {
    if !testbed::require_root(&format!("BIRD over softrouter, {}", f.name())) {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if Command::new("bird").arg("--version").output().is_err() {
        eprintln!("BIRD over softrouter: skipped (no bird; scripts/setup.sh installs bird2)");
        return;
    }
    let n: u32 = std::env::var("SR_BIRD_PREFIXES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_N);
    assert!((SAMPLES..=130_000).contains(&n), "SR_BIRD_PREFIXES {n}");
    // The router's kernel interfaces carry softrouter's addresses (the
    // kernel answers ARP and BGP for them); it forwards nothing itself.
    let th = testbed::three_hosts_with(TopologyOptions {
        queues: 1,
        router: RouterMode::Kernel,
        ip_forward: false,
    })
    .unwrap();
    let (peer, r, sink) = (th.sender(), th.router(), th.receiver());
    // GRO gives the outer ends the NAPI that takes redirected XDP frames.
    for (ns, ifname) in [(peer, &th.sender_if), (sink, &th.receiver_if)] {
        let out = ns.exec(&["ethtool", "-K", ifname, "gro", "on"]).unwrap();
        assert!(out.status.success(), "gro on {ifname}");
    }
    let dir = std::env::temp_dir().join(format!("sr-bird-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sock = dir.join("sr.sock");
    let cfg = format!(
        r#"
[router]
workers = 1
mode = "interrupt"
fast_path = "xdp"

[[port]]
name = "in"
driver = "afxdp"
iface = "{rin}"
addresses = ["{ROUTER_IN_V4}/24", "{ROUTER_IN_V6}/64"]

[[port]]
name = "out"
driver = "afxdp"
iface = "{rout}"
addresses = ["{ROUTER_OUT_V4}/24", "{ROUTER_OUT_V6}/64"]

[control]
socket = "{sock}"

[kernel]
routes = true
local = true
"#,
        rin = th.router_in,
        rout = th.router_out,
        sock = sock.display()
    );
    // Short neighbour timers on the sink's side, so that a dead next hop
    // is noticed within the test (the kernel's probes decide it).
    let nd = if f.v6 { "ipv6" } else { "ipv4" };
    for (key, value) in [
        ("base_reachable_time_ms", "1000"),
        ("delay_first_probe_time", "1"),
    ] {
        r.sysctl(&format!("net.{nd}.neigh.{}.{key}", th.router_out), value)
            .unwrap();
    }
    let mut router = RouterProcess::start(r, "bird", &cfg);
    router.wait_ready(Duration::from_secs(20));

    let session = "connect delay time 1; connect retry time 1; error wait time 1, 2;";
    let (fam, peer_ip, router_ip) = (f.name(), f.peer, f.router);
    let router_bird = Bird::start(
        r,
        &dir,
        "router",
        &format!(
            "router id {ROUTER_IN_V4};\nprotocol device {{ scan time 1; }}\n\
             protocol kernel {{ {fam} {{ import none; export all; }}; }}\n\
             protocol bgp peer {{ local {router_ip} as 65001; neighbor {peer_ip} as 65002; \
             {session} {fam} {{ import all; export none; }}; }}\n"
        ),
    );
    let mut conf = format!(
        "router id {SENDER_V4};\nprotocol device {{ scan time 1; }}\n\
         protocol bgp uplink {{ local {peer_ip} as 65002; neighbor {router_ip} as 65001; \
         {session} {fam} {{ import none; export all; }}; }}\n\
         protocol static static1 {{ disabled; {fam};\n"
    );
    let len = f.host_len();
    for i in 0..n {
        conf.push_str(&format!("route {}/{len} blackhole;\n", f.prefix(i)));
    }
    conf.push_str("}\n");
    let peer_bird = Bird::start(peer, &dir, "peer", &conf);
    // The session's TCP to the router's address is the kernel's
    // (XDP_PASS), as are ARP / ND for it.
    wait_for("BGP session established", Duration::from_secs(30), || {
        router_bird
            .birdc(&["show", "protocols", "peer"])
            .contains("Established")
    });

    // Announce: time to softrouter holding every route.
    let t = Instant::now();
    assert!(peer_bird.birdc(&["enable", "static1"]).contains("enabled"));
    let samples: Vec<u32> = (0..SAMPLES).map(|k| k * (n / SAMPLES)).collect();
    let (converged, confirmed) = converge(&sock, f, n, t, true);
    eprintln!(
        "BIRD {fam}: {n} prefixes over BGP into softrouter in {:.2} s ({:.0} routes/s; \
         all {n} confirmed by {:.2} s)",
        converged.as_secs_f64(),
        f64::from(n) / converged.as_secs_f64(),
        confirmed.as_secs_f64()
    );

    // The samples reach the peer, through softrouter (the peer holds them
    // as local addresses to receive them).
    let dsts: Vec<IpAddr> = samples.iter().map(|&i| f.prefix(i)).collect();
    for d in &dsts {
        let host = format!("{d}/{len}");
        peer.ip(&["route", "add", "local", &host, "dev", "lo"])
            .unwrap();
    }
    let (got, errors) = traffic(sink.name(), peer.name(), &dsts);
    assert!(
        got.iter().all(|&g| g >= 9) && errors == 0,
        "datagrams per sample {got:?}, errors {errors}"
    );

    // Next hops nobody has resolved yet are the kernel's to resolve: a
    // kernel route's gateway (asked when the route is installed) and a
    // connected host (asked by the workers on the first packet).
    let sink_if = &th.receiver_if;
    let plen = if f.v6 { 64 } else { 24 };
    for a in [f.gateway, f.host] {
        sink.add_addr(sink_if, &format!("{a}/{plen}")).unwrap();
    }
    let (net, beyond) = f.via_gateway;
    sink.ip(&[
        "route",
        "add",
        "local",
        &format!("{beyond}/{len}"),
        "dev",
        "lo",
    ])
    .unwrap();
    r.ip(&["route", "add", net, "via", f.gateway]).unwrap();
    wait_for(
        "the kernel route in softrouter",
        Duration::from_secs(10),
        || !show(&sock, Some(net.into())).is_empty(),
    );
    let far: Vec<IpAddr> = [beyond, f.host]
        .iter()
        .map(|a| a.parse().unwrap())
        .collect();
    let (got, errors) = traffic(peer.name(), sink.name(), &far);
    assert!(
        got.iter().all(|&g| g >= 9) && errors == 0,
        "via a gateway and to a host the kernel resolved: {got:?}, errors {errors}"
    );

    // A next hop that dies is noticed: the kernel, handed the entries in
    // use again and again, probes the gateway once its entry is STALE,
    // fails it when the sink stops answering for the address, and
    // softrouter forgets its MAC.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (go, to) = (stop.clone(), SocketAddr::new(far[0], UDP_PORT));
    let trickle = in_ns(peer.name(), move || {
        let s = UdpSocket::bind(SocketAddr::new(any(to.ip()), 0)).unwrap();
        while !go.load(std::sync::atomic::Ordering::Relaxed) {
            let _ = s.send_to(&[0; 32], to);
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    assert_eq!(neigh_state(&sock, f.gateway).as_deref(), Some("static"));
    let gone = format!("{}/{plen}", f.gateway);
    sink.ip(&["addr", "del", &gone, "dev", sink_if]).unwrap();
    let dead = wait_for("the dead gateway failed", Duration::from_secs(40), || {
        neigh_state(&sock, f.gateway).is_none_or(|s| s != "static")
    });
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    trickle.join().unwrap();
    eprintln!(
        "BIRD {fam}: a dead next hop forgotten after {:.1} s (reachable time 1 s)",
        dead.as_secs_f64()
    );

    // Withdraw: the routes go, the traffic stops with ICMP unreachable.
    let t = Instant::now();
    assert!(peer_bird
        .birdc(&["disable", "static1"])
        .contains("disabled"));
    let (converged, confirmed) = converge(&sock, f, n, t, false);
    eprintln!(
        "BIRD {fam}: {n} withdrawals into softrouter in {:.2} s (all confirmed by {:.2} s)",
        converged.as_secs_f64(),
        confirmed.as_secs_f64()
    );
    let (got, errors) = traffic(sink.name(), peer.name(), &dsts);
    assert!(
        got.iter().all(|&g| g == 0) && errors >= dsts.len(),
        "after the withdrawal: datagrams per sample {got:?}, net unreachable {errors}"
    );

    // Echo requests to the router stay softrouter's.
    let ping = peer
        .exec(&["ping", "-n", "-c", "2", "-i", "0.2", "-W", "2", router_ip])
        .unwrap();
    assert!(ping.status.success(), "ping {router_ip}");

    drop(peer_bird);
    drop(router_bird);
    let stats = router.stop();
    dataplane::assert_accounting(&stats);
    let port_in = &stats["ports"][0];
    let to_kernel = port_in["fast_path"]["to_kernel"].as_u64().unwrap_or(0);
    let local = port_in["local"].as_u64().unwrap_or(0);
    assert!(
        to_kernel > 0,
        "the BGP session went to the kernel: {port_in}"
    );
    assert!(local >= 2, "the echo requests were softrouter's: {port_in}");
    eprintln!("port in: {to_kernel} frames to the kernel, {local} answered by softrouter");
    let _ = std::fs::remove_dir_all(&dir);
}
