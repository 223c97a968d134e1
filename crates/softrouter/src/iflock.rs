//! One softrouter per interface: a live port takes an exclusive `flock`
//! on a lock file named after the interface's network namespace and
//! ifindex, under [`RUN_DIR`], before it opens the interface.
//!
//! AF_XDP refuses a second user by itself (one XDP program per interface),
//! but two AF_PACKET routers on one interface would both answer every ARP
//! request and both forward every packet. The lock makes the second one
//! refuse to start, naming the interface and the first one's pid. A lock
//! held by a process that died is released by the kernel with its file
//! descriptors, so a crash never leaves the interface locked.
//!
//! The folder and the file are created without trusting what is already
//! there: the folder must be a real folder (not a symlink) owned by us and
//! not writable by others; the file is opened with `O_NOFOLLOW` relative
//! to that folder and must be a regular file owned by us.

use anyhow::{anyhow, bail, Context, Result};
use std::ffi::CString;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Where the lock files live (`SOFTROUTER_RUN_DIR` overrides it).
pub const RUN_DIR: &str = "/run/softrouter";

/// The folder for lock files: `SOFTROUTER_RUN_DIR` or [`RUN_DIR`].
pub fn run_dir() -> PathBuf {
    std::env::var_os("SOFTROUTER_RUN_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(RUN_DIR))
}

/// A held interface lock; released when dropped (or when the process ends).
#[derive(Debug)]
pub struct IfaceLock {
    _file: File,
    pub path: PathBuf,
}

/// The current network namespace's identity: (device, inode) of
/// `/proc/self/ns/net`.
pub fn netns_id() -> Result<(u64, u64)> {
    let m = std::fs::metadata("/proc/self/ns/net").context("reading /proc/self/ns/net")?;
    Ok((m.dev(), m.ino()))
}

/// The ifindex of `iface` in the current namespace, if it exists.
pub fn ifindex(iface: &str) -> Option<u32> {
    let c = CString::new(iface).ok()?;
    // SAFETY: c is a valid NUL-terminated string.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    (i != 0).then_some(i)
}

fn check_owner(m: &std::fs::Metadata, what: &Path) -> Result<()> {
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if m.uid() != me {
        bail!(
            "{} belongs to uid {}, not to us (uid {me}); refusing to use it",
            what.display(),
            m.uid()
        );
    }
    Ok(())
}

/// Opens (creating it if needed) the lock folder `dir`, refusing a
/// symlink, a non-folder, or a folder that others own or may write.
fn open_dir(dir: &Path) -> Result<OwnedFd> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(0o755).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e).with_context(|| format!("creating {}", dir.display())),
    }
    let c = CString::new(dir.as_os_str().as_encoded_bytes())
        .map_err(|_| anyhow!("{}: NUL in path", dir.display()))?;
    // SAFETY: c is a valid path; the flags open a folder without following
    // a final symlink.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return Err(anyhow!(
            "{}: {e} (it must be a folder, not a symlink)",
            dir.display()
        ));
    }
    // SAFETY: fd was just opened and is owned here.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let f = File::from(fd.try_clone()?);
    let m = f.metadata()?;
    check_owner(&m, dir)?;
    if m.mode() & 0o022 != 0 {
        bail!(
            "{} may be written by others (mode {:o}); refusing to keep locks there",
            dir.display(),
            m.mode() & 0o7777
        );
    }
    Ok(fd)
}

/// Takes the lock of interface `iface` (ifindex `index`) of port `port`
/// in folder `dir`; an error naming both if another process holds it.
pub fn lock(dir: &Path, port: &str, iface: &str, index: u32) -> Result<IfaceLock> {
    let (dev, ino) = netns_id()?;
    let name = format!("iface-netns{dev:x}.{ino}-ifindex{index}.lock");
    let path = dir.join(&name);
    let what = || {
        format!(
            "port {port:?} (interface {iface:?}): lock {}",
            path.display()
        )
    };
    let dfd = open_dir(dir).with_context(what)?;
    let cname = CString::new(name).expect("no NUL in a formatted name");
    // SAFETY: dfd is an open folder, cname a valid name; O_NOFOLLOW refuses
    // a symlink planted under the name.
    let fd = unsafe {
        libc::openat(
            dfd.as_raw_fd(),
            cname.as_ptr(),
            libc::O_RDWR | libc::O_CREAT | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o600 as libc::c_uint,
        )
    };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return Err(anyhow!("{}: {e}", what()));
    }
    // SAFETY: fd was just opened and is owned by the File.
    let mut file = unsafe { File::from_raw_fd(fd) };
    let m = file.metadata().with_context(what)?;
    if !m.file_type().is_file() {
        bail!("{}: not a regular file", what());
    }
    check_owner(&m, &path).with_context(what)?;
    // SAFETY: fd is open.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder.trim();
            let holder = if holder.is_empty() || holder.len() > 20 {
                "another process".to_string()
            } else {
                format!("process {holder}")
            };
            bail!(
                "port {port:?}: interface {iface:?} is already used by another softrouter ({holder} holds {}); two routers on one interface would both answer and forward",
                path.display()
            );
        }
        return Err(anyhow!("{}: flock: {e}", what()));
    }
    // Who holds it, for the message above (best effort).
    let _ = file.set_len(0);
    let _ = file.rewind();
    let _ = writeln!(file, "{}", std::process::id());
    Ok(IfaceLock { _file: file, path })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("sr-iflock-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn second_lock_on_one_interface_is_refused() {
        let d = dir("twice");
        let a = lock(&d, "in", "lo", 1).unwrap();
        // flock locks belong to the open file description: a second open
        // in the same process conflicts just as another process would.
        let e = lock(&d, "in2", "lo", 1).unwrap_err().to_string();
        assert!(e.contains("already used") && e.contains("\"lo\""), "{e}");
        assert!(e.contains(&std::process::id().to_string()), "{e}");
        // Another interface is independent.
        let _b = lock(&d, "out", "eth9", 9).unwrap();
        drop(a);
        let _c = lock(&d, "in", "lo", 1).expect("released with its holder");
        let m = std::fs::metadata(&d).unwrap();
        assert_eq!(m.permissions().mode() & 0o022, 0);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn planted_symlinks_and_foreign_folders_are_refused() {
        // The folder is a symlink to somewhere else.
        let d = dir("symdir");
        let elsewhere = dir("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &d).unwrap();
        let e = lock(&d, "in", "lo", 1).unwrap_err();
        assert!(format!("{e:#}").contains("symlink"), "{e:#}");
        std::fs::remove_file(&d).unwrap();

        // The folder is writable by others.
        std::fs::create_dir_all(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = lock(&d, "in", "lo", 1).unwrap_err();
        assert!(format!("{e:#}").contains("written by others"), "{e:#}");
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();

        // The lock file's name is a symlink to a victim: not followed.
        let (dev, ino) = netns_id().unwrap();
        let victim = elsewhere.join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let planted = d.join(format!("iface-netns{dev:x}.{ino}-ifindex1.lock"));
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        let e = lock(&d, "in", "lo", 1).unwrap_err();
        assert!(format!("{e:#}").contains("lock"), "{e:#}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        let _ = std::fs::remove_dir_all(d);
        let _ = std::fs::remove_dir_all(elsewhere);
    }
}
