//! A hostile link (issue 12): softrouter on AF_XDP veth ports, an attacker
//! on the router's input link, and a legitimate host pinging through the
//! router and the router itself every 100 ms.
//!
//! ```text
//!  sender (legit) --\
//!                    br0 (lan) --- router --- receiver
//!  attacker --------/    in: 198.18.0.1/24     out: 198.19.0.1/16
//!                            2001:2::1/64           2001:2:0:1::1/64
//! ```
//!
//! The attacker sends, through a raw packet socket, ARP and ND spoofs of
//! the router's addresses (gratuitous ARP, unsolicited ARP replies,
//! override NAs, NSs from the router's own address; broadcast and unicast
//! to the router) interleaved with a 100,000-address sweep through the
//! router into the connected 198.19.0.0/16 and 2001:2:0:1::/64. The test
//! asserts that no legitimate ping is lost after the first second, that
//! the router's own addresses keep answering, that new hosts on both links
//! are resolved afterwards, and that the statistics count the spoofs.
//!
//! The sender pins the router's MAC (a permanent neighbour entry): the
//! broadcast spoofs would otherwise poison the *sender's* own ARP/ND cache,
//! which is the host's business, not the router's (the router does defend
//! its addresses with an announcement, RFC 5227, but only once per 10 s).
//!
//! Needs root (namespaces, XDP); skipped with a message otherwise. Bounded
//! to well under a minute.

use std::ffi::CString;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};
use testbed::{Netns, Testbed};

mod common;
use common::RouterProcess;

const ROUTER_IN_V4: &str = "198.18.0.1";
const ROUTER_IN_V6: &str = "2001:2::1";
const SENDER_V4: &str = "198.18.0.2";
const SENDER_V6: &str = "2001:2::2";
const RECEIVER_V4: &str = "198.19.0.2";
const RECEIVER_V6: &str = "2001:2:0:1::2";
const ATTACKER_V4: &str = "198.18.0.66";
const ATTACKER_V6: &str = "2001:2::66";
/// Pings every 100 ms for 12 s; the attack runs from 1.5 s to about 8 s.
const PINGS: u32 = 120;
const SWEEP: u32 = 100_000;

struct Lab {
    tb: Testbed,
    sender_if: String,
    attacker_if: String,
    router_in: String,
    router_out: String,
    receiver_if: String,
}

impl Lab {
    fn ns(&self, role: &str) -> &Netns {
        self.tb.ns(role).unwrap()
    }
}

fn build_lab() -> Lab {
    let tb = Testbed::builder()
        .ns("lan")
        .ns("router")
        .ns("sender")
        .ns("attacker")
        .ns("receiver")
        .veth("sender", "lan", 1)
        .veth("attacker", "lan", 1)
        .veth("lan", "router", 1)
        .veth("router", "receiver", 1)
        .build()
        .expect("testbed");
    let lab = Lab {
        sender_if: tb.veth(0).a.clone(),
        attacker_if: tb.veth(1).a.clone(),
        router_in: tb.veth(2).b.clone(),
        router_out: tb.veth(3).a.clone(),
        receiver_if: tb.veth(3).b.clone(),
        tb,
    };
    let lan = lab.ns("lan");
    lan.ip(&["link", "add", "br0", "type", "bridge"]).unwrap();
    for port in [&lab.tb.veth(0).b, &lab.tb.veth(1).b, &lab.tb.veth(2).a] {
        lan.ip(&["link", "set", port, "master", "br0"]).unwrap();
    }
    lan.link_up("br0").unwrap();
    let (s, d, a) = (lab.ns("sender"), lab.ns("receiver"), lab.ns("attacker"));
    s.add_addr(&lab.sender_if, &format!("{SENDER_V4}/24"))
        .unwrap();
    s.add_addr(&lab.sender_if, &format!("{SENDER_V6}/64"))
        .unwrap();
    a.add_addr(&lab.attacker_if, &format!("{ATTACKER_V4}/24"))
        .unwrap();
    a.add_addr(&lab.attacker_if, &format!("{ATTACKER_V6}/64"))
        .unwrap();
    d.add_addr(&lab.receiver_if, &format!("{RECEIVER_V4}/16"))
        .unwrap();
    d.add_addr(&lab.receiver_if, &format!("{RECEIVER_V6}/64"))
        .unwrap();
    s.disable_tx_offload(&lab.sender_if).unwrap();
    d.disable_tx_offload(&lab.receiver_if).unwrap();
    s.add_route("default", ROUTER_IN_V4).unwrap();
    s.add_route("default", ROUTER_IN_V6).unwrap();
    d.add_route("default", "198.19.0.1").unwrap();
    d.add_route("default", "2001:2:0:1::1").unwrap();
    lab
}

fn mac_of(ns: &Netns, ifname: &str) -> [u8; 6] {
    let text = ns
        .run(&["cat", &format!("/sys/class/net/{ifname}/address")])
        .unwrap();
    let mut mac = [0u8; 6];
    for (b, h) in mac.iter_mut().zip(text.trim().split(':')) {
        *b = u8::from_str_radix(h, 16).unwrap();
    }
    mac
}

/// The router under attack: one worker on AF_XDP ports.
fn start_router(lab: &Lab) -> RouterProcess {
    let cfg = format!(
        r#"
[router]
workers = 1
mode = "interrupt"

[[port]]
name = "in"
driver = "afxdp"
iface = "{rin}"
addresses = ["{ROUTER_IN_V4}/24", "{ROUTER_IN_V6}/64"]

[[port]]
name = "out"
driver = "afxdp"
iface = "{rout}"
addresses = ["198.19.0.1/16", "2001:2:0:1::1/64"]

# No control socket: tests run routers side by side.
[control]
socket = "off"
"#,
        rin = lab.router_in,
        rout = lab.router_out,
    );
    RouterProcess::start(lab.ns("router"), "hostile", &cfg)
}

fn ping_ok(ns: &Netns, args: &[&str]) -> (bool, String) {
    let mut argv = vec!["ping", "-n", "-c", "3", "-i", "0.2", "-W", "2"];
    argv.extend_from_slice(args);
    let out = ns.exec(&argv).unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// A raw packet socket on one interface, opened inside a namespace (the
/// thread that opens it has entered the namespace).
struct RawSocket(i32);

impl RawSocket {
    fn open(ifname: &str) -> RawSocket {
        // Protocol 0: this socket only sends.
        let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, 0) };
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        let name = CString::new(ifname).unwrap();
        let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
        assert!(index > 0, "no interface {ifname}");
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_ifindex = index as i32;
        let rc = unsafe {
            libc::bind(
                fd,
                &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        assert_eq!(rc, 0, "bind: {}", std::io::Error::last_os_error());
        RawSocket(fd)
    }

    /// Whether the frame left. A full queue (ENOBUFS) just loses that
    /// frame: it is an attack.
    fn send(&self, frame: &[u8]) -> bool {
        let n = unsafe { libc::send(self.0, frame.as_ptr().cast(), frame.len(), 0) };
        n == frame.len() as isize
    }
}

impl Drop for RawSocket {
    fn drop(&mut self) {
        unsafe { libc::close(self.0) };
    }
}

fn v4(s: &str) -> [u8; 4] {
    s.parse::<std::net::Ipv4Addr>().unwrap().octets()
}

fn v6(s: &str) -> [u8; 16] {
    s.parse::<std::net::Ipv6Addr>().unwrap().octets()
}

fn arp(eth_dst: [u8; 6], op: u8, sha: [u8; 6], spa: &str, tha: [u8; 6], tpa: &str) -> Vec<u8> {
    let mut f = Vec::with_capacity(60);
    f.extend_from_slice(&eth_dst);
    f.extend_from_slice(&sha);
    f.extend_from_slice(&[0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, op]);
    f.extend_from_slice(&sha);
    f.extend_from_slice(&v4(spa));
    f.extend_from_slice(&tha);
    f.extend_from_slice(&v4(tpa));
    f.resize(60, 0);
    f
}

/// An ND message (135 NS or 136 NA) about `target` with a link-layer
/// address option (source for NS, target for NA) carrying `lla`.
#[allow(clippy::too_many_arguments)]
fn nd(
    eth_dst: [u8; 6],
    eth_src: [u8; 6],
    src: &str,
    dst: &str,
    typ: u8,
    flags: u8,
    target: &str,
    lla: [u8; 6],
) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&v6(target));
    body.extend_from_slice(&[if typ == 135 { 1 } else { 2 }, 1]);
    body.extend_from_slice(&lla);
    let mut f = Vec::new();
    etherparse::PacketBuilder::ethernet2(eth_src, eth_dst)
        .ipv6(v6(src), v6(dst), 255)
        .icmpv6_raw(typ, 0, [flags, 0, 0, 0])
        .write(&mut f, &body)
        .unwrap();
    f
}

/// Every spoof of the router's addresses the attacker sends, `router` being
/// the router's MAC and `me` the attacker's.
fn spoofs(router: [u8; 6], me: [u8; 6]) -> Vec<Vec<u8>> {
    let bcast = [0xff; 6];
    let all_nodes = [0x33, 0x33, 0, 0, 0, 1];
    vec![
        // The finding: a gratuitous ARP request for the router's address.
        arp(bcast, 1, me, ROUTER_IN_V4, [0; 6], ROUTER_IN_V4),
        arp(router, 1, me, ROUTER_IN_V4, [0; 6], ROUTER_IN_V4),
        // Unsolicited replies claiming it, to the router and to everyone.
        arp(router, 2, me, ROUTER_IN_V4, router, ROUTER_IN_V4),
        arp(bcast, 2, me, ROUTER_IN_V4, [0; 6], SENDER_V4),
        // Override NAs for the router's IPv6 address.
        nd(
            all_nodes,
            me,
            "fe80::66",
            "ff02::1",
            136,
            0x20,
            ROUTER_IN_V6,
            me,
        ),
        nd(
            router,
            me,
            ATTACKER_V6,
            ROUTER_IN_V6,
            136,
            0x60,
            ROUTER_IN_V6,
            me,
        ),
        // An NS from the router's own address, for it.
        nd(
            [0x33, 0x33, 0xff, 0, 0, 1],
            me,
            ROUTER_IN_V6,
            "ff02::1:ff00:1",
            135,
            0,
            ROUTER_IN_V6,
            me,
        ),
        // A request from a made-up address: RFC 826 lets it create an
        // entry (bounded by the learn rate), but never for our addresses.
        arp(router, 1, me, "198.18.0.200", [0; 6], ROUTER_IN_V4),
    ]
}

/// The sweep's frames: UDP to random addresses of the connected /16 and
/// /64 behind the router (xorshift, deterministic). 198.19.200.0/24 is left
/// alone: the test adds a new host there afterwards.
fn sweep_frame(i: u32, seed: &mut u64, router: [u8; 6], me: [u8; 6]) -> Vec<u8> {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    let r = *seed;
    let b = etherparse::PacketBuilder::ethernet2(me, router);
    let mut f = Vec::new();
    if i.is_multiple_of(2) {
        let dst = [198, 19, ((r >> 8) % 200) as u8, (r as u8).clamp(3, 254)];
        b.ipv4(v4(ATTACKER_V4), dst, 64)
            .udp(40000, 9)
            .write(&mut f, &[0; 18])
            .unwrap();
    } else {
        let mut dst = v6("2001:2:0:1::");
        dst[8..].copy_from_slice(&(r | 0x100).to_be_bytes());
        b.ipv6(v6(ATTACKER_V6), dst, 64)
            .udp(40000, 9)
            .write(&mut f, &[0; 8])
            .unwrap();
    }
    f
}

/// The `icmp_seq` numbers answered in ping's output.
fn answered(out: &str) -> std::collections::BTreeSet<u32> {
    out.lines()
        .filter(|l| l.contains("bytes from"))
        .filter_map(|l| {
            l.split("icmp_seq=")
                .nth(1)?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .collect()
}

#[test]
fn afxdp_hostile_link() {
    if !testbed::require_root("hostile link (afxdp)") {
        return;
    }
    let started = Instant::now();
    let lab = build_lab();
    let router = start_router(&lab);
    let (s, d) = (lab.ns("sender"), lab.ns("receiver"));

    // Up and forwarding (this also resolves both legitimate hosts).
    let deadline = Instant::now() + Duration::from_secs(15);
    while !(ping_ok(s, &["-c", "1", RECEIVER_V4]).0 && ping_ok(s, &["-c", "1", RECEIVER_V6]).0) {
        assert!(
            Instant::now() < deadline,
            "never forwarded: {}",
            router.log()
        );
    }
    let router_mac = mac_of(lab.ns("router"), &lab.router_in);
    let mac_text: Vec<String> = router_mac.iter().map(|b| format!("{b:02x}")).collect();
    let mac_text = mac_text.join(":");
    for (family, addr) in [("-4", ROUTER_IN_V4), ("-6", ROUTER_IN_V6)] {
        s.ip(&[
            family,
            "neigh",
            "replace",
            addr,
            "lladdr",
            &mac_text,
            "nud",
            "permanent",
            "dev",
            &lab.sender_if,
        ])
        .unwrap();
    }

    // Legitimate traffic: through the router and to it, every 100 ms.
    let count = PINGS.to_string();
    let pingers: Vec<(String, Child)> = [RECEIVER_V4, RECEIVER_V6, ROUTER_IN_V4, ROUTER_IN_V6]
        .iter()
        .map(|dst| {
            let child = s
                .command("ping", &["-n", "-i", "0.1", "-c", &count, "-W", "1", dst])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (dst.to_string(), child)
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1500));

    // The attack, from the attacker's namespace.
    let attacker_ns = format!("/var/run/netns/{}", lab.ns("attacker").name());
    let attacker_if = lab.attacker_if.clone();
    let me = mac_of(lab.ns("attacker"), &attacker_if);
    let attack = std::thread::spawn(move || {
        let file = std::fs::File::open(&attacker_ns).unwrap();
        use std::os::fd::AsRawFd;
        let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(rc, 0, "setns: {}", std::io::Error::last_os_error());
        let sock = RawSocket::open(&attacker_if);
        let spoofs = spoofs(router_mac, me);
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let t0 = Instant::now();
        // (sent, refused by the attacker's own queue)
        let mut tally = (0u64, 0u64);
        let mut count = |ok: bool| {
            if ok {
                tally.0 += 1
            } else {
                tally.1 += 1
            }
        };
        // Chunks of 200 sweep frames and one round of spoofs every 12 ms:
        // about 16,000 frames a second, 100,000 in about 6 s.
        for chunk in 0..SWEEP / 200 {
            for f in &spoofs {
                count(sock.send(f));
            }
            for i in 0..200 {
                count(sock.send(&sweep_frame(chunk * 200 + i, &mut seed, router_mac, me)));
            }
            let next = t0 + Duration::from_millis(12 * u64::from(chunk + 1));
            if let Some(wait) = next.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
        (t0.elapsed(), tally)
    });
    let (attack_time, (attack_sent, attack_refused)) = attack.join().unwrap();
    eprintln!(
        "attack: {SWEEP} sweep frames and {} spoofs in {attack_time:?}: {attack_sent} sent, \
         {attack_refused} refused by the attacker's own queue",
        SWEEP / 200 * 8
    );

    // Every ping answered after the first second (sequence numbers start
    // at 1, one per 100 ms).
    for (dst, child) in pingers {
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let got = answered(&text);
        let lost: Vec<u32> = (11..=PINGS).filter(|q| !got.contains(q)).collect();
        let early: Vec<u32> = (1..=10).filter(|q| !got.contains(q)).collect();
        eprintln!(
            "ping {dst}: {} of {PINGS} answered; lost in the first second {early:?}, after it {lost:?}",
            got.len()
        );
        assert!(
            lost.is_empty(),
            "ping {dst}: lost icmp_seq {lost:?} after the first second\n{text}\n{}",
            router.log()
        );
    }

    // New legitimate hosts on both links are still resolved.
    d.add_addr(&lab.receiver_if, "198.19.200.9/16").unwrap();
    d.add_addr(&lab.receiver_if, "2001:2:0:1::99/64").unwrap();
    for dst in ["198.19.200.9", "2001:2:0:1::99"] {
        let (ok, out) = ping_ok(s, &[dst]);
        assert!(ok, "new host {dst}: {out}");
    }
    s.add_addr(&lab.sender_if, "198.18.0.77/24").unwrap();
    s.add_addr(&lab.sender_if, "2001:2::77/64").unwrap();
    for (src, dst) in [("198.18.0.77", RECEIVER_V4), ("2001:2::77", RECEIVER_V6)] {
        let (ok, out) = ping_ok(s, &["-I", src, dst]);
        assert!(ok, "new host {src}: {out}");
    }

    let stats = router.stop();
    // Every frame of the attack is accounted for, on its input port.
    dataplane::assert_accounting(&stats);
    // The attack reached the router: its input port received (or counted
    // as a kernel drop) at least what the attacker sent, pings aside.
    let port_in = stats["ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "in")
        .unwrap();
    let received = port_in["received"].as_u64().unwrap();
    eprintln!(
        "router port in: received {received}, forwarded {}, local {}",
        port_in["forwarded"], port_in["local"]
    );
    assert!(
        received >= attack_sent,
        "the attack reached the router: {received} received, {attack_sent} sent"
    );
    let drops = &stats["drops"];
    eprintln!("router drops: {drops}");
    let count = |name: &str| drops[name].as_u64().unwrap_or(0);
    assert!(count("neighbor_own_address") > 0, "spoofs counted: {drops}");
    assert!(
        count("neighbor_rate_limited") + count("neighbor_table_full") > 0,
        "the sweep was bounded: {drops}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "took {:?}",
        started.elapsed()
    );
}
