//! A one-shot timer that interrupts the calling thread's system call.
//!
//! Why: a live-frames test run ends after `repeat` iterations or when a
//! signal is pending for its thread (it returns `EINTR`). The generator
//! does not know in advance how many iterations a paced trial takes, so it
//! asks for "many" and arms this timer for the trial's deadline. The
//! signal is a real-time signal with an empty handler (an ignored signal
//! would never be pending), delivered to this thread only
//! (`SIGEV_THREAD_ID`).

use std::io;
use std::sync::Once;

/// The signal: one of the real-time signals nobody else here uses.
fn signo() -> i32 {
    libc::SIGRTMIN() + 5
}

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

    /// Fire once at `at_ns` (CLOCK_MONOTONIC); 0 disarms.
    pub fn arm_at(&self, at_ns: u64) -> io::Result<()> {
        let ts = libc::timespec {
            tv_sec: (at_ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (at_ns % 1_000_000_000) as libc::c_long,
        };
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: ts,
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
