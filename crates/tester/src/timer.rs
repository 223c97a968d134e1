//! A one-shot timer that interrupts the calling thread's system call.
//!
//! Why: a live-frames test run ends after `repeat` iterations or when a
//! signal is pending for its thread (it returns `EINTR`). The generator
//! does not know in advance how many iterations a paced trial takes, so it
//! asks for "many" and arms this timer for the trial's deadline. The
//! signal is a real-time signal with an empty handler (an ignored signal
//! would never be pending), delivered to this thread only
//! (`SIGEV_THREAD_ID`).
//!
//! Once due, the timer fires again every [`REFIRE`] until disarmed. Why:
//! a signal that arrives after the caller checked the deadline but before
//! it entered the system call is taken in user space (the empty handler
//! runs when a preemption returns there, and the tester CPU's real-time
//! NAPI threads preempt the generator all the time); the call would then
//! start with nothing pending and run its whole `repeat` (minutes: the
//! hang experiment 002 once showed). The next firing ends it.

use std::io;
use std::sync::Once;

/// The signal: one of the real-time signals nobody else here uses.
fn signo() -> i32 {
    libc::SIGRTMIN() + 5
}

/// How often a due timer fires again until it is disarmed.
pub(crate) const REFIRE: std::time::Duration = std::time::Duration::from_millis(1);

extern "C" fn on_signal(_: i32) {}

fn install_handler() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: installing an async-signal-safe empty handler, without
        // SA_RESTART so the interrupted call returns EINTR.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = 0;
            libc::sigaction(signo(), &sa, std::ptr::null_mut());
        }
    });
}

/// A CLOCK_MONOTONIC timer that signals the thread that created it.
pub(crate) struct ThreadTimer {
    id: libc::timer_t,
}

impl ThreadTimer {
    pub fn new() -> io::Result<ThreadTimer> {
        install_handler();
        // SAFETY: plain syscalls with a zeroed, then filled, sigevent.
        unsafe {
            let mut sev: libc::sigevent = std::mem::zeroed();
            sev.sigev_notify = libc::SIGEV_THREAD_ID;
            sev.sigev_signo = signo();
            sev.sigev_notify_thread_id = libc::gettid();
            let mut id: libc::timer_t = std::mem::zeroed();
            if libc::timer_create(libc::CLOCK_MONOTONIC, &mut sev, &mut id) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(ThreadTimer { id })
        }
    }

    /// Fire at `at_ns` (CLOCK_MONOTONIC), then every [`REFIRE`] until
    /// disarmed; 0 disarms.
    pub fn arm_at(&self, at_ns: u64) -> io::Result<()> {
        let ts = |ns: u64| libc::timespec {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as libc::c_long,
        };
        let spec = libc::itimerspec {
            it_interval: ts(if at_ns == 0 { 0 } else { REFIRE.as_nanos() as u64 }),
            it_value: ts(at_ns),
        };
        // SAFETY: our timer id, valid itimerspec.
        let r = unsafe {
            libc::timer_settime(self.id, libc::TIMER_ABSTIME, &spec, std::ptr::null_mut())
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    pub fn disarm(&self) {
        let _ = self.arm_at(0);
    }
}

impl Drop for ThreadTimer {
    fn drop(&mut self) {
        // SAFETY: deleting our own timer.
        unsafe { libc::timer_delete(self.id) };
    }
}

pub use bpf::mono_ns;

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Sleep up to `d`; how long it took (a signal cuts it short).
    fn sleep_for(d: Duration) -> Duration {
        let t = Instant::now();
        let req = libc::timespec {
            tv_sec: d.as_secs() as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        };
        // SAFETY: valid timespec; remaining time not wanted.
        unsafe { libc::nanosleep(&req, std::ptr::null_mut()) };
        t.elapsed()
    }

    /// The race the re-firing closes: the deadline's signal is taken
    /// before the long call starts (here by a first sleep); the call must
    /// still be interrupted, by the next firing, not run its full length.
    #[test]
    fn a_signal_taken_before_the_call_does_not_let_the_call_run_on() {
        let t = ThreadTimer::new().unwrap();
        t.arm_at(mono_ns()).unwrap(); // due now
        let first = sleep_for(Duration::from_secs(5));
        assert!(first < Duration::from_secs(1), "first sleep {first:?}");
        let second = sleep_for(Duration::from_secs(5));
        t.disarm();
        assert!(
            second < Duration::from_secs(1),
            "a call entered after the signal was taken ran {second:?}"
        );
        // Disarmed: nothing interrupts any more.
        let third = sleep_for(Duration::from_millis(50));
        assert!(third >= Duration::from_millis(50), "disarmed timer fired");
    }
}
