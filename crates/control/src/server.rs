//! The listening socket.
//!
//! * Access: the socket is created mode 0660, owned by root and, if
//!   configured, by a group (`[control] group`): root and that group's
//!   members may connect, nobody else (the kernel checks write permission
//!   on the socket file at `connect`).
//! * One instance per path: a path that accepts a connection belongs to a
//!   live router, and starting is refused; a path nobody listens on is a
//!   leftover of a killed one and is replaced.
//! * Served by [`crate::serve`]: one event loop for every connection and a
//!   few threads for the requests, at most [`MAX_CONNECTIONS`] connections
//!   (one more is answered with an error line and closed), a deadline on
//!   each whole request and answer, and a request carried out only while
//!   its client waits for the answer ([`LIMITS`]). Each request goes to the
//!   [`Handler`], on a pool thread, never on a worker.
//! * A request line is at most [`MAX_LINE`] bytes (a longer one is refused
//!   and the connection closed: its rest could not be told from the next
//!   request); a line that is not UTF-8 or not a request is answered with
//!   the reason, and the connection goes on.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::protocol::{parse_request, Request, Response, MAX_LINE};
use crate::serve::{Answer, Limits, Parsed, Refusal, Server, Service};

/// Connections open at once; one more is refused with an error line. A
/// thousand idle or slow clients still leave room for the operator's `ctl`
/// (each costs a file descriptor and at most [`MAX_LINE`] bytes buffered).
pub const MAX_CONNECTIONS: usize = 2048;

/// The control socket's limits (see [`crate::serve`]): a request line
/// within 30 s of connecting or of the previous answer, an answer taken
/// within 10 s, and a request started within 5 s of arriving, well inside
/// the 10 s `ctl` waits ([`crate::client::TIMEOUT`]), or not at all.
pub const LIMITS: Limits = Limits {
    max_connections: MAX_CONNECTIONS,
    request_deadline: Duration::from_secs(30),
    answer_deadline: Duration::from_secs(10),
    start_within: Duration::from_secs(5),
    threads: 4,
    queue: 64,
};

/// What answers requests (the router's control side).
pub trait Handler: Send + Sync + 'static {
    /// Carry out `request`: the data to answer with, or an error message
    /// (then nothing may have changed).
    fn handle(&self, request: Request) -> Result<serde_json::Value, String>;
}

/// A listening control socket; removed when dropped.
pub struct ControlServer {
    path: PathBuf,
    server: Server,
}

impl ControlServer {
    /// Listen on `path` (mode 0660, group `gid` if given) and serve
    /// requests with `handler`.
    pub fn start(
        path: &Path,
        gid: Option<u32>,
        handler: Arc<dyn Handler>,
    ) -> Result<ControlServer> {
        ControlServer::start_with(path, gid, handler, LIMITS)
    }

    /// [`ControlServer::start`] with other limits (tests use short ones).
    pub fn start_with(
        path: &Path,
        gid: Option<u32>,
        handler: Arc<dyn Handler>,
        limits: Limits,
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
        listener.set_nonblocking(true)?;
        let listener = mio::net::UnixListener::from_std(listener);
        let server = Server::start(
            "sr-control",
            listener,
            Arc::new(Control { handler }),
            limits,
        )
        .context("starting the control socket's threads")?;
        Ok(ControlServer {
            path: path.to_path_buf(),
            server,
        })
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ControlServer {
    fn drop(&mut self) {
        self.server.stop();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The control protocol on [`crate::serve`]: JSON lines.
struct Control {
    handler: Arc<dyn Handler>,
}

impl Service for Control {
    type Job = Request;

    fn max_request(&self) -> usize {
        MAX_LINE
    }

    fn parse(&self, buf: &[u8], seen: usize) -> Parsed<Request> {
        let window = &buf[..buf.len().min(MAX_LINE)];
        let newline = window
            .iter()
            .skip(seen)
            .position(|&b| b == b'\n')
            .map(|i| seen + i);
        let Some(end) = newline else {
            if buf.len() < MAX_LINE {
                return Parsed::Incomplete;
            }
            // The rest of the line cannot be told from the next request.
            let r = Response::error(format!("request longer than {MAX_LINE} bytes"));
            return Parsed::Answer {
                len: buf.len(),
                bytes: line(&r),
                close: true,
            };
        };
        let len = end + 1;
        let refused = match std::str::from_utf8(&buf[..end]) {
            Err(e) => format!(
                "request is not UTF-8 text (invalid byte at offset {})",
                e.valid_up_to()
            ),
            Ok(text) => match parse_request(text.trim_end()) {
                Ok(job) => return Parsed::Request { len, job },
                Err(message) => message,
            },
        };
        Parsed::Answer {
            len,
            bytes: line(&Response::error(refused)),
            close: false,
        }
    }

    fn run(&self, request: Request) -> Answer {
        let r = match self.handler.handle(request) {
            Ok(data) => Response::Ok { data },
            Err(message) => Response::Error { message },
        };
        Answer {
            bytes: line(&r),
            close: false,
        }
    }

    fn refuse(&self, _why: Refusal, message: &str) -> Vec<u8> {
        line(&Response::error(message))
    }
}

/// `r` as one line.
fn line(r: &Response) -> Vec<u8> {
    let mut s = serde_json::to_vec(r).unwrap_or_else(|_| b"{}".to_vec());
    s.push(b'\n');
    s
}
