//! A veth end's receive work in its own kthread, on its owner's CPUs
//! (threaded NAPI).
//!
//! Why: a veth has no interrupt. With NAPI (an XDP program attached in
//! driver mode, or GRO on), frames sent to an end wait in its 256-entry
//! ring and its NAPI poll processes them; without threading that poll runs
//! in the *sender's* softirq, so the receiver's work (IP input, an XDP
//! program, an AF_XDP copy) is charged to whoever transmitted. With
//! `threaded` set, each NAPI instance runs in a kthread `napi/<dev>-<id>`
//! that can be pinned like any thread: the DUT's ends on the DUT's CPUs,
//! the tester's on the tester's. Each side then pays for its own reception
//! and its CPU counters show it, as with two boxes cabled together.
//!
//! The tester's threads run at a real-time priority: the tester's
//! generator spins on the same CPU (pacing inside an XDP program), and its
//! receive work must preempt it, never queue behind it. The DUT's threads
//! keep the normal policy: the DUT is measured as it would run.
//!
//! (An earlier testbed steered receive work with RPS instead; with an
//! skb-based generator the ring overflowed whenever the hypervisor delayed
//! a NAPI thread. With XDP frames the generator bursts at most one test-run
//! batch, and the bench reports both the zero-loss rate and the rate at a
//! small loss ratio, so such hiccups are visible instead of decisive.)

use anyhow::{bail, Context, Result};

use crate::Netns;

/// How a NAPI thread is scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NapiPolicy {
    /// The normal policy (SCHED_OTHER).
    Normal,
    /// SCHED_FIFO at this priority (1..=99).
    Fifo(i32),
}

/// Turn on threaded NAPI for `ifname` in `ns`, pin its NAPI threads to
/// `cpus` and schedule them by `policy`; returns their pids.
///
/// The end must have NAPI already (an XDP program in driver mode, or GRO
/// on); the threads are recreated when NAPI is (e.g. XDP detached and
/// attached again), so call this after the last such change.
pub fn thread_napi(
    ns: &Netns,
    ifname: &str,
    cpus: &[usize],
    policy: NapiPolicy,
) -> Result<Vec<i32>> {
    thread_napi_in(ns.name(), ifname, cpus, policy)
}

/// [`thread_napi`] for the namespace named `ns` (`ip netns` name).
pub fn thread_napi_in(
    ns: &str,
    ifname: &str,
    cpus: &[usize],
    policy: NapiPolicy,
) -> Result<Vec<i32>> {
    if cpus.is_empty() {
        bail!("threaded NAPI for {ifname}: no CPUs given");
    }
    // sysfs shows the namespace of its mount: `ip netns exec` remounts it.
    let path = format!("/sys/class/net/{ifname}/threaded");
    let out = std::process::Command::new("ip")
        .args(["netns", "exec", ns, "sh", "-c", &format!("echo 1 > {path}")])
        .stdin(std::process::Stdio::null())
        .output()
        .context("running ip netns exec")?;
    if !out.status.success() {
        bail!(
            "turning on threaded NAPI for {ifname} in {ns} failed ({}): the end needs NAPI \
             first: an XDP program in driver mode, or GRO on",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let pids = napi_threads(ifname)?;
    if pids.is_empty() {
        bail!("threaded NAPI is on for {ifname}, but no napi/{ifname}-* thread exists");
    }
    for &pid in &pids {
        pin(pid, cpus).with_context(|| format!("pinning napi thread {pid} of {ifname}"))?;
        schedule(pid, policy)
            .with_context(|| format!("scheduling napi thread {pid} of {ifname} as {policy:?}"))?;
    }
    Ok(pids)
}

/// The pids of `ifname`'s NAPI threads (`napi/<ifname>-<napi id>`; kthread
/// names are not truncated in `/proc/<pid>/comm`). Interface names made by
/// this crate are unique per process, so the name identifies the device.
pub fn napi_threads(ifname: &str) -> Result<Vec<i32>> {
    let prefix = format!("napi/{ifname}-");
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").context("reading /proc")? {
        let Ok(e) = e else { continue };
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if let Ok(comm) = std::fs::read_to_string(format!("/proc/{pid}/comm")) {
            let c = comm.trim_end();
            if c.strip_prefix(&prefix)
                .is_some_and(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
            {
                pids.push(pid);
            }
        }
    }
    pids.sort_unstable();
    Ok(pids)
}

/// The CPUs `pid` may run on.
pub fn affinity(pid: i32) -> Result<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t filled by the kernel.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(std::io::Error::last_os_error().into());
        }
        Ok((0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect())
    }
}

/// Run `f` with the calling thread on `cpu` alone, and give the thread
/// its CPUs back after; `None` (and `f` not run) when it cannot be moved
/// there.
pub fn on_cpu<T>(cpu: usize, f: impl FnOnce() -> T) -> Option<T> {
    let before = affinity(0).ok()?;
    pin(0, &[cpu]).ok()?;
    let out = f();
    let _ = pin(0, &before);
    Some(out)
}

/// Pin thread `pid` (0: the calling thread) to `cpus`.
pub fn pin(pid: i32, cpus: &[usize]) -> Result<()> {
    // SAFETY: a zeroed cpu_set_t with our CPUs set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error().into());
        }
    }
    Ok(())
}

/// Schedule thread `pid` (0: the calling thread) by `policy`.
pub fn schedule(pid: i32, policy: NapiPolicy) -> Result<()> {
    let (pol, prio) = match policy {
        NapiPolicy::Normal => (libc::SCHED_OTHER, 0),
        NapiPolicy::Fifo(p) => (libc::SCHED_FIFO, p.clamp(1, 99)),
    };
    let param = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: valid sched_param.
    if unsafe { libc::sched_setscheduler(pid, pol, &param) } != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    Ok(())
}

/// The scheduling policy of `pid` (SCHED_* constant).
pub fn policy(pid: i32) -> i32 {
    // SAFETY: plain syscall.
    unsafe { libc::sched_getscheduler(pid) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{require_root, VethPair};

    #[test]
    fn threads_are_found_pinned_and_scheduled() {
        if !require_root("threads_are_found_pinned_and_scheduled") {
            return;
        }
        let (a, b) = (Netns::new("napia").unwrap(), Netns::new("napib").unwrap());
        let v = VethPair::new(&a, &b, 2).unwrap();
        // Without NAPI there is nothing to thread: a clear error.
        let err = thread_napi(&b, &v.b, &[0], NapiPolicy::Normal).unwrap_err();
        assert!(format!("{err:#}").contains("needs NAPI"), "{err:#}");
        b.run(&["ethtool", "-K", &v.b, "gro", "on"]).unwrap();
        let last = std::thread::available_parallelism().map_or(1, |n| n.get()) - 1;
        let pids = thread_napi(&b, &v.b, &[last], NapiPolicy::Fifo(50)).unwrap();
        assert_eq!(pids.len(), 2, "one thread per RX queue");
        for &p in &pids {
            assert_eq!(affinity(p).unwrap(), vec![last]);
            assert_eq!(policy(p), libc::SCHED_FIFO);
        }
        assert!(
            napi_threads(&v.a).unwrap().is_empty(),
            "the peer is untouched"
        );
        let missing = thread_napi(&b, "nosuchif0", &[0], NapiPolicy::Normal);
        assert!(missing.is_err());
    }
}
