//! CPU soakers: one lowest-priority (`SCHED_IDLE`) spinning thread per
//! DUT CPU, whose progress measures how much of each CPU the DUT left
//! unused (netperf's "looper" method).
//!
//! Why: this kernel accounts CPU time by tick sampling without
//! `CONFIG_IRQ_TIME_ACCOUNTING`, with tickless idle. Softirq work done
//! while a CPU is otherwise idle (the kernel DUT's whole forwarding, after
//! an RPS IPI) is counted as *idle* time: /proc/stat undercounted the
//! kernel DUT's CPU by about 2x here. A soaker cannot be fooled: whatever
//! it did not get, something else used. It also keeps the DUT's vCPUs out
//! of the halted state, as benchmarks on bare metal disable deep C-states:
//! on this VM, waking a halted vCPU for every RPS IPI made the kernel DUT
//! drop frames with its CPU 70 % "idle" (zero-loss 0.31 Mpps without,
//! at least 0.41 with soakers). Both DUT kinds run under the same conditions.
//! The tester's CPU is not soaked (its capacity is what calibration
//! measures).
//!
//! **Off by default** (`--soak` turns them on): `SCHED_IDLE` threads run
//! only when no other thread wants the CPU, except that since 6.12 the
//! kernel's fair server guarantees normal and idle-policy tasks 50 ms of
//! each second on a CPU real-time work keeps busy. Near its capacity the
//! DUT's real-time NAPI thread does, and 1 s trials through the kernel DUT
//! lost 44-250 k frames each with a 42-54 ms receive gap 964-981 ms into
//! the trial; without soakers those gaps were gone (a soaker that slept
//! 60 ms whenever it had been starved made them longer, 54 ms: the server
//! keeps its time once started). The bench now keeps vCPUs out of halt
//! with a PM QoS request (`testbed::cpu_latency`) and reads the DUT's CPU
//! time from its own CPUs' /proc/stat lines (`probe`, `dut_cpu_source` =
//! `dut_cpus`); soakers stay for CPU-share measurements below
//! saturation. Their idle rate (iterations per second) is measured once
//! when they start, on a quiet machine.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// A counter on its own cache line (soakers must not share lines).
#[repr(align(128))]
#[derive(Default)]
struct Padded(AtomicU64);

struct Soakers {
    cpus: Vec<usize>,
    counts: Arc<Vec<Padded>>,
    /// Iterations per second of each soaker on an idle CPU.
    idle_rate: Vec<f64>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

static SOAKERS: Mutex<Option<Soakers>> = Mutex::new(None);

/// Progress of every soaker at one instant.
#[derive(Debug, Clone)]
pub struct SoakMark {
    counts: Vec<u64>,
    at: Instant,
}

pub use schema::dut_sample::CpuBusy;

/// Spin counting until `stop`: plain arithmetic, no PAUSE (a PAUSE loop
/// makes the hypervisor deschedule the vCPU).
fn soak(cpu: usize, count: Arc<Vec<Padded>>, i: usize, stop: Arc<AtomicBool>) {
    // SAFETY: plain data and syscalls on the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        let p = libc::sched_param { sched_priority: 0 };
        libc::sched_setscheduler(0, libc::SCHED_IDLE, &p);
    }
    let mut x = 1u64;
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..1024 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        count[i].0.fetch_add(1, Ordering::Relaxed);
    }
}

/// Start soakers on `cpus` (replacing any running) and measure their idle
/// rate over `calibrate` (the machine should be quiet meanwhile).
pub fn start(cpus: &[usize], calibrate: Duration) -> Result<()> {
    stop();
    if cpus.is_empty() {
        bail!("no CPUs to soak");
    }
    let counts: Arc<Vec<Padded>> = Arc::new(cpus.iter().map(|_| Padded::default()).collect());
    let halt = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    for (i, &cpu) in cpus.iter().enumerate() {
        let (c, h) = (counts.clone(), halt.clone());
        threads.push(
            std::thread::Builder::new()
                .name(format!("sr-soak-{cpu}"))
                .spawn(move || soak(cpu, c, i, h))
                .context("spawning a CPU soaker")?,
        );
    }
    let read =
        |c: &Vec<Padded>| -> Vec<u64> { c.iter().map(|p| p.0.load(Ordering::Relaxed)).collect() };
    std::thread::sleep(Duration::from_millis(20));
    // Best of three windows: a window disturbed by anything else only
    // lowers the rate, which would overstate availability later.
    let mut idle_rate = vec![0f64; cpus.len()];
    let win = calibrate / 3;
    for _ in 0..3 {
        let (a, t0) = (read(&counts), Instant::now());
        std::thread::sleep(win);
        let (b, dt) = (read(&counts), t0.elapsed().as_secs_f64());
        for (r, (x, y)) in idle_rate.iter_mut().zip(a.iter().zip(&b)) {
            *r = r.max((y - x) as f64 / dt);
        }
    }
    if idle_rate.iter().any(|&r| r <= 0.0) {
        halt.store(true, Ordering::Relaxed);
        bail!("a CPU soaker made no progress while calibrating");
    }
    *SOAKERS.lock().unwrap_or_else(|e| e.into_inner()) = Some(Soakers {
        cpus: cpus.to_vec(),
        counts,
        idle_rate,
        stop: halt,
        threads,
    });
    Ok(())
}

/// Stop the soakers, if any.
pub fn stop() {
    let s = SOAKERS.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(s) = s {
        s.stop.store(true, Ordering::Relaxed);
        for t in s.threads {
            let _ = t.join();
        }
    }
}

/// The soakers' progress now (`None` when none run).
pub fn mark() -> Option<SoakMark> {
    let g = SOAKERS.lock().unwrap_or_else(|e| e.into_inner());
    let s = g.as_ref()?;
    Some(SoakMark {
        counts: s
            .counts
            .iter()
            .map(|p| p.0.load(Ordering::Relaxed))
            .collect(),
        at: Instant::now(),
    })
}

/// Each soaked CPU's busy share since `a` (`None` when the soakers changed
/// or stopped meanwhile).
pub fn busy_since(a: &SoakMark) -> Option<Vec<CpuBusy>> {
    let b = mark()?;
    let g = SOAKERS.lock().unwrap_or_else(|e| e.into_inner());
    let s = g.as_ref()?;
    if a.counts.len() != s.cpus.len() {
        return None;
    }
    let dt = b.at.saturating_duration_since(a.at).as_secs_f64();
    if dt <= 0.0 {
        return None;
    }
    Some(
        s.cpus
            .iter()
            .enumerate()
            .map(|(i, &cpu)| {
                let got = b.counts[i].saturating_sub(a.counts[i]) as f64 / dt;
                let avail = (got / s.idle_rate[i]).clamp(0.0, 1.0);
                CpuBusy {
                    cpu,
                    busy_pct: 100.0 * (1.0 - avail),
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_thread_on_the_cpu_shows_as_busy() {
        let cpu = *testbed::napi::affinity(0).unwrap().last().unwrap();
        start(&[cpu], Duration::from_millis(150)).unwrap();
        let a = mark().unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let quiet = busy_since(&a).unwrap()[0].busy_pct;
        // A normal-priority thread spinning on the same CPU takes it all.
        let stop = Arc::new(AtomicBool::new(false));
        let s2 = stop.clone();
        let hog = std::thread::spawn(move || {
            // SAFETY: plain data and syscall on this thread.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu, &mut set);
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            }
            while !s2.load(Ordering::Relaxed) {
                std::hint::black_box(0u64);
            }
        });
        std::thread::sleep(Duration::from_millis(20));
        let a = mark().unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let hogged = busy_since(&a).unwrap()[0].busy_pct;
        stop.store(true, Ordering::Relaxed);
        hog.join().unwrap();
        stop_all_for_test();
        // (Other tests may load the CPU meanwhile: only the hog's effect
        // is certain.)
        assert!(hogged > 80.0, "hogged CPU busy {hogged} %");
        assert!(hogged >= quiet, "quiet {quiet} %, hogged {hogged} %");
    }

    fn stop_all_for_test() {
        stop();
        assert!(mark().is_none());
    }
}
