//! TX staging: the last step of the pipeline. Each egress port has one
//! burst that forwarded and generated frames are staged on; it goes to the
//! port's TX queue when full and at the end of every round, and what the
//! queue refuses is freed and counted `tx_full`.

use crate::drop::DropReason;
use crate::shared::Shared;
use crate::stats::WorkerStats;
use netio::{Buf, Burst, Pool, TxQueue};
use std::sync::Arc;

/// TX staging: one burst per egress port, handed to the port's TX queue
/// when full and at the end of every round.
pub(crate) struct Tx {
    pub(crate) queues: Vec<Box<dyn TxQueue>>,
    pub(crate) staged: Vec<Burst>,
    /// Set with `tx_queues = "shared"`: the per-port TX locks live there.
    pub(crate) shared: Option<Arc<Shared>>,
}

/// The port's shared-TX lock, held while a worker transmits there (see
/// `config::TxQueues::Shared`); `None` with per-worker queues.
fn tx_lock(shared: &Option<Arc<Shared>>, port: usize) -> Option<std::sync::MutexGuard<'_, ()>> {
    let locks = shared.as_ref()?.tx_locks.as_ref()?;
    Some(locks[port].lock().unwrap_or_else(|e| e.into_inner()))
}

impl Tx {
    /// Stages `buf` for `port` (sending the staged burst first when full).
    #[inline]
    pub(crate) fn stage(&mut self, pool: &mut Pool, stats: &WorkerStats, port: usize, buf: Buf) {
        if self.staged[port].is_full() {
            self.send_staged(pool, stats, port);
        }
        let _ = self.staged[port].push(buf);
    }

    /// Hands `port`'s staged burst to its queue; what the queue refuses is
    /// freed and counted `tx_full` on that port.
    pub(crate) fn send_staged(&mut self, pool: &mut Pool, stats: &WorkerStats, port: usize) {
        let staged = &mut self.staged[port];
        if staged.is_empty() {
            return;
        }
        let bufs = staged.as_slice();
        let mut bytes = 0u64;
        for b in bufs {
            bytes += u64::from(b.len);
        }
        let n = {
            let _held = tx_lock(&self.shared, port);
            self.queues[port].tx_burst(pool, bufs)
        };
        if n < bufs.len() {
            for b in &bufs[n..] {
                bytes -= u64::from(b.len);
                pool.free(*b);
            }
            stats.drop_on(port, DropReason::TxFull, (bufs.len() - n) as u64);
        }
        let ps = &stats.ports[port];
        ps.tx_packets.add(n as u64);
        ps.tx_bytes.add(bytes);
        staged.clear();
    }

    /// End of a round: every staged burst to its queue, and every queue
    /// kicked (so partial bursts never linger).
    pub(crate) fn flush(&mut self, pool: &mut Pool, stats: &WorkerStats) {
        for p in 0..self.queues.len() {
            self.send_staged(pool, stats, p);
            let _held = tx_lock(&self.shared, p);
            self.queues[p].flush(pool);
        }
    }

    /// Frames staged or in flight.
    pub(crate) fn pending(&self) -> usize {
        let staged: usize = self.staged.iter().map(|b| b.len()).sum();
        let flight: usize = self.queues.iter().map(|t| t.in_flight()).sum();
        staged + flight
    }

    /// Shutdown: sends what is staged, waits (a bounded while) for what is
    /// in flight, and takes back the buffers the queues still hold.
    pub(crate) fn drain(&mut self, pool: &mut Pool, stats: &WorkerStats) {
        for p in 0..self.queues.len() {
            self.send_staged(pool, stats, p);
        }
        for _ in 0..1000 {
            let mut flight = 0;
            for t in self.queues.iter_mut() {
                t.flush(pool);
                flight += t.in_flight();
            }
            if flight == 0 {
                break;
            }
            std::thread::yield_now();
        }
        for t in self.queues.iter_mut() {
            t.release(pool);
        }
    }
}
