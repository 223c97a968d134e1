//! The namespace testbed as the benchmark sees it: the `star` topology of
//! `testbed` plus what the traffic engine needs and `star` does not record
//! (MAC addresses read from the interfaces, parsed addresses), the pattern's
//! sender/receiver pairs, and helpers that look at the DUT from outside
//! (interface counters, a kernel ping through the DUT).
//!
//! Why the MACs are read rather than set: veth ends get random MACs; the
//! plan must carry the ones the kernel actually uses, and softrouter takes
//! its port MACs from the interfaces too. Reading, parsing and formatting
//! them is `testbed::link`'s (the traffic engine needs it as well).

use std::net::{Ipv4Addr, Ipv6Addr};
use std::process::{Command, Stdio};

use anyhow::{anyhow, bail, Context, Result};
use schema::dut_description::PortDescription;
use serde::Serialize;
use serde_json::Value;
use testbed::link::{format_mac, read_mac};
use testbed::{Netns, RouterMode, Star, TopologyOptions};

use bench::plan::{TesterBackend, TesterPort, TrafficPlan};
use bench::settings::Pattern;

/// Real-time priority of the DUT ends' NAPI threads. NAPI normally runs in
/// softirq, ahead of every thread; a NAPI thread at the normal policy
/// waited behind other threads on the DUT CPU (the soaker, softrouter's
/// worker) often enough to overflow the 256-frame veth ring: the Linux
/// DUT's 64 B NDR came out at 0.04-0.19 Mpps at 19-25 k cycles a packet,
/// and 0.22-0.32 Mpps at about 7 k with this priority (3 runs each). The
/// price is softirq's: a DUT whose own thread does the work (softrouter's
/// worker behind AF_XDP) can be starved under overload, as on hardware.
pub const DUT_NAPI_PRIO: i32 = 40;

/// One port of the testbed: a tester interface cabled to a DUT interface.
#[derive(Debug, Clone, Serialize)]
pub struct BedPort {
    /// Port index (the `i` of the addressing plan).
    pub index: usize,
    /// Tester interface (in the tester namespace, or the current one for
    /// external DUTs).
    pub tester_if: String,
    /// DUT interface in the DUT namespace; empty for external DUTs.
    pub dut_if: String,
    #[serde(serialize_with = "ser_mac")]
    pub tester_mac: [u8; 6],
    #[serde(serialize_with = "ser_mac")]
    pub dut_mac: [u8; 6],
    /// 198.18.i.2 / 2001:2:0:i::2.
    pub tester_v4: Ipv4Addr,
    pub tester_v6: Ipv6Addr,
    /// 198.18.i.1 / 2001:2:0:i::1.
    pub dut_v4: Ipv4Addr,
    pub dut_v6: Ipv6Addr,
    /// Destination networks behind the port: 198.19.i.0/24 and
    /// 2001:2:0:(100+i)::/64 (network addresses).
    pub dest_v4: Ipv4Addr,
    pub dest_v6: Ipv6Addr,
}

fn ser_mac<S: serde::Serializer>(m: &[u8; 6], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format_mac(m))
}

impl BedPort {
    /// The addressing plan of port `i` (see `testbed::topology`), without
    /// interfaces or MACs.
    pub fn addresses(i: usize) -> Result<BedPort> {
        if i > 255 {
            bail!("port index {i} outside the addressing plan (0..=255)");
        }
        let p = testbed::StarPort::addresses(i as u8);
        let v4 = |s: &str| {
            s.parse::<Ipv4Addr>()
                .with_context(|| format!("address {s}"))
        };
        let v6 = |s: &str| {
            s.parse::<Ipv6Addr>()
                .with_context(|| format!("address {s}"))
        };
        let net = |s: &str| s.split('/').next().unwrap_or(s).to_string();
        Ok(BedPort {
            index: i,
            tester_if: String::new(),
            dut_if: String::new(),
            tester_mac: [0; 6],
            dut_mac: [0; 6],
            tester_v4: v4(&p.tester_v4)?,
            tester_v6: v6(&p.tester_v6)?,
            dut_v4: v4(&p.dut_v4)?,
            dut_v6: v6(&p.dut_v6)?,
            dest_v4: v4(&net(&p.dest_v4_net))?,
            dest_v6: v6(&net(&p.dest_v6_net))?,
        })
    }

    /// `198.19.i.0/24`.
    pub fn dest_v4_net(&self) -> String {
        format!("{}/24", self.dest_v4)
    }

    /// `2001:2:0:(100+i)::/64`.
    pub fn dest_v6_net(&self) -> String {
        format!("{}/64", self.dest_v6)
    }
}

/// The testbed of one DUT: namespaces (unless external) and ports.
#[derive(Debug)]
pub struct Bed {
    /// The namespaces and veths; `None` for external DUTs. Dropping it
    /// removes them.
    pub star: Option<Star>,
    pub ports: Vec<BedPort>,
    pub pattern: Pattern,
    /// Queues per veth end.
    pub queues: u32,
    /// Where the veth ends' receive work runs, when it was placed.
    pub rx_placement: Option<RxPlacement>,
    /// The DUT ends' NAPI threads, once placed ([`Bed::thread_dut_napi`]).
    pub napi_threads: Vec<String>,
}

/// CPUs for the receive work of each side's veth ends: the tester's ends
/// on the tester's CPUs, the DUT's on the DUT's, as two boxes would each
/// receive on their own CPUs.
#[derive(Debug, Clone, Serialize)]
pub struct RxPlacement {
    pub tester_cpus: Vec<usize>,
    pub dut_cpus: Vec<usize>,
    /// How: threaded NAPI (`testbed::napi`; the xdp tester, whose frames
    /// are XDP frames that only NAPI takes) or RPS (`testbed::rps`; the
    /// skb-based testers).
    pub mechanism: RxMechanism,
}

/// See [`RxPlacement::mechanism`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RxMechanism {
    ThreadedNapi,
    Rps,
}

impl RxMechanism {
    /// As the results name it (`receive_cpus.mechanism`).
    pub fn name(self) -> &'static str {
        match self {
            RxMechanism::ThreadedNapi => "threaded-napi",
            RxMechanism::Rps => "rps",
        }
    }
}

impl Bed {
    /// `pattern.ports()` veth pairs between a tester and a DUT namespace.
    /// `router`: whether the DUT ends get the kernel addresses and routes
    /// (`Kernel`) or stay bare (`Bare`, for user-space routers). Kernel
    /// forwarding is left off; the launchers decide. `rx`: steer each
    /// end's receive work to its side's CPUs.
    pub fn build(
        pattern: Pattern,
        queues: u32,
        router: RouterMode,
        rx: Option<&RxPlacement>,
    ) -> Result<Bed> {
        let n = pattern.ports() as usize;
        let star = testbed::star_with(
            n,
            TopologyOptions {
                queues: queues.max(1),
                router,
                ip_forward: false,
            },
        )
        .with_context(|| format!("building the {n}-port namespace testbed"))?;
        let mut ports = Vec::with_capacity(n);
        for (i, sp) in star.ports.iter().enumerate() {
            let mut p = BedPort::addresses(i)?;
            p.tester_if = sp.tester_if.clone();
            p.dut_if = sp.dut_if.clone();
            p.tester_mac = read_mac(Some(star.tester().name()), &p.tester_if)?;
            p.dut_mac = read_mac(Some(star.dut().name()), &p.dut_if)?;
            ports.push(p);
        }
        if let Some(pl) = rx.filter(|pl| pl.mechanism == RxMechanism::Rps) {
            for p in &ports {
                testbed::steer_rps(star.tester(), &p.tester_if, &pl.tester_cpus)?;
                testbed::steer_rps(star.dut(), &p.dut_if, &pl.dut_cpus)?;
            }
        }
        Ok(Bed {
            star: Some(star),
            ports,
            pattern,
            queues: queues.max(1),
            rx_placement: rx.cloned(),
            napi_threads: Vec::new(),
        })
    }

    /// Threaded NAPI on the DUT's veth ends, pinned to the DUT's CPUs at
    /// [`DUT_NAPI_PRIO`] (with the `ThreadedNapi` placement; otherwise
    /// nothing). GRO is turned on first, so every end has NAPI even when
    /// the DUT attaches no XDP program (a veth without NAPI drops XDP
    /// frames). Launchers call this once the DUT is up: attaching or
    /// detaching XDP can recreate an end's NAPI threads.
    pub fn thread_dut_napi(&mut self) -> Result<()> {
        let Some(pl) = self
            .rx_placement
            .as_ref()
            .filter(|pl| pl.mechanism == RxMechanism::ThreadedNapi)
        else {
            return Ok(());
        };
        let ns = self.dut_ns("threaded NAPI")?;
        let mut out = Vec::new();
        for p in &self.ports {
            ns.run(&["ethtool", "-K", &p.dut_if, "gro", "on"])
                .with_context(|| format!("ethtool -K {} gro on in {}", p.dut_if, ns.name()))?;
            let pids = testbed::napi::thread_napi(
                ns,
                &p.dut_if,
                &pl.dut_cpus,
                testbed::napi::NapiPolicy::Fifo(DUT_NAPI_PRIO),
            )?;
            out.push(format!(
                "{}: {} NAPI thread(s) on CPUs {:?}, SCHED_FIFO {DUT_NAPI_PRIO}",
                p.dut_if,
                pids.len(),
                pl.dut_cpus
            ));
        }
        self.napi_threads = out;
        Ok(())
    }

    /// The tester namespace (`None` for external DUTs).
    pub fn tester(&self) -> Option<&Netns> {
        self.star.as_ref().map(|s| s.tester())
    }

    /// The DUT namespace (`None` for external DUTs).
    pub fn dut(&self) -> Option<&Netns> {
        self.star.as_ref().map(|s| s.dut())
    }

    /// The DUT namespace, or an error naming `what` needs it.
    pub fn dut_ns(&self, what: &str) -> Result<&Netns> {
        self.dut()
            .ok_or_else(|| anyhow!("{what} needs the DUT namespace"))
    }

    /// Names of the namespaces (tester, DUT), empty when external.
    pub fn namespaces(&self) -> Vec<String> {
        self.star
            .as_ref()
            .map(|s| vec![s.tester().name().to_string(), s.dut().name().to_string()])
            .unwrap_or_default()
    }

    /// The DUT interfaces in port order.
    pub fn dut_ifaces(&self) -> Vec<String> {
        self.ports.iter().map(|p| p.dut_if.clone()).collect()
    }

    /// Permanent neighbor entries for the tester addresses in the DUT
    /// namespace, so the kernel never needs ARP/ND answers from a tester
    /// whose ports are taken over by AF_XDP.
    pub fn add_dut_neighbors(&self) -> Result<()> {
        let ns = self.dut_ns("static neighbors")?;
        for p in &self.ports {
            let mac = format_mac(&p.tester_mac);
            for addr in [p.tester_v4.to_string(), p.tester_v6.to_string()] {
                ns.ip(&[
                    "neigh",
                    "replace",
                    &addr,
                    "lladdr",
                    &mac,
                    "nud",
                    "permanent",
                    "dev",
                    &p.dut_if,
                ])
                .with_context(|| format!("neighbor {addr} on {}", p.dut_if))?;
            }
        }
        Ok(())
    }

    /// The traffic plan: every port, the pattern's pairs.
    pub fn plan(&self, ipv6: bool, flows_per_pair: u32, backend: TesterBackend) -> TrafficPlan {
        let netns = self.tester().map(|t| t.name().to_string());
        TrafficPlan {
            ports: self
                .ports
                .iter()
                .map(|p| TesterPort {
                    netns: netns.clone(),
                    iface: p.tester_if.clone(),
                    mac: p.tester_mac,
                    v4: p.tester_v4,
                    v6: p.tester_v6,
                    peer_mac: p.dut_mac,
                    peer_v4: p.dut_v4,
                    peer_v6: p.dut_v6,
                    dest_v4: p.dest_v4,
                    dest_v6: p.dest_v6,
                    dut_iface: self.star.is_some().then(|| p.dut_if.clone()),
                })
                .collect(),
            pairs: pairs(self.pattern),
            flows_per_pair: flows_per_pair.max(1),
            ipv6,
            backend,
            queues: self.queues.min(u32::from(u16::MAX)) as u16,
            l2: false,
        }
    }

    /// For `describe()`: the ports with interfaces, MACs, addresses.
    pub fn describe_ports(&self) -> Vec<PortDescription> {
        self.ports
            .iter()
            .map(|p| PortDescription {
                index: p.index,
                tester_if: p.tester_if.clone(),
                dut_if: p.dut_if.clone(),
                tester_mac: format_mac(&p.tester_mac),
                dut_mac: format_mac(&p.dut_mac),
                tester_v4: p.tester_v4,
                tester_v6: p.tester_v6,
                dut_v4: p.dut_v4,
                dut_v6: p.dut_v6,
                dest_v4: p.dest_v4,
                dest_v6: p.dest_v6,
            })
            .collect()
    }
}

/// (sender, receiver) port pairs of a pattern: one-to-one [(0,1)],
/// bidirectional [(0,1),(1,0)], mesh every ordered pair, many-to-one(n)
/// [(i,n) for i < n].
pub fn pairs(pattern: Pattern) -> Vec<(usize, usize)> {
    match pattern {
        Pattern::OneToOne => vec![(0, 1)],
        Pattern::Bidirectional => vec![(0, 1), (1, 0)],
        Pattern::Mesh(n) => {
            let n = n as usize;
            (0..n)
                .flat_map(|a| (0..n).filter(move |&b| b != a).map(move |b| (a, b)))
                .collect()
        }
        Pattern::ManyToOne(n) => (0..n as usize).map(|i| (i, n as usize)).collect(),
    }
}

/// `ip [-n ns] <args>`, failing with the command and its stderr.
pub fn ip_in(ns: Option<&str>, args: &[&str]) -> Result<String> {
    let mut c = Command::new("ip");
    if let Some(ns) = ns {
        c.args(["-n", ns]);
    }
    c.args(args);
    let out = c
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("spawning {c:?}"))?;
    if !out.status.success() {
        bail!(
            "{c:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Kernel counters of one interface, as the results record them.
pub use schema::dut_sample::IfCounters;

/// Counters of `ifaces` (in that order) in namespace `ns`, from one
/// `ip -s -j link show`.
pub fn if_counters(ns: Option<&str>, ifaces: &[String]) -> Result<Vec<IfCounters>> {
    let out = ip_in(ns, &["-s", "-j", "link", "show"])?;
    let v: Value = serde_json::from_str(&out).context("parsing `ip -s -j link` output")?;
    let links = v.as_array().cloned().unwrap_or_default();
    ifaces
        .iter()
        .map(|name| {
            let l = links
                .iter()
                .find(|l| l.get("ifname").and_then(Value::as_str) == Some(name))
                .with_context(|| format!("interface {name} not found in {ns:?}"))?;
            let s = l.get("stats64").or_else(|| l.get("stats"));
            let g = |dir: &str, k: &str| {
                s.and_then(|s| s.get(dir))
                    .and_then(|d| d.get(k))
                    .and_then(Value::as_u64)
                    .unwrap_or(0)
            };
            Ok(IfCounters {
                rx_packets: g("rx", "packets"),
                tx_packets: g("tx", "packets"),
                rx_bytes: g("rx", "bytes"),
                tx_bytes: g("tx", "bytes"),
                rx_dropped: g("rx", "dropped"),
                tx_dropped: g("tx", "dropped"),
            })
        })
        .collect()
}

/// A temporary route in the tester namespace that sends locally generated
/// packets for one host in port `to`'s destination network (198.19.to.2
/// or 2001:2:0:(100+to)::2) out of port `from`, through the DUT, and lets
/// them be received on port `to`. Undone on drop.
///
/// Why the detour: both ports' addresses live in the same tester
/// namespace, so an ordinary ping would be delivered locally and never
/// touch the DUT. This adds the destination host as a /32 (/128) on port
/// `to`, moves the kernel's `local` rule (pref 0 -> 100) behind a rule
/// (pref 10, `iif lo to <host>`) that routes the host via the DUT's
/// address on port `from`, and accepts packets with a local source on
/// port `to` (`accept_local`, `rp_filter` 0). Replies (from the host to
/// port `from`'s address) are local and go over loopback. Only for
/// testbeds whose tester ports are not owned by AF_XDP at the time, one
/// detour per tester namespace at a time.
pub struct Detour {
    ns: String,
    undo: Vec<Vec<String>>,
    /// The destination host (ping this).
    pub host: String,
    /// Port `from`'s tester address (ping from this).
    pub src: String,
}

impl Detour {
    pub fn new(bed: &Bed, from: usize, to: usize, ipv6: bool) -> Result<Detour> {
        let tester = bed
            .tester()
            .context("a detour through the DUT needs the tester namespace")?;
        let ns = tester.name().to_string();
        let (pf, pt) = (&bed.ports[from], &bed.ports[to]);
        let fam = if ipv6 { "-6" } else { "-4" };
        let (host, plen, src, gw) = if ipv6 {
            (
                format!("{}", Ipv6Addr::from(u128::from(pt.dest_v6) | 2)),
                128,
                pf.tester_v6.to_string(),
                pf.dut_v6.to_string(),
            )
        } else {
            (
                format!("{}", Ipv4Addr::from(u32::from(pt.dest_v4) | 2)),
                32,
                pf.tester_v4.to_string(),
                pf.dut_v4.to_string(),
            )
        };
        let table = "200";
        let cidr = format!("{host}/{plen}");
        let strings = |v: Vec<&str>| v.into_iter().map(String::from).collect::<Vec<_>>();
        let mut addr = vec!["addr", "add", &cidr, "dev", &pt.tester_if];
        if ipv6 {
            addr.push("nodad");
        }
        let setup: Vec<Vec<String>> = vec![
            strings(addr),
            strings(vec![fam, "rule", "add", "pref", "100", "lookup", "local"]),
            strings(vec![fam, "rule", "del", "pref", "0", "lookup", "local"]),
            strings(vec![
                fam,
                "route",
                "add",
                &cidr,
                "via",
                &gw,
                "dev",
                &pf.tester_if,
                "table",
                table,
            ]),
            strings(vec![
                fam, "rule", "add", "pref", "10", "iif", "lo", "to", &cidr, "lookup", table,
            ]),
        ];
        let undo: Vec<Vec<String>> = vec![
            strings(vec![fam, "rule", "del", "pref", "10"]),
            strings(vec![fam, "route", "flush", "table", table]),
            strings(vec![fam, "rule", "add", "pref", "0", "lookup", "local"]),
            strings(vec![fam, "rule", "del", "pref", "100", "lookup", "local"]),
            strings(vec!["addr", "del", &cidr, "dev", &pt.tester_if]),
        ];
        if !ipv6 {
            for (k, v) in [
                ("net.ipv4.conf.all.rp_filter".to_string(), "0"),
                (format!("net.ipv4.conf.{}.rp_filter", pt.tester_if), "0"),
                (format!("net.ipv4.conf.{}.accept_local", pt.tester_if), "1"),
            ] {
                tester.sysctl(&k, v)?;
            }
        }
        let mut d = Detour {
            ns,
            undo: Vec::new(),
            host,
            src,
        };
        for (i, args) in setup.iter().enumerate() {
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            ip_in(Some(&d.ns), &a).context("setting up a detour through the DUT")?;
            // undo[k] reverses setup[4 - k]: after step i, a failure (and
            // drop) must reverse exactly the last i + 1 entries.
            d.undo = undo[undo.len() - (i + 1)..].to_vec();
        }
        Ok(d)
    }
}

impl Drop for Detour {
    fn drop(&mut self) {
        for args in &self.undo {
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            let _ = ip_in(Some(&self.ns), &a);
        }
    }
}

/// Send one kernel ping from the tester namespace, out of port `from`,
/// through the DUT, to a host in port `to`'s destination network, and
/// wait for the answer (see [`Detour`]).
pub fn ping_through(bed: &Bed, from: usize, to: usize, ipv6: bool) -> Result<()> {
    let d = Detour::new(bed, from, to, ipv6)?;
    let tester = bed
        .tester()
        .context("ping_through needs the tester namespace")?;
    let out = tester.exec(&["ping", "-n", "-c", "1", "-W", "2", "-I", &d.src, &d.host])?;
    if !out.status.success() {
        bail!(
            "ping {} from {} (tester port {from} -> DUT -> port {to}) in {} failed: {}{}",
            d.host,
            d.src,
            d.ns,
            String::from_utf8_lossy(&out.stdout).trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Ping an address from the tester namespace (`ping -c 1 -W secs`).
pub fn ping_from_tester(bed: &Bed, addr: &str, wait_s: u32) -> Result<bool> {
    let t = bed.tester().context("ping needs the tester namespace")?;
    let w = wait_s.max(1).to_string();
    let out = t.exec(&["ping", "-n", "-q", "-c", "1", "-W", &w, addr])?;
    Ok(out.status.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_pairs() {
        assert_eq!(pairs(Pattern::OneToOne), vec![(0, 1)]);
        assert_eq!(pairs(Pattern::Bidirectional), vec![(0, 1), (1, 0)]);
        assert_eq!(
            pairs(Pattern::Mesh(3)),
            vec![(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]
        );
        assert_eq!(pairs(Pattern::ManyToOne(3)), vec![(0, 3), (1, 3), (2, 3)]);
    }

    #[test]
    fn addressing_plan() {
        let p = BedPort::addresses(2).unwrap();
        assert_eq!(p.tester_v4.to_string(), "198.18.2.2");
        assert_eq!(p.dut_v4.to_string(), "198.18.2.1");
        assert_eq!(p.dest_v4_net(), "198.19.2.0/24");
        assert_eq!(p.dest_v6_net(), "2001:2:0:102::/64");
        assert_eq!(p.tester_v6.to_string(), "2001:2:0:2::2");
    }
}
