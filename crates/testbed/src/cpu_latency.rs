//! The CPUs kept out of their deep idle states for a benchmark run, as
//! bare-metal benchmark hosts run with C-states off (tuned's
//! `latency-performance` profile does it the same way).
//!
//! Why: on a VM an idle vCPU halts, and waking it for the IPI that
//! schedules a veth end's NAPI thread takes tens of microseconds, long
//! enough to overflow the 256-frame ring at high rates. Idle-priority CPU
//! soakers used to keep the DUT's vCPUs busy for that reason, but the
//! kernel's fair server gives such tasks the CPU for up to 50 ms of each
//! second that real-time work (the DUT's NAPI threads) kept it busy:
//! 42-54 ms receive gaps ~970 ms into 1 s trials near the kernel DUT's
//! capacity, and the loss with them. A PM QoS request of 0 µs exit
//! latency (`/dev/cpu_dma_latency`) makes the idle governor poll instead
//! of halting, and no task runs for it.
//!
//! The request lives as long as the file stays open: the kernel drops it
//! when the process exits, however it exits (nothing to restore).
//!
//! [`relaxed`] lifts it for a while: waiting for the host to place the
//! tester's and the DUT's vCPUs near ([`crate::placement`]) goes faster
//! with idle vCPUs that halt, since a halted vCPU is one the host places
//! anew when it wakes.

use std::fs::File;
use std::io::Write;
use std::sync::Mutex;

/// The open request and how many [`Held`]s share it.
static REQUEST: Mutex<(usize, Option<File>)> = Mutex::new((0, None));

/// What the kernel takes for "no request" (`PM_QOS_DEFAULT_VALUE`).
const NO_LIMIT: i32 = -1;

/// The request, held while alive (shared by every `Held` in the process).
pub struct Held(());

impl Drop for Held {
    fn drop(&mut self) {
        let mut r = REQUEST.lock().unwrap_or_else(|e| e.into_inner());
        r.0 -= 1;
        if r.0 == 0 {
            r.1 = None;
        }
    }
}

/// Ask for 0 µs idle exit latency on every CPU; `None` when the device is
/// missing or not writable (not root, no PM QoS).
pub fn hold() -> Option<Held> {
    let mut r = REQUEST.lock().unwrap_or_else(|e| e.into_inner());
    if r.1.is_none() {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/cpu_dma_latency")
            .ok()?;
        f.write_all(&0i32.to_ne_bytes()).ok()?;
        r.1 = Some(f);
    }
    r.0 += 1;
    Some(Held(()))
}

/// Run `f` with the request lifted (idle CPUs may halt), and put it back
/// after; without a request held, just run `f`.
pub fn relaxed<T>(f: impl FnOnce() -> T) -> T {
    let set = |v: i32| {
        let mut r = REQUEST.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(file) = r.1.as_mut() {
            // The request's new value (4 bytes, native order), as the
            // kernel's cpu_latency_qos_write() reads it.
            let _ = file.write_all(&v.to_ne_bytes());
        }
    };
    set(NO_LIMIT);
    let out = f();
    set(0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Whether the request is open now.
    fn is_held() -> bool {
        REQUEST
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .1
            .is_some()
    }

    /// CPU 0's idle state `i`: its name and how often it was entered.
    fn state(i: usize) -> (String, u64) {
        let dir = format!("/sys/devices/system/cpu/cpu0/cpuidle/state{i}");
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).unwrap_or_default();
        (
            read("name").trim().into(),
            read("usage").trim().parse().unwrap_or(0),
        )
    }

    /// Whether CPU 0 enters idle state `i` within 2 s (at once, usually;
    /// later on a machine busy with builds and other tests).
    fn enters(i: usize) -> bool {
        let before = state(i).1;
        (0..200).any(|_| {
            std::thread::sleep(Duration::from_millis(10));
            state(i).1 > before
        })
    }

    /// With the request held the idle governor polls and never halts;
    /// relaxed, it halts; put back, it polls again; and the request goes
    /// with the last `Held`.
    #[test]
    fn idle_cpus_poll_while_held_and_halt_while_relaxed() {
        if state(0).0 != "POLL" || state(1).0.is_empty() {
            eprintln!("SKIP idle_cpus_poll_while_held_and_halt_while_relaxed: no polling and halting idle states");
            return;
        }
        let Some(h) = hold() else {
            eprintln!("SKIP idle_cpus_poll_while_held_and_halt_while_relaxed: /dev/cpu_dma_latency not writable");
            return;
        };
        let second = hold().expect("a second hold shares the request");
        assert!(enters(0), "CPU 0 never polled while the request was held");
        let halts = state(1).1;
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(state(1).1, halts, "CPU 0 halted while the request was held");
        assert!(relaxed(|| enters(1)), "CPU 0 never halted while relaxed");
        // A halt begun before the request came back is counted when it
        // ends (the kernel wakes idle CPUs on the change).
        std::thread::sleep(Duration::from_millis(20));
        let halts = state(1).1;
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(
            state(1).1,
            halts,
            "CPU 0 halted after the request was put back"
        );
        drop(second);
        assert!(is_held(), "held while one Held lives");
        drop(h);
        assert!(!is_held(), "gone with the last Held");
    }
}
