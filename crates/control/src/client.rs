//! One request, one response: what `softrouter ctl` does.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::protocol::{Envelope, Request, Response, VERSION};

/// How long a client waits for the router's answer.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// Send `request` to the router listening on `socket` and return its
/// answer.
pub fn request(socket: &Path, request: Request) -> Result<Response> {
    let mut s = UnixStream::connect(socket).with_context(|| {
        format!(
            "connecting to {} (is softrouter running, and may you use its socket?)",
            socket.display()
        )
    })?;
    s.set_read_timeout(Some(TIMEOUT))?;
    s.set_write_timeout(Some(TIMEOUT))?;
    let mut line = serde_json::to_string(&Envelope {
        version: VERSION,
        request,
    })?;
    line.push('\n');
    s.write_all(line.as_bytes())
        .context("sending the request")?;
    let mut answer = String::new();
    BufReader::new(&s)
        .read_line(&mut answer)
        .context("reading the answer")?;
    if answer.is_empty() {
        bail!("the router closed the connection without answering");
    }
    serde_json::from_str(&answer).with_context(|| format!("a malformed answer: {answer:?}"))
}
