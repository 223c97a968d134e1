//! Route churn under traffic (issue 10): two prefixes whose next hops are
//! flipped 1,000 times a second through the control socket (and, once,
//! by rewriting the configuration file and reloading it) while a sender
//! streams to both through softrouter (AF_XDP ports; once with the XDP
//! tier forwarding, once with the workers). At the receiving end a raw socket reads the destination
//! MAC of every frame: prefix A only ever goes to gateway 1 or 2, prefix
//! B only to gateway 2 or 3 (the next hops each had at some moment), and
//! none is lost. A torn read of a route (the old target's group with the
//! new one's member, a freed next hop reused too early) would show as a
//! frame at the third MAC or as loss.
//!
//! Needs root (namespaces, XDP); skipped with a message otherwise.

mod common;

use common::in_ns;

use std::collections::HashMap;
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::RouterProcess;
use control::protocol::{Request, Response};
use testbed::three_hosts_addr::*;
use testbed::TopologyOptions;

const GW: [(&str, [u8; 6]); 3] = [
    ("198.19.0.11", [2, 0, 0, 0, 0, 0x11]),
    ("198.19.0.12", [2, 0, 0, 0, 0, 0x12]),
    ("198.19.0.13", [2, 0, 0, 0, 0, 0x13]),
];
const A: &str = "198.19.10.0/24";
const B: &str = "198.19.20.0/24";

fn mac(m: [u8; 6]) -> String {
    m.map(|b| format!("{b:02x}")).join(":")
}

/// (destination /24's third octet, destination MAC) -> frames, read on
/// `ifname` until nothing came for a second.
fn count_frames(ifname: &str) -> HashMap<(u8, [u8; 6]), u64> {
    let idx = netio::ifinfo::ifindex(ifname).unwrap();
    // SAFETY: a packet socket bound to one interface, read into a buffer.
    unsafe {
        let fd = libc::socket(
            libc::AF_PACKET,
            libc::SOCK_RAW,
            (libc::ETH_P_IP as u16).to_be() as i32,
        );
        assert!(fd >= 0, "{}", std::io::Error::last_os_error());
        let mut sll: libc::sockaddr_ll = std::mem::zeroed();
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = (libc::ETH_P_IP as u16).to_be();
        sll.sll_ifindex = idx as i32;
        let len = std::mem::size_of::<libc::sockaddr_ll>() as u32;
        assert_eq!(
            libc::bind(fd, (&sll as *const libc::sockaddr_ll).cast(), len),
            0
        );
        let tv = libc::timeval {
            tv_sec: 1,
            tv_usec: 0,
        };
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as u32,
        );
        let big: i32 = 64 << 20;
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            (&big as *const i32).cast(),
            4,
        );
        let mut counts = HashMap::new();
        let mut buf = [0u8; 2048];
        loop {
            let n = libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0);
            if n < 0 {
                break;
            }
            let f = &buf[..n as usize];
            // UDP to port 9 only (ARP, ND and the like are not the test's).
            if f.len() < 38 || f[23] != 17 || f[36..38] != [0, 9] {
                continue;
            }
            let dst_mac: [u8; 6] = f[0..6].try_into().unwrap();
            *counts.entry((f[32], dst_mac)).or_insert(0) += 1;
        }
        libc::close(fd);
        counts
    }
}

/// How the routes are changed.
#[derive(Clone, Copy, PartialEq)]
enum By {
    /// `softrouter ctl route add`, 1,000 a second.
    Ctl,
    /// The configuration file rewritten and `softrouter ctl reload`, as
    /// fast as it goes (each reload reads and validates the whole file).
    Reload,
}

/// The XDP tier reads the routes (it forwards every frame).
#[test]
fn next_hops_flipped_1000_times_a_second_misforward_and_lose_nothing_xdp() {
    churn("xdp", By::Ctl);
}

/// The workers read the routes.
#[test]
fn next_hops_flipped_1000_times_a_second_misforward_and_lose_nothing_workers() {
    churn("off", By::Ctl);
}

/// Reloads of a changed file under traffic, the XDP tier forwarding.
#[test]
fn reloads_under_traffic_misforward_and_lose_nothing() {
    churn("xdp", By::Reload);
}

fn churn(fast_path: &str, by: By) {
    if !testbed::require_root("route churn") {
        return;
    }
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let th = testbed::three_hosts_with(TopologyOptions::user_space_router(1)).unwrap();
    // GRO on the receiver's end: it takes the XDP tier's redirects.
    th.receiver()
        .run(&["ethtool", "-K", &th.receiver_if, "gro", "on"])
        .unwrap();
    th.sender()
        .ip(&["route", "add", "198.19.0.0/16", "via", ROUTER_IN_V4])
        .unwrap();
    let dir = std::env::temp_dir().join(format!(
        "sr-churn-{fast_path}-{}-{}",
        by as u8,
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let sock = dir.join("ctl.sock");
    let neighbors: String = GW
        .iter()
        .map(|(ip, m)| {
            format!(
                "[[neighbor]]\naddress = \"{ip}\"\nmac = \"{}\"\nport = \"out\"\n\n",
                mac(*m)
            )
        })
        .collect();
    let template = format!(
        r#"
[router]
workers = 1
mode = "interrupt"
fast_path = "{fast_path}"

[[port]]
name = "in"
driver = "afxdp"
iface = "{rin}"
addresses = ["{ROUTER_IN_V4}/24"]

[[port]]
name = "out"
driver = "afxdp"
iface = "{rout}"
addresses = ["{ROUTER_OUT_V4}/24"]

[[route]]
prefix = "{A}"
via = ["@A@"]

[[route]]
prefix = "{B}"
via = ["@B@"]

{neighbors}
[control]
socket = "{sock}"
"#,
        rin = th.router_in,
        rout = th.router_out,
        sock = sock.display()
    );
    let config_with = move |a: &str, b: &str| template.replace("@A@", a).replace("@B@", b);
    let tag = format!("churn-{fast_path}-{}", by as u8);
    let router = RouterProcess::start(th.router(), &tag, &config_with(GW[0].0, GW[1].0));
    let cfg_path = router.config_path();
    let route_add = |prefix: &str, gw: &str| {
        control::client::request(
            &sock,
            Request::RouteAdd {
                prefix: prefix.into(),
                via: vec![gw.parse().unwrap()],
            },
        )
    };
    let t = Instant::now();
    while !matches!(route_add(A, GW[0].0), Ok(Response::Ok { .. })) {
        assert!(t.elapsed() < Duration::from_secs(20), "router not up");
        std::thread::sleep(Duration::from_millis(50));
    }

    let rx_if = th.receiver_if.clone();
    let counter = in_ns(th.receiver().name(), move || count_frames(&rx_if));
    std::thread::sleep(Duration::from_millis(300));
    let done = Arc::new(AtomicBool::new(false));
    // The churn: every millisecond one route changes (A and B in turn);
    // by reload, one route changes per reload, as fast as reloads go.
    let churn = {
        let done = done.clone();
        let sock = sock.clone();
        std::thread::spawn(move || {
            let mut flips = 0u64;
            let (mut gw_a, mut gw_b) = (GW[0].0, GW[1].0);
            let start = Instant::now();
            while !done.load(Ordering::Relaxed) {
                let (prefix, gw) = match flips % 4 {
                    0 => (A, GW[1].0),
                    1 => (B, GW[2].0),
                    2 => (A, GW[0].0),
                    _ => (B, GW[1].0),
                };
                let request = match by {
                    By::Ctl => Request::RouteAdd {
                        prefix: prefix.into(),
                        via: vec![gw.parse().unwrap()],
                    },
                    By::Reload => {
                        if prefix == A {
                            gw_a = gw;
                        } else {
                            gw_b = gw;
                        }
                        // Written whole, then renamed: a reload never
                        // reads half a file.
                        let tmp = cfg_path.with_extension("new");
                        std::fs::write(&tmp, config_with(gw_a, gw_b)).unwrap();
                        std::fs::rename(&tmp, &cfg_path).unwrap();
                        Request::Reload
                    }
                };
                let r = control::client::request(&sock, request);
                assert!(matches!(r, Ok(Response::Ok { .. })), "{r:?}");
                flips += 1;
                let due = start + Duration::from_micros(flips * 1000);
                if let Some(w) = due.checked_duration_since(Instant::now()) {
                    std::thread::sleep(w);
                }
            }
            (flips, start.elapsed())
        })
    };
    // The traffic: 20,000 datagrams a second for 3 s, alternating A and B.
    const SENT: u64 = 60_000;
    let sender = in_ns(th.sender().name(), move || {
        let s = UdpSocket::bind("0.0.0.0:0").unwrap();
        let start = Instant::now();
        for i in 0..SENT {
            let due = start + Duration::from_micros(i * 50);
            if let Some(w) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(w);
            }
            let dst = if i % 2 == 0 {
                "198.19.10.7"
            } else {
                "198.19.20.7"
            };
            s.send_to(&[0u8; 18], (dst, 9)).unwrap();
        }
    });
    sender.join().unwrap();
    done.store(true, Ordering::Relaxed);
    let (flips, churn_time) = churn.join().unwrap();
    let counts = counter.join().unwrap();
    let stats = router.stop();
    dataplane::assert_accounting(&stats);
    let _ = std::fs::remove_dir_all(&dir);

    let got = |net: u8, gw: usize| counts.get(&(net, GW[gw].1)).copied().unwrap_or(0);
    let total: u64 = counts.values().sum();
    eprintln!(
        "[fast_path {fast_path}, by {}] {flips} route changes in {:.2} s ({:.0}/s); A: gw1 {} gw2 {} gw3 {}; \
         B: gw1 {} gw2 {} gw3 {}; {total} of {SENT} received; XDP tier forwarded {}",
        if by == By::Ctl { "ctl route add" } else { "reload" },
        churn_time.as_secs_f64(),
        flips as f64 / churn_time.as_secs_f64(),
        got(10, 0),
        got(10, 1),
        got(10, 2),
        got(20, 0),
        got(20, 1),
        got(20, 2),
        stats["ports"][0]["fast_path"]["forwarded"]
    );
    let min_rate = if by == By::Ctl { 700.0 } else { 200.0 };
    assert!(
        flips as f64 / churn_time.as_secs_f64() > min_rate,
        "churn too slow"
    );
    assert_eq!(got(10, 2), 0, "prefix A sent to gateway 3");
    assert_eq!(got(20, 0), 0, "prefix B sent to gateway 1");
    assert!(got(10, 0) > 0 && got(10, 1) > 0 && got(20, 1) > 0 && got(20, 2) > 0);
    assert_eq!(total, SENT, "frames lost or duplicated: {counts:?}");
}
