//! CLOCK_MONOTONIC time and absolute sleeps.
//!
//! Why CLOCK_MONOTONIC: the generator stamps frames with it and the
//! receiver (another thread, same host) compares against it: one shared
//! clock makes one-way latency exact. Absolute sleeps (`TIMER_ABSTIME`)
//! keep the pacing schedule free of accumulated drift.

/// Now, ns on CLOCK_MONOTONIC.
pub use bpf::mono_ns;

/// Sleep until CLOCK_MONOTONIC reaches `t_ns` (returns at once if past).
#[inline]
pub fn sleep_until(t_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (t_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (t_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: valid timespec; EINTR just returns early, the caller
    // re-checks the time.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
}

/// Timer slack of the calling thread, 1 us: the default 50 us would make
/// every paced sleep overshoot by up to that much.
pub fn small_timer_slack() {
    // SAFETY: prctl with integer arguments, affects only this thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong) };
}
