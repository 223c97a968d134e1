//! Which CPU the tester's threads run on.
//!
//! Why: on a small machine the tester and the DUT share CPUs. Left to the
//! scheduler, the generator, the receiver and the DUT's worker migrate
//! between cores and trial results scatter. The benchmark therefore gives
//! the tester one CPU (the last) and the DUT the others, as two boxes
//! cabled together would have. A process-wide setting, because the
//! calibration and every `NetTrial` of a run must use the same CPU.

use std::sync::atomic::{AtomicUsize, Ordering};

static TESTER_CPU: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Run the tester's threads on `cpu` from now on (`None`: anywhere).
pub fn set_tester_cpu(cpu: Option<usize>) {
    TESTER_CPU.store(cpu.unwrap_or(usize::MAX), Ordering::Relaxed);
}

/// The configured tester CPU.
pub fn tester_cpu() -> Option<usize> {
    let c = TESTER_CPU.load(Ordering::Relaxed);
    (c != usize::MAX).then_some(c)
}

/// Pins the calling thread to the tester CPU, if one is set. Failure (a
/// CPU outside the process's set) leaves the thread where it is: pinning
/// is a measurement aid, not a requirement.
pub fn pin_tester_thread() {
    let Some(cpu) = tester_cpu() else { return };
    // SAFETY: cpu_set_t is plain data; the set names one CPU.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        let _ = libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// The CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: as above; sched_getaffinity fills the set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// The split the benchmark uses: the last allowed CPU for the tester, the
/// others for the DUT; `None` on a single CPU (nothing to split).
pub fn split() -> Option<(usize, Vec<usize>)> {
    let mut cpus = allowed_cpus();
    let tester = cpus.pop()?;
    (!cpus.is_empty()).then_some((tester, cpus))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_leaves_the_dut_at_least_one_cpu() {
        if let Some((t, dut)) = split() {
            assert!(!dut.is_empty());
            assert!(!dut.contains(&t));
        } else {
            assert!(allowed_cpus().len() <= 1);
        }
    }
}
