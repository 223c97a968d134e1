//! Opening the files a configuration is read from (the configuration
//! itself, its routes file): only regular files, of bounded size, opened
//! without ever blocking.
//!
//! A reload re-reads these paths while the router runs, so what they name
//! must not be able to hurt it: a symlink to `/dev/zero` would be read
//! until memory runs out, a FIFO would block the reader until someone
//! writes to it. So the file is opened with `O_NONBLOCK` (opening a FIFO
//! or a device then returns at once), checked with `fstat` on the open
//! descriptor (what is read is what was checked, whatever is renamed
//! meanwhile), and refused unless it is a regular file within a size
//! bound; the reader also stops with an error past the bound, should the
//! file grow after the check.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use crate::ConfigError;

/// The largest configuration file read: a hand-written file is a few KiB,
/// and bulk routes belong in the routes file.
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// The largest routes file read, and the most a `.gz` one may expand to:
/// the full IPv4 and IPv6 table is about 30 MB of text.
pub const MAX_ROUTES_FILE_BYTES: u64 = 1 << 30;

/// Opens `path` (symlinks followed) if it is a regular file of at most
/// `max` bytes; the error says what it is instead.
pub fn open_regular(path: &Path, max: u64) -> Result<Bounded<File>, ConfigError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| ConfigError::io(path, e))?;
    let meta = file.metadata().map_err(|e| ConfigError::io(path, e))?;
    let t = meta.file_type();
    let kind = if t.is_file() {
        None
    } else if t.is_dir() {
        Some("a folder")
    } else if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_char_device() {
        Some("a character device")
    } else if t.is_block_device() {
        Some("a block device")
    } else if t.is_socket() {
        Some("a socket")
    } else {
        Some("not a file")
    };
    if let Some(kind) = kind {
        return Err(ConfigError::line(
            path,
            0,
            format!("{kind}, not a regular file: only regular files are read (a FIFO or a device could block or never end)"),
        ));
    }
    if meta.len() > max {
        return Err(ConfigError::line(
            path,
            0,
            format!(
                "{} bytes, more than the {} bytes ({} MiB) read at most",
                meta.len(),
                max,
                max >> 20
            ),
        ));
    }
    Ok(Bounded::new(file, max))
}

/// A reader that fails, rather than go on, past `max` bytes.
pub struct Bounded<R> {
    inner: R,
    left: u64,
    max: u64,
}

impl<R: Read> Bounded<R> {
    pub fn new(inner: R, max: u64) -> Bounded<R> {
        Bounded {
            inner,
            left: max,
            max,
        }
    }
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // One byte past the bound tells a file that ends there from one
        // that goes on.
        let want = buf
            .len()
            .min(usize::try_from(self.left + 1).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        if n as u64 > self.left {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("more than the {} bytes read at most", self.max),
            ));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_within_the_bound_are_read() {
        let dir = std::env::temp_dir().join(format!("cfg-source-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let small = dir.join("small");
        std::fs::write(&small, "0123456789").unwrap();
        let mut s = String::new();
        open_regular(&small, 10)
            .unwrap()
            .read_to_string(&mut s)
            .unwrap();
        assert_eq!(s, "0123456789");
        let e = open_regular(&small, 9).err().unwrap().to_string();
        assert!(e.contains("10 bytes, more than the 9 bytes"), "{e}");
        // A symlink to a device, a FIFO (never blocks), a folder.
        let zero = dir.join("zero");
        let _ = std::fs::remove_file(&zero);
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let e = open_regular(&zero, 1 << 20).err().unwrap().to_string();
        assert!(e.contains("a character device, not a regular file"), "{e}");
        let fifo = dir.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = open_regular(&fifo, 1 << 20).err().unwrap().to_string();
        assert!(e.contains("a FIFO, not a regular file"), "{e}");
        let e = open_regular(&dir, 1 << 20).err().unwrap().to_string();
        assert!(e.contains("a folder"), "{e}");
        // A stream longer than its bound fails instead of going on.
        let mut s = Vec::new();
        let e = Bounded::new(std::io::repeat(0).take(100), 99)
            .read_to_end(&mut s)
            .unwrap_err();
        assert!(e.to_string().contains("more than the 99 bytes"), "{e}");
        let mut s = Vec::new();
        Bounded::new(std::io::repeat(0).take(99), 99)
            .read_to_end(&mut s)
            .unwrap();
        assert_eq!(s.len(), 99);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
