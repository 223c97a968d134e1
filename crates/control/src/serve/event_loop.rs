//! The loop behind [`super::Server`]: the polling thread ([`Loop`]), the
//! threads that carry out requests ([`Pool`]), and what passes between
//! them.

use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token, Waker};

use super::{Answer, Limits, Listen, Parsed, Refusal, Service};

/// Starts the pool and the loop (named `name`) serving `listener`; the
/// loop ends once `stop` is set and the waker woken.
pub(super) fn spawn<L: Listen, S: Service>(
    name: &str,
    mut listener: L,
    service: Arc<S>,
    limits: Limits,
    stop: Arc<AtomicBool>,
) -> io::Result<(Arc<Waker>, JoinHandle<()>)> {
    let poll = Poll::new()?;
    poll.registry()
        .register(&mut listener, LISTENER, Interest::READABLE)?;
    let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
    let (tasks, queued) = mpsc::sync_channel(limits.queue);
    let (done_tx, done) = mpsc::channel();
    let queued = Arc::new(Mutex::new(queued));
    for i in 0..limits.threads.max(1) {
        let pool = Pool {
            service: service.clone(),
            tasks: queued.clone(),
            done: done_tx.clone(),
            waker: waker.clone(),
            start_within: limits.start_within,
        };
        std::thread::Builder::new()
            .name(format!("{name}-{i}"))
            .spawn(move || pool.run())?;
    }
    let event_loop = Loop {
        poll,
        listener,
        service,
        limits,
        conns: Vec::new(),
        free: Vec::new(),
        open: 0,
        next_id: 0,
        tasks,
        done,
        accept_again: None,
        next_check: None,
        stop,
    };
    let thread = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || event_loop.run())?;
    Ok((waker, thread))
}

const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);
/// Connection `i` is `Token(FIRST + i)`.
const FIRST: usize = 2;

/// How long accepting pauses when the process is out of file descriptors
/// (the connection waits in the backlog meanwhile).
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

struct Task<J> {
    slot: usize,
    id: u64,
    job: J,
    arrived: Instant,
    /// Set by the loop when the client hangs up.
    gone: Arc<AtomicBool>,
}

/// A request's outcome: its answer, or `None` (its client is gone, or the
/// service panicked): the connection closes.
struct Done {
    slot: usize,
    id: u64,
    answer: Option<Answer>,
}

struct Pool<S: Service> {
    service: Arc<S>,
    tasks: Arc<Mutex<mpsc::Receiver<Task<S::Job>>>>,
    done: mpsc::Sender<Done>,
    waker: Arc<Waker>,
    start_within: Duration,
}

impl<S: Service> Pool<S> {
    fn run(self) {
        loop {
            let task = {
                let rx = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
                rx.recv()
            };
            // The loop is gone: so is every connection.
            let Ok(task) = task else { return };
            let waited = task.arrived.elapsed();
            let answer = if task.gone.load(Ordering::Acquire) {
                None
            } else if waited > self.start_within {
                let message = format!(
                    "not carried out: it waited {:.1} s for the router, longer than the {} s allowed; nothing changed, try again",
                    waited.as_secs_f64(),
                    self.start_within.as_secs_f64()
                );
                Some(Answer {
                    bytes: self.service.refuse(Refusal::Late, &message),
                    close: false,
                })
            } else {
                let service = &self.service;
                let job = task.job;
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || service.run(job)))
                    .ok()
            };
            let done = Done {
                slot: task.slot,
                id: task.id,
                answer,
            };
            if self.done.send(done).is_err() {
                return;
            }
            let _ = self.waker.wake();
        }
    }
}

enum State {
    /// Waiting for a whole request.
    Reading,
    /// Its request is on the pool.
    Working,
    /// Sending an answer.
    Writing,
}

struct Conn<T> {
    stream: T,
    /// Tells a queued request from one of an earlier connection in the
    /// same slot.
    id: u64,
    input: Vec<u8>,
    /// Bytes of `input` that [`Service::parse`] found incomplete.
    seen: usize,
    output: Vec<u8>,
    sent: usize,
    close_after: bool,
    state: State,
    /// When reading or writing must be done by.
    deadline: Instant,
    gone: Arc<AtomicBool>,
}

struct Loop<L: Listen, S: Service> {
    poll: Poll,
    listener: L,
    service: Arc<S>,
    limits: Limits,
    conns: Vec<Option<Conn<L::Stream>>>,
    free: Vec<usize>,
    open: usize,
    next_id: u64,
    tasks: mpsc::SyncSender<Task<S::Job>>,
    done: mpsc::Receiver<Done>,
    /// Out of file descriptors: accept again then.
    accept_again: Option<Instant>,
    /// The earliest deadline (or later: deadlines are checked then).
    next_check: Option<Instant>,
    stop: Arc<AtomicBool>,
}

/// What [`Loop::pump`] leaves a connection in.
enum Verdict {
    Keep,
    Close,
}

impl<L: Listen, S: Service> Loop<L, S> {
    fn run(mut self) {
        let mut events = Events::with_capacity(1024);
        loop {
            let now = Instant::now();
            let wake = [self.next_check, self.accept_again]
                .into_iter()
                .flatten()
                .min();
            let timeout = wake.map(|t| t.saturating_duration_since(now));
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() != io::ErrorKind::Interrupted {
                    tracing::error!(error = %e, "server loop: poll failed; not serving any more");
                    return;
                }
            }
            if self.stop.load(Ordering::Acquire) {
                return;
            }
            for ev in events.iter() {
                match ev.token() {
                    LISTENER => self.accept(),
                    WAKER => {}
                    Token(t) => {
                        let slot = t - FIRST;
                        let hung_up = ev.is_write_closed() || ev.is_error();
                        self.on_ready(slot, hung_up);
                    }
                }
            }
            self.answers();
            if self.accept_again.is_some_and(|t| Instant::now() >= t) {
                self.accept_again = None;
                self.accept();
            }
            if self.next_check.is_some_and(|t| Instant::now() >= t) {
                self.expire();
            }
        }
    }

    fn accept(&mut self) {
        loop {
            match self.listener.accept_one() {
                Ok(mut s) => {
                    if self.open >= self.limits.max_connections {
                        let m = format!(
                            "refused: {} connections are open, the most this server takes; try again later",
                            self.open
                        );
                        // One try, never waiting: a new socket takes a short
                        // line. Dropping it closes it.
                        let _ = s.write(&self.service.refuse(Refusal::Full, &m));
                        continue;
                    }
                    self.add(s);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted
                    ) => {}
                Err(e) => {
                    // EMFILE and the like: the connection stays in the
                    // backlog; try again shortly rather than spin.
                    if self.accept_again.is_none() {
                        tracing::warn!(error = %e, open = self.open, "server: cannot accept a connection");
                    }
                    self.accept_again = Some(Instant::now() + ACCEPT_PAUSE);
                    return;
                }
            }
        }
    }

    fn add(&mut self, mut stream: L::Stream) {
        let slot = self.free.pop().unwrap_or_else(|| {
            self.conns.push(None);
            self.conns.len() - 1
        });
        let interest = Interest::READABLE | Interest::WRITABLE;
        if self
            .poll
            .registry()
            .register(&mut stream, Token(FIRST + slot), interest)
            .is_err()
        {
            self.free.push(slot);
            return;
        }
        self.next_id += 1;
        let deadline = Instant::now() + self.limits.request_deadline;
        self.conns[slot] = Some(Conn {
            stream,
            id: self.next_id,
            input: Vec::new(),
            seen: 0,
            output: Vec::new(),
            sent: 0,
            close_after: false,
            state: State::Reading,
            deadline,
            gone: Arc::new(AtomicBool::new(false)),
        });
        self.open += 1;
        self.watch(deadline);
        self.pump(slot);
    }

    fn remove(&mut self, slot: usize) {
        if let Some(mut c) = self.conns[slot].take() {
            let _ = self.poll.registry().deregister(&mut c.stream);
            self.free.push(slot);
            self.open -= 1;
        }
    }

    /// Deadlines are checked at the earliest one.
    fn watch(&mut self, deadline: Instant) {
        if self.next_check.is_none_or(|t| deadline < t) {
            self.next_check = Some(deadline);
        }
    }

    fn on_ready(&mut self, slot: usize, hung_up: bool) {
        // What it sent before hanging up is read (and answered, if it
        // can be: it may only have shut down its own sending side)...
        self.pump(slot);
        if !hung_up {
            return;
        }
        // ... but a request of a client that is gone is not started if it
        // still waits; the slot is free at once (a late outcome is
        // dropped by its id).
        if let Some(c) = self.conns.get_mut(slot).and_then(Option::as_mut) {
            if matches!(c.state, State::Working) {
                c.gone.store(true, Ordering::Release);
                self.remove(slot);
            }
        }
    }

    /// Moves connection `slot` on as far as it can without waiting.
    fn pump(&mut self, slot: usize) {
        let Some(c) = self.conns.get_mut(slot).and_then(Option::as_mut) else {
            return;
        };
        let mut new_deadline = None;
        let verdict = loop {
            match c.state {
                State::Working => break Verdict::Keep,
                State::Writing => match c.stream.write(&c.output[c.sent..]) {
                    Ok(0) => break Verdict::Close,
                    Ok(n) => {
                        c.sent += n;
                        if c.sent == c.output.len() {
                            if c.close_after {
                                break Verdict::Close;
                            }
                            c.output = Vec::new();
                            c.sent = 0;
                            c.state = State::Reading;
                            c.deadline = Instant::now() + self.limits.request_deadline;
                            new_deadline = Some(c.deadline);
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break Verdict::Keep,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break Verdict::Close,
                },
                State::Reading => match self.service.parse(&c.input, c.seen) {
                    Parsed::Request { len, job } => {
                        c.input.drain(..len.min(c.input.len()));
                        c.seen = 0;
                        let task = Task {
                            slot,
                            id: c.id,
                            job,
                            arrived: Instant::now(),
                            gone: c.gone.clone(),
                        };
                        match self.tasks.try_send(task) {
                            Ok(()) => c.state = State::Working,
                            Err(mpsc::TrySendError::Full(_)) => {
                                let m = format!(
                                    "busy: {} requests are waiting for the router; not carried out, try again",
                                    self.limits.queue
                                );
                                let bytes = self.service.refuse(Refusal::Busy, &m);
                                new_deadline = Some(c.answer(bytes, false, &self.limits));
                            }
                            Err(mpsc::TrySendError::Disconnected(_)) => break Verdict::Close,
                        }
                    }
                    Parsed::Answer { len, bytes, close } => {
                        c.input.drain(..len.min(c.input.len()));
                        c.seen = 0;
                        new_deadline = Some(c.answer(bytes, close, &self.limits));
                    }
                    Parsed::Incomplete => {
                        c.seen = c.input.len();
                        let room = self.service.max_request().saturating_sub(c.input.len());
                        if room == 0 {
                            // The service did not decide on a full buffer.
                            break Verdict::Close;
                        }
                        let mut buf = [0u8; 8192];
                        let n = room.min(buf.len());
                        match c.stream.read(&mut buf[..n]) {
                            Ok(0) => break Verdict::Close,
                            Ok(n) => c.input.extend_from_slice(&buf[..n]),
                            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break Verdict::Keep,
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                            Err(_) => break Verdict::Close,
                        }
                    }
                },
            }
        };
        if let Some(d) = new_deadline {
            self.watch(d);
        }
        if let Verdict::Close = verdict {
            self.remove(slot);
        }
    }

    /// The pool's outcomes, to their connections.
    fn answers(&mut self) {
        while let Ok(d) = self.done.try_recv() {
            let Some(c) = self.conns.get_mut(d.slot).and_then(Option::as_mut) else {
                continue;
            };
            if c.id != d.id || !matches!(c.state, State::Working) {
                continue;
            }
            match d.answer {
                Some(a) => {
                    let deadline = c.answer(a.bytes, a.close, &self.limits);
                    self.watch(deadline);
                    self.pump(d.slot);
                }
                None => self.remove(d.slot),
            }
        }
    }

    /// Closes the connections past their deadline; one that did not send a
    /// whole request in time is told why (one try, never waiting).
    fn expire(&mut self) {
        let now = Instant::now();
        let mut next: Option<Instant> = None;
        for slot in 0..self.conns.len() {
            let Some(c) = self.conns[slot].as_mut() else {
                continue;
            };
            if matches!(c.state, State::Working) {
                continue;
            }
            if c.deadline > now {
                next = Some(next.map_or(c.deadline, |t| t.min(c.deadline)));
                continue;
            }
            if matches!(c.state, State::Reading) {
                let m = format!(
                    "no complete request within {} s; closing",
                    self.limits.request_deadline.as_secs_f64()
                );
                let _ = c.stream.write(&self.service.refuse(Refusal::Timeout, &m));
            }
            self.remove(slot);
        }
        self.next_check = next;
    }
}

impl<T> Conn<T> {
    /// Starts sending `bytes`; the deadline to take them by.
    fn answer(&mut self, bytes: Vec<u8>, close: bool, limits: &Limits) -> Instant {
        self.output = bytes;
        self.sent = 0;
        self.close_after = close;
        self.state = State::Writing;
        self.deadline = Instant::now() + limits.answer_deadline;
        self.deadline
    }
}
