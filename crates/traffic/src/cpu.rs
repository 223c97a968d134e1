//! Which CPU the tester's threads run on.
//!
//! Why: on a small machine the tester and the DUT share CPUs. Left to the
//! scheduler, the generator, the receiver and the DUT's worker migrate
//! between cores and trial results scatter. The benchmark therefore gives
//! the tester one CPU (the last) and the DUT the others, as two boxes
//! cabled together would have. A process-wide setting, because the
//! calibration and every `NetTrial` of a run must use the same CPU.
//!
//! With the xdp tester the tester may have several CPUs
//! (`--tester-cpus`): one generator thread and one receive queue per CPU
//! (`traffic::xdp`); the other threads run on the first.

use std::sync::Mutex;

static TESTER_CPUS: Mutex<Vec<usize>> = Mutex::new(Vec::new());

/// Run the tester's threads on `cpu` from now on (`None`: anywhere).
pub fn set_tester_cpu(cpu: Option<usize>) {
    set_tester_cpus(cpu.as_slice());
}

/// Give the tester `cpus` (empty: anywhere): the first runs its main
/// thread, each runs one generator and one receive queue's NAPI thread.
pub fn set_tester_cpus(cpus: &[usize]) {
    *TESTER_CPUS.lock().unwrap_or_else(|p| p.into_inner()) = cpus.to_vec();
}

static DUT_CPUS: Mutex<Vec<usize>> = Mutex::new(Vec::new());

/// The DUT's CPUs (empty: not pinned): where the noise meter probes how
/// far the host placed them from the tester's (`testbed::placement`).
pub fn set_dut_cpus(cpus: &[usize]) {
    *DUT_CPUS.lock().unwrap_or_else(|p| p.into_inner()) = cpus.to_vec();
}

/// The DUT's first CPU, if the DUT is pinned.
pub fn dut_cpu() -> Option<usize> {
    DUT_CPUS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .first()
        .copied()
}

/// The configured tester CPU (the first of [`tester_cpus`]).
pub fn tester_cpu() -> Option<usize> {
    tester_cpus().first().copied()
}

/// The tester's CPUs (empty: not pinned).
pub fn tester_cpus() -> Vec<usize> {
    TESTER_CPUS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
}

/// Pins the calling thread to the tester CPU, if one is set. Failure (a
/// CPU outside the process's set) leaves the thread where it is: pinning
/// is a measurement aid, not a requirement.
pub fn pin_tester_thread() {
    if let Some(cpu) = tester_cpu() {
        pin_to(cpu);
    }
}

/// Pins the calling thread to `cpu` (failure leaves it where it is).
pub fn pin_to(cpu: usize) {
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
    let (t, d) = split_n(&allowed_cpus(), 1)?;
    Some((t[0], d))
}

/// `n` tester CPUs (the last `n` of `allowed`) and the others for the
/// DUT; `None` unless the DUT keeps at least one.
pub fn split_n(allowed: &[usize], n: usize) -> Option<(Vec<usize>, Vec<usize>)> {
    if n == 0 || allowed.len() <= n {
        return None;
    }
    let (dut, tester) = allowed.split_at(allowed.len() - n);
    Some((tester.to_vec(), dut.to_vec()))
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

    #[test]
    fn split_n_gives_the_tester_the_last_cpus() {
        let all = [0, 1, 2, 3];
        assert_eq!(split_n(&all, 1), Some((vec![3], vec![0, 1, 2])));
        assert_eq!(split_n(&all, 2), Some((vec![2, 3], vec![0, 1])));
        assert_eq!(split_n(&all, 4), None, "the DUT keeps one");
        assert_eq!(split_n(&all, 0), None);
        assert_eq!(split_n(&[5], 1), None);
    }

    #[test]
    fn the_first_tester_cpu_is_the_main_one() {
        set_tester_cpus(&[3, 1]);
        assert_eq!((tester_cpu(), tester_cpus()), (Some(3), vec![3, 1]));
        set_tester_cpu(None);
        assert_eq!((tester_cpu(), tester_cpus()), (None, vec![]));
    }
}
