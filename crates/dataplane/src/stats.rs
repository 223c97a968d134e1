//! Per-worker counters and their snapshots.
//!
//! Each worker owns one [`WorkerStats`]; it is the only writer, and updates
//! with a Relaxed load + Relaxed store (plain `mov`s on x86, no
//! lock-prefixed read-modify-write). Other threads read at any time through
//! [`WorkerStats::snapshot`], or ask the worker for a snapshot taken between
//! two of its rounds ([`WorkerStats::request_snapshot`] /
//! [`WorkerStats::wait_snapshot`]), which is consistent: every frame is in
//! exactly one bucket. Snapshots of several workers are summed with
//! [`StatsSnapshot::merge`].
//!
//!
//! Every frame that reaches a port ends in exactly one bucket of that
//! (input) port; [`crate::accounting`] states the identities between the
//! counters and checks them.

use crate::accounting::accounting_violations;
use crate::drop::DropReason;
use netio::{CounterKind, QueueCounter, QueueCounters};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Acquire, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The snapshot's types are data that crosses to readers without the
/// datapath (the statistics file): they live in the `schema` crate, and
/// are named here too so the datapath's paths stay as they were.
pub use schema::stats::{CounterName, PortCounters, RxQueueReport, StageCycles, StatsSnapshot};

/// How often a worker reads its queues' counters (kernel statistics cost a
/// system call per queue): at the end of a round, at most this often.
pub const PORT_COUNTERS_INTERVAL_MS: u64 = 100;

/// A single-writer counter.
#[derive(Default)]
#[repr(transparent)]
pub struct Counter(AtomicU64);

impl Counter {
    #[inline(always)]
    pub fn add(&self, n: u64) {
        self.0.store(self.0.load(Relaxed).wrapping_add(n), Relaxed);
    }
    #[inline(always)]
    pub fn sub(&self, n: u64) {
        self.0.store(self.0.load(Relaxed).wrapping_sub(n), Relaxed);
    }
    #[inline(always)]
    pub fn set(&self, n: u64) {
        self.0.store(n, Relaxed);
    }
    #[inline(always)]
    pub fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

fn counters(n: usize) -> Box<[Counter]> {
    (0..n).map(|_| Counter::default()).collect()
}

/// One port's counters in one worker. Input-side counters (`forwarded`,
/// `local`, `held`, input reasons in `drops`) are by input port; output
/// reasons by the port the frame would have left by.
pub struct PortStats {
    pub rx_packets: Counter,
    pub tx_packets: Counter,
    pub rx_bytes: Counter,
    pub tx_bytes: Counter,
    pub forwarded: Counter,
    pub local: Counter,
    pub held: Counter,
    /// Indexed by [`DropReason`].
    pub drops: Box<[Counter]>,
    /// The worker's TX queue on this port ([`netio::TxQueue::counters`]),
    /// indexed by [`QueueCounter`].
    pub tx_queue: Box<[Counter]>,
}

impl Default for PortStats {
    fn default() -> Self {
        PortStats {
            rx_packets: Counter::default(),
            tx_packets: Counter::default(),
            rx_bytes: Counter::default(),
            tx_bytes: Counter::default(),
            forwarded: Counter::default(),
            local: Counter::default(),
            held: Counter::default(),
            drops: counters(DropReason::COUNT),
            tx_queue: counters(QueueCounter::COUNT),
        }
    }
}

/// The counters of one RX queue of a worker ([`netio::RxQueue::counters`]).
pub struct RxQueueStats {
    pub port: usize,
    pub queue: u16,
    /// Indexed by [`QueueCounter`].
    pub counters: Box<[Counter]>,
}

fn store(into: &[Counter], from: &QueueCounters) {
    for (c, v) in from.iter() {
        into[c as usize].set(v);
    }
}

/// One worker's counters.
pub struct WorkerStats {
    pub worker: usize,
    pub ports: Box<[PortStats]>,
    pub rx_queues: Box<[RxQueueStats]>,
    pub generated: Counter,
    pub fragmented: Counter,
    pub fragments: Counter,
    pub cycles_rx: Counter,
    pub cycles_process: Counter,
    pub cycles_tx: Counter,
    pub cycles_packets: Counter,
    /// Snapshot requests made / served (see [`WorkerStats::request_snapshot`]).
    requested: AtomicU64,
    served: AtomicU64,
    published: Mutex<Option<StatsSnapshot>>,
    /// False once the worker has shut down: its counters no longer move.
    running: AtomicBool,
    /// Wakes the worker from its sleep when a snapshot is requested (an
    /// eventfd in its poll set, see [`WorkerStats::set_waker`]), so a
    /// sleeping worker answers in microseconds, not at its next timeout.
    waker: std::sync::OnceLock<std::fs::File>,
}

impl WorkerStats {
    /// Counters for `ports` ports and the RX queues `(port, queue)`.
    pub fn new(worker: usize, ports: usize, rx_queues: &[(usize, u16)]) -> WorkerStats {
        WorkerStats {
            worker,
            ports: (0..ports).map(|_| PortStats::default()).collect(),
            rx_queues: rx_queues
                .iter()
                .map(|&(port, queue)| RxQueueStats {
                    port,
                    queue,
                    counters: counters(QueueCounter::COUNT),
                })
                .collect(),
            generated: Counter::default(),
            fragmented: Counter::default(),
            fragments: Counter::default(),
            cycles_rx: Counter::default(),
            cycles_process: Counter::default(),
            cycles_tx: Counter::default(),
            cycles_packets: Counter::default(),
            requested: AtomicU64::new(0),
            served: AtomicU64::new(0),
            published: Mutex::new(None),
            running: AtomicBool::new(true),
            waker: std::sync::OnceLock::new(),
        }
    }

    /// Registers the file (an eventfd the worker sleeps on) that
    /// [`WorkerStats::request_snapshot`] writes to; once.
    pub fn set_waker(&self, f: std::fs::File) {
        let _ = self.waker.set(f);
    }

    /// Counts `r` on `port` (input reasons: the input port; output
    /// reasons: the port the frame would have left by).
    #[inline(always)]
    pub fn drop_on(&self, port: usize, r: DropReason, n: u64) {
        self.ports[port].drops[r as usize].add(n);
    }

    /// Stores what RX queue `i` reported (cumulative values).
    pub fn set_rx_queue(&self, i: usize, c: &QueueCounters) {
        store(&self.rx_queues[i].counters, c);
    }

    /// Stores what the TX queue on `port` reported (cumulative values).
    pub fn set_tx_queue(&self, port: usize, c: &QueueCounters) {
        store(&self.ports[port].tx_queue, c);
    }

    /// A copy of the counters, read one by one: exact once the worker has
    /// stopped, possibly torn (a frame counted received but not yet
    /// processed) while it runs; see [`WorkerStats::request_snapshot`].
    pub fn snapshot(&self) -> StatsSnapshot {
        let queue_counters = |cs: &[Counter]| {
            let mut q = QueueCounters::default();
            for &c in QueueCounter::ALL {
                q.set(c, cs[c as usize].get());
            }
            q
        };
        let mut ports: Vec<PortCounters> = self
            .ports
            .iter()
            .map(|p| {
                let mut pc = PortCounters {
                    rx_packets: p.rx_packets.get(),
                    tx_packets: p.tx_packets.get(),
                    rx_bytes: p.rx_bytes.get(),
                    tx_bytes: p.tx_bytes.get(),
                    received: p.rx_packets.get(),
                    forwarded: p.forwarded.get(),
                    local: p.local.get(),
                    held: p.held.get(),
                    ..Default::default()
                };
                for &r in DropReason::ALL {
                    let v = p.drops[r as usize].get();
                    if v > 0 {
                        let map = if r.is_input() {
                            &mut pc.drops
                        } else {
                            &mut pc.output_drops
                        };
                        map.insert(r.name().into(), v);
                    }
                }
                add_queue_counters(&mut pc, &queue_counters(&p.tx_queue));
                pc
            })
            .collect();
        for q in self.rx_queues.iter() {
            let c = queue_counters(&q.counters);
            if let Some(pc) = ports.get_mut(q.port) {
                add_queue_counters(pc, &c);
                pc.rx_queues.push(RxQueueReport {
                    worker: self.worker,
                    queue: q.queue,
                    counters: c
                        .iter()
                        .filter(|&(_, v)| v > 0)
                        .map(|(c, v)| (c.name().into(), v))
                        .collect(),
                });
            }
        }
        let mut s = StatsSnapshot {
            ports,
            cycles: StageCycles {
                rx: self.cycles_rx.get(),
                process: self.cycles_process.get(),
                tx: self.cycles_tx.get(),
                packets: self.cycles_packets.get(),
            },
            generated: self.generated.get(),
            fragmented: self.fragmented.get(),
            fragments: self.fragments.get(),
            ..Default::default()
        };
        s.sum_ports();
        s
    }

    /// Asks the worker for a snapshot taken at the end of one of its
    /// rounds, when every frame is in exactly one bucket; returns a ticket
    /// for [`WorkerStats::wait_snapshot`]. The worker also reads its
    /// queues' kernel counters for it, so kernel drops are current.
    pub fn request_snapshot(&self) -> u64 {
        let t = self.requested.fetch_add(1, Relaxed) + 1;
        self.wake();
        t
    }

    /// Wakes the worker if it sleeps (through the eventfd of
    /// [`WorkerStats::set_waker`], if any): for a snapshot, or to see its
    /// stop flag.
    pub fn wake(&self) {
        if let Some(mut f) = self.waker.get() {
            // An eventfd adds the 8-byte value; a full counter (never, at
            // one per request) would only make the wake-up late.
            use std::io::Write;
            let _ = f.write(&1u64.to_ne_bytes());
        }
    }

    /// Waits up to `timeout` for the snapshot of `ticket`. A worker that
    /// has stopped no longer changes its counters, so they are read
    /// directly; a worker that does not answer in time (stuck) gets a
    /// direct, possibly torn, read.
    pub fn wait_snapshot(&self, ticket: u64, timeout: Duration) -> StatsSnapshot {
        let deadline = Instant::now() + timeout;
        loop {
            if !self.running.load(Acquire) {
                return self.snapshot();
            }
            if self.served.load(Acquire) >= ticket {
                let published = self.published.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(s) = published.as_ref() {
                    return s.clone();
                }
            }
            if Instant::now() >= deadline {
                return self.snapshot();
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// A consistent snapshot (request + wait, 500 ms at most).
    pub fn consistent_snapshot(&self) -> StatsSnapshot {
        let t = self.request_snapshot();
        self.wait_snapshot(t, Duration::from_millis(500))
    }

    /// The worker's side: the newest request not yet served, if any.
    #[inline(always)]
    pub(crate) fn pending_request(&self) -> Option<u64> {
        let r = self.requested.load(Relaxed);
        (r != self.served.load(Relaxed)).then_some(r)
    }

    /// The worker's side: publishes `s` for request `ticket`.
    pub(crate) fn publish(&self, ticket: u64, s: StatsSnapshot) {
        *self.published.lock().unwrap_or_else(|e| e.into_inner()) = Some(s);
        self.served
            .store(ticket, std::sync::atomic::Ordering::Release);
    }

    /// The worker's side: it has shut down.
    pub(crate) fn stopped(&self) {
        self.running
            .store(false, std::sync::atomic::Ordering::Release);
    }
}

/// Adds a queue's port-side counters to its port: input drops (which
/// count as received), output drops and events, non-zero ones by name.
fn add_queue_counters(pc: &mut PortCounters, c: &QueueCounters) {
    for (k, v) in c.iter().filter(|&(_, v)| v > 0) {
        let map = match k.kind() {
            CounterKind::RxDrop => {
                pc.received += v;
                &mut pc.drops
            }
            CounterKind::TxDrop => &mut pc.output_drops,
            CounterKind::Event => &mut pc.events,
        };
        *map.entry(k.name().into()).or_default() += v;
    }
}

/// What the datapath knows about a snapshot and the `schema` crate's
/// plain data cannot: which reasons are the workers' input reasons, the
/// ports' queue counters, and the accounting identities.
pub trait SnapshotChecks {
    /// A port-side counter summed over ports (drops and events).
    fn queue_count(&self, c: QueueCounter) -> u64;
    /// Sum of the worker's input drop reasons over all ports.
    fn input_drops(&self) -> u64;
    /// Checks the identities (see [`crate::accounting`]) on every port and
    /// over all ports.
    fn check_identity(&self) -> Result<(), String>;
}

impl SnapshotChecks for StatsSnapshot {
    fn queue_count(&self, c: QueueCounter) -> u64 {
        self.ports
            .iter()
            .map(|p| {
                p.drops
                    .get(c.name())
                    .or_else(|| p.output_drops.get(c.name()))
                    .or_else(|| p.events.get(c.name()))
                    .copied()
                    .unwrap_or(0)
            })
            .sum()
    }

    fn input_drops(&self) -> u64 {
        DropReason::ALL
            .iter()
            .filter(|r| r.is_input())
            .map(|&r| self.drop_count(r))
            .sum()
    }

    fn check_identity(&self) -> Result<(), String> {
        let v = serde_json::to_value(self).map_err(|e| e.to_string())?;
        let errors = accounting_violations(&v);
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounting::assert_accounting;

    #[test]
    fn snapshot_of_counters_balances_and_carries_queue_counters() {
        let w = WorkerStats::new(3, 2, &[(0, 0), (1, 4)]);
        w.ports[0].rx_packets.add(5);
        w.ports[0].forwarded.add(2);
        w.ports[0].held.add(1);
        w.drop_on(0, DropReason::NoRoute, 2);
        w.drop_on(1, DropReason::TxFull, 1);
        w.ports[1].tx_packets.add(3);
        w.generated.add(2);
        let mut q = QueueCounters::default();
        q.set(QueueCounter::XdpRxRingFull, 7);
        q.set(QueueCounter::XdpRxFillRingEmptyDescs, 9);
        w.set_rx_queue(1, &q);
        let s = w.snapshot();
        assert_eq!(s.ports[1].received, 7);
        assert_eq!(s.ports[1].drops.get("xdp_rx_ring_full"), Some(&7));
        assert_eq!(
            s.ports[1].events.get("xdp_rx_fill_ring_empty_descs"),
            Some(&9)
        );
        assert_eq!(s.ports[1].rx_queues[0].queue, 4);
        assert_eq!(s.ports[1].rx_queues[0].worker, 3);
        assert_eq!(s.queue_count(QueueCounter::XdpRxRingFull), 7);
        assert_eq!(s.drop_count(DropReason::NoRoute), 2);
        assert_eq!(s.drop_count(DropReason::TxFull), 1);
        s.check_identity().unwrap();
        let mut m = s.clone();
        m.merge(&s);
        assert_eq!(m.ports[1].received, 14);
        assert_eq!(m.ports[1].rx_queues.len(), 2);
        m.check_identity().unwrap();
        assert_accounting(&m);
        assert_accounting(&serde_json::to_string(&m).unwrap());
        // One frame received and in no bucket.
        w.ports[0].rx_packets.add(1);
        assert!(w.snapshot().check_identity().is_err());
    }

    #[test]
    fn a_stopped_worker_is_read_directly_and_a_served_request_is_used() {
        let w = WorkerStats::new(0, 1, &[]);
        let t = w.request_snapshot();
        assert_eq!(w.pending_request(), Some(t));
        let mut s = w.snapshot();
        s.generated = 42;
        w.publish(t, s);
        assert_eq!(w.pending_request(), None);
        assert_eq!(w.wait_snapshot(t, Duration::from_secs(5)).generated, 42);
        w.stopped();
        let t = w.request_snapshot();
        assert_eq!(w.wait_snapshot(t, Duration::from_secs(5)).generated, 0);
    }
}
