//! The listening socket.
//!
//! * Access: the socket is created mode 0660, owned by root and, if
//!   configured, by a group (`[control] group`): root and that group's
//!   members may connect, nobody else (the kernel checks write permission
//!   on the socket file at `connect`).
//! * One instance per path: a path that accepts a connection belongs to a
//!   live router, and starting is refused; a path nobody listens on is a
//!   leftover of a killed one and is replaced.
//! * A thread per connection, at most [`MAX_CONNECTIONS`] at once; each
//!   request goes to the [`Handler`], which must not block for long (it
//!   runs on the control side, never on a worker).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::protocol::{parse_request, Request, Response, MAX_LINE};

/// Connections served at once; more wait in the listen backlog.
pub const MAX_CONNECTIONS: usize = 16;

/// An idle connection is closed after this long.
const IDLE: Duration = Duration::from_secs(60);

/// What answers requests (the router's control side).
pub trait Handler: Send + Sync + 'static {
    /// Carry out `request`: the data to answer with, or an error message
    /// (then nothing may have changed).
    fn handle(&self, request: Request) -> Result<serde_json::Value, String>;
}

/// A listening control socket; removed when dropped.
pub struct ControlServer {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ControlServer {
    /// Listen on `path` (mode 0660, group `gid` if given) and serve
    /// requests with `handler`.
    pub fn start(
        path: &Path,
        gid: Option<u32>,
        handler: Arc<dyn Handler>,
    ) -> Result<ControlServer> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        if path.exists() {
            if UnixStream::connect(path).is_ok() {
                bail!(
                    "control socket {} is held by a running softrouter (stop it, or give this one another [control] socket)",
                    path.display()
                );
            }
            std::fs::remove_file(path)
                .with_context(|| format!("removing the stale control socket {}", path.display()))?;
        }
        let listener =
            UnixListener::bind(path).with_context(|| format!("binding {}", path.display()))?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o660))
            .with_context(|| format!("chmod 0660 {}", path.display()))?;
        if let Some(gid) = gid {
            std::os::unix::fs::chown(path, None, Some(gid))
                .with_context(|| format!("chgrp {gid} {}", path.display()))?;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("sr-control".into())
                .spawn(move || accept_loop(listener, handler, stop))?
        };
        Ok(ControlServer {
            path: path.to_path_buf(),
            stop,
            thread: Some(thread),
        })
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ControlServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // Wake the blocking accept.
        let _ = UnixStream::connect(&self.path);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

fn accept_loop(listener: UnixListener, handler: Arc<dyn Handler>, stop: Arc<AtomicBool>) {
    let active = Arc::new(AtomicUsize::new(0));
    for conn in listener.incoming() {
        if stop.load(Ordering::Acquire) {
            break;
        }
        let Ok(conn) = conn else { continue };
        while active.load(Ordering::Acquire) >= MAX_CONNECTIONS {
            std::thread::sleep(Duration::from_millis(5));
        }
        active.fetch_add(1, Ordering::AcqRel);
        let (handler, done) = (handler.clone(), active.clone());
        let spawned = std::thread::Builder::new()
            .name("sr-control-conn".into())
            .spawn(move || {
                if let Err(e) = serve(conn, &*handler) {
                    tracing::debug!(error = %e, "control connection ended");
                }
                done.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            active.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Answer the requests of one connection until it closes.
fn serve(conn: UnixStream, handler: &dyn Handler) -> std::io::Result<()> {
    conn.set_read_timeout(Some(IDLE))?;
    let mut out = conn.try_clone()?;
    let mut lines = BufReader::new(conn);
    let mut line = String::new();
    loop {
        line.clear();
        let n = lines
            .by_ref()
            .take(MAX_LINE as u64 + 1)
            .read_line(&mut line)?;
        if n == 0 {
            return Ok(());
        }
        let response = if n > MAX_LINE {
            // The rest of the line cannot be told from the next request.
            let r = Response::error(format!("request longer than {MAX_LINE} bytes"));
            write_line(&mut out, &r)?;
            return Ok(());
        } else {
            match parse_request(line.trim_end()) {
                Ok(req) => match handler.handle(req) {
                    Ok(data) => Response::Ok { data },
                    Err(message) => Response::Error { message },
                },
                Err(message) => Response::Error { message },
            }
        };
        write_line(&mut out, &response)?;
    }
}

fn write_line(out: &mut UnixStream, r: &Response) -> std::io::Result<()> {
    let mut s = serde_json::to_string(r).map_err(std::io::Error::other)?;
    s.push('\n');
    out.write_all(s.as_bytes())
}
