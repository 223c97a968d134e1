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

use std::fs::File;
use std::io::Write;

/// The request, held while alive.
pub struct Held(#[allow(dead_code)] File);

/// Ask for 0 µs idle exit latency on every CPU; `None` when the device is
/// missing or not writable (not root, no PM QoS).
pub fn hold() -> Option<Held> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/cpu_dma_latency")
        .ok()?;
    f.write_all(&0i32.to_ne_bytes()).ok()?;
    Some(Held(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With the request held the idle governor picks the polling state:
    /// its usage count grows while the CPUs idle, and the request goes
    /// with the file.
    #[test]
    fn idle_cpus_poll_while_held() {
        let state0 = "/sys/devices/system/cpu/cpu0/cpuidle/state0";
        let name = std::fs::read_to_string(format!("{state0}/name")).unwrap_or_default();
        if name.trim() != "POLL" {
            eprintln!("SKIP idle_cpus_poll_while_held: no cpuidle polling state");
            return;
        }
        let Some(h) = hold() else {
            eprintln!("SKIP idle_cpus_poll_while_held: /dev/cpu_dma_latency not writable");
            return;
        };
        let usage = || -> u64 {
            std::fs::read_to_string(format!("{state0}/usage"))
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        };
        let before = usage();
        // CPU 0 has to go idle once: up to 2 s on a busy machine (other
        // tests and builds beside this one), usually at once.
        let polled = (0..200).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(10));
            usage() > before
        });
        assert!(polled, "CPU 0 never polled while the request was held");
        drop(h);
    }
}
