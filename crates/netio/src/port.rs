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

use crate::{Buf, Burst, NetioError, Pool, QueueCounters, HEADROOM};
use std::os::fd::RawFd;

/// Bytes of a frame beyond its IP packet: Ethernet header and one 802.1Q
/// tag (the dataplane accepts one tag).
pub const FRAME_OVERHEAD: u32 = 14 + 4;

/// Rejects a port whose frames cannot fit a buffer of `pool`: an MTU of
/// `mtu` means frames of up to `mtu + 18` bytes (Ethernet header and one
/// VLAN tag), which must fit the `frame_size - 256` bytes of a buffer after
/// its headroom. Every backend calls this in `open_rx`, so such a port
/// fails at start with this message instead of losing its large frames.
pub fn check_mtu_fits(port: &str, mtu: u16, pool: &Pool) -> Result<(), NetioError> {
    let room = pool.frame_size().saturating_sub(HEADROOM);
    let need = u32::from(mtu) + FRAME_OVERHEAD;
    if need > room {
        let fit = room.saturating_sub(FRAME_OVERHEAD);
        let frame = (need + HEADROOM).next_power_of_two();
        return Err(NetioError::port(
            port,
            format!(
                "MTU {mtu} needs buffers of {need} bytes (Ethernet header and a VLAN tag \
                 included) but a buffer holds {room} (frame_size {} minus {HEADROOM} bytes \
                 of headroom): set router.frame_size to {frame} or the port's MTU to at most {fit}",
                pool.frame_size()
            ),
        ));
    }
    Ok(())
}

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
    /// Receives frames into buffers of `pool`, appending at most `max` of
    /// them (and never more than `out.room()`) to `out`. Returns how many
    /// were appended. The worker passes what is left of its round's budget,
    /// so a queue never takes frames out of its ring that the round would
    /// not process.
    fn rx_burst(&mut self, pool: &mut Pool, out: &mut Burst, max: usize) -> usize;

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
    /// pool; called once at shutdown so leaks can be checked. Frames left
    /// unread in a ring are counted (`rx_unread_at_shutdown`).
    fn release(&mut self, _pool: &mut Pool) {}

    /// This queue's number on its port (statistics).
    fn queue_id(&self) -> u16 {
        0
    }

    /// What the queue (or the kernel, for it) counted about frames the
    /// worker never received, cumulative since the queue was opened; only
    /// [`crate::CounterKind::RxDrop`] and `Event` counters. May make a
    /// system call (`getsockopt`): call it off the fast path, every few
    /// milliseconds at most.
    fn counters(&mut self) -> QueueCounters {
        QueueCounters::default()
    }
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

    /// The kernel's counters about frames this queue sent (AF_XDP
    /// `tx_invalid_descs`, ...), cumulative; only
    /// [`crate::CounterKind::TxDrop`] and `Event` counters. May make a
    /// system call: call it off the fast path.
    fn counters(&mut self) -> QueueCounters {
        QueueCounters::default()
    }
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
