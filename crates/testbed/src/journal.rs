//! What a process changed on this machine, written down as it goes, so
//! that the next process can undo it if this one was killed (SIGKILL, a
//! crash, a lost terminal): namespaces it created and global settings it
//! changed (with their original values).
//!
//! Why: `Drop` and the Ctrl-C handler clean up everything in the normal
//! and the interrupted case, but nothing runs after SIGKILL. One file per
//! process under a root-owned directory (`/run/softrouter-testbed`, mode
//! 0700) lists its objects; [`reap`] undoes the files of processes that
//! are gone. A namespace name carries only `pid % 10000`, so the full pid
//! in the file name is what decides whether the owner is alive.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use anyhow::{Context, Result};

/// Where the journals live.
pub const DIR: &str = "/run/softrouter-testbed";

/// This process's journal: namespaces and (setting path, original value).
#[derive(Default)]
struct Journal {
    enabled: bool,
    namespaces: Vec<String>,
    settings: BTreeMap<String, String>,
}

static JOURNAL: Mutex<Journal> = Mutex::new(Journal {
    enabled: false,
    namespaces: Vec::new(),
    settings: BTreeMap::new(),
});

fn own_file() -> PathBuf {
    Path::new(DIR).join(format!("{}.journal", std::process::id()))
}

/// Start journaling this process's changes (root only; a no-op for
/// others, whose namespaces would fail anyway).
pub fn enable() -> Result<()> {
    if !crate::root::is_root() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .mode(0o700)
        .recursive(true)
        .create(DIR)
        .with_context(|| format!("creating {DIR}"))?;
    let mut j = JOURNAL.lock().unwrap_or_else(|p| p.into_inner());
    j.enabled = true;
    write(&j)
}

/// A namespace this process created (called by `Netns::new`).
pub(crate) fn add_namespace(name: &str) {
    let mut j = JOURNAL.lock().unwrap_or_else(|p| p.into_inner());
    if j.enabled {
        j.namespaces.push(name.to_string());
        let _ = write(&j);
    }
}

/// A namespace this process deleted.
pub(crate) fn remove_namespace(name: &str) {
    let mut j = JOURNAL.lock().unwrap_or_else(|p| p.into_inner());
    if j.enabled {
        j.namespaces.retain(|n| n != name);
        let _ = write(&j);
    }
}

/// A global setting (a `/proc/sys` or `/sys` file) about to be changed,
/// with its current value; the first record of a path wins.
pub fn record_setting(path: &str, original: &str) -> Result<()> {
    let mut j = JOURNAL.lock().unwrap_or_else(|p| p.into_inner());
    if !j.enabled {
        return Ok(());
    }
    j.settings
        .entry(path.to_string())
        .or_insert_with(|| original.trim().to_string());
    write(&j)
}

/// A setting restored by this process.
pub fn setting_restored(path: &str) {
    let mut j = JOURNAL.lock().unwrap_or_else(|p| p.into_inner());
    if j.enabled {
        j.settings.remove(path);
        let _ = write(&j);
    }
}

/// Rewrite the journal (a tab-separated text file, replaced atomically).
fn write(j: &Journal) -> Result<()> {
    let path = own_file();
    if j.namespaces.is_empty() && j.settings.is_empty() {
        let _ = std::fs::remove_file(&path);
        return Ok(());
    }
    let mut text = String::new();
    for n in &j.namespaces {
        text.push_str(&format!("netns\t{n}\n"));
    }
    for (k, v) in &j.settings {
        text.push_str(&format!("setting\t{k}\t{v}\n"));
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp)
        .with_context(|| format!("creating {}", tmp.display()))?;
    f.write_all(text.as_bytes())?;
    std::fs::rename(&tmp, &path).with_context(|| format!("renaming to {}", path.display()))?;
    Ok(())
}

/// What [`reap`] undid.
#[derive(Debug, Default, PartialEq)]
pub struct Reaped {
    pub namespaces: Vec<String>,
    pub settings: Vec<(String, String)>,
}

/// Undo what dead processes left behind: delete their namespaces, restore
/// their settings, remove their journals. Journals of live processes are
/// left alone.
pub fn reap() -> Result<Reaped> {
    reap_in(Path::new(DIR))
}

fn reap_in(dir: &Path) -> Result<Reaped> {
    let mut out = Reaped::default();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(out);
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_suffix(".journal")
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() as i32 || alive(pid) {
            continue;
        }
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            match f.as_slice() {
                ["netns", n] if n.starts_with("sr") => {
                    let _ = Command::new("ip")
                        .args(["netns", "del", n])
                        .stdin(Stdio::null())
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .status();
                    out.namespaces.push(n.to_string());
                }
                ["setting", path, value]
                    if (path.starts_with("/proc/sys/") || path.starts_with("/sys/"))
                        && std::fs::write(path, value).is_ok() =>
                {
                    out.settings.push((path.to_string(), value.to_string()));
                }
                _ => {}
            }
        }
        let _ = std::fs::remove_file(e.path());
    }
    Ok(out)
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks existence.
    unsafe { libc::kill(pid, 0) == 0 || *libc::__errno_location() == libc::EPERM }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reaps_dead_owners_and_spares_live_ones() {
        if !crate::require_root("reaps_dead_owners_and_spares_live_ones") {
            return;
        }
        let dir = std::env::temp_dir().join(format!("sr-journal-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A dead process (a child that exited) left a namespace and a
        // setting; our parent is alive and its journal must stay.
        let dead = Command::new("true").spawn().unwrap();
        let dead_pid = dead.id();
        let mut dead = dead;
        dead.wait().unwrap();
        let ns = format!("sr{}xjt", dead_pid % 10000);
        let _ = Command::new("ip").args(["netns", "add", &ns]).status();
        let setting = dir.join("setting");
        std::fs::write(&setting, "changed").unwrap();
        // reap only restores /proc/sys and /sys paths: check the filter
        // with a file outside them (left alone), and the netns (deleted).
        std::fs::write(
            dir.join(format!("{dead_pid}.journal")),
            format!("netns\t{ns}\nsetting\t{}\toriginal\n", setting.display()),
        )
        .unwrap();
        let live = std::os::unix::process::parent_id();
        std::fs::write(dir.join(format!("{live}.journal")), "netns\tsrkeep\n").unwrap();
        let r = reap_in(&dir).unwrap();
        assert_eq!(r.namespaces, vec![ns.clone()]);
        assert!(
            r.settings.is_empty(),
            "only /proc/sys and /sys are restored"
        );
        let listed = Command::new("ip").args(["netns", "list"]).output().unwrap();
        assert!(!String::from_utf8_lossy(&listed.stdout).contains(&ns));
        assert!(!dir.join(format!("{dead_pid}.journal")).exists());
        assert!(dir.join(format!("{live}.journal")).exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
