//! Standard testbed topologies and their addressing plan.
//!
//! # Addressing plan (RFC 2544 Appendix C, RFC 5180; requirement R4)
//!
//! Only 198.18.0.0/15 and 2001:2::/48 are used. On every link the DUT
//! (router) has host `.1` / `::1` and the tester has `.2` / `::2`.
//!
//! [`three_hosts`] (one input and one output network, the classic RFC 2544
//! two-port setup):
//!
//! | link | IPv4 | IPv6 |
//! |---|---|---|
//! | sender - router (input) | 198.18.0.0/24: sender .2, router .1 | 2001:2:0:0::/64: sender ::2, router ::1 |
//! | router - receiver (output) | 198.19.0.0/24: router .1, receiver .2 | 2001:2:0:1::/64: router ::1, receiver ::2 |
//!
//! Sender and receiver have default routes via the router's address.
//!
//! [`star`] (`n` ports between one tester namespace and one DUT namespace,
//! for one-to-one, bidirectional, mesh and many-to-one patterns; every port
//! both sends and receives):
//!
//! | port `i` (0-based, `i < 256`) | IPv4 | IPv6 |
//! |---|---|---|
//! | link (input network) | 198.18.i.0/24: DUT .1, tester .2 | 2001:2:0:i::/64 (i in hex): DUT ::1, tester ::2 |
//! | destination (output) network behind the port | 198.19.i.0/24 via 198.18.i.2 | 2001:2:0:(100+i)::/64 (hex) via 2001:2:0:i::2 |
//!
//! Test traffic that should leave the DUT on port `j` is addressed to a host
//! in port `j`'s destination network (198.19.j.X, X >= 2; many flows vary
//! X), with a source on the sending port's link. The DUT therefore needs one
//! neighbor per port (the tester's `.2`) and one route per port, and a
//! "many destinations" test (R14) can use all 254 hosts of each /24.

use anyhow::{bail, Result};

use crate::netns::Netns;
use crate::testbed::Testbed;

/// How the router/DUT namespace's interfaces are set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RouterMode {
    /// Interfaces get the DUT addresses and routes: the Linux kernel
    /// forwards (set `ip_forward` too).
    #[default]
    Kernel,
    /// Interfaces are up but have no addresses or routes: a user-space
    /// router (softrouter on AF_XDP/AF_PACKET) owns them.
    Bare,
}

/// Options of the standard topologies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopologyOptions {
    /// TX/RX queues per veth end (RSS spread for multi-worker DUTs).
    pub queues: u32,
    /// Addresses on the router's interfaces or bare interfaces.
    pub router: RouterMode,
    /// `net.ipv4.ip_forward` and `net.ipv6.conf.all.forwarding` in the
    /// router namespace.
    pub ip_forward: bool,
}

impl Default for TopologyOptions {
    /// One queue, kernel forwarding on.
    fn default() -> Self {
        TopologyOptions {
            queues: 1,
            router: RouterMode::Kernel,
            ip_forward: true,
        }
    }
}

impl TopologyOptions {
    /// Bare router interfaces for a user-space router, kernel forwarding off.
    pub fn user_space_router(queues: u32) -> Self {
        TopologyOptions {
            queues,
            router: RouterMode::Bare,
            ip_forward: false,
        }
    }
}

/// Addresses of [`three_hosts`].
pub mod three_hosts_addr {
    /// Sender, input network.
    pub const SENDER_V4: &str = "198.18.0.2";
    /// Router, input side.
    pub const ROUTER_IN_V4: &str = "198.18.0.1";
    /// Router, output side.
    pub const ROUTER_OUT_V4: &str = "198.19.0.1";
    /// Receiver, output network.
    pub const RECEIVER_V4: &str = "198.19.0.2";
    /// Sender, input network.
    pub const SENDER_V6: &str = "2001:2::2";
    /// Router, input side.
    pub const ROUTER_IN_V6: &str = "2001:2::1";
    /// Router, output side.
    pub const ROUTER_OUT_V6: &str = "2001:2:0:1::1";
    /// Receiver, output network.
    pub const RECEIVER_V6: &str = "2001:2:0:1::2";
    /// Prefix length of the IPv4 links.
    pub const V4_LEN: u8 = 24;
    /// Prefix length of the IPv6 links.
    pub const V6_LEN: u8 = 64;
}

/// `sender` - `router` - `receiver`: see the module docs for addresses.
#[derive(Debug)]
pub struct ThreeHosts {
    /// The namespaces (`sender`, `router`, `receiver`) and both veths.
    pub testbed: Testbed,
    /// Sender's interface (towards the router).
    pub sender_if: String,
    /// Router's input interface (towards the sender).
    pub router_in: String,
    /// Router's output interface (towards the receiver).
    pub router_out: String,
    /// Receiver's interface (towards the router).
    pub receiver_if: String,
    /// The options it was built with.
    pub options: TopologyOptions,
}

impl ThreeHosts {
    /// The sender namespace.
    pub fn sender(&self) -> &Netns {
        self.testbed.ns("sender").expect("sender")
    }
    /// The router (DUT) namespace.
    pub fn router(&self) -> &Netns {
        self.testbed.ns("router").expect("router")
    }
    /// The receiver namespace.
    pub fn receiver(&self) -> &Netns {
        self.testbed.ns("receiver").expect("receiver")
    }
}

/// [`three_hosts_with`] default options: one queue, kernel forwarding.
pub fn three_hosts() -> Result<ThreeHosts> {
    three_hosts_with(TopologyOptions::default())
}

/// Namespaces `sender` - `router` - `receiver` joined by two veth pairs,
/// addressed per the module docs; sender and receiver have IPv4 and IPv6
/// default routes via the router. With [`RouterMode::Bare`] the router's
/// interfaces are up without addresses.
pub fn three_hosts_with(options: TopologyOptions) -> Result<ThreeHosts> {
    use three_hosts_addr::*;
    let q = options.queues;
    let testbed = Testbed::builder()
        .ns("sender")
        .ns("router")
        .ns("receiver")
        .veth("sender", "router", q)
        .veth("router", "receiver", q)
        .build()?;
    let th = ThreeHosts {
        sender_if: testbed.veth(0).a.clone(),
        router_in: testbed.veth(0).b.clone(),
        router_out: testbed.veth(1).a.clone(),
        receiver_if: testbed.veth(1).b.clone(),
        testbed,
        options,
    };
    let (s, r, d) = (th.sender(), th.router(), th.receiver());
    s.add_addr(&th.sender_if, &format!("{SENDER_V4}/{V4_LEN}"))?;
    s.add_addr(&th.sender_if, &format!("{SENDER_V6}/{V6_LEN}"))?;
    d.add_addr(&th.receiver_if, &format!("{RECEIVER_V4}/{V4_LEN}"))?;
    d.add_addr(&th.receiver_if, &format!("{RECEIVER_V6}/{V6_LEN}"))?;
    s.disable_tx_offload(&th.sender_if)?;
    d.disable_tx_offload(&th.receiver_if)?;
    if options.router == RouterMode::Kernel {
        r.add_addr(&th.router_in, &format!("{ROUTER_IN_V4}/{V4_LEN}"))?;
        r.add_addr(&th.router_in, &format!("{ROUTER_IN_V6}/{V6_LEN}"))?;
        r.add_addr(&th.router_out, &format!("{ROUTER_OUT_V4}/{V4_LEN}"))?;
        r.add_addr(&th.router_out, &format!("{ROUTER_OUT_V6}/{V6_LEN}"))?;
    }
    r.set_forwarding(options.ip_forward)?;
    s.add_route("default", ROUTER_IN_V4)?;
    s.add_route("default", ROUTER_IN_V6)?;
    d.add_route("default", ROUTER_OUT_V4)?;
    d.add_route("default", ROUTER_OUT_V6)?;
    Ok(th)
}

/// Addresses of one [`star`] port (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StarPort {
    /// Port index.
    pub index: u8,
    /// Tester's interface of this port.
    pub tester_if: String,
    /// DUT's interface of this port.
    pub dut_if: String,
    /// Tester address on the link: 198.18.i.2.
    pub tester_v4: String,
    /// DUT address on the link: 198.18.i.1.
    pub dut_v4: String,
    /// Destination network behind the port: 198.19.i.0/24.
    pub dest_v4_net: String,
    /// Tester address on the link: 2001:2:0:i::2.
    pub tester_v6: String,
    /// DUT address on the link: 2001:2:0:i::1.
    pub dut_v6: String,
    /// Destination network behind the port: 2001:2:0:(100+i)::/64.
    pub dest_v6_net: String,
}

impl StarPort {
    /// Addresses of port `i` (interfaces left empty).
    pub fn addresses(i: u8) -> StarPort {
        StarPort {
            index: i,
            tester_if: String::new(),
            dut_if: String::new(),
            tester_v4: format!("198.18.{i}.2"),
            dut_v4: format!("198.18.{i}.1"),
            dest_v4_net: format!("198.19.{i}.0/24"),
            tester_v6: format!("2001:2:0:{i:x}::2"),
            dut_v6: format!("2001:2:0:{i:x}::1"),
            dest_v6_net: format!("2001:2:0:{:x}::/64", 0x100 + u16::from(i)),
        }
    }

    /// A destination host in this port's output network: 198.19.i.`host`.
    pub fn dest_v4_host(&self, host: u8) -> String {
        format!("198.19.{}.{host}", self.index)
    }

    /// A destination host in this port's IPv6 output network.
    pub fn dest_v6_host(&self, host: u16) -> String {
        format!("2001:2:0:{:x}::{host:x}", 0x100 + u16::from(self.index))
    }
}

/// `tester` and `dut` namespaces joined by `n` veth pairs.
#[derive(Debug)]
pub struct Star {
    /// The namespaces (`tester`, `dut`) and the `n` veths.
    pub testbed: Testbed,
    /// Ports in order.
    pub ports: Vec<StarPort>,
    /// The options it was built with.
    pub options: TopologyOptions,
}

impl Star {
    /// The tester namespace.
    pub fn tester(&self) -> &Netns {
        self.testbed.ns("tester").expect("tester")
    }
    /// The DUT namespace.
    pub fn dut(&self) -> &Netns {
        self.testbed.ns("dut").expect("dut")
    }
}

/// [`star_with`] default options.
pub fn star(n: usize) -> Result<Star> {
    star_with(n, TopologyOptions::default())
}

/// A tester namespace with `n` (1..=256) veth pairs to a DUT namespace,
/// addressed per the module docs. Tester ends always get their link
/// addresses (so the kernel answers the DUT's ARP/ND for them). With
/// [`RouterMode::Kernel`] the DUT ends get `.1`/`::1` and the DUT has a
/// route per port to the destination network via the tester.
pub fn star_with(n: usize, options: TopologyOptions) -> Result<Star> {
    if n == 0 || n > 256 {
        bail!("star needs 1..=256 ports, got {n}");
    }
    let mut b = Testbed::builder().ns("tester").ns("dut");
    for _ in 0..n {
        b = b.veth("tester", "dut", options.queues);
    }
    let testbed = b.build()?;
    let ports = (0..n)
        .map(|i| {
            let mut p = StarPort::addresses(i as u8);
            p.tester_if = testbed.veth(i).a.clone();
            p.dut_if = testbed.veth(i).b.clone();
            p
        })
        .collect();
    let star = Star {
        testbed,
        ports,
        options,
    };
    let (t, d) = (star.tester(), star.dut());
    for p in &star.ports {
        t.add_addr(&p.tester_if, &format!("{}/24", p.tester_v4))?;
        t.add_addr(&p.tester_if, &format!("{}/64", p.tester_v6))?;
        t.disable_tx_offload(&p.tester_if)?;
        if options.router == RouterMode::Kernel {
            d.add_addr(&p.dut_if, &format!("{}/24", p.dut_v4))?;
            d.add_addr(&p.dut_if, &format!("{}/64", p.dut_v6))?;
            d.add_route(&p.dest_v4_net, &p.tester_v4)?;
            d.add_route(&p.dest_v6_net, &p.tester_v6)?;
        }
    }
    d.set_forwarding(options.ip_forward)?;
    Ok(star)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn star_addressing_plan() {
        let p = StarPort::addresses(0);
        assert_eq!(p.tester_v4, "198.18.0.2");
        assert_eq!(p.dest_v4_net, "198.19.0.0/24");
        assert_eq!(p.dut_v6, "2001:2:0:0::1");
        assert_eq!(p.dest_v6_net, "2001:2:0:100::/64");
        let p = StarPort::addresses(17);
        assert_eq!(p.dut_v4, "198.18.17.1");
        assert_eq!(p.tester_v6, "2001:2:0:11::2");
        assert_eq!(p.dest_v6_net, "2001:2:0:111::/64");
        assert_eq!(p.dest_v4_host(9), "198.19.17.9");
        assert_eq!(p.dest_v6_host(10), "2001:2:0:111::a");
        let p = StarPort::addresses(255);
        assert_eq!(p.dest_v6_net, "2001:2:0:1ff::/64");
        for s in [&p.tester_v6, &p.dut_v6] {
            assert!(s.parse::<std::net::Ipv6Addr>().is_ok());
        }
    }

    #[test]
    fn star_rejects_bad_port_counts() {
        assert!(star(0).is_err());
        assert!(star(257).is_err());
    }
}
