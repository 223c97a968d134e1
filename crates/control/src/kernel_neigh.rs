//! The kernel's neighbour table (`[kernel] local`): dump it, follow it,
//! and ask the kernel to resolve an address, over rtnetlink.
//!
//! Why: in that mode the kernel's stack owns ARP and ND on softrouter's
//! interfaces (the XDP program passes them to it), so the MACs softrouter
//! forwards to are the kernel's. Ordering as for the routes
//! ([`crate::kernel`]): subscribe, then dump; lost events
//! (`ENOBUFS`) say [`NeighEvent::Resync`].
//!
//! Resolution is asked with `NTF_USE` rather than by creating an
//! `NTF_EXT_MANAGED` entry (kernel 5.16+): `NTF_USE` is a one-shot "use
//! this neighbour now", exactly what a worker's solicitation was; the
//! kernel runs its own state machine (probes, FAILED, garbage collection)
//! and nothing is left for softrouter to delete when the route goes. A
//! managed entry would be kept resolved even while unused, and would
//! have to be removed by softrouter with every gateway it stops using.

use std::io;
use std::net::IpAddr;
use std::time::Duration;

use netlink_packet_core::{
    NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST,
};
use netlink_packet_route::neighbour::{
    NeighbourAddress, NeighbourAttribute, NeighbourFlags, NeighbourMessage, NeighbourState,
};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};

use crate::kernel::{messages, poll_events, set_rcvbuf_force};

/// rtnetlink's neighbour group (linux/rtnetlink.h RTNLGRP_NEIGH).
const RTNLGRP_NEIGH: u32 = 3;
/// NLM_F_CREATE (linux/netlink.h): `NTF_USE` creates a missing entry.
const NLM_F_CREATE: u16 = 0x400;
const EVENT_BUFFER: usize = 4 << 20;

/// A change of the kernel's neighbour table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NeighEvent {
    /// `ip` on `ifindex` has `mac` (REACHABLE, STALE, DELAY, PROBE or
    /// PERMANENT: the kernel would send to it).
    Set {
        ifindex: u32,
        ip: IpAddr,
        mac: [u8; 6],
    },
    /// Deleted, or FAILED: no MAC to send to.
    Gone { ifindex: u32, ip: IpAddr },
    /// Events were lost: dump again.
    Resync,
}

/// The followed neighbour table.
pub struct KernelNeighbours {
    events: Socket,
    requests: Socket,
    buf: Vec<u8>,
}

impl KernelNeighbours {
    /// Follow the neighbour table of the calling thread's namespace.
    pub fn open() -> io::Result<KernelNeighbours> {
        let mut events = Socket::new(NETLINK_ROUTE)?;
        events.bind_auto()?;
        let _ = set_rcvbuf_force(&events, EVENT_BUFFER);
        events.add_membership(RTNLGRP_NEIGH)?;
        events.set_non_blocking(true)?;
        let mut requests = Socket::new(NETLINK_ROUTE)?;
        requests.bind_auto()?;
        requests.connect(&SocketAddr::new(0, 0))?;
        Ok(KernelNeighbours {
            events,
            requests,
            buf: vec![0; 1 << 16],
        })
    }

    /// Every entry with a MAC now, as [`NeighEvent::Set`].
    pub fn dump(&mut self) -> io::Result<Vec<NeighEvent>> {
        let mut out = Vec::new();
        for family in [AddressFamily::Inet, AddressFamily::Inet6] {
            let mut msg = NeighbourMessage::default();
            msg.header.family = family;
            self.send(RouteNetlinkMessage::GetNeighbour(msg), NLM_F_DUMP)?;
            'reply: loop {
                let n = self.requests.recv(&mut &mut self.buf[..], 0)?;
                for m in messages(&self.buf[..n])? {
                    match m.payload {
                        NetlinkPayload::Done(_) => break 'reply,
                        NetlinkPayload::Error(e) => {
                            return Err(io::Error::other(format!("neighbour dump: {e:?}")))
                        }
                        NetlinkPayload::InnerMessage(RouteNetlinkMessage::NewNeighbour(n)) => {
                            out.extend(
                                convert(&n, true).filter(|e| matches!(e, NeighEvent::Set { .. })),
                            );
                        }
                        _ => {}
                    }
                }
            }
        }
        Ok(out)
    }

    /// Asks the kernel to resolve `ip` on `ifindex` (`NTF_USE`, creating
    /// the entry if there is none); its answer arrives as an event.
    pub fn resolve(&mut self, ifindex: u32, ip: IpAddr) -> io::Result<()> {
        let mut msg = NeighbourMessage::default();
        msg.header.family = match ip {
            IpAddr::V4(_) => AddressFamily::Inet,
            IpAddr::V6(_) => AddressFamily::Inet6,
        };
        msg.header.ifindex = ifindex;
        msg.header.state = NeighbourState::None;
        msg.header.flags = NeighbourFlags::Use;
        msg.attributes
            .push(NeighbourAttribute::Destination(match ip {
                IpAddr::V4(a) => NeighbourAddress::Inet(a),
                IpAddr::V6(a) => NeighbourAddress::Inet6(a),
            }));
        self.send(
            RouteNetlinkMessage::NewNeighbour(msg),
            NLM_F_CREATE | NLM_F_ACK,
        )?;
        let n = self.requests.recv(&mut &mut self.buf[..], 0)?;
        for m in messages(&self.buf[..n])? {
            if let NetlinkPayload::Error(e) = m.payload {
                if let Some(code) = e.code {
                    return Err(io::Error::from_raw_os_error(-code.get()));
                }
            }
        }
        Ok(())
    }

    /// Changes since the last call, waiting at most `timeout` for the
    /// first.
    pub fn poll(&mut self, timeout: Duration) -> io::Result<Vec<NeighEvent>> {
        poll_events(
            &self.events,
            &mut self.buf,
            timeout,
            NeighEvent::Resync,
            |m| match m {
                RouteNetlinkMessage::NewNeighbour(n) => convert(&n, true),
                RouteNetlinkMessage::DelNeighbour(n) => convert(&n, false),
                _ => None,
            },
        )
    }

    fn send(&mut self, msg: RouteNetlinkMessage, flags: u16) -> io::Result<()> {
        let mut hdr = NetlinkHeader::default();
        hdr.flags = NLM_F_REQUEST | flags;
        let mut packet = NetlinkMessage::new(hdr, NetlinkPayload::from(msg));
        packet.finalize();
        let mut req = vec![0; packet.buffer_len()];
        packet.serialize(&mut req);
        self.requests.send(&req, 0)?;
        Ok(())
    }
}

/// A neighbour message as an event; `None` for entries softrouter has no
/// use for (no address, proxy entries, INCOMPLETE or NONE: resolving,
/// nothing known yet; NOARP: multicast and point-to-point).
fn convert(n: &NeighbourMessage, add: bool) -> Option<NeighEvent> {
    if n.header.flags.contains(NeighbourFlags::Proxy) {
        return None;
    }
    let ifindex = n.header.ifindex;
    let mut ip = None;
    let mut mac = None;
    for a in &n.attributes {
        match a {
            NeighbourAttribute::Destination(NeighbourAddress::Inet(a)) => ip = Some(IpAddr::V4(*a)),
            NeighbourAttribute::Destination(NeighbourAddress::Inet6(a)) => {
                ip = Some(IpAddr::V6(*a))
            }
            NeighbourAttribute::LinkLayerAddress(l) => mac = <[u8; 6]>::try_from(&l[..]).ok(),
            _ => {}
        }
    }
    let ip = ip?;
    if !add {
        return Some(NeighEvent::Gone { ifindex, ip });
    }
    match n.header.state {
        NeighbourState::Failed => Some(NeighEvent::Gone { ifindex, ip }),
        NeighbourState::Reachable
        | NeighbourState::Stale
        | NeighbourState::Delay
        | NeighbourState::Probe
        | NeighbourState::Permanent => Some(NeighEvent::Set {
            ifindex,
            ip,
            mac: mac?,
        }),
        _ => None,
    }
}
