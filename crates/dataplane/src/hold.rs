//! Neighbour resolution on the worker side: per-worker hold queues for
//! packets waiting for an INCOMPLETE entry, solicitations and probes, and
//! the timers that release or give up held packets.
//!
//! A worker has [`HOLD_SLOTS`] slots, each queueing up to
//! `router.hold_packets` packets for one entry *incarnation* (next-hop id +
//! [`NeighEntry::life`](crate::neighbor::NeighEntry::life)): ids outlive
//! the poll round in a hold queue, so a slot notices when the garbage
//! collector removed its entry (and the id was perhaps reused) and gives
//! up instead of sending to whoever holds the id now. Everything is
//! preallocated: holding never allocates.

use crate::drop::DropReason;
use crate::neighbor::{Use, RESOLVE_WINDOW_MS};
use crate::wire::*;
use crate::worker::Worker;
use fib::{NextHopId, NextHopKind};
use netio::Buf;
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
        Ok(())
    }

    fn free(&mut self, s: usize) {
        self.slots[s].q.clear();
        self.slots[s].nh = FREE;
        self.active -= 1;
    }

    pub(crate) fn active(&self) -> usize {
        self.active
    }

    /// Packets held.
    pub(crate) fn len(&self) -> usize {
        self.slots.iter().map(|s| s.q.len()).sum()
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

impl Worker {
    /// Holds `buf` until entry `id` on `port` resolves, and solicits it
    /// (at most once per interval across workers). When the packet cannot
    /// be held the solicitation is still sent, so the next packet finds the
    /// entry resolved.
    pub(crate) fn hold(&mut self, in_port: usize, buf: Buf, id: NextHopId, port: usize) {
        let e = self.shared.neigh(id);
        let life = e.life();
        let solicit = e.try_solicit(self.now_ms);
        let h = Held {
            buf,
            in_port: in_port as u16,
        };
        match self.holds.push(id, life, port, h, self.now_ms) {
            Ok(()) => self.stats.ports[in_port].held.add(1),
            Err(h) => self.drop_buf(h.buf, DropReason::HoldQueueFull),
        }
        if solicit {
            self.solicit(id, port, None);
        }
    }

    /// Sends an ARP request or a neighbor solicitation for next hop `id`:
    /// broadcast / to the solicited-node group, or unicast to `probe` (the
    /// MAC of a STALE entry).
    pub(crate) fn solicit(&mut self, id: NextHopId, port: usize, probe: Option<[u8; 6]>) {
        let NextHopKind::Gateway(ip) = self.nh().get(id).kind else {
            return;
        };
        let pc = &self.shared.ports[port];
        let mac = pc.mac;
        let src = match ip {
            IpAddr::V4(a) => pc.v4_for(a).map(IpAddr::V4),
            IpAddr::V6(a) => pc.v6_for(a).map(IpAddr::V6),
        };
        let Some(src) = src else { return };
        let Some(mut nb) = self.pool.alloc() else {
            self.stats.drop_on(port, DropReason::ReplyNoBuffer, 1);
            return;
        };
        let room = self.pool.room_mut(nb);
        let n = match (src, ip) {
            (IpAddr::V4(s), IpAddr::V4(t)) => {
                build_arp(room, probe.unwrap_or(BROADCAST), 1, mac, s, [0; 6], t)
            }
            (IpAddr::V6(s), IpAddr::V6(t)) => build_ns(room, mac, s, t, probe),
            _ => unreachable!(),
        };
        nb.len = n as u32;
        self.stats.generated.add(1);
        self.send(port, nb);
    }

    /// Releases held packets whose entry resolved, re-solicits, and gives
    /// up (ICMP host/address unreachable) when the resolution failed or the
    /// entry was removed.
    pub(crate) fn timers(&mut self) {
        let timeout = self.shared.neighbor_timeout_ms;
        for s in 0..HOLD_SLOTS {
            let slot = &self.holds.slots[s];
            if slot.nh == FREE {
                continue;
            }
            let (id, port) = (NextHopId(slot.nh), slot.port as usize);
            let e = self.shared.neigh(id);
            let verdict = if e.life() != slot.life {
                Use::Failed
            } else if self.now_ms.saturating_sub(slot.since_ms) >= 2 * RESOLVE_WINDOW_MS {
                // Backstop: never hold longer than two resolution rounds.
                Use::Failed
            } else {
                e.lookup(self.now_ms, timeout)
            };
            match verdict {
                Use::Send(mac) | Use::Probe(mac) => {
                    e.touch(self.now_ms);
                    for j in 0..self.holds.slots[s].q.len() {
                        let buf = self.unhold(self.holds.slots[s].q[j]);
                        self.emit(buf, port, mac);
                    }
                }
                Use::Hold => {
                    if e.try_solicit(self.now_ms) {
                        self.solicit(id, port, None);
                    }
                    continue;
                }
                Use::Failed => {
                    for j in 0..self.holds.slots[s].q.len() {
                        let h = self.holds.slots[s].q[j];
                        let buf = self.unhold(h);
                        self.unreachable(h.in_port as usize, buf);
                    }
                }
            }
            self.holds.free(s);
        }
    }

    /// Drops `buf` as `neighbor_unresolved`, with an ICMP host (address)
    /// unreachable to its source.
    pub(crate) fn unreachable(&mut self, in_port: usize, buf: Buf) {
        match self.pool.data(buf)[12..14] {
            [0x08, 0x00] => self.icmp4_error(in_port, buf, 3, 1, 0),
            _ => self.icmp6_error(in_port, buf, 1, 3, 0),
        }
        self.drop_buf(buf, DropReason::NeighborUnresolved);
    }
}
