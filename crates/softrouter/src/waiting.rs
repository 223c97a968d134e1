//! How an idle worker waits: the reception modes of paper 000 mapped onto
//! kernel-bypass sockets.
//!
//! - `poll`: never sleeps (lowest latency; owns its core).
//! - `interrupt`: after a round that found nothing, sleeps in `poll(2)` on
//!   its sockets until one is readable (the NAPI analogue: the "interrupt"
//!   wakes it, then it works in budgeted rounds until idle again).
//! - `adaptive`: keeps polling while traffic flows and only sleeps after
//!   [`ADAPTIVE_IDLE_ROUNDS`] empty rounds in a row, so a busy worker pays
//!   no syscalls and an idle one uses almost no CPU.
//!
//! A worker with timed work (held packets, frames in flight on TX) sleeps
//! at most [`TIMER_SLEEP_MS`], so neighbour solicitation retries and
//! hold-queue expiry are served. One without sleeps up to
//! [`IDLE_SLEEP_MS`], off the FIB's grace periods meanwhile
//! (`dataplane::Worker::offline`): frames, snapshot requests and the stop
//! (`WorkerStats::wake`) wake it at once. Why not 10 ms always: the
//! workers share their CPUs with the kernel's receive work (the bench's
//! DUT has one CPU), and an idle worker's 100 wake-ups a second, each
//! preempted by the NAPI thread it shares the CPU with, cost 0.4-0.7 % of
//! that CPU while the XDP tier forwarded 2.2 Mpps (`perf record -C 0`).

use config::Mode;
use std::os::fd::RawFd;

/// Empty rounds before an adaptive worker sleeps (~tens of microseconds).
pub const ADAPTIVE_IDLE_ROUNDS: u32 = 256;
/// Longest sleep with timed work pending: the timers' resolution.
pub const TIMER_SLEEP_MS: i32 = 10;
/// Longest sleep with nothing timed: a backstop (the neighbour collection
/// the workers run once a second waits at most this much longer).
pub const IDLE_SLEEP_MS: i32 = 1000;

pub struct Waiter {
    mode: Mode,
    /// The sockets, then the wake-up eventfd if any.
    fds: Vec<libc::pollfd>,
    wake: Option<RawFd>,
    idle_rounds: u32,
    /// Times the worker went to sleep (reported with the statistics).
    pub sleeps: u64,
}

impl Waiter {
    /// Waits on `fds`; `wake` (an eventfd) interrupts a sleep when
    /// written, and is drained here.
    pub fn new(mode: Mode, fds: &[RawFd], wake: Option<RawFd>) -> Self {
        Waiter {
            mode,
            wake,
            fds: fds
                .iter()
                .chain(wake.as_ref())
                .map(|&fd| libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                })
                .collect(),
            idle_rounds: 0,
            sleeps: 0,
        }
    }

    /// Called after every round with the packets it received; whether the
    /// worker should sleep now (then [`Waiter::sleep`]).
    pub fn after_round(&mut self, received: usize) -> bool {
        if received > 0 {
            self.idle_rounds = 0;
            return false;
        }
        self.idle_rounds = self.idle_rounds.saturating_add(1);
        let sleep = match self.mode {
            Mode::Poll => false,
            Mode::Interrupt => true,
            Mode::Adaptive => self.idle_rounds >= ADAPTIVE_IDLE_ROUNDS,
        };
        // No PAUSE when not sleeping (DPDK's poll loops have none either):
        // the next round's ring reads are the wait. Under KVM a PAUSE loop
        // trips pause-loop exiting and the host deschedules the vCPU as if
        // it spun on a lock: adaptive mode measured 0.09-0.27 Mpps
        // (erratic) with PAUSE and 0.24-0.27 without, at 64 B on the bench
        // testbed.
        sleep
    }

    /// Sleeps until a socket is readable or the eventfd is written, at
    /// most `timeout_ms`.
    pub fn sleep(&mut self, timeout_ms: i32) {
        self.sleeps += 1;
        if self.fds.len() == usize::from(self.wake.is_some()) {
            // Nothing to wait on (no RX queues, or capture ports): a short
            // sleep keeps timers running without burning the core.
            std::thread::sleep(std::time::Duration::from_millis(1));
            return;
        }
        for p in &mut self.fds {
            p.revents = 0;
        }
        // SAFETY: fds points to self.fds.len() initialised pollfd entries.
        unsafe {
            libc::poll(
                self.fds.as_mut_ptr(),
                self.fds.len() as libc::nfds_t,
                timeout_ms,
            )
        };
        if let (Some(fd), Some(p)) = (self.wake, self.fds.last()) {
            if p.revents & libc::POLLIN != 0 {
                let mut v = 0u64;
                // SAFETY: an 8-byte read of a non-blocking eventfd into v.
                unsafe { libc::read(fd, (&raw mut v).cast(), 8) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    /// What the engine does at stop: a worker asleep for up to
    /// [`IDLE_SLEEP_MS`] (here 10 s) wakes when its statistics' waker is
    /// written, not at its timeout.
    #[test]
    fn a_sleeping_worker_wakes_when_told() {
        // SAFETY: eventfd(2); the File owns the new descriptor.
        let efd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        assert!(efd >= 0);
        // SAFETY: efd is a new descriptor nobody else owns.
        let wake = unsafe { std::fs::File::from_raw_fd(efd) };
        let stats = Arc::new(dataplane::WorkerStats::new(0, 1, &[]));
        stats.set_waker(wake.try_clone().unwrap());
        // A socket that never becomes readable stands for the RX queue.
        let (quiet, _peer) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut w = Waiter::new(Mode::Interrupt, &[quiet.as_raw_fd()], Some(efd));
        assert!(w.after_round(0), "an empty round in interrupt mode sleeps");
        let waker = stats.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            waker.wake();
        });
        let start = Instant::now();
        w.sleep(10_000);
        let slept = start.elapsed();
        t.join().unwrap();
        assert!(
            slept < Duration::from_secs(5),
            "slept {slept:?}: the wake did not end the sleep"
        );
        // The wake was taken: the next sleep lasts its timeout.
        let start = Instant::now();
        w.sleep(50);
        assert!(start.elapsed() >= Duration::from_millis(50));
    }
}
