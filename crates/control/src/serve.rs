//! The event loop both servers run on (the control socket and the metrics
//! endpoint), so that no client can hold up another, the supervisor or
//! shutdown.
//!
//! * One thread polls the listener and every connection (mio, epoll):
//!   reading and writing never block, however slowly a client sends or
//!   takes its answer. A small pool of threads carries out complete
//!   requests, so a slow request (a reload, a large `route show`) holds up
//!   only its own connection.
//! * Connections are accepted at once up to [`Limits::max_connections`];
//!   one more is answered with the service's refusal (an error line, an
//!   HTTP 503) and closed, never left waiting in the backlog.
//! * A request must arrive whole within [`Limits::request_deadline`] of the
//!   connection's start or of its previous answer, however its bytes
//!   trickle in (a deadline on the request, not a timeout per read); an
//!   answer must be taken within [`Limits::answer_deadline`].
//! * A request is carried out only while its answer can still be
//!   delivered: its client has not hung up, and it starts within
//!   [`Limits::start_within`] of having arrived (`ctl` waits 10 s for an
//!   answer). Otherwise it is not carried out, and a client still there is
//!   told so; a client that gave up never has its request applied behind
//!   its back. A request that is started is finished and answered.
//! * [`Server::stop`] (and drop) wakes the loop, which closes every
//!   connection and returns: nothing waits for a client. The pool's threads
//!   are not waited for (one may be in a long request); they end once idle.

use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use mio::Waker;

mod event_loop;

/// How a server bounds its clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections open at once; one more is refused and closed.
    pub max_connections: usize,
    /// A request must arrive whole within this of the connection's start
    /// or of its previous answer.
    pub request_deadline: Duration,
    /// An answer must be taken by the client within this.
    pub answer_deadline: Duration,
    /// A request that waited longer than this for a thread is not carried
    /// out (its client is told).
    pub start_within: Duration,
    /// Threads that carry out requests.
    pub threads: usize,
    /// Complete requests waiting for a thread; one more is refused as busy.
    pub queue: usize,
}

/// Why a request is not carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// [`Limits::max_connections`] are open.
    Full,
    /// No complete request within [`Limits::request_deadline`].
    Timeout,
    /// [`Limits::queue`] requests are waiting already.
    Busy,
    /// It waited longer than [`Limits::start_within`].
    Late,
}

/// What a connection's bytes hold at their front.
pub enum Parsed<J> {
    /// Not a whole request yet.
    Incomplete,
    /// A request of `len` bytes, to be carried out on the pool.
    Request { len: usize, job: J },
    /// `len` bytes answered at once (a malformed request), then the
    /// connection closes if `close`.
    Answer {
        len: usize,
        bytes: Vec<u8>,
        close: bool,
    },
}

/// The answer to one request.
pub struct Answer {
    pub bytes: Vec<u8>,
    /// The connection closes once the answer is taken.
    pub close: bool,
}

/// A protocol served by the loop.
pub trait Service: Send + Sync + 'static {
    type Job: Send + 'static;
    /// Bytes a connection buffers at most: [`Service::parse`] must decide
    /// (a request, or an answer) on a buffer this long.
    fn max_request(&self) -> usize;
    /// The request at the front of `buf` (what the connection has sent
    /// since its previous request). The first `seen` bytes were looked at
    /// before and held no whole request (so a request trickled in byte by
    /// byte is scanned once, not once per byte).
    fn parse(&self, buf: &[u8], seen: usize) -> Parsed<Self::Job>;
    /// Carries out a request (on a pool thread).
    fn run(&self, job: Self::Job) -> Answer;
    /// The answer to a request refused for `why`; `message` says it in
    /// words.
    fn refuse(&self, why: Refusal, message: &str) -> Vec<u8>;
}

/// A listening socket the loop accepts from.
pub trait Listen: mio::event::Source + Send + 'static {
    type Stream: Read + Write + mio::event::Source + Send + 'static;
    fn accept_one(&self) -> io::Result<Self::Stream>;
}

impl Listen for mio::net::UnixListener {
    type Stream = mio::net::UnixStream;
    fn accept_one(&self) -> io::Result<Self::Stream> {
        self.accept().map(|(s, _)| s)
    }
}

impl Listen for mio::net::TcpListener {
    type Stream = mio::net::TcpStream;
    fn accept_one(&self) -> io::Result<Self::Stream> {
        self.accept().map(|(s, _)| s)
    }
}

/// A running loop; stopped (without waiting for any client) when dropped.
pub struct Server {
    stop: Arc<AtomicBool>,
    waker: Arc<Waker>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Serves `service` on `listener` from a thread named `name`.
    pub fn start<L: Listen, S: Service>(
        name: &str,
        listener: L,
        service: Arc<S>,
        limits: Limits,
    ) -> io::Result<Server> {
        let stop = Arc::new(AtomicBool::new(false));
        let (waker, thread) = event_loop::spawn(name, listener, service, limits, stop.clone())?;
        Ok(Server {
            stop,
            waker,
            thread: Some(thread),
        })
    }

    /// Closes every connection and stops listening; waits only for the
    /// loop's thread, which never waits for a client.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Release);
        let _ = self.waker.wake();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Raises this process's soft limit on open files to its hard limit (at
/// most `want`), as Go's runtime does for every program: a server that
/// holds thousands of connections needs more than the usual 1,024. The
/// limit now in force.
pub fn raise_fd_limit(want: u64) -> u64 {
    let mut l = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit on a valid struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) != 0 {
            return 0;
        }
        let target = want.min(l.rlim_max);
        if l.rlim_cur < target {
            let raised = libc::rlimit {
                rlim_cur: target,
                rlim_max: l.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                return target;
            }
        }
    }
    l.rlim_cur
}
