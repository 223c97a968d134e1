//! The worker: one thread's queues, pool and pipeline, run to completion.
//!
//! A round ([`Worker::poll_once`]): for each RX queue, bursts of up to 64
//! frames until the budget is spent; each burst goes through
//! 1. input (`input.rs`): Ethernet filter, 802.1Q removal, IPv4/IPv6 header
//!    checks; ARP and IPv6 multicast to the router go to local delivery;
//! 2. one bulk FIB lookup per family for the whole burst (here);
//! 3. forwarding (`forward.rs`): local delivery (`local.rs`) or TTL/MTU
//!    checks, TTL decrement, ECMP member choice, neighbour resolution
//!    (`hold.rs`), MAC rewrite (fragmenting, `frag.rs`), staging per port;
//!
//! then the hold-queue timers (`hold.rs`), TX of every staged burst and a
//! flush of every TX queue, the periodic neighbour collection when it is
//! due, and a QSBR quiescent report (FIB and next-hop ids). Nothing here
//! allocates, locks or makes a system call per packet; the control lock is
//! taken only on the slow path (first packet to a new connected host,
//! ARP/ND learning, the neighbour GC once per interval).
//!
//! Stages do not see the worker. Each gets what it needs in a [`Cx`]
//! (`cx.rs`): the read-only routing state and the time, and an [`Out`]
//! (the pool, the TX staging of `tx.rs` and the counters of the frame's
//! input port); the worker owns the state stages keep (`Holds` of
//! `hold.rs`, the ICMP token bucket of `tokens.rs`) and lends it to them.
//! This file keeps the round loop, RX and the bulk lookups; the stages run
//! one way, input -> forward -> hold -> output -> TX staging.

use crate::cx::{Cx, Out};
use crate::drop::DropReason;
use crate::forward;
use crate::hold::{self, Holds};
use crate::input::{self, Next};
use crate::shared::{PortCtx, Shared};
use crate::stats::{WorkerStats, PORT_COUNTERS_INTERVAL_MS};
use crate::tokens::TokenBucket;
use crate::tsc;
use crate::tx::Tx;
use fib::{Lpm4Reader, Lpm6Reader, NextHopEpoch, NextHopReader, Target};
use netio::{Buf, Burst, Pool, RxQueue, TxQueue, BURST_SIZE};
use packet::ethernet::ETH_LEN;
use std::os::fd::RawFd;
use std::sync::Arc;

/// How many frames ahead of the one in the input stage the worker
/// prefetches headers (l3fwd's `PREFETCH_OFFSET` is 3; a frame's checks
/// take long enough that 4 ahead arrive in time).
const PREFETCH: usize = 4;

/// The per-stage cycle counters (`cycles_rx`, `_process`, `_tx` and
/// `_packets`) are taken on one poll round with packets in this many (the
/// first, the 17th, ...; after an empty timed round the next is timed):
/// a round reads the TSC five or six times (at each stage's end), and a
/// read costs tens of cycles in a VM (measured: timing every round cost
/// about one cycle a packet at 64 packets a round). The sampled rounds'
/// cycles per packet are the pipeline's as well as all rounds' are.
const STAGE_SAMPLE: u64 = 16;

/// Per-burst scratch state for the bulk lookups, per family in arrival
/// order; inline arrays (no allocation).
struct Scratch {
    /// The burst being received and processed (kept here: a `Burst` is
    /// 1 KiB, not to be initialised on the stack every round).
    rx: Burst,
    bufs4: [Buf; BURST_SIZE],
    multi4: [bool; BURST_SIZE],
    dst4: [u32; BURST_SIZE],
    res4: [Option<Target>; BURST_SIZE],
    bufs6: [Buf; BURST_SIZE],
    multi6: [bool; BURST_SIZE],
    dst6: [u128; BURST_SIZE],
    res6: [Option<Target>; BURST_SIZE],
}

impl Scratch {
    fn new() -> Box<Scratch> {
        Box::new(Scratch {
            rx: Burst::new(),
            bufs4: [Buf::EMPTY; BURST_SIZE],
            multi4: [false; BURST_SIZE],
            dst4: [0; BURST_SIZE],
            res4: [None; BURST_SIZE],
            bufs6: [Buf::EMPTY; BURST_SIZE],
            multi6: [false; BURST_SIZE],
            dst6: [0; BURST_SIZE],
            res6: [None; BURST_SIZE],
        })
    }
}

/// One per thread; owns its pool, its RX queues and one private TX queue
/// per port.
pub struct Worker {
    id: usize,
    shared: Arc<Shared>,
    pool: Pool,
    rx: Vec<(usize, Box<dyn RxQueue>)>,
    tx: Tx,
    lpm4: Lpm4Reader,
    lpm6: Lpm6Reader,
    nh: NextHopReader,
    /// Registration for next-hop id reuse (quiescent once per round).
    nh_epoch: NextHopEpoch,
    stats: Arc<WorkerStats>,
    holds: Holds,
    icmp: TokenBucket,
    scratch: Box<Scratch>,
    now_ms: u64,
    clock_offset_ms: u64,
    /// When the queues' counters are read next.
    next_counters_ms: u64,
    /// Poll rounds that received packets so far (which rounds are
    /// timed: [`STAGE_SAMPLE`]).
    busy_rounds: u64,
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
        let queues: Vec<(usize, u16)> = rx.iter().map(|(p, q)| (*p, q.queue_id())).collect();
        let mut w = Worker {
            id,
            pool,
            rx,
            tx: Tx {
                staged: (0..tx.len()).map(|_| Burst::new()).collect(),
                queues: tx,
                shared: shared.tx_locks.is_some().then(|| shared.clone()),
            },
            lpm4,
            lpm6,
            nh,
            nh_epoch,
            stats: Arc::new(WorkerStats::new(id, nports, &queues)),
            holds: Holds::new(shared.hold_packets as usize),
            icmp: TokenBucket::new(shared.icmp_rate),
            scratch: Scratch::new(),
            now_ms: 0,
            clock_offset_ms: 0,
            next_counters_ms: 0,
            busy_rounds: 0,
            shared,
        };
        w.update_clock();
        w.icmp.start(w.now_ms);
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

    fn update_clock(&mut self) {
        self.now_ms = self.shared.epoch.elapsed().as_millis() as u64 + self.clock_offset_ms;
    }

    /// One round; returns the packets received.
    pub fn poll_once(&mut self, budget: u32) -> usize {
        self.update_clock();
        self.icmp.refill(self.now_ms);
        let mut total = 0usize;
        let (mut c_rx, mut c_proc, mut c_tx) = (0u64, 0u64, 0u64);
        // One time stamp between two steps (each ends where the next
        // begins), on sampled rounds only: a read of the TSC costs tens of
        // cycles in a VM. The other rounds' stamps are all 0.
        let timed = self.busy_rounds.is_multiple_of(STAGE_SAMPLE);
        let stamp = || if timed { tsc::now() } else { 0 };
        let mut t = stamp();
        for q in 0..self.rx.len() {
            let port = self.rx[q].0;
            let mut left = budget as usize;
            while left > 0 {
                let want = left.min(BURST_SIZE);
                let burst = &mut self.scratch.rx;
                burst.clear();
                let n = self.rx[q].1.rx_burst(&mut self.pool, burst, want);
                let t1 = stamp();
                c_rx += t1 - t;
                t = t1;
                if n == 0 {
                    break;
                }
                self.process_burst(port);
                let t2 = stamp();
                c_proc += t2 - t;
                t = t2;
                total += n;
                left -= n;
                if n < want {
                    break;
                }
            }
        }
        if self.holds.active() > 0 {
            let out = Out::new(&mut self.pool, &mut self.tx, &self.stats, 0);
            let mut cx = Cx::new(&self.shared, self.now_ms, out, &mut self.icmp);
            self.holds.timers(&mut cx, &self.nh);
        }
        let t1 = stamp();
        self.tx.flush(&mut self.pool, &self.stats);
        let t2 = stamp();
        c_proc += t1 - t;
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
        self.busy_rounds += u64::from(total > 0);
        if timed && total > 0 {
            let s = &self.stats;
            s.cycles_rx.add(c_rx);
            s.cycles_process.add(c_proc);
            s.cycles_tx.add(c_tx);
            s.cycles_packets.add(total as u64);
        }
        total
    }

    /// Input, bulk lookups and forwarding of the burst just received
    /// (`scratch.rx`).
    fn process_burst(&mut self, in_port: usize) {
        let s = &mut *self.scratch;
        let bufs = s.rx.as_slice();
        let ps = &self.stats.ports[in_port];
        let mut bytes = 0u64;
        for b in bufs {
            bytes += u64::from(b.len);
        }
        ps.rx_packets.add(bufs.len() as u64);
        ps.rx_bytes.add(bytes);
        if let Some(xc) = &self.shared.cross_connect {
            let mut o = Out::new(&mut self.pool, &mut self.tx, &self.stats, in_port);
            return cross_connect(&mut o, &self.shared.ports[xc[in_port]], xc[in_port], bufs);
        }

        let out = Out::new(&mut self.pool, &mut self.tx, &self.stats, in_port);
        let mut cx = Cx::new(&self.shared, self.now_ms, out, &mut self.icmp);
        // 1. input, the headers of the frame PREFETCH ahead on their way
        // into the cache meanwhile (as l3fwd)
        for &b in bufs.iter().take(PREFETCH) {
            cx.out.pool.prefetch(b);
        }
        let mac = self.shared.ports[in_port].mac;
        let (mut n4, mut n6) = (0usize, 0usize);
        for (i, &b) in bufs.iter().enumerate() {
            if let Some(&ahead) = bufs.get(i + PREFETCH) {
                cx.out.pool.prefetch(ahead);
            }
            match input::frame(&mut cx, mac, b) {
                Next::V4 { buf, multi, dst } => {
                    // A large table's entry misses the cache: fetch it
                    // while the next frames are checked.
                    self.lpm4.prefetch(dst);
                    s.dst4[n4] = dst;
                    s.bufs4[n4] = buf;
                    s.multi4[n4] = multi;
                    n4 += 1;
                }
                Next::V6 { buf, multi, dst } => {
                    s.dst6[n6] = dst;
                    s.bufs6[n6] = buf;
                    s.multi6[n6] = multi;
                    n6 += 1;
                }
                Next::Done => {}
            }
        }
        // 2. bulk lookups
        if n4 > 0 {
            self.lpm4.lookup_bulk(&s.dst4[..n4], &mut s.res4[..n4]);
        }
        if n6 > 0 {
            self.lpm6.lookup_bulk(&s.dst6[..n6], &mut s.res6[..n6]);
        }
        // 3. forwarding, in arrival order per family
        let nh = &self.nh;
        for k in 0..n4 {
            let (buf, multi, t) = (s.bufs4[k], s.multi4[k], s.res4[k]);
            forward::v4(&mut cx, nh, &mut self.holds, buf, multi, t);
        }
        for k in 0..n6 {
            let (buf, multi, t) = (s.bufs6[k], s.multi6[k], s.res6[k]);
            forward::v6(&mut cx, nh, &mut self.holds, buf, multi, t);
        }
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
        for (p, t) in self.tx.queues.iter_mut().enumerate() {
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
        self.holds.len() + self.tx.pending()
    }

    /// Before a long sleep between rounds: the worker holds no pointer into
    /// the FIB and no next-hop id (held packets check theirs for reuse), so
    /// the FIB's writer need not wait for it to reuse what it retires; see
    /// `fib`'s QSBR. [`Worker::online`] before the next round.
    pub fn offline(&self) {
        self.lpm4.offline();
        self.lpm6.offline();
        self.nh_epoch.offline();
    }

    /// After [`Worker::offline`]'s sleep, before the next round.
    pub fn online(&self) {
        self.lpm4.online();
        self.lpm6.online();
        self.nh_epoch.online();
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
        let mut out = Out::new(&mut self.pool, &mut self.tx, &self.stats, 0);
        self.holds.drain(|h| {
            let buf = hold::unhold(&mut out, h);
            out.drop(buf, DropReason::HeldAtShutdown);
        });
        drop(out);
        self.tx.drain(&mut self.pool, &self.stats);
        for (_, q) in self.rx.iter_mut() {
            q.release(&mut self.pool);
        }
        self.refresh_port_counters();
        self.stats.stopped();
        self.pool
    }
}

/// `forwarding = "cross-connect"`: every frame of `bufs` out of the paired
/// port `out` (`pc`), its source MAC the output port's (as DPDK l2fwd),
/// nothing else read or written: the cost of the I/O alone.
fn cross_connect(o: &mut Out, pc: &PortCtx, out: usize, bufs: &[Buf]) {
    for &b in bufs {
        let f = o.pool.data_mut(b);
        if f.len() < ETH_LEN {
            o.drop(b, DropReason::TruncatedFrame);
            continue;
        }
        f[6..12].copy_from_slice(&pc.mac);
        o.count_forwarded();
        o.send(out, b);
    }
}
