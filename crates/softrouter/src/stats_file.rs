//! The statistics file written by `softrouter run --stats-json`: filled
//! from the workers' counters and written atomically.
//!
//! The file's schema, [`Report`], lives in `dataplane::report` (its field
//! names are part of the interface; see there), so the bench, which reads
//! the file and cannot depend on this crate, reads it as the same type.
//! Snapshots of running workers are taken by the workers between two
//! rounds, so the accounting identity holds in every file written, not
//! only the last.

use anyhow::{Context, Result};
use config::Config;
pub use dataplane::report::{Cycles, FastPathPort, MemoryRegion, PortReport, Report};
pub use dataplane::report::{DEVICE_TX_DROPPED, XDP_XMIT_ERRORS};
use dataplane::{StatsSnapshot, WorkerStats};
use netio::Port;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a snapshot waits for a running worker to answer (a worker
/// sleeps at most 10 ms between rounds); a worker that does not answer is
/// read directly.
const SNAPSHOT_TIMEOUT: Duration = Duration::from_millis(500);

/// The statistics document, from consistent worker snapshots (every
/// frame in exactly one bucket: the accounting identity holds).
pub fn build(
    cfg: &Config,
    ports: &[Arc<dyn Port>],
    stats: &[Arc<WorkerStats>],
    tier: Option<&crate::tier::RunningTier>,
    elapsed: Duration,
    notes: &[String],
) -> Report {
    // Ask every worker at once, then collect: each answers at the end of
    // its current round (a stopped worker is read directly).
    let tickets: Vec<u64> = stats.iter().map(|s| s.request_snapshot()).collect();
    let per_worker: Vec<StatsSnapshot> = stats
        .iter()
        .zip(tickets)
        .map(|(s, t)| s.wait_snapshot(t, SNAPSHOT_TIMEOUT))
        .collect();
    assemble(cfg, ports, per_worker, tier, elapsed, notes)
}

/// The statistics document from the counters as they are this moment,
/// without asking the workers: what a metrics scrape needs (a counter
/// may be one round ahead of another, which a rate graph never shows;
/// the answer never waits for a worker the scheduler has put aside).
pub fn build_direct(
    cfg: &Config,
    ports: &[Arc<dyn Port>],
    stats: &[Arc<WorkerStats>],
    tier: Option<&crate::tier::RunningTier>,
    elapsed: Duration,
) -> Report {
    let per_worker = stats.iter().map(|s| s.snapshot()).collect();
    assemble(cfg, ports, per_worker, tier, elapsed, &[])
}

fn assemble(
    cfg: &Config,
    ports: &[Arc<dyn Port>],
    per_worker: Vec<StatsSnapshot>,
    tier: Option<&crate::tier::RunningTier>,
    elapsed: Duration,
    notes: &[String],
) -> Report {
    let mut totals = StatsSnapshot::default();
    for s in &per_worker {
        totals.merge(s);
    }
    // The XDP tier's work joins the workers' (see PortReport::counters).
    let fast: Vec<Option<FastPathPort>> = (0..ports.len())
        .map(|i| tier.and_then(|t| t.port_report(i)))
        .collect();
    for (i, f) in fast.iter().enumerate() {
        if let (Some(f), Some(c)) = (f, totals.ports.get_mut(i)) {
            f.merge_into(c);
            totals.forwarded += f.forwarded;
        }
        if let (Some(t), Some(c)) = (tier, totals.ports.get_mut(i)) {
            let d = t.egress_drops(i);
            if d.device_tx_dropped > 0 {
                *c.output_drops.entry(DEVICE_TX_DROPPED.into()).or_default() += d.device_tx_dropped;
            }
        }
    }
    let port_reports = ports
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let c = totals.ports.get(i).cloned().unwrap_or_default();
            // The configured name, not the interface's: users and the
            // benchmark look ports up by the names they wrote.
            let name = cfg
                .ports
                .get(i)
                .map_or_else(|| p.info().name.clone(), |c| c.name.clone());
            PortReport {
                fast_path: fast[i].clone(),
                ..PortReport::new(name, c)
            }
        })
        .collect();
    let (rx, process, tx) = totals.cycles_per_packet();
    Report {
        version: env!("CARGO_PKG_VERSION").to_string(),
        elapsed_s: elapsed.as_secs_f64(),
        workers: cfg.router.workers,
        mode: format!("{:?}", cfg.router.mode).to_lowercase(),
        fast_path: if fast.iter().any(Option::is_some) {
            "xdp"
        } else {
            "off"
        }
        .to_string(),
        ports: port_reports,
        drops: totals
            .drops
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
        cycles_per_packet: Cycles {
            rx,
            process,
            tx,
            total: rx + process + tx,
        },
        sleeps: 0,
        notes: notes.to_vec(),
        totals,
        per_worker,
        control_plane: None,
        memory: memory(),
    }
}

/// How long [`memory`] reuses its last reading.
///
/// Why: reading `/proc/self/smaps` walks the page tables of every mapping
/// (the FIB's tables included), and every report reads it: each `ctl
/// stats`, SIGUSR1 and metrics scrape. The bench's control-latency sampler
/// asks 40 times a second during every trial, and the walk took ~2 % of
/// the DUT CPU's busy time while the XDP tier forwarded 1.6-2.2 Mpps
/// (`perf record -C 0`, `bench/floor/HISTORY.md`), CPU time counted in the
/// tier's cycles per packet. Huge-page backing changes far more slowly.
const MEMORY_MAX_AGE: Duration = Duration::from_secs(1);

/// The big regions of this process and their huge-page bytes, as read at
/// most [`MEMORY_MAX_AGE`] ago.
pub fn memory() -> Vec<MemoryRegion> {
    static LAST: Mutex<Option<(Instant, Vec<MemoryRegion>)>> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, m)) = last
        .as_ref()
        .filter(|(at, _)| at.elapsed() < MEMORY_MAX_AGE)
    {
        return m.clone();
    }
    let m: Vec<MemoryRegion> = hugemem::report()
        .into_iter()
        .map(|r| MemoryRegion {
            region: r.region.to_string(),
            mappings: r.mappings as u64,
            bytes: r.bytes,
            huge_explicit_bytes: r.huge_explicit_bytes,
            huge_thp_bytes: r.huge_thp_bytes,
        })
        .collect();
    *last = Some((Instant::now(), m.clone()));
    m
}

/// Adds to `now` the regions of `at_start` that are gone (the exit report
/// is written after the workers, and their packet pools, have ended; what
/// the run had is what it is about).
pub fn keep_gone_regions(now: &mut Vec<MemoryRegion>, at_start: &[MemoryRegion]) {
    for r in at_start {
        if !now.iter().any(|n| n.region == r.region) {
            now.push(r.clone());
        }
    }
    now.sort_by(|a, b| a.region.cmp(&b.region));
}

/// Writes the report atomically (see [`write_atomic`]), so a reader polling
/// the file never sees half of it.
pub fn write(r: &Report, path: &Path) -> Result<()> {
    let text = serde_json::to_string_pretty(r)?;
    write_atomic(path, text.as_bytes())
}

/// Checks, before the router starts, that statistics can be written to
/// `path`: its folder exists and it is not a folder itself.
pub fn check_target(path: &Path) -> Result<(), String> {
    let dir = parent_dir(path);
    if !dir.is_dir() {
        return Err(format!(
            "{}: the folder {} does not exist",
            path.display(),
            dir.display()
        ));
    }
    if path.file_name().is_none() || path.is_dir() {
        return Err(format!("{}: is a folder, not a file name", path.display()));
    }
    Ok(())
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// A random 64-bit value for temporary names (getrandom; the clock and
/// the pid if that fails: uniqueness, not secrecy, is what O_EXCL needs).
fn random_u64() -> u64 {
    let mut v = 0u64;
    // SAFETY: getrandom writes at most 8 bytes into v.
    let n = unsafe { libc::getrandom((&mut v as *mut u64).cast(), 8, libc::GRND_NONBLOCK) };
    if n != 8 {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        v = (t.as_nanos() as u64) ^ (u64::from(std::process::id()) << 32);
    }
    v
}

/// Writes `data` to `path` atomically and without trusting the folder:
/// the data goes to a new file next to the target, created exclusively
/// (`O_CREAT|O_EXCL|O_NOFOLLOW`, random name, mode 0644 less the umask) so
/// neither a planted symlink nor a file someone else created is ever
/// written through; it is fsynced, then renamed over the target (a
/// rename replaces a symlink at the target, it does not follow it).
pub fn write_atomic(path: &Path, data: &[u8]) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let dir = parent_dir(path);
    let name = path
        .file_name()
        .with_context(|| format!("{}: not a file name", path.display()))?
        .to_string_lossy()
        .into_owned();
    let mut last_err = None;
    for _ in 0..16 {
        let tmp = dir.join(format!(".{name}.{:016x}.tmp", random_u64()));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp);
        let mut file = match file {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                last_err = Some(e);
                continue;
            }
            Err(e) => return Err(e).with_context(|| format!("creating {}", tmp.display())),
        };
        let done = file
            .write_all(data)
            .and_then(|_| file.sync_all())
            .with_context(|| format!("writing {}", tmp.display()))
            .and_then(|_| {
                std::fs::rename(&tmp, path)
                    .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
            });
        if done.is_err() {
            let _ = std::fs::remove_file(&tmp);
            return done;
        }
        // The rename itself is durable once the folder is synced.
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        return Ok(());
    }
    Err(anyhow::anyhow!(
        "{}: no free temporary name ({:?})",
        path.display(),
        last_err
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn tmpdir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("sr-report-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn planted_symlinks_are_not_followed() {
        let d = tmpdir("symlink");
        let victim = d.join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let target = d.join("stats.json");
        // The names the old code used, and the target itself, all point
        // to the victim.
        std::os::unix::fs::symlink(&victim, d.join("stats.json.tmp")).unwrap();
        std::os::unix::fs::symlink(&victim, d.join("stats.tmp")).unwrap();
        std::os::unix::fs::symlink(&victim, &target).unwrap();
        write_atomic(&target, b"{}").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        let m = std::fs::symlink_metadata(&target).unwrap();
        assert!(m.file_type().is_file(), "the symlink was replaced");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "{}");
        assert_eq!(
            m.permissions().mode() & 0o022,
            0,
            "not group/world writable"
        );
        assert_eq!(m.uid(), unsafe { libc::geteuid() });
        // No temporary file is left behind.
        let left: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp") && n.starts_with('.'))
            .collect();
        assert!(left.is_empty(), "{left:?}");
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn unwritable_target_is_an_error_not_a_panic() {
        let d = tmpdir("missing");
        let target = d.join("gone").join("stats.json");
        assert!(write_atomic(&target, b"{}").is_err());
        assert!(check_target(&target).is_err());
        assert!(check_target(&d).is_err(), "a folder is not a file name");
        assert!(check_target(&d.join("stats.json")).is_ok());
        let _ = std::fs::remove_dir_all(d);
    }
}
