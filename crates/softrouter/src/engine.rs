//! The multicore engine: one pinned thread per worker, share-nothing.
//!
//! Each worker thread pins itself, then creates its own buffer pool (so the
//! memory is first touched on its core), opens its RX queues and its private
//! TX queue on every port, and loops `poll_once` until told to stop. The main
//! thread only supervises: duration, signals, end of capture input,
//! statistics snapshots on SIGUSR1, workers that died (a panic) and live
//! ports' interfaces that disappeared (both stop the router with an error,
//! statistics still written). Nothing is shared between workers but
//! the read-mostly routing state (`dataplane::Shared`).

use crate::bell::{Bell, Ringer};
use crate::controller::{self, RouterControl};
use crate::kernel_sync::{self, KernelSync};
use crate::neigh_log::NeighLog;
use crate::stats_file::{self, Report};
use crate::tier::{RunningTier, Tier};
use crate::waiting::{Waiter, IDLE_SLEEP_MS, TIMER_SLEEP_MS};
use crate::watch::IfaceWatch;
use crate::{affinity, notify, ports};
use anyhow::{anyhow, Context, Result};
use config::{Config, Driver};
use crossbeam_utils::CachePadded;
use dataplane::{NeighLimits, Router, RouterPlan, WorkerStats};
use netio::{Pool, Port};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Stop after this long; `None`: until a signal (or, with only capture
    /// ports, until every capture is consumed and all held work is flushed).
    pub duration: Option<Duration>,
    /// Where to write the statistics at exit (and on SIGUSR1).
    pub stats_json: Option<PathBuf>,
}

/// What a worker thread reports when it ends.
struct WorkerExit {
    sleeps: u64,
    leaked_buffers: u32,
}

/// How often the supervisor looks at the neighbour table for the log.
const NEIGH_LOOK: Duration = Duration::from_secs(1);

/// How often the supervisor looks at the live ports' interfaces.
const IFACE_POLL: Duration = Duration::from_millis(100);

/// How often the supervisor of a capture-only run looks whether the
/// workers have consumed their input.
const CAPTURE_LOOK: Duration = Duration::from_millis(5);

/// Open files the servers may need at most: both connection limits, and
/// room for the ports, the kernel mirror and the statistics.
const FDS_NEEDED: u64 =
    (control::server::MAX_CONNECTIONS + control::metrics::MAX_CONNECTIONS + 1024) as u64;

/// The open-files limit asked for (up to the hard limit).
const FDS_WANTED: u64 = 4 * FDS_NEEDED;

/// Test hook: `SOFTROUTER_TEST_WORKER_PANIC_MS=<ms>` makes worker 0 panic
/// after forwarding for that long, so the tests can show a panicking worker
/// is noticed. Read once at start; costs the workers nothing otherwise.
const PANIC_HOOK_ENV: &str = "SOFTROUTER_TEST_WORKER_PANIC_MS";

/// The message of a panic payload.
fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    }
}

/// The allocator's policy for `[router] hugepages`.
fn huge_policy(h: config::HugePages) -> hugemem::Policy {
    match h {
        config::HugePages::Auto => hugemem::Policy::Auto,
        config::HugePages::Require => hugemem::Policy::Require,
        config::HugePages::Off => hugemem::Policy::Off,
    }
}

/// Runs the router until a signal, the duration, the end of the capture
/// input, or a failure. A failure (a worker that panicked, an interface
/// that disappeared, a port that could not finish) stops every worker,
/// still writes the statistics, and is returned as the error.
///
/// In order: signals, limits, ports and routing state ([`open`]), the
/// workers ([`Workers::start`]), the control socket, metrics, reloads and
/// kernel mirror ([`Services::start`]), then [`supervise`] until the end,
/// and [`finish`]: join, statistics, the outcome.
pub fn run(cfg: &Config, opts: &RunOptions) -> Result<Report> {
    // Signals first: a SIGTERM or SIGHUP during start-up is handled too.
    let bell = Bell::new()?;
    let signals = Signals::install(&bell)?;

    // The control socket and the metrics endpoint each hold up to a few
    // thousand connections: more than the usual 1,024 open files.
    let fds = control::serve::raise_fd_limit(FDS_WANTED);
    if fds < FDS_NEEDED {
        tracing::warn!(
            "open files limited to {fds} (ulimit -n): the control socket and the metrics endpoint may refuse connections before their own limits"
        );
    }

    // Before any big region (FIB, neighbour table, pools) is allocated.
    hugemem::set_policy(huge_policy(cfg.router.hugepages));

    // Before opening: a second softrouter on one of our interfaces stops
    // here rather than answering alongside the first.
    let _locks = ports::lock_interfaces(cfg)?;
    let Opened {
        ports,
        router,
        tier,
    } = open(cfg)?;
    let assignment = ports::assign_queues(cfg, &ports)?;
    let ifaces = IfaceWatch::new(&ports::live_interfaces(cfg));

    let started = Instant::now();
    let workers = Workers::start(cfg, assignment, &ports, &router, &signals.stop, &bell)?;
    // Every big region exists now (tables, and the workers' pools).
    for w in hugemem::small_page_warnings() {
        tracing::warn!("{w}");
    }
    let memory_at_start = stats_file::memory();
    // The control socket and the metrics endpoint, once the workers run:
    // both read and change the router through its single writer.
    let router = Arc::new(router);
    let configured = kernel_sync::configured(cfg);
    let control = Arc::new(RouterControl::new(
        cfg,
        router.clone(),
        ports.clone(),
        workers.stats.clone(),
        tier.clone(),
        started,
        configured.clone(),
    ));
    let services = match Services::start(cfg, &control, &router, configured) {
        Ok(s) => s,
        Err(e) => return Err(workers.abort(&signals.stop, e)),
    };

    // Ready: the workers run and the control socket answers.
    tracing::info!(
        workers = cfg.router.workers,
        mode = ?cfg.router.mode,
        "forwarding on {} port(s)",
        ports.len()
    );
    notify::ready(&format!("forwarding on {} port(s)", ports.len()));

    let failure = supervise(
        cfg, opts, &bell, &signals, &workers, &router, &control, &services, ifaces, started,
    );
    signals.stop.store(true, Ordering::SeqCst);
    workers.wake();
    notify::stopping();
    let elapsed = started.elapsed();
    let end = End {
        elapsed,
        failure,
        memory_at_start,
    };
    finish(cfg, opts, &ports, workers, tier.as_deref(), &control, end)
}

/// The flags the signal handlers set; each signal also rings the
/// supervisor's [`Bell`].
struct Signals {
    /// SIGINT, SIGTERM: stop (also set by the supervisor to stop workers).
    stop: Arc<AtomicBool>,
    /// SIGUSR1: write the statistics.
    dump: Arc<AtomicBool>,
    /// SIGHUP: reload the configuration.
    hup: Arc<AtomicBool>,
}

impl Signals {
    fn install(bell: &Bell) -> Result<Signals> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGUSR1};
        let stop = Arc::new(AtomicBool::new(false));
        let dump = Arc::new(AtomicBool::new(false));
        let hup = Arc::new(AtomicBool::new(false));
        // SIGHUP re-reads the configuration (its default action would kill
        // the process without statistics).
        let flags = [
            (SIGINT, &stop),
            (SIGTERM, &stop),
            (SIGUSR1, &dump),
            (SIGHUP, &hup),
        ];
        for (sig, flag) in flags {
            // The flag first: the supervisor, woken, must find it set.
            signal_hook::flag::register(sig, flag.clone()).context("installing signal handlers")?;
            signal_hook::low_level::pipe::register(sig, bell.ringer()?)
                .context("installing signal handlers")?;
        }
        Ok(Signals { stop, dump, hup })
    }
}

/// Opens the ports and builds the routing state. The XDP tier, if on, is
/// loaded before the ports open (they attach it) and sized from the plan;
/// the tables are then built in its maps.
fn open(cfg: &Config) -> Result<Opened> {
    let plan =
        RouterPlan::new(cfg, NeighLimits::default()).context("building the routing state")?;
    let tier = Tier::load(cfg, plan.sizes())?;
    let (ports, attached) = ports::open_all(cfg, |i| tier.as_ref().and_then(|t| t.program_for(i)))?;
    let infos: Vec<netio::PortInfo> = ports.iter().map(|p| p.info().clone()).collect();
    let router = match &tier {
        Some(t) => t.build_router(plan, &infos),
        None => plan.build(&infos),
    }
    .context("building the routing state")?;
    let tier = match tier {
        Some(t) => Some(Arc::new(t.start(&router, &infos, &attached)?)),
        None => None,
    };
    Ok(Opened {
        ports,
        router,
        tier,
    })
}

/// What [`open`] opened and built.
struct Opened {
    ports: Vec<Arc<dyn Port>>,
    router: Router,
    /// The XDP tier, running, if on.
    tier: Option<Arc<RunningTier>>,
}

/// The worker threads, their counters, and the flags that say each has
/// consumed its capture input.
struct Workers {
    handles: Vec<thread::JoinHandle<WorkerExit>>,
    stats: Vec<Arc<WorkerStats>>,
    done: Done,
}

/// Per worker, whether it has consumed its capture input and has nothing
/// pending. Each flag has its own cache line (pair): two workers storing
/// into one line would pull it back and forth between their cores, and
/// the store that waits for the line holds up the stores behind it (the
/// next round's receive paid 3-4 cycles a packet for it with two `mem`
/// workers, issue 23).
type Done = Arc<Vec<CachePadded<AtomicBool>>>;

impl Workers {
    /// Spawns one pinned worker per queue assignment and waits until each
    /// has started (or failed to: then all are stopped, and the first
    /// error returned).
    fn start(
        cfg: &Config,
        assignment: Vec<Vec<(usize, u16)>>,
        ports: &[Arc<dyn Port>],
        router: &Router,
        stop: &Arc<AtomicBool>,
        bell: &Bell,
    ) -> Result<Workers> {
        let panic_after = std::env::var(PANIC_HOOK_ENV)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .map(Duration::from_millis);
        let allowed = affinity::allowed_cpus();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<Arc<WorkerStats>>>();
        let done: Done = Arc::new(
            (0..cfg.router.workers)
                .map(|_| CachePadded::new(AtomicBool::new(false)))
                .collect(),
        );
        let mut handles = Vec::new();
        for (id, queues) in assignment.into_iter().enumerate() {
            let core = affinity::core_of(id, &cfg.router.cores, &allowed);
            let ctx = WorkerCtx {
                id,
                core,
                queues,
                ports: ports.to_vec(),
                shared: router.shared(),
                router_cfg: cfg.router.clone(),
                stop: stop.clone(),
                done: done.clone(),
                ready: ready_tx.clone(),
                panic_after: panic_after.filter(|_| id == 0),
            };
            // A worker ends only when told to, or by a panic: either way
            // its end wakes the supervisor.
            let ringer = Ringer(bell.ringer()?);
            let h = thread::Builder::new()
                .name(format!("worker{id}"))
                .spawn(move || {
                    let _ringer = ringer;
                    ctx.run()
                })
                .context("spawning a worker thread")?;
            handles.push(h);
        }
        drop(ready_tx);

        let mut stats = Vec::new();
        let mut failure = None;
        for _ in 0..handles.len() {
            match ready_rx.recv() {
                Ok(Ok(s)) => stats.push(s),
                Ok(Err(e)) => {
                    failure.get_or_insert(e);
                }
                Err(_) => {
                    failure.get_or_insert(anyhow!("a worker thread died during start-up"));
                }
            }
        }
        let workers = Workers {
            handles,
            stats,
            done,
        };
        match failure {
            Some(e) => Err(workers.abort(stop, e)),
            None => Ok(workers),
        }
    }

    /// Wakes every sleeping worker (to see the stop flag at once).
    fn wake(&self) {
        for s in &self.stats {
            s.wake();
        }
    }

    /// Stops and joins every worker after a start-up failure `e`; returns
    /// `e`.
    fn abort(self, stop: &AtomicBool, e: anyhow::Error) -> anyhow::Error {
        stop.store(true, Ordering::SeqCst);
        self.wake();
        for h in self.handles {
            let _ = h.join();
        }
        e
    }
}

/// What serves the running router besides the workers; each stops when
/// dropped.
struct Services {
    _servers: (
        Option<control::ControlServer>,
        Option<control::metrics::MetricsServer>,
    ),
    reloads: crate::reload::Reloads,
    _kernel: Option<KernelSync>,
}

impl Services {
    /// The control socket, the metrics endpoint, the SIGHUP reloads and
    /// the kernel mirror, in that order.
    fn start(
        cfg: &Config,
        control: &Arc<RouterControl>,
        router: &Arc<Router>,
        configured: kernel_sync::Configured,
    ) -> Result<Services> {
        let c = controller::start(cfg, control.clone())?;
        let m = match cfg.metrics {
            Some(addr) => {
                let src = control.clone();
                let m = control::metrics::MetricsServer::start(
                    addr,
                    Arc::new(move || Some(src.metrics_report())),
                )?;
                tracing::info!("metrics on http://{}/metrics", m.addr());
                Some(m)
            }
            None => None,
        };
        let reloads = {
            let control = control.clone();
            crate::reload::Reloads::start(move || control.reload())?
        };
        // The kernel's routes (and with `[kernel] local` its neighbours),
        // dumped before "ready" (so a router started next to a routing
        // daemon comes up with its table), then followed.
        let want_kernel = cfg.kernel_routes.is_some() || cfg.kernel_local;
        let kernel = if want_kernel {
            let k = KernelSync::start(cfg, router.clone(), configured)?;
            if cfg.kernel_routes.is_some() {
                control.set_kernel_sync(k.status());
            }
            Some(k)
        } else {
            None
        };
        Ok(Services {
            _servers: (c, m),
            reloads,
            _kernel: kernel,
        })
    }
}

/// Watches the run until it ends: a signal, the duration, the end of the
/// capture input, a worker that stopped, an interface that went away.
/// Meanwhile logs neighbour changes, feeds the watchdog, and serves
/// SIGHUP and SIGUSR1. Returns why the run failed, if it did.
#[allow(clippy::too_many_arguments)]
fn supervise(
    cfg: &Config,
    opts: &RunOptions,
    bell: &Bell,
    signals: &Signals,
    workers: &Workers,
    router: &Router,
    control: &RouterControl,
    services: &Services,
    mut ifaces: IfaceWatch,
    started: Instant,
) -> Option<String> {
    // Only capture ports: the run ends by itself when the input is consumed.
    let finite = cfg.ports.iter().all(|p| p.driver == Driver::Pcap);
    let watchdog = notify::watchdog_interval();
    let mut last_watchdog = Instant::now();
    let mut failure: Option<String> = None;
    let mut last_iface_poll = Instant::now();
    let mut neigh_log = NeighLog::default();
    let mut last_neigh_look = Instant::now();
    let stop = &signals.stop;
    while !stop.load(Ordering::SeqCst) {
        // Until the next timed look, or a ring (a signal, a worker's end).
        let mut next = last_neigh_look + NEIGH_LOOK;
        if !ifaces.is_empty() {
            next = next.min(last_iface_poll + IFACE_POLL);
        }
        if let Some(w) = watchdog {
            next = next.min(last_watchdog + w);
        }
        if let Some(d) = opts.duration {
            // (At most cli::MAX_DURATION_S: an Instant holds it.)
            next = next.min(started + d);
        }
        if finite {
            // Consumed capture input sets the workers' done flags, which
            // do not ring.
            next = next.min(Instant::now() + CAPTURE_LOOK);
        }
        bell.wait(next.saturating_duration_since(Instant::now()));
        if stop.load(Ordering::SeqCst) {
            break; // a signal: the workers are stopping by now
        }
        if opts.duration.is_some_and(|d| started.elapsed() >= d) {
            break;
        }
        if finite && workers.done.iter().all(|d| d.load(Ordering::Acquire)) {
            break;
        }
        // A worker ends only when told to: one that ended by itself
        // panicked. The others are stopped; the panic is the error.
        // (A worker that saw a signal's stop flag first is no failure; a
        // panic is found by the join below either way.)
        if let Some(id) = workers.handles.iter().position(|h| h.is_finished()) {
            if !stop.load(Ordering::SeqCst) {
                failure = Some(format!("worker {id} stopped unexpectedly"));
            }
            break;
        }
        if !ifaces.is_empty() && last_iface_poll.elapsed() >= IFACE_POLL {
            last_iface_poll = Instant::now();
            if let Err(e) = ifaces.poll() {
                failure = Some(e);
                break;
            }
        }
        if last_neigh_look.elapsed() >= NEIGH_LOOK {
            last_neigh_look = Instant::now();
            neigh_log.update(&router.neighbors(), |i| cfg.ports[i].name.clone());
        }
        // The watchdog says the supervisor still turns; a dead worker or
        // port stops the router by itself (above).
        if watchdog.is_some_and(|w| last_watchdog.elapsed() >= w) {
            last_watchdog = Instant::now();
            notify::send("WATCHDOG=1");
        }
        if signals.hup.swap(false, Ordering::SeqCst) {
            services.reloads.request();
        }
        if signals.dump.swap(false, Ordering::SeqCst) {
            if let Some(path) = &opts.stats_json {
                let r = control.report();
                // A statistics file that cannot be written is the
                // operator's problem to fix, not a reason to stop routing.
                match stats_file::write(&r, path) {
                    Ok(()) => tracing::info!("SIGUSR1: statistics written to {}", path.display()),
                    Err(e) => {
                        tracing::error!("SIGUSR1: statistics not written ({e:#}); still forwarding")
                    }
                }
            } else {
                tracing::warn!("SIGUSR1: no --stats-json given, nothing written");
            }
        }
    }
    failure
}

/// How the run ended, for [`finish`].
struct End {
    elapsed: Duration,
    /// Why the supervisor stopped the router, if it failed.
    failure: Option<String>,
    /// The memory regions at start ([`stats_file::keep_gone_regions`]).
    memory_at_start: Vec<stats_file::MemoryRegion>,
}

/// Joins the (stopped) workers, finishes the ports, builds and writes the
/// statistics, and returns them, or the failure with where the
/// statistics went.
fn finish(
    cfg: &Config,
    opts: &RunOptions,
    ports: &[Arc<dyn Port>],
    workers: Workers,
    tier: Option<&RunningTier>,
    control: &RouterControl,
    end: End,
) -> Result<Report> {
    let mut failure = end.failure;
    let mut exits = Vec::new();
    let mut panics = Vec::new();
    for (id, h) in workers.handles.into_iter().enumerate() {
        match h.join() {
            Ok(exit) => exits.push(exit),
            Err(p) => panics.push(format!("worker {id} panicked: {}", panic_message(&*p))),
        }
    }
    if !panics.is_empty() {
        failure = Some(panics.join("; "));
    }
    let mut errors = Vec::new();
    for p in ports {
        if let Err(e) = p.finish() {
            errors.push(e.to_string());
        }
    }
    let notes: Vec<String> = exits
        .iter()
        .enumerate()
        .filter(|(_, e)| e.leaked_buffers > 0)
        .map(|(i, e)| {
            format!(
                "worker {i}: {} buffers not returned to the pool",
                e.leaked_buffers
            )
        })
        .chain(failure.iter().map(|f| format!("stopped: {f}")))
        .chain(errors.iter().cloned())
        .collect();
    let mut r = control.with_control_plane(stats_file::build(
        cfg,
        ports,
        &workers.stats,
        tier,
        end.elapsed,
        &notes,
    ));
    r.sleeps = exits.iter().map(|e| e.sleeps).sum();
    // The workers' pools went with the workers: report them as obtained.
    stats_file::keep_gone_regions(&mut r.memory, &end.memory_at_start);
    let written = match &opts.stats_json {
        Some(path) => stats_file::write(&r, path),
        None => Ok(()),
    };
    if let Some(f) = failure {
        let stats_note = match (&opts.stats_json, &written) {
            (Some(p), Ok(())) => format!(" (statistics written to {})", p.display()),
            (Some(_), Err(e)) => format!(" (statistics not written: {e:#})"),
            (None, _) => String::new(),
        };
        return Err(anyhow!("{f}; the router stopped{stats_note}"));
    }
    written?;
    if !errors.is_empty() {
        return Err(anyhow!("{}", errors.join("; ")));
    }
    Ok(r)
}

/// A non-blocking eventfd, or None if the kernel refuses one (the worker
/// then answers snapshot requests at its next timeout, as before).
fn waking_eventfd() -> Option<std::fs::File> {
    // SAFETY: eventfd(2); the descriptor is owned by the File below.
    let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    use std::os::fd::FromRawFd;
    // SAFETY: fd is a new descriptor nobody else owns.
    Some(unsafe { std::fs::File::from_raw_fd(fd) })
}

struct WorkerCtx {
    id: usize,
    core: usize,
    queues: Vec<(usize, u16)>,
    ports: Vec<Arc<dyn Port>>,
    shared: Arc<dataplane::Shared>,
    router_cfg: config::Router,
    stop: Arc<AtomicBool>,
    done: Done,
    ready: mpsc::Sender<Result<Arc<WorkerStats>>>,
    /// Test hook ([`PANIC_HOOK_ENV`]).
    panic_after: Option<Duration>,
}

impl WorkerCtx {
    fn run(self) -> WorkerExit {
        let mut worker = match self.start() {
            Ok(w) => w,
            Err(e) => {
                let _ = self.ready.send(Err(e));
                return WorkerExit {
                    sleeps: 0,
                    leaked_buffers: 0,
                };
            }
        };
        // A snapshot request wakes a sleeping worker (the control socket
        // and the statistics then answer at once).
        let wake = waking_eventfd();
        let stats = worker.stats();
        if let Some(f) = &wake {
            if let Ok(c) = f.try_clone() {
                stats.set_waker(c);
            }
        }
        let _ = self.ready.send(Ok(stats));
        let mut waiter = Waiter::new(
            self.router_cfg.mode,
            &worker.wait_fds(),
            wake.as_ref().map(std::os::fd::AsRawFd::as_raw_fd),
        );
        let budget = self.router_cfg.budget;
        let panic_at = self.panic_after.map(|d| Instant::now() + d);
        let mut was_idle = false;
        while !self.stop.load(Ordering::Relaxed) {
            if panic_at.is_some_and(|t| Instant::now() >= t) {
                panic!("{PANIC_HOOK_ENV}: injected worker panic");
            }
            let n = worker.poll_once(budget);
            let idle = worker.inputs_exhausted() && worker.pending() == 0;
            if idle != was_idle {
                self.done[self.id].store(idle, Ordering::Release);
                was_idle = idle;
            }
            // Exhausted capture input: nothing will arrive, so only timers
            // (held packets) remain; let the waiter sleep between rounds.
            if waiter.after_round(if worker.inputs_exhausted() { 0 } else { n }) {
                if worker.pending() > 0 {
                    waiter.sleep(TIMER_SLEEP_MS);
                } else {
                    worker.offline();
                    waiter.sleep(IDLE_SLEEP_MS);
                    worker.online();
                }
            }
        }
        let pool = worker.shutdown();
        WorkerExit {
            sleeps: waiter.sleeps,
            leaked_buffers: pool.frames() - pool.available() as u32,
        }
    }

    fn start(&self) -> Result<dataplane::Worker> {
        if let Err(e) = affinity::pin_current_thread(self.core) {
            tracing::warn!(worker = self.id, core = self.core, "cannot pin: {e}");
        }
        let mut pool = Pool::new(self.router_cfg.pool_frames, self.router_cfg.frame_size)
            .with_context(|| format!("worker {}: buffer pool", self.id))?;
        let mut rx = Vec::new();
        for &(port, queue) in &self.queues {
            let q = self.ports[port]
                .open_rx(queue, &mut pool)
                .with_context(|| {
                    format!(
                        "worker {}: RX queue {queue} of port {}",
                        self.id,
                        self.ports[port].info().name
                    )
                })?;
            rx.push((port, q));
        }
        let mut tx = Vec::new();
        for p in &self.ports {
            tx.push(p.open_tx(self.id, &mut pool).with_context(|| {
                format!("worker {}: TX queue on port {}", self.id, p.info().name)
            })?);
        }
        Ok(dataplane::Worker::new(
            self.id,
            self.shared.clone(),
            pool,
            rx,
            tx,
        ))
    }
}
