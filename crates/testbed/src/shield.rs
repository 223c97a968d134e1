//! A shield around the DUT's CPUs for the length of a benchmark run: every
//! other thread of the host that may run on them (and on others too) is
//! confined to the others, and given back its CPUs afterwards. What
//! `isolcpus` or `cset shield` give a benchmark host, done at run time.
//!
//! Why: on a small VM the host's own agents share the DUT's CPU. A
//! scheduler trace (`bench/stall/`) showed one of them (a sandbox agent's
//! tokio thread) running 1.5-2.5 ms of kernel code once a second on the
//! DUT's CPU; under `preempt=none` not even a real-time NAPI thread can
//! take the CPU back, so the DUT's 256-frame veth ring overflowed in
//! every trial and every zero-loss rate measured that agent (about 0.1
//! Mpps), not the DUT. Shielded, the same trials lost nothing up to 0.63
//! Mpps.
//!
//! Unbound kernel threads move too, where the kernel lets them (what
//! tuned's `cpu-partitioning` does): the same trace, at 1.1 Mpps into
//! softrouter's XDP tier, showed `kdamond` (DAMON's monitor, a normal
//! priority kernel thread) running 150 us of kernel code on the DUT's CPU
//! in the longest receive gap of every trial, as long as the gap.
//!
//! Unbound workqueue work (the `kworker/uN:M` threads the kernel does not
//! let anyone move) is kept off them through the workqueue's cpumask: the
//! trace at 1.3 Mpps showed one running 279 us on the DUT's CPU inside a
//! 310 us receive gap.
//!
//! What is left alone: per-CPU kernel threads (the kernel refuses to move
//! them, and they are allowed only on their CPU), this process (the bench
//! places its own threads), and threads allowed only on the DUT's CPUs
//! (someone pinned them there on purpose, as the testbed pins the DUT's
//! NAPI threads).
//! Threads that shielded threads start during the run inherit the
//! confinement; when the shield is lowered they get every CPU their
//! parent had back (those still confined to the other CPUs and started
//! after the shield went up).

use std::collections::BTreeSet;

/// `PF_KTHREAD` in `/proc/PID/stat`'s flags.
const PF_KTHREAD: u64 = 0x0020_0000;

/// Where unbound workqueues may run (a hex CPU mask).
const WQ_CPUMASK: &str = "/sys/devices/virtual/workqueue/cpumask";

/// The raised shield; lowering it (or dropping it, or the Ctrl-C
/// handler's [`crate::cleanup_all`]) gives every moved thread its CPUs
/// back. After SIGKILL nothing does: `taskset -p -c ALL TID` by hand.
pub struct Shield {
    moved: usize,
    rest: Vec<usize>,
}

/// What a raised shield changed, where the Ctrl-C handler finds it.
struct Raised {
    moved: Vec<(i32, Vec<usize>)>,
    rest: Vec<usize>,
    /// Boot-relative start (clock ticks) of the shield: threads started
    /// later by shielded ones are widened again when it is lowered.
    raised_at: u64,
    widen_to: Vec<usize>,
    /// The workqueue cpumask before the shield, to write back.
    wq_mask: Option<String>,
}

static RAISED: std::sync::Mutex<Option<Raised>> = std::sync::Mutex::new(None);

/// Lower the shield if one is up (idempotent).
pub fn lower_all() {
    let r = match RAISED.lock() {
        Ok(mut g) => g.take(),
        Err(p) => p.into_inner().take(),
    };
    if let Some(r) = r {
        r.lower();
    }
}

impl Shield {
    /// Confine every other user thread that may run on `dut_cpus` to the
    /// remaining online CPUs. `None` when no CPU would remain.
    pub fn raise(dut_cpus: &[usize]) -> Option<Shield> {
        let online = online_cpus();
        let dut: BTreeSet<usize> = dut_cpus.iter().copied().collect();
        let rest: Vec<usize> = online
            .iter()
            .copied()
            .filter(|c| !dut.contains(c))
            .collect();
        if rest.is_empty() || dut.is_empty() {
            return None;
        }
        let raised_at = uptime_ticks();
        let me = std::process::id() as i32;
        let mut moved = Vec::new();
        for (pid, tid) in threads() {
            if pid == me {
                continue;
            }
            let Some(orig) = affinity(tid) else { continue };
            if !orig.iter().any(|c| dut.contains(c)) || orig.iter().all(|c| dut.contains(c)) {
                continue;
            }
            let new: Vec<usize> = orig.iter().copied().filter(|c| !dut.contains(c)).collect();
            if set_affinity(tid, &new) {
                moved.push((tid, orig));
            }
        }
        let wq_mask = std::fs::read_to_string(WQ_CPUMASK)
            .ok()
            .map(|m| m.trim().to_string())
            .filter(|_| std::fs::write(WQ_CPUMASK, crate::rps::cpu_mask_hex(&rest)).is_ok());
        let shield = Shield {
            moved: moved.len(),
            rest: rest.clone(),
        };
        let raised = Raised {
            moved,
            rest,
            raised_at,
            widen_to: online,
            wq_mask,
        };
        match RAISED.lock() {
            Ok(mut g) => *g = Some(raised),
            Err(p) => *p.into_inner() = Some(raised),
        }
        Some(shield)
    }

    /// Threads confined while the shield is up.
    pub fn moved(&self) -> usize {
        self.moved
    }

    /// The CPUs the other threads run on meanwhile.
    pub fn rest(&self) -> &[usize] {
        &self.rest
    }
}

impl Drop for Shield {
    fn drop(&mut self) {
        lower_all();
    }
}

impl Raised {
    fn lower(self) {
        if let Some(m) = &self.wq_mask {
            let _ = std::fs::write(WQ_CPUMASK, m);
        }
        let known: BTreeSet<i32> = self.moved.iter().map(|(t, _)| *t).collect();
        for (tid, orig) in &self.moved {
            set_affinity(*tid, orig);
        }
        // Children of shielded threads, started meanwhile.
        let me = std::process::id() as i32;
        let rest: BTreeSet<usize> = self.rest.iter().copied().collect();
        for (pid, tid) in threads() {
            if pid == me || known.contains(&tid) || is_kthread(pid, tid) {
                continue;
            }
            let Some(now) = affinity(tid) else { continue };
            let confined = now.iter().all(|c| rest.contains(c)) && now.len() == rest.len();
            if confined && start_ticks(pid, tid).is_some_and(|s| s >= self.raised_at) {
                set_affinity(tid, &self.widen_to);
            }
        }
    }
}

/// Every `(pid, tid)` of the host's `/proc`.
fn threads() -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return out;
    };
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(tasks) = std::fs::read_dir(p.path().join("task")) else {
            continue;
        };
        for t in tasks.flatten() {
            if let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) {
                out.push((pid, tid));
            }
        }
    }
    out
}

/// The fields of `/proc/PID/task/TID/stat` after the command (which may
/// hold spaces and parentheses).
fn stat_fields(pid: i32, tid: i32) -> Option<Vec<String>> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
    let after = &s[s.rfind(')')? + 1..];
    Some(after.split_whitespace().map(str::to_string).collect())
}

fn is_kthread(pid: i32, tid: i32) -> bool {
    // Field 9 (flags) is the 7th after the command; unreadable: leave it.
    stat_fields(pid, tid)
        .and_then(|f| f.get(6).and_then(|v| v.parse::<u64>().ok()))
        .is_none_or(|flags| flags & PF_KTHREAD != 0)
}

/// Field 22 (starttime, clock ticks since boot).
fn start_ticks(pid: i32, tid: i32) -> Option<u64> {
    stat_fields(pid, tid)?.get(19)?.parse().ok()
}

fn uptime_ticks() -> u64 {
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    std::fs::read_to_string("/proc/uptime")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0, |secs| (secs * hz) as u64)
}

fn online_cpus() -> Vec<usize> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    cpu_list(text.trim())
}

/// A kernel CPU list (`0-3,5`).
fn cpu_list(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(a), Ok(b)) = (a.trim().parse::<usize>(), b.trim().parse::<usize>()) {
            out.extend(a..=b);
        }
    }
    out
}

fn affinity(tid: i32) -> Option<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data that sched_getaffinity fills.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        Some(
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect(),
        )
    }
}

fn set_affinity(tid: i32, cpus: &[usize]) -> bool {
    // SAFETY: as above; the set names CPUs below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
            libc::CPU_SET(c, &mut set);
        }
        libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child process allowed on every CPU is confined to the others
    /// while the shield is up and gets its CPUs back after; this
    /// process is left alone.
    #[test]
    fn other_threads_leave_the_shielded_cpus_and_come_back() {
        if !crate::root::is_root() || online_cpus().len() < 2 {
            eprintln!("skipped: needs root and two CPUs");
            return;
        }
        let _one = SHIELD_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let all = online_cpus();
        set_affinity(pid, &all);
        let mine = affinity(0).unwrap();
        let shield = Shield::raise(&[all[0]]).expect("a CPU remains");
        assert!(shield.moved() > 0);
        assert_eq!(affinity(pid).unwrap(), all[1..].to_vec());
        assert_eq!(affinity(0).unwrap(), mine, "the bench's own threads stay");
        // What the Ctrl-C handler (`cleanup_all`) runs lowers it as well.
        lower_all();
        assert_eq!(affinity(pid).unwrap(), all);
        drop(shield);
        assert_eq!(affinity(pid).unwrap(), all);
        child.kill().unwrap();
        child.wait().unwrap();
    }

    /// An unbound kernel thread (kthreadd, allowed everywhere) is confined
    /// too and given its CPUs back.
    #[test]
    fn unbound_kernel_threads_leave_the_shielded_cpus_and_come_back() {
        let all = online_cpus();
        if !crate::root::is_root() || all.len() < 2 || affinity(2).as_deref() != Some(&all[..]) {
            eprintln!("skipped: needs root, two CPUs and kthreadd allowed on all of them");
            return;
        }
        assert!(is_kthread(2, 2));
        let _one = SHIELD_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let wq = std::fs::read_to_string(WQ_CPUMASK).ok();
        let shield = Shield::raise(&[all[0]]).expect("a CPU remains");
        assert_eq!(affinity(2).unwrap(), all[1..].to_vec());
        if wq.is_some() {
            let now = std::fs::read_to_string(WQ_CPUMASK).unwrap();
            let bits = |m: &str| u128::from_str_radix(&m.trim().replace(',', ""), 16).unwrap();
            assert_eq!(
                bits(&now),
                bits(&crate::rps::cpu_mask_hex(&all[1..])),
                "unbound work kept off CPU {}",
                all[0]
            );
        }
        drop(shield);
        assert_eq!(affinity(2).unwrap(), all);
        assert_eq!(std::fs::read_to_string(WQ_CPUMASK).ok(), wq);
    }

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(cpu_list("0-1"), vec![0, 1]);
        assert_eq!(cpu_list("0,2-4,7"), vec![0, 2, 3, 4, 7]);
        assert_eq!(cpu_list(""), Vec::<usize>::new());
    }

    /// Every CPU shielded leaves nothing to move to.
    #[test]
    fn no_shield_without_a_cpu_left() {
        assert!(Shield::raise(&online_cpus()).is_none());
        assert!(Shield::raise(&[]).is_none());
    }

    static SHIELD_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());
}
