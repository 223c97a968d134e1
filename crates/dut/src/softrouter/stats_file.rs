//! Per-trial statistics of the softrouter DUT: SIGUSR1 snapshots of its
//! statistics file, read as the router's own `Report`, and their
//! difference (a trial's `dut_stats.softrouter`,
//! [`schema::dut_sample::SoftrouterTrial`]).

use super::*;

/// softrouter's statistics file, `None` while there is none yet.
pub(super) fn read_stats(path: &Path) -> Result<Option<Report>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    // The router replaces the file atomically: what is read is whole, so
    // a file that does not parse is one this bench cannot read (a
    // softrouter of another version), not one half written.
    serde_json::from_str(&text).map(Some).with_context(|| {
        format!(
            "{}: not softrouter's statistics as this bench reads them (use the softrouter built with it)",
            path.display()
        )
    })
}

/// Asks the running softrouter for a statistics snapshot: SIGUSR1, then
/// wait until the file's `elapsed_s` differs from `before`'s.
pub(super) fn snapshot(pid: i32, path: &Path) -> Result<Report> {
    let before = read_stats(path)?.map(|r| r.elapsed_s);
    // SAFETY: signalling the softrouter process we started.
    if unsafe { libc::kill(pid, libc::SIGUSR1) } != 0 {
        bail!(
            "cannot signal softrouter (pid {pid}): {}",
            std::io::Error::last_os_error()
        );
    }
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        if let Some(r) = read_stats(path)? {
            if Some(r.elapsed_s) != before {
                return Ok(r);
            }
        }
        if Instant::now() > deadline {
            bail!(
                "softrouter (pid {pid}) did not rewrite {} within 2 s of SIGUSR1",
                path.display()
            );
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// `b - a` of softrouter's statistics: what happened in the trial. Ports
/// are matched by position (the router's port order is fixed); counters
/// that went down (they do not, but a gauge may) count 0.
pub fn stats_delta(a: &Report, b: &Report) -> SoftrouterTrial {
    let ports: Vec<PortTraffic> = b
        .ports
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let d = |f: fn(&PortReport) -> u64| f(p).saturating_sub(a.ports.get(i).map_or(0, f));
            PortTraffic {
                name: p.name.clone(),
                rx_packets: d(|p| p.counters.rx_packets),
                tx_packets: d(|p| p.counters.tx_packets),
                rx_bytes: d(|p| p.counters.rx_bytes),
                tx_bytes: d(|p| p.counters.tx_bytes),
            }
        })
        .collect();
    let drops = b
        .drops
        .iter()
        .map(|(k, &v)| (k, v.saturating_sub(a.drops.get(k).copied().unwrap_or(0))))
        .filter(|&(_, v)| v > 0)
        .map(|(k, v)| (k.clone(), v))
        .collect();
    let (ta, tb) = (&a.totals, &b.totals);
    let cycles = StageCycles {
        rx: tb.cycles.rx.saturating_sub(ta.cycles.rx),
        process: tb.cycles.process.saturating_sub(ta.cycles.process),
        tx: tb.cycles.tx.saturating_sub(ta.cycles.tx),
        packets: tb.cycles.packets.saturating_sub(ta.cycles.packets),
    };
    let per = |x: u64| {
        if cycles.packets > 0 {
            x as f64 / cycles.packets as f64
        } else {
            0.0
        }
    };
    let fast = |r: &Report, f: fn(&schema::report::FastPathPort) -> u64| -> u64 {
        r.ports
            .iter()
            .filter_map(|p| p.fast_path.as_ref())
            .map(f)
            .sum()
    };
    SoftrouterTrial {
        forwarded: tb.forwarded.saturating_sub(ta.forwarded),
        fast_path_forwarded: fast(b, |f| f.forwarded).saturating_sub(fast(a, |f| f.forwarded)),
        fast_path_punted: fast(b, |f| f.punted_total())
            .saturating_sub(fast(a, |f| f.punted_total())),
        local: tb.local.saturating_sub(ta.local),
        generated: tb.generated.saturating_sub(ta.generated),
        held: tb.held.saturating_sub(ta.held),
        rx_packets: ports.iter().map(|p| p.rx_packets).sum(),
        tx_packets: ports.iter().map(|p| p.tx_packets).sum(),
        ports,
        drops,
        cycles,
        cycles_per_packet: Cycles {
            rx: per(cycles.rx),
            process: per(cycles.process),
            tx: per(cycles.tx),
            total: per(cycles.rx + cycles.process + cycles.tx),
        },
    }
}

pub(super) struct SoftrouterProbe {
    pub(super) meter: CpuMeter,
    pub(super) pid: i32,
    pub(super) stats_path: PathBuf,
    pub(super) ns: Option<String>,
    pub(super) ifaces: Vec<String>,
    pub(super) start: Option<(Report, Vec<crate::bed::IfCounters>)>,
    pub(super) control_socket: PathBuf,
    pub(super) metrics: Option<std::net::SocketAddr>,
    /// The control plane's answer times over the trial.
    pub(super) sampler: Option<super::control_latency::ControlSampler>,
    /// Whether the next trial times the control plane.
    pub(super) sample_control: bool,
}

impl DutProbe for SoftrouterProbe {
    fn begin(&mut self) -> Result<()> {
        let s = snapshot(self.pid, &self.stats_path)?;
        let c = if_counters(self.ns.as_deref(), &self.ifaces)?;
        self.start = Some((s, c));
        self.sampler = self.sample_control.then(|| {
            super::control_latency::ControlSampler::start(
                self.control_socket.clone(),
                self.metrics,
                self.ns.clone(),
                self.pid,
            )
        });
        self.meter.begin()
    }

    fn times_control_plane(&self) -> bool {
        true
    }

    fn sample_control(&mut self, on: bool) {
        self.sample_control = on;
    }

    fn end(&mut self) -> Result<DutSample> {
        let (s0, c0) = self
            .start
            .take()
            .context("softrouter probe: end() without begin()")?;
        let s1 = snapshot(self.pid, &self.stats_path)?;
        let c1 = if_counters(self.ns.as_deref(), &self.ifaces)?;
        let control = self.sampler.take().and_then(|s| s.finish());
        let sr = stats_delta(&s0, &s1);
        let (sys, cpu) = self
            .meter
            .end(Some((sr.forwarded, "softrouter forwarded")))?;
        let stats = DutStats {
            interfaces: Some(named_counters(&self.ifaces, &counters_since(&c1, &c0))),
            // Its own drop reasons, every one (ring full, no route...).
            dropped: Some(sr.drops.values().sum::<u64>()),
            softrouter: Some(sr),
            control_latency: control,
            ..DutStats::new("softrouter", cpu)
        };
        Ok(DutSample {
            sys: Some(sys),
            dut_stats: Some(stats),
        })
    }
}
