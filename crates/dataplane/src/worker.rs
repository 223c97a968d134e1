//! The worker: one thread's queues, pool and pipeline.
//!
//! A round ([`Worker::poll_once`]): for each RX queue, bursts of up to 64
//! frames until the budget is spent; each burst goes through
//! 1. input: Ethernet filter, 802.1Q removal, ARP, IPv4/IPv6 input checks;
//! 2. one bulk FIB lookup per family for the whole burst;
//! 3. forwarding: local delivery or TTL/MTU checks, TTL decrement, ECMP
//!    member choice, neighbor resolution, MAC rewrite, staging per port;
//!
//! then the timers (hold queues, `hold.rs`), TX of every staged burst and a
//! flush of every TX queue, the periodic neighbour collection when it is
//! due, and a QSBR quiescent report (FIB and next-hop ids). Nothing here
//! allocates, locks or makes a system call per packet; the control lock is
//! taken only on the slow path (first packet to a new connected host,
//! ARP/ND learning, the neighbour GC once per interval).
//!
//! The stages live in their own files with narrow interfaces: `input.rs`
//! (pure header checks), `hold.rs` (hold queues, solicitation), `local.rs`
//! (ARP, ND, echo), `icmp.rs` (errors), `frag.rs` (fragmentation).

use crate::drop::DropReason;
use crate::hold::{Held, Holds};
use crate::input;
use crate::neighbor::Use;
use crate::router::Shared;
use crate::stats::{WorkerStats, PORT_COUNTERS_INTERVAL_MS};
use crate::tsc;
use crate::wire::*;
use fib::{Lpm4Reader, Lpm6Reader, NextHopEpoch, NextHopId, NextHopKind, NextHopReader, Target};
use netio::{Buf, Burst, Pool, RxQueue, TxQueue, BURST_SIZE};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::fd::RawFd;
use std::sync::Arc;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    Done,
    V4,
    V6,
}

/// Per-burst scratch state, inline arrays (no allocation).
struct Scratch {
    stage: [Stage; BURST_SIZE],
    bufs: [Buf; BURST_SIZE],
    l2multi: [bool; BURST_SIZE],
    idx4: [u8; BURST_SIZE],
    dst4: [u32; BURST_SIZE],
    res4: [Option<Target>; BURST_SIZE],
    idx6: [u8; BURST_SIZE],
    dst6: [u128; BURST_SIZE],
    res6: [Option<Target>; BURST_SIZE],
}

impl Scratch {
    fn new() -> Box<Scratch> {
        Box::new(Scratch {
            stage: [Stage::Done; BURST_SIZE],
            bufs: [Buf::EMPTY; BURST_SIZE],
            l2multi: [false; BURST_SIZE],
            idx4: [0; BURST_SIZE],
            dst4: [0; BURST_SIZE],
            res4: [None; BURST_SIZE],
            idx6: [0; BURST_SIZE],
            dst6: [0; BURST_SIZE],
            res6: [None; BURST_SIZE],
        })
    }
}

/// One per thread; owns its pool, its RX queues and one private TX queue
/// per port.
pub struct Worker {
    pub(crate) id: usize,
    pub(crate) shared: Arc<Shared>,
    pub(crate) pool: Pool,
    rx: Vec<(usize, Box<dyn RxQueue>)>,
    tx: Vec<Box<dyn TxQueue>>,
    staged: Vec<Burst>,
    lpm4: Lpm4Reader,
    lpm6: Lpm6Reader,
    nh: NextHopReader,
    /// Registration for next-hop id reuse (quiescent once per round).
    nh_epoch: NextHopEpoch,
    pub(crate) stats: Arc<WorkerStats>,
    pub(crate) holds: Holds,
    scratch: Box<Scratch>,
    pub(crate) now_ms: u64,
    clock_offset_ms: u64,
    /// ICMP token bucket, in thousandths of a token.
    pub(crate) icmp_tokens: u64,
    icmp_refill_ms: u64,
    /// The input port of the frame being processed: drops, `forwarded`
    /// and `local` are counted on it (see [`Worker::drop_buf`]).
    pub(crate) cur_port: usize,
    /// When the queues' counters are read next.
    next_counters_ms: u64,
}

impl Worker {
    pub fn new(
        id: usize,
        shared: Arc<Shared>,
        pool: Pool,
        rx: Vec<(usize, Box<dyn RxQueue>)>,
        tx: Vec<Box<dyn TxQueue>>,
    ) -> Worker {
        let (lpm4, lpm6) = {
            let c = shared.control();
            (c.lpm4.reader(), c.lpm6.reader())
        };
        let nh = shared.nh.clone();
        let nh_epoch = nh.register();
        let nports = shared.ports.len();
        let holds = Holds::new(shared.hold_packets as usize);
        let icmp_tokens = u64::from(shared.icmp_rate) * 1000;
        let queues: Vec<(usize, u16)> = rx.iter().map(|(p, q)| (*p, q.queue_id())).collect();
        let mut w = Worker {
            id,
            pool,
            rx,
            tx,
            staged: (0..nports).map(|_| Burst::new()).collect(),
            lpm4,
            lpm6,
            nh,
            nh_epoch,
            stats: Arc::new(WorkerStats::new(id, nports, &queues)),
            holds,
            scratch: Scratch::new(),
            now_ms: 0,
            clock_offset_ms: 0,
            icmp_tokens,
            icmp_refill_ms: 0,
            cur_port: 0,
            next_counters_ms: 0,
            shared,
        };
        w.update_clock();
        w.icmp_refill_ms = w.now_ms;
        w
    }

    /// This worker's index.
    pub fn id(&self) -> usize {
        self.id
    }

    /// Moves this worker's clock forward (tests of solicitation retries
    /// and neighbor aging without sleeping).
    #[doc(hidden)]
    pub fn advance_clock(&mut self, ms: u64) {
        self.clock_offset_ms += ms;
        self.update_clock();
    }

    /// The next-hop table (read side).
    #[inline]
    pub(crate) fn nh(&self) -> &NextHopReader {
        &self.nh
    }

    fn update_clock(&mut self) {
        self.now_ms = self.shared.epoch.elapsed().as_millis() as u64 + self.clock_offset_ms;
    }

    fn refill_icmp(&mut self) {
        let rate = u64::from(self.shared.icmp_rate);
        let dt = self.now_ms.saturating_sub(self.icmp_refill_ms);
        if dt > 0 {
            self.icmp_tokens = (self.icmp_tokens + dt * rate).min(rate * 1000);
            self.icmp_refill_ms = self.now_ms;
        }
    }

    /// One round; returns the packets received.
    pub fn poll_once(&mut self, budget: u32) -> usize {
        self.update_clock();
        self.refill_icmp();
        let mut total = 0usize;
        let mut burst = Burst::new();
        let (mut c_rx, mut c_proc, mut c_tx) = (0u64, 0u64, 0u64);
        for q in 0..self.rx.len() {
            let port = self.rx[q].0;
            let mut left = budget as usize;
            while left > 0 {
                let want = left.min(BURST_SIZE);
                burst.clear();
                let t0 = tsc::now();
                let n = self.rx[q].1.rx_burst_max(&mut self.pool, &mut burst, want);
                let t1 = tsc::now();
                c_rx += t1 - t0;
                if n == 0 {
                    break;
                }
                self.process_burst(port, burst.as_slice());
                c_proc += tsc::now() - t1;
                total += n;
                left -= n;
                if n < want {
                    break;
                }
            }
        }
        let t0 = tsc::now();
        if self.holds.active() > 0 {
            self.timers();
        }
        let t1 = tsc::now();
        for p in 0..self.tx.len() {
            self.flush_port(p);
            self.tx[p].flush(&mut self.pool);
        }
        let t2 = tsc::now();
        c_proc += t1 - t0;
        c_tx += t2 - t1;
        self.shared.maybe_gc(self.now_ms);
        self.lpm4.quiescent();
        self.lpm6.quiescent();
        self.nh_epoch.quiescent();
        if self.now_ms >= self.next_counters_ms {
            self.refresh_port_counters();
        }
        if let Some(ticket) = self.stats.pending_request() {
            // Between two rounds every frame is in exactly one bucket.
            self.refresh_port_counters();
            self.stats.publish(ticket, self.stats.snapshot());
        }
        if total > 0 {
            let s = &self.stats;
            s.cycles_rx.add(c_rx);
            s.cycles_process.add(c_proc);
            s.cycles_tx.add(c_tx);
            s.cycles_packets.add(total as u64);
        }
        total
    }

    /// Reads every queue's counters (frames lost before the worker saw
    /// them, kernel drops: may be a system call per queue) into the
    /// statistics. Done every [`PORT_COUNTERS_INTERVAL_MS`] at the end of
    /// a round, on a snapshot request and at shutdown; tests call it before
    /// reading a snapshot.
    pub fn refresh_port_counters(&mut self) {
        for (i, (_, q)) in self.rx.iter_mut().enumerate() {
            let c = q.counters();
            self.stats.set_rx_queue(i, &c);
        }
        for (p, t) in self.tx.iter_mut().enumerate() {
            let c = t.counters();
            self.stats.set_tx_queue(p, &c);
        }
        self.next_counters_ms = self.now_ms + PORT_COUNTERS_INTERVAL_MS;
    }

    /// True when every RX queue is exhausted (capture inputs).
    pub fn inputs_exhausted(&self) -> bool {
        self.rx.iter().all(|(_, q)| q.exhausted())
    }

    /// Held packets plus frames staged or in flight on TX queues.
    pub fn pending(&self) -> usize {
        let held = self.holds.len();
        let staged: usize = self.staged.iter().map(|b| b.len()).sum();
        let flight: usize = self.tx.iter().map(|t| t.in_flight()).sum();
        held + staged + flight
    }

    pub fn wait_fds(&self) -> Vec<RawFd> {
        self.rx.iter().filter_map(|(_, q)| q.wait_fd()).collect()
    }

    pub fn stats(&self) -> Arc<WorkerStats> {
        self.stats.clone()
    }

    /// Drops held packets (counted `held_at_shutdown`), sends what is
    /// staged, releases queue-held buffers, reads the queues' counters a
    /// last time (frames left unread in a ring included) and returns the
    /// pool.
    pub fn shutdown(mut self) -> Pool {
        // `drop_held` needs the worker: the queues are taken out first.
        let mut holds = std::mem::replace(&mut self.holds, Holds::new(0));
        holds.drain(|h| self.drop_held(h, DropReason::HeldAtShutdown));
        for p in 0..self.tx.len() {
            self.flush_port(p);
        }
        for _ in 0..1000 {
            let mut flight = 0;
            for t in self.tx.iter_mut() {
                t.flush(&mut self.pool);
                flight += t.in_flight();
            }
            if flight == 0 {
                break;
            }
            std::thread::yield_now();
        }
        for t in self.tx.iter_mut() {
            t.release(&mut self.pool);
        }
        for (_, q) in self.rx.iter_mut() {
            q.release(&mut self.pool);
        }
        self.refresh_port_counters();
        self.stats.stopped();
        self.pool
    }

    // ---- TX ---------------------------------------------------------

    /// Stages `buf` for `port` (sending the staged burst when full).
    #[inline]
    pub(crate) fn send(&mut self, port: usize, buf: Buf) {
        if self.staged[port].is_full() {
            self.flush_port(port);
        }
        let _ = self.staged[port].push(buf);
    }

    fn flush_port(&mut self, port: usize) {
        let staged = &mut self.staged[port];
        if staged.is_empty() {
            return;
        }
        let bufs = staged.as_slice();
        let mut bytes = 0u64;
        for b in bufs {
            bytes += u64::from(b.len);
        }
        let n = self.tx[port].tx_burst(&mut self.pool, bufs);
        let ps = &self.stats.ports[port];
        if n < bufs.len() {
            for b in &bufs[n..] {
                bytes -= u64::from(b.len);
                self.pool.free(*b);
            }
            self.stats
                .drop_on(port, DropReason::TxFull, (bufs.len() - n) as u64);
        }
        ps.tx_packets.add(n as u64);
        ps.tx_bytes.add(bytes);
        staged.clear();
    }

    // ---- counting ------------------------------------------------------
    //
    // Every received frame ends in one bucket of its input port (see
    // `stats`). The pipeline counts on `self.cur_port`, which is the input
    // port of the frame being processed: `process_burst` sets it for a
    // burst, `unhold` for each packet taken out of a hold queue (`timers`
    // in hold.rs, `shutdown`: `Held::in_port`). Code that ends a frame
    // outside those (a new timer, a table flush) sets it first, or goes
    // through `unhold` / `drop_held`.

    /// Frees `buf` and counts it dropped for `r` on the current input port.
    #[inline]
    pub(crate) fn drop_buf(&mut self, buf: Buf, r: DropReason) {
        self.pool.free(buf);
        self.count_drop(r);
    }

    /// Counts `r` on the current input port (no buffer to free: ICMP
    /// errors not generated, which are about the current frame).
    #[inline]
    pub(crate) fn count_drop(&self, r: DropReason) {
        self.stats.drop_on(self.cur_port, r, 1);
    }

    /// Counts the current frame forwarded.
    #[inline]
    pub(crate) fn count_forwarded(&self) {
        self.stats.ports[self.cur_port].forwarded.add(1);
    }

    /// Counts the current frame consumed by the router.
    #[inline]
    pub(crate) fn count_local(&self) {
        self.stats.ports[self.cur_port].local.add(1);
    }

    /// Takes a packet out of a hold queue: no longer `held`, and from
    /// here on counted on its input port (which becomes the current one).
    pub(crate) fn unhold(&mut self, h: Held) -> Buf {
        self.cur_port = h.in_port as usize;
        self.stats.ports[self.cur_port].held.sub(1);
        h.buf
    }

    /// Drops a packet taken out of a hold queue (no longer `held`).
    pub(crate) fn drop_held(&mut self, h: Held, r: DropReason) {
        let buf = self.unhold(h);
        self.drop_buf(buf, r);
    }

    // ---- pipeline -----------------------------------------------------

    fn process_burst(&mut self, in_port: usize, bufs: &[Buf]) {
        self.cur_port = in_port;
        let ps = &self.stats.ports[in_port];
        let mut bytes = 0u64;
        for b in bufs {
            bytes += u64::from(b.len);
        }
        ps.rx_packets.add(bufs.len() as u64);
        ps.rx_bytes.add(bytes);

        // 1. input
        let (mut n4, mut n6) = (0usize, 0usize);
        for (i, &b) in bufs.iter().enumerate() {
            let (stage, buf, multi) = self.input(in_port, b);
            let s = &mut *self.scratch;
            s.stage[i] = stage;
            s.bufs[i] = buf;
            s.l2multi[i] = multi;
            match stage {
                Stage::V4 => {
                    let d = self.pool.data(buf);
                    s.dst4[n4] = get32(d, ETH_LEN + 16);
                    s.idx4[n4] = i as u8;
                    n4 += 1;
                }
                Stage::V6 => {
                    let d = self.pool.data(buf);
                    s.dst6[n6] = get128(d, ETH_LEN + 24);
                    s.idx6[n6] = i as u8;
                    n6 += 1;
                }
                Stage::Done => {}
            }
        }
        // 2. bulk lookups
        {
            let s = &mut *self.scratch;
            if n4 > 0 {
                self.lpm4.lookup_bulk(&s.dst4[..n4], &mut s.res4[..n4]);
            }
            if n6 > 0 {
                self.lpm6.lookup_bulk(&s.dst6[..n6], &mut s.res6[..n6]);
            }
        }
        // 3. forwarding, in arrival order per family
        for k in 0..n4 {
            let i = self.scratch.idx4[k] as usize;
            let (buf, multi, t) = (
                self.scratch.bufs[i],
                self.scratch.l2multi[i],
                self.scratch.res4[k],
            );
            self.forward_v4(in_port, buf, multi, t);
        }
        for k in 0..n6 {
            let i = self.scratch.idx6[k] as usize;
            let (buf, multi, t) = (
                self.scratch.bufs[i],
                self.scratch.l2multi[i],
                self.scratch.res6[k],
            );
            self.forward_v6(in_port, buf, multi, t);
        }
    }

    /// Ethernet and IP input checks (`input.rs`). Returns the stage the
    /// packet goes on to, its (possibly untagged/trimmed) descriptor and
    /// whether it came as a link-layer broadcast/multicast.
    fn input(&mut self, in_port: usize, mut buf: Buf) -> (Stage, Buf, bool) {
        let port = &self.shared.ports[in_port];
        let d = self.pool.data(buf);
        if d.len() < ETH_LEN {
            self.drop_buf(buf, DropReason::TruncatedFrame);
            return (Stage::Done, buf, false);
        }
        let dst = mac_at(d, 0);
        let multi = dst[0] & 1 != 0;
        if !input::accepts_mac(port, dst) {
            self.drop_buf(buf, DropReason::OtherHostMac);
            return (Stage::Done, buf, false);
        }
        if d[6] & 1 != 0 {
            // Nothing may be sent back to a group address (replies, ICMP).
            self.drop_buf(buf, DropReason::L2MulticastSource);
            return (Stage::Done, buf, multi);
        }
        let mut et = get16(d, 12);
        if et == ETH_VLAN {
            if d.len() < ETH_LEN + 4 {
                self.drop_buf(buf, DropReason::TruncatedFrame);
                return (Stage::Done, buf, false);
            }
            et = get16(d, 16);
            let dm = self.pool.data_mut(buf);
            dm.copy_within(0..12, 4);
            buf.addr += 4;
            buf.len -= 4;
        }
        match et {
            ETH_IPV4 => self.input_v4(in_port, buf, multi),
            ETH_IPV6 => self.input_v6(in_port, buf, multi),
            ETH_ARP => {
                self.arp(in_port, buf);
                (Stage::Done, buf, multi)
            }
            _ => {
                self.drop_buf(buf, DropReason::UnsupportedEthertype);
                (Stage::Done, buf, multi)
            }
        }
    }

    fn input_v4(&mut self, in_port: usize, mut buf: Buf, multi: bool) -> (Stage, Buf, bool) {
        match input::check_v4(&self.pool.data(buf)[ETH_LEN..]) {
            Ok(total) => {
                buf.len = (ETH_LEN + total) as u32;
                (Stage::V4, buf, multi)
            }
            Err(r) => {
                if let Some(ptr) = r.pointer {
                    // Parameter Problem, pointer to the bad octet (RFC 1812
                    // 4.3.2.5); rate-limited like every ICMP error.
                    self.icmp4_error(in_port, buf, 12, 0, u32::from(ptr) << 24);
                }
                self.drop_buf(buf, r.reason);
                (Stage::Done, buf, multi)
            }
        }
    }

    fn input_v6(&mut self, in_port: usize, mut buf: Buf, multi: bool) -> (Stage, Buf, bool) {
        match input::check_v6(&self.pool.data(buf)[ETH_LEN..]) {
            Ok((plen, dst)) => {
                buf.len = (ETH_LEN + 40 + plen) as u32;
                if dst >> 120 == 0xff {
                    let dst = Ipv6Addr::from(dst);
                    let port = &self.shared.ports[in_port];
                    if dst == Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 1)
                        || port.v6.iter().any(|(a, _)| solicited_node(*a) == dst)
                    {
                        self.local_v6(in_port, buf, true);
                    } else {
                        self.drop_buf(buf, DropReason::Ipv6MulticastDestination);
                    }
                    return (Stage::Done, buf, multi);
                }
                (Stage::V6, buf, multi)
            }
            Err(reason) => {
                self.drop_buf(buf, reason);
                (Stage::Done, buf, multi)
            }
        }
    }

    #[inline]
    fn next_hop(&self, t: Target, hash: impl FnOnce() -> u32) -> NextHopId {
        if t.is_group() {
            self.nh.resolve(t, hash())
        } else {
            NextHopId(t.index())
        }
    }

    fn forward_v4(&mut self, in_port: usize, buf: Buf, multi: bool, t: Option<Target>) {
        let Some(t) = t else {
            self.icmp4_error(in_port, buf, 3, 0, 0);
            self.drop_buf(buf, DropReason::NoRoute);
            return;
        };
        let d = &self.pool.data(buf)[ETH_LEN..];
        let id = self.next_hop(t, || flow_hash_v4(d));
        let nh = self.nh.get(id);
        let mut id = id;
        match nh.kind {
            NextHopKind::Local => return self.local_v4(in_port, buf),
            NextHopKind::Blackhole => return self.drop_buf(buf, DropReason::Blackhole),
            _ => {}
        }
        if multi {
            return self.drop_buf(buf, DropReason::L2BroadcastNotLocal);
        }
        let d = &self.pool.data(buf)[ETH_LEN..];
        if d[8] <= 1 {
            self.icmp4_error(in_port, buf, 11, 0, 0);
            return self.drop_buf(buf, DropReason::TtlExceeded);
        }
        let port = nh.port as usize;
        let Some(pc) = self.shared.ports.get(port) else {
            return self.drop_buf(buf, DropReason::BadPort);
        };
        let mtu = pc.mtu as usize;
        if d.len() > mtu && get16(d, 6) & 0x4000 != 0 {
            self.icmp4_error(in_port, buf, 3, 4, mtu as u32);
            return self.drop_buf(buf, DropReason::FragNeeded);
        }
        if nh.kind == NextHopKind::Connected {
            let dst = Ipv4Addr::from(get32(d, 16));
            if pc.subnet_special_v4(dst) {
                // RFC 2644 / RFC 1812 4.2.2.11: directed broadcasts are
                // not forwarded by default, and never resolved as a host.
                return self.drop_buf(buf, DropReason::DirectedBroadcast);
            }
            match self
                .shared
                .connected_entry(port, IpAddr::V4(dst), self.now_ms)
            {
                Ok(h) => id = h,
                Err(r) => return self.drop_buf(buf, r),
            }
        }
        let ihl = (d[0] & 0xf) as usize * 4;
        ipv4_dec_ttl(&mut self.pool.data_mut(buf)[ETH_LEN..ETH_LEN + ihl]);
        self.send_to_neighbor(in_port, buf, id, port);
    }

    fn forward_v6(&mut self, in_port: usize, buf: Buf, multi: bool, t: Option<Target>) {
        let Some(t) = t else {
            self.icmp6_error(in_port, buf, 1, 0, 0);
            self.drop_buf(buf, DropReason::NoRoute);
            return;
        };
        let d = &self.pool.data(buf)[ETH_LEN..];
        let id = self.next_hop(t, || flow_hash_v6(d));
        let nh = self.nh.get(id);
        let mut id = id;
        match nh.kind {
            NextHopKind::Local => return self.local_v6(in_port, buf, false),
            NextHopKind::Blackhole => return self.drop_buf(buf, DropReason::Blackhole),
            _ => {}
        }
        if multi {
            return self.drop_buf(buf, DropReason::L2BroadcastNotLocal);
        }
        let d = &self.pool.data(buf)[ETH_LEN..];
        let src = get128(d, 8);
        let dst = get128(d, 24);
        if src == 0 {
            return self.drop_buf(buf, DropReason::Ipv6BadSource);
        }
        if src >> 118 == 0x3fa || dst >> 118 == 0x3fa {
            return self.drop_buf(buf, DropReason::Ipv6LinkLocalScope);
        }
        if d[7] <= 1 {
            self.icmp6_error(in_port, buf, 3, 0, 0);
            return self.drop_buf(buf, DropReason::HopLimitExceeded);
        }
        let port = nh.port as usize;
        let Some(pc) = self.shared.ports.get(port) else {
            return self.drop_buf(buf, DropReason::BadPort);
        };
        let mtu = pc.mtu as usize;
        if d.len() > mtu {
            self.icmp6_error(in_port, buf, 2, 0, mtu as u32);
            return self.drop_buf(buf, DropReason::PacketTooBig);
        }
        if nh.kind == NextHopKind::Connected {
            let dst = Ipv6Addr::from(dst);
            if pc.subnet_special_v6(dst) {
                return self.drop_buf(buf, DropReason::SubnetRouterAnycast);
            }
            match self
                .shared
                .connected_entry(port, IpAddr::V6(dst), self.now_ms)
            {
                Ok(h) => id = h,
                Err(r) => return self.drop_buf(buf, r),
            }
        }
        self.pool.data_mut(buf)[ETH_LEN + 7] -= 1;
        self.send_to_neighbor(in_port, buf, id, port);
    }

    /// Sends `buf` to next hop `id` on `port`, or holds it until the
    /// neighbor is resolved (see [`crate::neighbor`] for the states).
    #[inline]
    fn send_to_neighbor(&mut self, in_port: usize, buf: Buf, id: NextHopId, port: usize) {
        let e = self.shared.neigh(id);
        match e.lookup(self.now_ms, self.shared.neighbor_timeout_ms) {
            Use::Send(mac) => {
                e.touch(self.now_ms);
                self.emit(buf, port, mac)
            }
            Use::Probe(mac) => {
                e.touch(self.now_ms);
                if e.try_solicit(self.now_ms) {
                    self.solicit(id, port, Some(mac));
                }
                self.emit(buf, port, mac)
            }
            Use::Hold => self.hold(in_port, buf, id, port),
            Use::Failed => {
                if e.restart(self.now_ms, self.shared.neighbor_timeout_ms)
                    || (!e.is_dynamic()
                        && e.lookup(self.now_ms, self.shared.neighbor_timeout_ms) == Use::Hold)
                {
                    // A permanent entry (gateway, pinned) starts over.
                    self.hold(in_port, buf, id, port)
                } else {
                    // A failed or removed dynamic entry: dropped until
                    // the collector removes it.
                    self.unreachable(in_port, buf)
                }
            }
        }
    }

    /// MAC rewrite and staging (fragmenting IPv4 larger than the MTU);
    /// counts the packet forwarded.
    #[inline]
    pub(crate) fn emit(&mut self, buf: Buf, port: usize, mac: [u8; 6]) {
        let pc = &self.shared.ports[port];
        let (src, mtu) = (pc.mac, pc.mtu as usize);
        if buf.len as usize > ETH_LEN + mtu {
            // Only IPv4 without DF gets here (checked before).
            return self.fragment(buf, port, mac);
        }
        let d = self.pool.data_mut(buf);
        d[0..6].copy_from_slice(&mac);
        d[6..12].copy_from_slice(&src);
        self.count_forwarded();
        self.send(port, buf);
    }
}

/// ECMP flow hash of an IPv4 packet: 5-tuple for unfragmented TCP/UDP,
/// 3-tuple (addresses + protocol) otherwise.
#[inline]
pub fn flow_hash_v4(ip: &[u8]) -> u32 {
    let ihl = (ip[0] & 0xf) as usize * 4;
    let proto = ip[9];
    let frag = get16(ip, 6) & 0x3fff != 0;
    let (sp, dp) = if (proto == PROTO_TCP || proto == PROTO_UDP) && !frag && ip.len() >= ihl + 4 {
        (get16(ip, ihl), get16(ip, ihl + 2))
    } else {
        (0, 0)
    };
    fib::flow_hash_v4(get32(ip, 12), get32(ip, 16), proto, sp, dp)
}

/// ECMP flow hash of an IPv6 packet: 5-tuple when TCP/UDP directly
/// follows the fixed header, 3-tuple otherwise.
#[inline]
pub fn flow_hash_v6(ip: &[u8]) -> u32 {
    let next = ip[6];
    let (sp, dp) = if (next == PROTO_TCP || next == PROTO_UDP) && ip.len() >= 44 {
        (get16(ip, 40), get16(ip, 42))
    } else {
        (0, 0)
    };
    fib::flow_hash_v6(get128(ip, 8), get128(ip, 24), next, sp, dp)
}
