//! Pinning worker threads to cores (papers 000 and 002: a packet's whole
//! life on one core, and the CPU that handles a queue fixed).

use std::io;

/// The CPUs this process may run on, in order.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return vec![0];
        }
        let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect();
        if cpus.is_empty() {
            vec![0]
        } else {
            cpus
        }
    }
}

/// Pins the calling thread to `cpu`.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    // SAFETY: as above; the set names one CPU.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The core of worker `i`: the configured one, else the allowed CPUs in turn.
pub fn core_of(worker: usize, configured: &[usize], allowed: &[usize]) -> usize {
    configured
        .get(worker)
        .copied()
        .unwrap_or_else(|| allowed[worker % allowed.len()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cores_are_dealt_in_turn() {
        assert_eq!(core_of(0, &[], &[2, 3]), 2);
        assert_eq!(core_of(3, &[], &[2, 3]), 3);
        assert_eq!(core_of(1, &[5, 7], &[0]), 7);
        assert!(!allowed_cpus().is_empty());
    }
}
