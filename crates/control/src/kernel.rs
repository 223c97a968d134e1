//! The kernel's routing table as a source of routes: dump it, then follow
//! it, over rtnetlink (`netlink-packet-route`, no async runtime).
//!
//! Why: with it, `ip route`, BIRD and FRR drive softrouter with no plugin.
//! The daemons program the kernel table of the namespace softrouter runs
//! in (as they would for the kernel's own forwarding); softrouter mirrors
//! it into its FIB, the way VPP's linux-cp does.
//!
//! Ordering: the event socket subscribes *before* the dump is read, so no
//! change between the two is missed; a change seen in both is applied
//! twice, which is harmless (an add replaces, a delete of what is gone is
//! ignored by the caller). If the kernel drops events (the socket's buffer
//! overflowed: `ENOBUFS`), [`KernelRoutes::poll`] says
//! [`RouteEvent::Resync`] and the caller dumps again.

use std::io;
use std::net::IpAddr;
use std::time::Duration;

use netlink_packet_core::{
    NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_DUMP, NLM_F_REQUEST,
};
use netlink_packet_route::route::{RouteAddress, RouteAttribute, RouteMessage, RouteType};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};

/// rtnetlink multicast groups (linux/rtnetlink.h).
const RTNLGRP_IPV4_ROUTE: u32 = 7;
const RTNLGRP_IPV6_ROUTE: u32 = 11;

/// Receive buffer of the event socket: room for a burst of changes (a
/// routing daemon installing a full table) before the kernel drops any.
const EVENT_BUFFER: usize = 32 << 20;

/// One next hop of a kernel route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelNextHop {
    /// `None`: on-link (a connected route, or `dev X` without `via`).
    pub gateway: Option<IpAddr>,
    /// The output interface.
    pub ifindex: u32,
}

/// What a kernel route does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteAction {
    /// Forward (ECMP over several next hops).
    Forward(Vec<KernelNextHop>),
    /// `blackhole`: drop silently.
    Blackhole,
    /// `unreachable` / `prohibit`: drop and answer with ICMP.
    Unreachable,
}

/// A route of the followed table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelRoute {
    /// Network address and prefix length.
    pub prefix: (IpAddr, u8),
    pub action: RouteAction,
}

/// A change of the followed table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteEvent {
    /// A route was added or replaced.
    Add(KernelRoute),
    /// The route for this prefix was removed.
    Del((IpAddr, u8)),
    /// Events were lost: dump again and reconcile.
    Resync,
}

/// The followed kernel table.
pub struct KernelRoutes {
    events: Socket,
    table: u32,
    buf: Vec<u8>,
}

impl KernelRoutes {
    /// The main table's number.
    pub const MAIN: u32 = 254;

    /// Follow routing table `table` ([`Self::MAIN`] = main) of the calling thread's
    /// network namespace.
    pub fn open(table: u32) -> io::Result<KernelRoutes> {
        let mut events = Socket::new(NETLINK_ROUTE)?;
        events.bind_auto()?;
        // Root may exceed rmem_max; without it the default buffer stays.
        let _ = set_rcvbuf_force(&events, EVENT_BUFFER);
        events.add_membership(RTNLGRP_IPV4_ROUTE)?;
        events.add_membership(RTNLGRP_IPV6_ROUTE)?;
        events.set_non_blocking(true)?;
        Ok(KernelRoutes {
            events,
            table,
            buf: vec![0; 1 << 16],
        })
    }

    /// Every route of the table now (IPv4, then IPv6).
    pub fn dump(&mut self) -> io::Result<Vec<KernelRoute>> {
        let mut s = Socket::new(NETLINK_ROUTE)?;
        s.bind_auto()?;
        s.connect(&SocketAddr::new(0, 0))?;
        let mut out = Vec::new();
        for family in [AddressFamily::Inet, AddressFamily::Inet6] {
            let mut msg = RouteMessage::default();
            msg.header.address_family = family;
            let mut hdr = NetlinkHeader::default();
            hdr.flags = NLM_F_REQUEST | NLM_F_DUMP;
            let mut packet = NetlinkMessage::new(
                hdr,
                NetlinkPayload::from(RouteNetlinkMessage::GetRoute(msg)),
            );
            packet.finalize();
            let mut req = vec![0; packet.buffer_len()];
            packet.serialize(&mut req);
            s.send(&req, 0)?;
            'reply: loop {
                let n = s.recv(&mut &mut self.buf[..], 0)?;
                for m in messages(&self.buf[..n])? {
                    match m.payload {
                        NetlinkPayload::Done(_) => break 'reply,
                        NetlinkPayload::Error(e) => {
                            return Err(io::Error::other(format!("route dump: {e:?}")))
                        }
                        NetlinkPayload::InnerMessage(RouteNetlinkMessage::NewRoute(r)) => {
                            if let Some(RouteEvent::Add(r)) = convert(&r, self.table, true) {
                                out.push(r);
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        Ok(out)
    }

    /// Changes since the last call, waiting at most `timeout` for the
    /// first.
    pub fn poll(&mut self, timeout: Duration) -> io::Result<Vec<RouteEvent>> {
        let table = self.table;
        poll_events(
            &self.events,
            &mut self.buf,
            timeout,
            RouteEvent::Resync,
            |m| match m {
                RouteNetlinkMessage::NewRoute(r) => convert(&r, table, true),
                RouteNetlinkMessage::DelRoute(r) => convert(&r, table, false),
                _ => None,
            },
        )
    }
}

/// The events waiting on a subscribed, non-blocking netlink socket,
/// waiting at most `timeout` for the first: each message through
/// `event`, and `resync` where the kernel dropped some (ENOBUFS: the
/// follower must dump again). The route and neighbour followers share it.
pub(crate) fn poll_events<E>(
    sock: &Socket,
    buf: &mut [u8],
    timeout: Duration,
    resync: E,
    mut event: impl FnMut(RouteNetlinkMessage) -> Option<E>,
) -> io::Result<Vec<E>>
where
    E: Clone,
{
    let mut out = Vec::new();
    let mut pfd = libc::pollfd {
        fd: std::os::fd::AsRawFd::as_raw_fd(sock),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut pfd, 1, ms) };
    loop {
        let n = match sock.recv(&mut &mut buf[..], 0) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {
                out.push(resync.clone());
                continue;
            }
            Err(e) => return Err(e),
        };
        for m in messages(&buf[..n])? {
            if let NetlinkPayload::InnerMessage(m) = m.payload {
                out.extend(event(m));
            }
        }
    }
    Ok(out)
}

/// The netlink messages in one datagram.
pub(crate) fn messages(mut b: &[u8]) -> io::Result<Vec<NetlinkMessage<RouteNetlinkMessage>>> {
    let mut out = Vec::new();
    while b.len() >= 16 {
        let m = NetlinkMessage::<RouteNetlinkMessage>::deserialize(b)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("netlink: {e}")))?;
        let len = (m.header.length as usize).next_multiple_of(4);
        out.push(m);
        if len == 0 || len >= b.len() {
            break;
        }
        b = &b[len..];
    }
    Ok(out)
}

/// A route message of `table` as an event (`add`: new route, else
/// removed); `None` for other tables and for route types softrouter does
/// not mirror (local, broadcast, multicast: the kernel's own business).
fn convert(r: &RouteMessage, table: u32, add: bool) -> Option<RouteEvent> {
    let h = &r.header;
    let t = r
        .attributes
        .iter()
        .find_map(|a| match a {
            RouteAttribute::Table(t) => Some(*t),
            _ => None,
        })
        .unwrap_or(u32::from(h.table));
    if t != table {
        return None;
    }
    let zero = match h.address_family {
        AddressFamily::Inet => IpAddr::from([0u8; 4]),
        AddressFamily::Inet6 => IpAddr::from([0u8; 16]),
        _ => return None,
    };
    let addr = r
        .attributes
        .iter()
        .find_map(|a| match a {
            RouteAttribute::Destination(d) => ip(d),
            _ => None,
        })
        .unwrap_or(zero);
    let prefix = (addr, h.destination_prefix_length);
    if !add {
        return Some(RouteEvent::Del(prefix));
    }
    let action = match h.kind {
        RouteType::Unicast => RouteAction::Forward(next_hops(r)),
        RouteType::BlackHole => RouteAction::Blackhole,
        RouteType::Unreachable | RouteType::Prohibit => RouteAction::Unreachable,
        _ => return None,
    };
    if matches!(&action, RouteAction::Forward(n) if n.is_empty()) {
        return None;
    }
    Some(RouteEvent::Add(KernelRoute { prefix, action }))
}

fn next_hops(r: &RouteMessage) -> Vec<KernelNextHop> {
    let mut gateway = None;
    let mut oif = None;
    for a in &r.attributes {
        match a {
            RouteAttribute::Gateway(g) => gateway = ip(g),
            RouteAttribute::Oif(i) => oif = Some(*i),
            RouteAttribute::MultiPath(hops) => {
                return hops
                    .iter()
                    .map(|h| KernelNextHop {
                        gateway: h.attributes.iter().find_map(|a| match a {
                            RouteAttribute::Gateway(g) => ip(g),
                            _ => None,
                        }),
                        ifindex: h.interface_index,
                    })
                    .collect()
            }
            _ => {}
        }
    }
    oif.map(|ifindex| KernelNextHop { gateway, ifindex })
        .into_iter()
        .collect()
}

fn ip(a: &RouteAddress) -> Option<IpAddr> {
    match a {
        RouteAddress::Inet(v4) => Some(IpAddr::V4(*v4)),
        RouteAddress::Inet6(v6) => Some(IpAddr::V6(*v6)),
        _ => None,
    }
}

pub(crate) fn set_rcvbuf_force(s: &Socket, bytes: usize) -> io::Result<()> {
    let v = bytes as libc::c_int;
    // SAFETY: setsockopt with a valid int option.
    let r = unsafe {
        libc::setsockopt(
            std::os::fd::AsRawFd::as_raw_fd(s),
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            &v as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
