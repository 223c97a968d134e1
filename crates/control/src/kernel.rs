//! The kernel's routing table as a source of routes: dump it, then follow
//! it, over rtnetlink (`netlink-packet-route`, no async runtime), with
//! the next-hop objects routes may refer to (`nhid`, as FRR installs
//! them).
//!
//! Why: with it, `ip route`, BIRD and FRR drive softrouter with no plugin.
//! The daemons program the kernel table of the namespace softrouter runs
//! in (as they would for the kernel's own forwarding); softrouter mirrors
//! it into its FIB, the way VPP's linux-cp does. Every route the kernel
//! keeps is reported (several per prefix: metrics, types); which one the
//! kernel uses is [`crate::kernel_fib`]'s business.
//!
//! Ordering: the event socket subscribes *before* the dump is read, so no
//! change between the two is missed; a change seen in both is applied
//! twice, which [`crate::kernel_fib::KernelFib`] makes harmless (an add
//! of a route it holds and a delete of what is gone change nothing). If
//! the kernel drops events (the socket's buffer overflowed: `ENOBUFS`),
//! [`KernelRoutes::poll`] says [`RouteEvent::Resync`] and the caller
//! dumps again; likewise [`RouteEvent::Flushed`] when an interface goes
//! down or loses an address (the kernel removes routes then without a
//! word about them).

use std::io;
use std::net::IpAddr;
use std::time::Duration;

use netlink_packet_core::{
    NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_APPEND, NLM_F_DUMP, NLM_F_REPLACE,
    NLM_F_REQUEST,
};
use netlink_packet_route::route::{
    RouteAddress, RouteAttribute, RouteFlags, RouteMessage, RouteType,
};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};

/// rtnetlink multicast groups (linux/rtnetlink.h).
const RTNLGRP_IPV4_ROUTE: u32 = 7;
const RTNLGRP_IPV6_ROUTE: u32 = 11;
const RTNLGRP_NEXTHOP: u32 = 32;
const RTNLGRP_LINK: u32 = 1;
const RTNLGRP_IPV4_IFADDR: u32 = 5;
const RTNLGRP_IPV6_IFADDR: u32 = 9;
const RTM_NEWLINK: u16 = 16;
const RTM_DELLINK: u16 = 17;
const RTM_DELADDR: u16 = 21;
const IFF_UP: u32 = 1;
/// Link (16-19) and address (20-23) messages come before route ones.
const RTM_NEWROUTE_OR_LATER: u16 = 24;

/// Next-hop object messages (linux/rtnetlink.h, linux/nexthop.h), which
/// `netlink-packet-route` does not parse: read here from their bytes.
const RTM_NEWNEXTHOP: u16 = 104;
const RTM_DELNEXTHOP: u16 = 105;
const RTM_GETNEXTHOP: u16 = 106;
const NHA_ID: u16 = 1;
const NHA_GROUP: u16 = 2;
const NHA_BLACKHOLE: u16 = 4;
const NHA_OIF: u16 = 5;
const NHA_GATEWAY: u16 = 6;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;

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
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RouteAction {
    /// Forward (ECMP over several next hops).
    Forward(Vec<KernelNextHop>),
    /// `blackhole`: drop silently.
    Blackhole,
    /// `unreachable`: drop and answer with ICMP.
    Unreachable,
    /// `prohibit`: drop and answer with ICMP.
    Prohibit,
}

impl RouteAction {
    /// A drop route (blackhole, unreachable, prohibit).
    pub fn is_drop(&self) -> bool {
        !matches!(self, RouteAction::Forward(_))
    }
}

/// A route of the followed table, as the kernel keeps it: one of
/// possibly several for its prefix (other metrics, or at one metric
/// other types).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KernelRoute {
    /// Network address and prefix length.
    pub prefix: (IpAddr, u8),
    /// Metric (`RTA_PRIORITY`): the kernel uses the lowest.
    pub metric: u32,
    /// The kernel's next hops (a route with `nhid` has them expanded too,
    /// in the kernel's compatibility mode; the object decides).
    pub action: RouteAction,
    /// The next-hop object the route uses (`ip route ... nhid N`).
    pub nhid: Option<u32>,
}

/// How an added route relates to the prefix's others at its metric (the
/// flags of the kernel's notification).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddHow {
    /// New (`ip route add`/`prepend`).
    Create,
    /// Replaces the first at its metric (`ip route replace`).
    Replace,
    /// After the others at its metric (`ip route append`; IPv6: more
    /// ECMP siblings).
    Append,
}

/// A next-hop object (`ip nexthop`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NextHopObject {
    /// One next hop.
    Single(KernelNextHop),
    /// `ip nexthop add id N blackhole`.
    Blackhole,
    /// A group of other objects' ids (weights are not kept: softrouter's
    /// ECMP is equal-cost).
    Group(Vec<u32>),
}

/// A change of the followed table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteEvent {
    /// A route was added or replaced.
    Add(KernelRoute, AddHow),
    /// A route was removed (IPv6: the next hops named, of the ECMP route
    /// at its metric).
    Del(KernelRoute),
    /// A next-hop object was added or replaced.
    NextHop(u32, NextHopObject),
    /// A next-hop object was removed (and the routes using it with it).
    NextHopDel(u32),
    /// Events were lost: dump again and reconcile.
    Resync,
    /// An interface went down or lost an address: the kernel may have
    /// removed routes without saying so (IPv4 never announces those):
    /// dump again and reconcile.
    Flushed,
}

/// What a dump gives: the next-hop objects, then the routes.
#[derive(Debug, Default, Clone)]
pub struct KernelTable {
    pub nexthops: Vec<(u32, NextHopObject)>,
    pub routes: Vec<KernelRoute>,
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
        // Kernels before 5.3 have no next-hop objects (nor routes using
        // them).
        let _ = events.add_membership(RTNLGRP_NEXTHOP);
        // Routes the kernel removes silently with a link or an address.
        for g in [RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR] {
            events.add_membership(g)?;
        }
        events.set_non_blocking(true)?;
        Ok(KernelRoutes {
            events,
            table,
            buf: vec![0; 1 << 16],
        })
    }

    /// Every next-hop object and every route of the table now (objects
    /// first: routes refer to them).
    pub fn dump(&mut self) -> io::Result<KernelTable> {
        let mut s = Socket::new(NETLINK_ROUTE)?;
        s.bind_auto()?;
        s.connect(&SocketAddr::new(0, 0))?;
        let mut out = KernelTable::default();
        // struct nlmsghdr + struct nhmsg (family AF_UNSPEC: all).
        let mut req = [0u8; 24];
        req[0..4].copy_from_slice(&24u32.to_ne_bytes());
        req[4..6].copy_from_slice(&RTM_GETNEXTHOP.to_ne_bytes());
        req[6..8].copy_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
        s.send(&req, 0)?;
        'nexthops: loop {
            let n = s.recv(&mut &mut self.buf[..], 0)?;
            for m in split(&self.buf[..n]) {
                match msg_type(m) {
                    // Without next-hop objects in this kernel: none.
                    NLMSG_DONE | NLMSG_ERROR => break 'nexthops,
                    RTM_NEWNEXTHOP => {
                        if let Some(RouteEvent::NextHop(id, o)) = nexthop(m, true) {
                            out.nexthops.push((id, o));
                        }
                    }
                    _ => {}
                }
            }
        }
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
                            // In the kernel's order: at one metric, the
                            // first is the one used.
                            if let Some(RouteEvent::Add(r, _)) =
                                convert(&r, self.table, NLM_F_APPEND, true)
                            {
                                out.routes.push(r);
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
        poll_raw(
            &self.events,
            &mut self.buf,
            timeout,
            RouteEvent::Resync,
            |m| {
                Ok(match msg_type(m) {
                    RTM_NEWNEXTHOP => nexthop(m, true),
                    RTM_DELNEXTHOP => nexthop(m, false),
                    RTM_DELLINK | RTM_DELADDR => Some(RouteEvent::Flushed),
                    // struct ifinfomsg's ifi_flags: down (or going).
                    RTM_NEWLINK => m
                        .get(24..28)
                        .map(|f| u32::from_ne_bytes(f.try_into().unwrap()))
                        .filter(|f| f & IFF_UP == 0)
                        .map(|_| RouteEvent::Flushed),
                    // Other link and address messages.
                    t if t < RTM_NEWROUTE_OR_LATER => None,
                    _ => {
                        let flags = u16::from_ne_bytes([m[6], m[7]]);
                        match parse(m)?.payload {
                            NetlinkPayload::InnerMessage(RouteNetlinkMessage::NewRoute(r)) => {
                                convert(&r, table, flags, true)
                            }
                            NetlinkPayload::InnerMessage(RouteNetlinkMessage::DelRoute(r)) => {
                                convert(&r, table, flags, false)
                            }
                            _ => None,
                        }
                    }
                })
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
    poll_raw(sock, buf, timeout, resync, |m| {
        Ok(match parse(m)?.payload {
            NetlinkPayload::InnerMessage(m) => event(m),
            _ => None,
        })
    })
}

/// [`poll_events`] on each message's bytes (header included).
fn poll_raw<E>(
    sock: &Socket,
    buf: &mut [u8],
    timeout: Duration,
    resync: E,
    mut event: impl FnMut(&[u8]) -> io::Result<Option<E>>,
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
        for m in split(&buf[..n]) {
            out.extend(event(m)?);
        }
    }
    Ok(out)
}

/// The netlink messages in one datagram, each with its header.
fn split(mut b: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while b.len() >= 16 {
        let len = u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as usize;
        if len < 16 || len > b.len() {
            break;
        }
        out.push(&b[..len]);
        b = &b[len.next_multiple_of(4).min(b.len())..];
    }
    out
}

fn msg_type(m: &[u8]) -> u16 {
    u16::from_ne_bytes([m[4], m[5]])
}

fn parse(m: &[u8]) -> io::Result<NetlinkMessage<RouteNetlinkMessage>> {
    NetlinkMessage::<RouteNetlinkMessage>::deserialize(m)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("netlink: {e}")))
}

/// The netlink messages in one datagram.
pub(crate) fn messages(b: &[u8]) -> io::Result<Vec<NetlinkMessage<RouteNetlinkMessage>>> {
    split(b).into_iter().map(parse).collect()
}

/// A next-hop object message (`add`: new or replaced, else removed);
/// `None` if it has no id.
fn nexthop(m: &[u8], add: bool) -> Option<RouteEvent> {
    // struct nlmsghdr (16) + struct nhmsg (8), then attributes.
    let mut a = m.get(24..)?;
    let (mut id, mut oif, mut gateway, mut group, mut blackhole) = (None, 0, None, None, false);
    while a.len() >= 4 {
        let len = usize::from(u16::from_ne_bytes([a[0], a[1]]));
        if len < 4 || len > a.len() {
            break;
        }
        let v = &a[4..len];
        let u32_at = |v: &[u8]| {
            v.get(..4)
                .map(|b| u32::from_ne_bytes(b.try_into().unwrap()))
        };
        match u16::from_ne_bytes([a[2], a[3]]) & 0x3fff {
            NHA_ID => id = u32_at(v),
            NHA_OIF => oif = u32_at(v).unwrap_or(0),
            NHA_BLACKHOLE => blackhole = true,
            NHA_GATEWAY => {
                gateway = match v.len() {
                    4 => Some(IpAddr::from(<[u8; 4]>::try_from(v).unwrap())),
                    16 => Some(IpAddr::from(<[u8; 16]>::try_from(v).unwrap())),
                    _ => None,
                }
            }
            // struct nexthop_grp: id, weight, weight_high, reserved.
            NHA_GROUP => group = Some(v.chunks_exact(8).filter_map(u32_at).collect()),
            _ => {}
        }
        a = &a[len.next_multiple_of(4).min(a.len())..];
    }
    let id = id?;
    if !add {
        return Some(RouteEvent::NextHopDel(id));
    }
    let o = match (group, blackhole) {
        (Some(g), _) => NextHopObject::Group(g),
        (None, true) => NextHopObject::Blackhole,
        (None, false) => NextHopObject::Single(KernelNextHop {
            gateway,
            ifindex: oif,
        }),
    };
    Some(RouteEvent::NextHop(id, o))
}

/// A route message of `table` as an event (`add`: new route, else
/// removed; `flags`: the notification's, saying how it was added);
/// `None` for other tables, for routes with a TOS (not what ordinary
/// traffic uses) and for route types softrouter does not mirror (local,
/// broadcast, multicast: the kernel's own business).
fn convert(r: &RouteMessage, table: u32, flags: u16, add: bool) -> Option<RouteEvent> {
    let h = &r.header;
    let t = r
        .attributes
        .iter()
        .find_map(|a| match a {
            RouteAttribute::Table(t) => Some(*t),
            _ => None,
        })
        .unwrap_or(u32::from(h.table));
    // Cloned: a cached exception (IPv6 PMTU), not a route.
    if t != table
        || h.tos != 0
        || h.source_prefix_length != 0
        || h.flags.contains(RouteFlags::Cloned)
    {
        return None;
    }
    let zero = match h.address_family {
        AddressFamily::Inet => IpAddr::from([0u8; 4]),
        AddressFamily::Inet6 => IpAddr::from([0u8; 16]),
        _ => return None,
    };
    let (mut addr, mut metric, mut nhid) = (zero, 0, None);
    for a in &r.attributes {
        match a {
            RouteAttribute::Destination(d) => addr = ip(d).unwrap_or(zero),
            RouteAttribute::Priority(p) => metric = *p,
            RouteAttribute::NhId(id) => nhid = Some(*id),
            _ => {}
        }
    }
    let action = match h.kind {
        RouteType::Unicast => RouteAction::Forward(next_hops(r)),
        RouteType::BlackHole => RouteAction::Blackhole,
        RouteType::Unreachable => RouteAction::Unreachable,
        RouteType::Prohibit => RouteAction::Prohibit,
        _ => return None,
    };
    let route = KernelRoute {
        prefix: (addr, h.destination_prefix_length),
        metric,
        action,
        nhid,
    };
    Some(if !add {
        RouteEvent::Del(route)
    } else if flags & NLM_F_REPLACE != 0 {
        RouteEvent::Add(route, AddHow::Replace)
    } else if flags & NLM_F_APPEND != 0 {
        RouteEvent::Add(route, AddHow::Append)
    } else {
        RouteEvent::Add(route, AddHow::Create)
    })
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
