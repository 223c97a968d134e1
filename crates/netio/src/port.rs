//! The port/queue abstraction every backend implements.
//!
//! A [`Port`] is an interface (or a capture file). Workers open queues on it:
//! the RX queues assigned to them and one private [`TxQueue`] each, so no two
//! workers ever share a ring (paper 002: one TX ring per CPU per device is
//! what made SMP forwarding scale). Queues take the worker's [`Pool`] on
//! every call instead of holding a reference to it, so a worker can own its
//! pool and all its queues without shared ownership.
//!
//! Calls are per burst; dynamic dispatch costs one indirect call per burst.

use crate::{Buf, Burst, NetioError, Pool};
use std::os::fd::RawFd;

/// What the dataplane needs to know about a port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortInfo {
    pub name: String,
    pub mac: [u8; 6],
    /// IP MTU: the largest IP packet the port sends without fragmenting.
    pub mtu: u16,
    /// Hardware RX queues; workers are assigned queues `0..rx_queues`.
    pub rx_queues: u16,
}

pub trait RxQueue: Send {
    /// Receives frames into buffers of `pool`, appending at most
    /// `out.room()` of them to `out`. Returns how many were appended.
    fn rx_burst(&mut self, pool: &mut Pool, out: &mut Burst) -> usize;

    /// A file descriptor that becomes readable when frames arrive, for the
    /// `interrupt` and `adaptive` reception modes. `None`: always ready.
    fn wait_fd(&self) -> Option<RawFd> {
        None
    }

    /// True once a finite source (a capture file) has delivered everything.
    fn exhausted(&self) -> bool {
        false
    }

    /// Returns any buffers the queue holds (e.g. an AF_XDP fill ring) to the
    /// pool; called once at shutdown so leaks can be checked.
    fn release(&mut self, _pool: &mut Pool) {}
}

pub trait TxQueue: Send {
    /// Queues `bufs` for transmission and returns how many were taken; the
    /// queue owns those (it frees them to `pool` once sent). The caller
    /// still owns `bufs[n..]`: it frees and counts them as dropped.
    fn tx_burst(&mut self, pool: &mut Pool, bufs: &[Buf]) -> usize;

    /// Pushes out what is queued (a kick) and reclaims completed buffers.
    /// Called at the end of every round, so partial bursts never linger.
    fn flush(&mut self, _pool: &mut Pool) {}

    /// Frames taken but not yet completed; the worker flushes until this is
    /// zero before it exits, so nothing accepted is lost silently.
    fn in_flight(&self) -> usize {
        0
    }

    /// Returns buffers still held to the pool at shutdown.
    fn release(&mut self, _pool: &mut Pool) {}
}

pub trait Port: Send + Sync {
    fn info(&self) -> &PortInfo;

    /// Opens RX queue `queue` for a worker whose buffers live in `pool`.
    fn open_rx(&self, queue: u16, pool: &mut Pool) -> Result<Box<dyn RxQueue>, NetioError>;

    /// Opens worker `worker`'s private TX queue on this port.
    fn open_tx(&self, worker: usize, pool: &mut Pool) -> Result<Box<dyn TxQueue>, NetioError>;

    /// Called once after every worker stopped: flush output files, detach
    /// programs. Reports anything that was accepted but could not be
    /// delivered.
    fn finish(&self) -> Result<(), NetioError> {
        Ok(())
    }
}
