//! Per-worker counters, their snapshots, and the accounting check.
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
//! # Accounting identity, per port
//!
//! Every frame that reaches a port ends in exactly one bucket of that
//! (input) port:
//!
//! ```text
//! received = rx_packets + port-side input drops
//! received = forwarded + local + held + sum(drops[r])
//! ```
//!
//! * `rx_packets`: frames the port's queues handed to a worker;
//! * port-side input drops: frames that reached the port but never a
//!   worker, counted by the queue or the kernel
//!   ([`netio::CounterKind::RxDrop`]: `rx_oversize`, `xdp_rx_ring_full`,
//!   `afpacket_tp_drops`, ...), read off the fast path every
//!   [`PORT_COUNTERS_INTERVAL_MS`], on a snapshot request and at shutdown;
//! * `forwarded`: received and handed to an egress TX stage (a fragmented
//!   packet counts once here, its fragments in `fragments`);
//! * `local`: consumed by the router (ARP, NS/NA, echo requests answered);
//! * `held`: currently waiting in a hold queue for neighbor resolution (a
//!   gauge: it goes down when the packet is sent, counted `forwarded`, or
//!   dropped, counted `neighbor_unresolved` / `held_at_shutdown`);
//! * `drops`: the input reasons, the worker's ([`DropReason::is_input`])
//!   and the port side's.
//!
//! Every count is by *input* port: a frame received on p0 and forwarded
//! out of p1 is `forwarded` on p0.
//!
//! On the output side, frames the router made itself are `generated`
//! (echo replies, ARP replies and requests, NA/NS, ICMP errors), and over
//! all ports
//!
//! ```text
//! tx_packets = forwarded - fragmented + fragments + generated - tx_full
//! ```
//!
//! Output reasons (`tx_full`, `icmp_rate_limited`, `reply_no_buffer`, the
//! kernel's `xdp_tx_invalid_descs`) are per port in `output_drops`, on the
//! port the frame would have left by; `icmp_rate_limited` and
//! `reply_no_buffer` count errors not generated, so they are in neither
//! identity. Kernel events that are not frames (`xdp_*_ring_empty_descs`)
//! are in `events`.
//!
//! [`accounting_violations`] checks all of this on the statistics JSON
//! (a snapshot, or softrouter's `--stats-json` file); tests call
//! [`assert_accounting`].

use crate::drop::DropReason;
use netio::{CounterKind, QueueCounter, QueueCounters};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Acquire, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The name of a drop reason, queue counter or event in a snapshot: the
/// router's own static name ([`DropReason::name`], [`QueueCounter::name`]),
/// so counting allocates nothing, or an owned copy when a snapshot is read
/// back from statistics JSON (the bench reads softrouter's file this way).
pub type CounterName = Cow<'static, str>;

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
        }
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
                pc.add_queue_counters(&queue_counters(&p.tx_queue));
                pc
            })
            .collect();
        for q in self.rx_queues.iter() {
            let c = queue_counters(&q.counters);
            if let Some(pc) = ports.get_mut(q.port) {
                pc.add_queue_counters(&c);
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
        self.requested.fetch_add(1, Relaxed) + 1
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

/// The counters of one RX queue in a snapshot: non-zero values by name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RxQueueReport {
    pub worker: usize,
    pub queue: u16,
    pub counters: BTreeMap<CounterName, u64>,
}

/// One port in a snapshot (see the module documentation for the meaning
/// of each field and the identities between them).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortCounters {
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
    /// Frames that reached the port: `rx_packets` + port-side input drops.
    pub received: u64,
    pub forwarded: u64,
    pub local: u64,
    pub held: u64,
    /// Input drop reasons, the worker's and the port side's (non-zero).
    pub drops: BTreeMap<CounterName, u64>,
    /// Output drop reasons (non-zero).
    pub output_drops: BTreeMap<CounterName, u64>,
    /// Kernel events that are not frames (non-zero).
    pub events: BTreeMap<CounterName, u64>,
    /// Per RX queue detail of the port-side counters.
    pub rx_queues: Vec<RxQueueReport>,
}

impl PortCounters {
    fn add_queue_counters(&mut self, c: &QueueCounters) {
        for (k, v) in c.iter().filter(|&(_, v)| v > 0) {
            let map = match k.kind() {
                CounterKind::RxDrop => {
                    self.received += v;
                    &mut self.drops
                }
                CounterKind::TxDrop => &mut self.output_drops,
                CounterKind::Event => &mut self.events,
            };
            *map.entry(k.name().into()).or_default() += v;
        }
    }

    // Sums wrap rather than panic: a broken gauge (a `held` that went
    // below zero) must show as a violation of the identity, not a crash.
    fn merge(&mut self, b: &PortCounters) {
        self.rx_packets = self.rx_packets.wrapping_add(b.rx_packets);
        self.tx_packets = self.tx_packets.wrapping_add(b.tx_packets);
        self.rx_bytes = self.rx_bytes.wrapping_add(b.rx_bytes);
        self.tx_bytes = self.tx_bytes.wrapping_add(b.tx_bytes);
        self.received = self.received.wrapping_add(b.received);
        self.forwarded = self.forwarded.wrapping_add(b.forwarded);
        self.local = self.local.wrapping_add(b.local);
        self.held = self.held.wrapping_add(b.held);
        for (mine, theirs) in [
            (&mut self.drops, &b.drops),
            (&mut self.output_drops, &b.output_drops),
            (&mut self.events, &b.events),
        ] {
            for (k, v) in theirs {
                let e = mine.entry(k.clone()).or_default();
                *e = e.wrapping_add(*v);
            }
        }
        self.rx_queues.extend(b.rx_queues.iter().cloned());
    }

    pub fn drop_count(&self, name: &str) -> u64 {
        self.drops
            .get(name)
            .or_else(|| self.output_drops.get(name))
            .copied()
            .unwrap_or(0)
    }
}

/// TSC cycles spent per stage, and the packets they were spent on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageCycles {
    pub rx: u64,
    pub process: u64,
    pub tx: u64,
    pub packets: u64,
}

/// The counters of one worker, or summed over workers. Serialized in
/// softrouter's statistics file ([`crate::report`]) and deserialized from
/// it by the bench.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatsSnapshot {
    pub ports: Vec<PortCounters>,
    /// Reason name -> count over all ports (only reasons that occurred):
    /// input and output reasons, the worker's and the ports' (not events).
    pub drops: BTreeMap<CounterName, u64>,
    pub cycles: StageCycles,
    /// Sums over the ports.
    pub forwarded: u64,
    pub local: u64,
    pub held: u64,
    pub generated: u64,
    pub fragmented: u64,
    pub fragments: u64,
}

impl StatsSnapshot {
    /// Recomputes the totals that are sums over ports.
    fn sum_ports(&mut self) {
        let sum =
            |f: fn(&PortCounters) -> u64| self.ports.iter().fold(0u64, |a, p| a.wrapping_add(f(p)));
        self.forwarded = sum(|p| p.forwarded);
        self.local = sum(|p| p.local);
        self.held = sum(|p| p.held);
        self.drops.clear();
        for p in &self.ports {
            for (k, v) in p.drops.iter().chain(&p.output_drops) {
                let e = self.drops.entry(k.clone()).or_default();
                *e = e.wrapping_add(*v);
            }
        }
    }

    pub fn merge(&mut self, other: &StatsSnapshot) {
        if self.ports.len() < other.ports.len() {
            self.ports
                .resize(other.ports.len(), PortCounters::default());
        }
        for (a, b) in self.ports.iter_mut().zip(&other.ports) {
            a.merge(b);
        }
        self.cycles.rx += other.cycles.rx;
        self.cycles.process += other.cycles.process;
        self.cycles.tx += other.cycles.tx;
        self.cycles.packets += other.cycles.packets;
        self.generated += other.generated;
        self.fragmented += other.fragmented;
        self.fragments += other.fragments;
        self.sum_ports();
    }

    /// Cycles per packet in the rx, process and tx stages.
    pub fn cycles_per_packet(&self) -> (f64, f64, f64) {
        let n = self.cycles.packets.max(1) as f64;
        (
            self.cycles.rx as f64 / n,
            self.cycles.process as f64 / n,
            self.cycles.tx as f64 / n,
        )
    }

    pub fn rx_packets(&self) -> u64 {
        self.ports
            .iter()
            .fold(0, |a, p| a.wrapping_add(p.rx_packets))
    }

    pub fn tx_packets(&self) -> u64 {
        self.ports
            .iter()
            .fold(0, |a, p| a.wrapping_add(p.tx_packets))
    }

    /// Frames that reached the ports, port-side drops included.
    pub fn received(&self) -> u64 {
        self.ports.iter().fold(0, |a, p| a.wrapping_add(p.received))
    }

    pub fn drop_count(&self, r: DropReason) -> u64 {
        self.drops.get(r.name()).copied().unwrap_or(0)
    }

    /// A port-side counter summed over ports (drops and events).
    pub fn queue_count(&self, c: QueueCounter) -> u64 {
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

    /// Sum of the worker's input drop reasons over all ports.
    pub fn input_drops(&self) -> u64 {
        DropReason::ALL
            .iter()
            .filter(|r| r.is_input())
            .map(|&r| self.drop_count(r))
            .sum()
    }

    /// Checks the identities (see the module documentation) on every port
    /// and over all ports.
    pub fn check_identity(&self) -> Result<(), String> {
        let v = serde_json::to_value(self).map_err(|e| e.to_string())?;
        let errors = accounting_violations(&v);
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }
}

// ---- the check on JSON ----------------------------------------------------

fn input_reason(name: &str) -> bool {
    DropReason::ALL
        .iter()
        .any(|r| r.is_input() && r.name() == name)
        || QueueCounter::from_name(name).is_some_and(|c| c.kind() == CounterKind::RxDrop)
}

fn output_reason(name: &str) -> bool {
    DropReason::ALL
        .iter()
        .any(|r| !r.is_input() && r.name() == name)
        || QueueCounter::from_name(name).is_some_and(|c| c.kind() == CounterKind::TxDrop)
}

// The checker adds in u128: counters near u64::MAX (a gauge gone below
// zero) are reported, not overflowed.
fn check_port(at: &str, p: &Value, out: &mut Vec<String>) {
    let mut num = |k: &str| -> u128 {
        match p.get(k).and_then(Value::as_u64) {
            Some(v) => u128::from(v),
            None => {
                out.push(format!("{at}: no counter {k:?}"));
                0
            }
        }
    };
    let (rx, received) = (num("rx_packets"), num("received"));
    let (fwd, local, held) = (num("forwarded"), num("local"), num("held"));
    let mut map = |k: &str| -> Vec<(String, u128)> {
        match p.get(k).and_then(Value::as_object) {
            Some(m) => m
                .iter()
                .map(|(k, v)| (k.clone(), u128::from(v.as_u64().unwrap_or(u64::MAX))))
                .collect(),
            None => {
                out.push(format!("{at}: no {k:?} map"));
                Vec::new()
            }
        }
    };
    let drops = map("drops");
    let output = map("output_drops");
    for (k, v) in &drops {
        if !input_reason(k) {
            out.push(format!("{at}: {k:?} ({v}) is not an input drop reason"));
        }
    }
    for (k, v) in &output {
        if !output_reason(k) {
            out.push(format!("{at}: {k:?} ({v}) is not an output drop reason"));
        }
    }
    let dropped: u128 = drops.iter().map(|(_, v)| v).sum();
    let port_side: u128 = drops
        .iter()
        .filter(|(k, _)| QueueCounter::from_name(k).is_some())
        .map(|(_, v)| v)
        .sum();
    if received != fwd + local + held + dropped {
        out.push(format!(
            "{at}: received {received} != forwarded {fwd} + local {local} + held {held} \
             + dropped {dropped} ({:?})",
            drops
        ));
    }
    if received != rx + port_side {
        out.push(format!(
            "{at}: received {received} != rx_packets {rx} + port-side drops {port_side}"
        ));
    }
    if let Some(queues) = p.get("rx_queues").and_then(Value::as_array) {
        let per_queue: u128 = queues
            .iter()
            .filter_map(|q| q.get("counters").and_then(Value::as_object))
            .flat_map(|m| m.iter())
            .filter(|(k, _)| {
                QueueCounter::from_name(k).is_some_and(|c| c.kind() == CounterKind::RxDrop)
            })
            .map(|(_, v)| u128::from(v.as_u64().unwrap_or(0)))
            .sum();
        if per_queue != port_side {
            out.push(format!(
                "{at}: port-side drops {port_side} != sum over rx_queues {per_queue}"
            ));
        }
    }
}

/// A snapshot-shaped object: totals equal the sums over ports, and the
/// output identity over all ports.
fn check_totals(at: &str, s: &Value, out: &mut Vec<String>) {
    let Some(ports) = s.get("ports").and_then(Value::as_array) else {
        return;
    };
    let sum = |k: &str| -> u128 {
        ports
            .iter()
            .map(|p| u128::from(p.get(k).and_then(Value::as_u64).unwrap_or(0)))
            .sum()
    };
    let wrapped = |v: u128| v as u64 as u128;
    let top = |k: &str| s.get(k).and_then(Value::as_u64).map(u128::from);
    for k in ["forwarded", "local", "held"] {
        if let Some(t) = top(k) {
            // The snapshot's own totals wrap (see `sum_ports`).
            if t != wrapped(sum(k)) {
                out.push(format!("{at}: {k} {t} != sum over ports {}", sum(k)));
            }
        }
    }
    let (Some(fwd), Some(gen), Some(fragmented), Some(fragments)) = (
        top("forwarded"),
        top("generated"),
        top("fragmented"),
        top("fragments"),
    ) else {
        return;
    };
    let tx_full: u128 = ports
        .iter()
        .filter_map(|p| p.pointer("/output_drops/tx_full").and_then(Value::as_u64))
        .map(u128::from)
        .sum();
    let tx = sum("tx_packets");
    if tx + fragmented + tx_full != fwd + fragments + gen {
        out.push(format!(
            "{at}: tx_packets {tx} != forwarded {fwd} - fragmented {fragmented} + fragments \
             {fragments} + generated {gen} - tx_full {tx_full}"
        ));
    }
}

/// Every violation of the accounting identities in statistics JSON: a
/// serialized [`StatsSnapshot`], or softrouter's statistics file (its
/// `ports`, `totals` and each of `per_worker` are checked). Empty if all
/// hold.
pub fn accounting_violations(stats: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let Some(ports) = stats.get("ports").and_then(Value::as_array) else {
        return vec!["no \"ports\" array".to_string()];
    };
    for (i, p) in ports.iter().enumerate() {
        let at = match p.get("name").and_then(Value::as_str) {
            Some(name) => format!("ports[{i}] ({name})"),
            None => format!("ports[{i}]"),
        };
        check_port(&at, p, &mut out);
    }
    check_totals("all ports", stats, &mut out);
    if let Some(t) = stats.get("totals") {
        for (i, p) in t["ports"].as_array().into_iter().flatten().enumerate() {
            check_port(&format!("totals.ports[{i}]"), p, &mut out);
        }
        check_totals("totals", t, &mut out);
        // The report's ports are the totals' ports with names.
        for (i, p) in ports.iter().enumerate() {
            for k in ["received", "rx_packets", "forwarded", "local", "held"] {
                if p.get(k) != t.pointer(&format!("/ports/{i}/{k}")) {
                    out.push(format!("ports[{i}].{k} differs from totals.ports[{i}].{k}"));
                }
            }
        }
    }
    for (w, s) in stats
        .get("per_worker")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        for (i, p) in s["ports"].as_array().into_iter().flatten().enumerate() {
            check_port(&format!("per_worker[{w}].ports[{i}]"), p, &mut out);
        }
        check_totals(&format!("per_worker[{w}]"), s, &mut out);
    }
    out
}

/// Panics with every violation of the accounting identities in `stats`:
/// statistics JSON (a `serde_json::Value`, or its text as a string), a
/// [`StatsSnapshot`], or anything else that serializes to it.
#[track_caller]
pub fn assert_accounting<T: Serialize + ?Sized>(stats: &T) {
    let mut v = serde_json::to_value(stats).expect("statistics serialize");
    if let Value::String(text) = &v {
        v = serde_json::from_str(text).expect("statistics text is JSON");
    }
    let errors = accounting_violations(&v);
    if !errors.is_empty() {
        let mut text = serde_json::to_string_pretty(&v).unwrap_or_default();
        if text.len() > 20_000 {
            text.truncate(text.floor_char_boundary(20_000));
            text.push_str(" ...");
        }
        panic!(
            "accounting identity violated:\n  {}\nin {text}",
            errors.join("\n  ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn port(received: u64, rx: u64, fwd: u64, drops: Value) -> Value {
        let queue: serde_json::Map<String, Value> = drops
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| QueueCounter::from_name(k).is_some())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        json!({
            "rx_packets": rx, "tx_packets": 0, "rx_bytes": 0, "tx_bytes": 0,
            "received": received, "forwarded": fwd, "local": 1, "held": 2,
            "drops": drops, "output_drops": {}, "events": {},
            "rx_queues": [{"worker": 0, "queue": 0, "counters": queue}],
        })
    }

    #[test]
    fn drop_reason_and_queue_counter_names_are_distinct() {
        // They share the `drops` / `output_drops` maps of a port.
        for &r in DropReason::ALL {
            assert!(QueueCounter::from_name(r.name()).is_none(), "{}", r.name());
        }
    }

    #[test]
    fn a_balanced_port_passes() {
        let s = json!({"ports": [port(10, 9, 3, json!({"no_route": 3, "rx_oversize": 1}))]});
        assert_eq!(accounting_violations(&s), Vec::<String>::new());
    }

    #[test]
    fn each_imbalance_is_reported() {
        // One frame unaccounted.
        let s = json!({"ports": [port(10, 9, 2, json!({"no_route": 3, "rx_oversize": 1}))]});
        let e = accounting_violations(&s);
        assert!(
            e.len() == 1 && e[0].contains("received 10 != forwarded 2"),
            "{e:?}"
        );
        // Port-side drops that do not explain received - rx_packets.
        let s = json!({"ports": [port(10, 10, 3, json!({"no_route": 3, "rx_oversize": 1}))]});
        let e = accounting_violations(&s);
        assert!(e.len() == 1 && e[0].contains("rx_packets 10"), "{e:?}");
        // An output reason among the input drops, and a missing field.
        let mut p = port(10, 10, 3, json!({"no_route": 3, "tx_full": 1}));
        p.as_object_mut().unwrap().remove("held");
        let e = accounting_violations(&json!({"ports": [p]}));
        assert!(e.iter().any(|e| e.contains("\"tx_full\"")), "{e:?}");
        assert!(e.iter().any(|e| e.contains("\"held\"")), "{e:?}");
        assert!(!accounting_violations(&json!({})).is_empty());
    }

    #[test]
    fn queue_detail_must_add_up() {
        let mut p = port(10, 9, 3, json!({"no_route": 3, "xdp_rx_ring_full": 1}));
        p["rx_queues"] = json!([{"worker": 0, "queue": 0, "counters": {"xdp_rx_ring_full": 2}}]);
        let e = accounting_violations(&json!({"ports": [p]}));
        assert!(e.len() == 1 && e[0].contains("rx_queues"), "{e:?}");
    }

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
