//! Neighbour resolution on the worker side: sending a packet to its next
//! hop's MAC (`send`), per-worker hold queues for packets waiting for an
//! INCOMPLETE entry, solicitations and probes, and the timers that release
//! or give up held packets.
//!
//! A worker has [`HOLD_SLOTS`] slots, each queueing up to
//! `router.hold_packets` packets for one entry *incarnation* (next-hop id +
//! [`NeighEntry::life`](crate::neighbor::NeighEntry::life)): ids outlive
//! the poll round in a hold queue, so a slot notices when the garbage
//! collector removed its entry (and the id was perhaps reused) and gives
//! up instead of sending to whoever holds the id now. Everything is
//! preallocated: holding never allocates.

use crate::cx::{Cx, Egress, Out};
use crate::drop::DropReason;
use crate::icmp;
use crate::neighbor::{Use, RESOLVE_WINDOW_MS};
use crate::output;
use fib::{NextHopId, NextHopKind, NextHopReader};
use netio::Buf;
use packet::arp::ARPOP_REQUEST;
use packet::build;
use packet::ethernet::{self, Address, ETH_IPV4};
use std::net::IpAddr;

/// Unresolved entries one worker can hold packets for at once.
pub const HOLD_SLOTS: usize = 64;

const FREE: u32 = u32::MAX;

#[derive(Clone, Copy)]
pub(crate) struct Held {
    pub buf: Buf,
    pub in_port: u16,
}

struct HoldSlot {
    nh: u32,
    life: u32,
    port: u16,
    since_ms: u64,
    q: Vec<Held>,
}

/// One worker's hold queues.
pub(crate) struct Holds {
    slots: Vec<HoldSlot>,
    active: usize,
    /// Packets in all queues: kept so that [`Holds::len`] (asked after
    /// every round by the engine) is one load, not a scan of the slots.
    held: usize,
    per_slot: usize,
}

impl Holds {
    pub(crate) fn new(per_slot: usize) -> Holds {
        Holds {
            slots: (0..HOLD_SLOTS)
                .map(|_| HoldSlot {
                    nh: FREE,
                    life: 0,
                    port: 0,
                    since_ms: 0,
                    q: Vec::with_capacity(per_slot),
                })
                .collect(),
            active: 0,
            held: 0,
            per_slot,
        }
    }

    /// Queues `h` for entry `id` incarnation `life` on `port`; gives it
    /// back if the entry's queue or every slot is full.
    fn push(
        &mut self,
        id: NextHopId,
        life: u32,
        port: usize,
        h: Held,
        now_ms: u64,
    ) -> Result<(), Held> {
        if self.per_slot == 0 {
            return Err(h);
        }
        let s = match self
            .slots
            .iter()
            .position(|s| s.nh == id.0 && s.life == life)
        {
            Some(s) => s,
            None => {
                let Some(s) = self.slots.iter().position(|s| s.nh == FREE) else {
                    return Err(h);
                };
                let slot = &mut self.slots[s];
                slot.nh = id.0;
                slot.life = life;
                slot.port = port as u16;
                slot.since_ms = now_ms;
                self.active += 1;
                s
            }
        };
        let q = &mut self.slots[s].q;
        if q.len() >= self.per_slot {
            return Err(h);
        }
        q.push(h);
        self.held += 1;
        Ok(())
    }

    fn free(&mut self, s: usize) {
        self.held -= self.slots[s].q.len();
        self.slots[s].q.clear();
        self.slots[s].nh = FREE;
        self.active -= 1;
    }

    pub(crate) fn active(&self) -> usize {
        self.active
    }

    /// Packets held.
    pub(crate) fn len(&self) -> usize {
        debug_assert_eq!(
            self.held,
            self.slots.iter().map(|s| s.q.len()).sum::<usize>()
        );
        self.held
    }

    /// Empties every queue through `f`.
    pub(crate) fn drain(&mut self, mut f: impl FnMut(Held)) {
        for s in 0..self.slots.len() {
            if self.slots[s].nh == FREE {
                continue;
            }
            for &h in &self.slots[s].q {
                f(h);
            }
            self.free(s);
        }
    }
}

/// Takes a packet out of a hold queue: no longer `held`, and from here on
/// counted on its input port (which becomes the current one).
pub(crate) fn unhold(out: &mut Out, h: Held) -> Buf {
    out.set_in_port(h.in_port as usize);
    out.stats.ports[out.in_port()].held.sub(1);
    h.buf
}

/// Sends `buf` to next hop `id` on `port`, or holds it until the
/// neighbour is resolved (see [`crate::neighbor`] for the states). The
/// common case, the next hop the burst last sent to, reads no entry.
#[inline]
pub(crate) fn send(
    cx: &mut Cx,
    nh: &NextHopReader,
    holds: &mut Holds,
    buf: Buf,
    id: NextHopId,
    port: usize,
) {
    if let Some(e) = cx.egress.filter(|e| e.id == id) {
        return output::emit_via(&mut cx.out, &cx.shared.ports, buf, &e);
    }
    resolve_and_send(cx, nh, holds, buf, id, port)
}

/// [`send`] through the neighbour entry (once per next hop and burst).
#[inline(never)]
fn resolve_and_send(
    cx: &mut Cx,
    nh: &NextHopReader,
    holds: &mut Holds,
    buf: Buf,
    id: NextHopId,
    port: usize,
) {
    let (now, timeout) = (cx.now_ms, cx.shared.neighbor_timeout_ms);
    let e = cx.shared.neigh(id);
    match e.lookup(now, timeout) {
        Use::Send(mac) => {
            e.touch(now);
            let e = Egress::new(id, port, &cx.shared.ports[port], mac);
            cx.egress = Some(e);
            output::emit_via(&mut cx.out, &cx.shared.ports, buf, &e)
        }
        Use::Probe(mac) => {
            e.touch(now);
            if e.try_solicit(now) {
                solicit(cx, nh, id, port, Some(mac));
            }
            output::emit(&mut cx.out, &cx.shared.ports, buf, port, mac)
        }
        Use::Hold => holds.hold(cx, nh, buf, id, port),
        Use::Failed => {
            if e.restart(now, timeout) || (!e.is_dynamic() && e.lookup(now, timeout) == Use::Hold) {
                // A permanent entry (gateway, pinned) starts over.
                holds.hold(cx, nh, buf, id, port)
            } else {
                // A failed or removed dynamic entry: dropped until the
                // collector removes it.
                unreachable(cx, buf)
            }
        }
    }
}

impl Holds {
    /// Holds `buf` until entry `id` on `port` resolves, and solicits it
    /// (at most once per interval across workers). When the packet cannot
    /// be held the solicitation is still sent, so the next packet finds the
    /// entry resolved.
    fn hold(&mut self, cx: &mut Cx, nh: &NextHopReader, buf: Buf, id: NextHopId, port: usize) {
        let e = cx.shared.neigh(id);
        let life = e.life();
        let solicit_now = e.try_solicit(cx.now_ms);
        let in_port = cx.out.in_port();
        let h = Held {
            buf,
            in_port: in_port as u16,
        };
        match self.push(id, life, port, h, cx.now_ms) {
            Ok(()) => cx.out.stats.ports[in_port].held.add(1),
            Err(h) => cx.out.drop(h.buf, DropReason::HoldQueueFull),
        }
        if solicit_now {
            solicit(cx, nh, id, port, None);
        }
    }

    /// Releases held packets whose entry resolved, re-solicits, and gives
    /// up (ICMP host/address unreachable) when the resolution failed or the
    /// entry was removed.
    pub(crate) fn timers(&mut self, cx: &mut Cx, nh: &NextHopReader) {
        let (now, timeout) = (cx.now_ms, cx.shared.neighbor_timeout_ms);
        for s in 0..HOLD_SLOTS {
            let slot = &self.slots[s];
            if slot.nh == FREE {
                continue;
            }
            let (id, port) = (NextHopId(slot.nh), slot.port as usize);
            let e = cx.shared.neigh(id);
            let verdict = if e.life() != slot.life {
                Use::Failed
            } else if now.saturating_sub(slot.since_ms) >= 2 * RESOLVE_WINDOW_MS {
                // Backstop: never hold longer than two resolution rounds.
                Use::Failed
            } else {
                e.lookup(now, timeout)
            };
            match verdict {
                Use::Send(mac) | Use::Probe(mac) => {
                    e.touch(now);
                    for &h in &self.slots[s].q {
                        let buf = unhold(&mut cx.out, h);
                        output::emit(&mut cx.out, &cx.shared.ports, buf, port, mac);
                    }
                }
                Use::Hold => {
                    if e.try_solicit(now) {
                        solicit(cx, nh, id, port, None);
                    }
                    continue;
                }
                Use::Failed => {
                    for &h in &self.slots[s].q {
                        let buf = unhold(&mut cx.out, h);
                        unreachable(cx, buf);
                    }
                }
            }
            self.free(s);
        }
    }
}

/// Sends an ARP request or a neighbor solicitation for next hop `id`:
/// broadcast / to the solicited-node group, or unicast to `probe` (the
/// MAC of a STALE entry).
pub(crate) fn solicit(
    cx: &mut Cx,
    nh: &NextHopReader,
    id: NextHopId,
    port: usize,
    probe: Option<[u8; 6]>,
) {
    let NextHopKind::Gateway(ip) = nh.get(id).kind else {
        return;
    };
    if let Some(k) = &cx.shared.kernel {
        // `[kernel] local`: the answer would be the kernel's; ask it.
        return k.request(port, ip);
    }
    let pc = &cx.shared.ports[port];
    let mac = pc.mac;
    let src = match ip {
        IpAddr::V4(a) => pc.v4_for(a).map(IpAddr::V4),
        IpAddr::V6(a) => pc.v6_for(a).map(IpAddr::V6),
    };
    let Some(src) = src else { return };
    let out = &mut cx.out;
    let Some(mut nb) = out.pool.alloc() else {
        out.stats.drop_on(port, DropReason::ReplyNoBuffer, 1);
        return;
    };
    let room = out.pool.room_mut(nb);
    let n = match (src, ip) {
        (IpAddr::V4(s), IpAddr::V4(t)) => {
            let to = probe.unwrap_or(Address::BROADCAST.0);
            build::arp(room, to, ARPOP_REQUEST, (mac, s), ([0; 6], t))
        }
        (IpAddr::V6(s), IpAddr::V6(t)) => build::neighbor_solicit(room, mac, s, t, probe),
        _ => unreachable!(),
    };
    nb.len = n as u32;
    out.send_generated(port, nb);
}

/// Drops `buf` as `neighbor_unresolved`, with an ICMP host (address)
/// unreachable to its source.
pub(crate) fn unreachable(cx: &mut Cx, buf: Buf) {
    if ethernet::Frame::new_unchecked(cx.out.pool.data(buf)).ethertype_raw() == ETH_IPV4 {
        icmp::v4(cx, buf, icmp::V4_HOST_UNREACHABLE)
    } else {
        icmp::v6(cx, buf, icmp::V6_ADDR_UNREACHABLE)
    }
    cx.out.drop(buf, DropReason::NeighborUnresolved);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The count `len` gives follows pushes, refusals and frees.
    #[test]
    fn len_counts_the_held_packets() {
        let mut holds = Holds::new(2);
        let h = |i: u64| Held {
            buf: Buf::new(i * 2048, 60),
            in_port: 0,
        };
        assert_eq!(holds.len(), 0);
        for i in 0..3 {
            let _ = holds.push(NextHopId(7), 1, 0, h(i), 0);
        }
        assert!(holds.push(NextHopId(8), 1, 1, h(3), 0).is_ok());
        assert_eq!((holds.len(), holds.active()), (3, 2));
        holds.free(0);
        assert_eq!(holds.len(), 1);
        let mut drained = 0;
        holds.drain(|_| drained += 1);
        assert_eq!((drained, holds.len(), holds.active()), (1, 0, 0));
    }
}
