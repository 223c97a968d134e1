//! Any program as the DUT: `sh -c <command>` in the DUT namespace.
//!
//! Why this exists: to measure other routers (a DPDK/AF_XDP application,
//! VPP, the kernel with a script's tuning) on exactly the same testbed and
//! tester as softrouter. The command gets the testbed in its environment:
//!
//! | variable | value |
//! |---|---|
//! | `SR_IF_IN`, `SR_IF_OUT` | DUT interfaces of ports 0 and 1 |
//! | `SR_IFACES` | all DUT interfaces, space separated, port order |
//! | `SR_NETNS` | the DUT namespace |
//! | `SR_DUT_MACS`, `SR_TESTER_MACS` | MACs per port (space separated) |
//! | `SR_DUT_V4`, `SR_DUT_V6` | the DUT's addresses per port (`.1`, `::1`) |
//! | `SR_TESTER_V4`, `SR_TESTER_V6` | the tester's addresses per port (next hops) |
//! | `SR_DEST_V4`, `SR_DEST_V6` | destination networks per port (CIDR) |
//!
//! By default the DUT interfaces also get the kernel addresses, routes and
//! permanent neighbors of the plan with forwarding off, so a command like
//! `sysctl -w net.ipv4.ip_forward=1; sleep infinity` turns the namespace
//! into a kernel router; `addresses = false` leaves them bare for
//! user-space routers. Readiness is a settle time (default 1 s) during
//! which the command must not exit. At stop the whole process group gets
//! SIGTERM, then SIGKILL.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use schema::dut_description::{self as description, DutDescription, FinalStats};
use schema::dut_sample::DutStats;
use testbed::link::format_mac;
use testbed::RouterMode;

use super::bed::{if_counters, Bed, IfCounters};
use super::probe::{CpuMeter, Direct};
use super::{
    counters_since, describe_bed, dut_ns, log_tail, named_counters, rx_dropped, shell_output,
    terminate_group, Dut, DutOptions, Ended,
};
use bench::plan::{DutProbe, DutSample, TesterBackend, TrafficPlan};
use bench::settings::{DutSettings, Pattern};

/// A user's command running in the DUT namespace.
pub struct CommandDut {
    bed: Bed,
    child: Option<Child>,
    pgid: i32,
    command: String,
    version: String,
    env: Vec<(String, String)>,
    log_path: PathBuf,
    backend: TesterBackend,
    addresses: bool,
}

/// The `SR_*` environment for `bed`.
pub fn environment(bed: &Bed) -> Vec<(String, String)> {
    let join = |f: &dyn Fn(&super::BedPort) -> String| {
        bed.ports.iter().map(f).collect::<Vec<_>>().join(" ")
    };
    let mut env = vec![
        (
            "SR_IF_IN".to_string(),
            bed.ports
                .first()
                .map(|p| p.dut_if.clone())
                .unwrap_or_default(),
        ),
        (
            "SR_IF_OUT".to_string(),
            bed.ports
                .get(1)
                .map(|p| p.dut_if.clone())
                .unwrap_or_default(),
        ),
        ("SR_IFACES".to_string(), join(&|p| p.dut_if.clone())),
        ("SR_DUT_MACS".to_string(), join(&|p| format_mac(&p.dut_mac))),
        (
            "SR_TESTER_MACS".to_string(),
            join(&|p| format_mac(&p.tester_mac)),
        ),
        ("SR_DUT_V4".to_string(), join(&|p| p.dut_v4.to_string())),
        ("SR_DUT_V6".to_string(), join(&|p| p.dut_v6.to_string())),
        (
            "SR_TESTER_V4".to_string(),
            join(&|p| p.tester_v4.to_string()),
        ),
        (
            "SR_TESTER_V6".to_string(),
            join(&|p| p.tester_v6.to_string()),
        ),
        ("SR_DEST_V4".to_string(), join(&|p| p.dest_v4_net())),
        ("SR_DEST_V6".to_string(), join(&|p| p.dest_v6_net())),
    ];
    if let Some(ns) = bed.dut() {
        env.push(("SR_NETNS".to_string(), ns.name().to_string()));
    }
    env
}

impl CommandDut {
    pub fn start(settings: &DutSettings, pattern: Pattern, opts: &DutOptions) -> Result<Self> {
        let DutSettings::Command {
            command,
            version_command,
            addresses,
            settle_seconds,
        } = settings
        else {
            bail!("not command settings: {settings:?}");
        };
        let addresses = addresses.unwrap_or(true);
        let bed = Bed::build(
            pattern,
            opts.queues,
            if addresses {
                RouterMode::Kernel
            } else {
                RouterMode::Bare
            },
            opts.rx_placement().as_ref(),
        )?;
        if addresses {
            bed.add_dut_neighbors()?;
        }
        let env = environment(&bed);
        let ns = bed.dut_ns("command")?.name().to_string();
        let version = match version_command {
            Some(v) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", &ns, "sh", "-c", v])
                    .envs(env.clone());
                match c.stdin(Stdio::null()).output() {
                    Ok(o) if o.status.success() => {
                        String::from_utf8_lossy(&o.stdout).trim().to_string()
                    }
                    Ok(o) => format!(
                        "(version command {v:?} failed: {} {})",
                        o.status,
                        String::from_utf8_lossy(&o.stderr).trim()
                    ),
                    Err(e) => format!("(version command {v:?} failed: {e})"),
                }
            }
            None => "unknown (no version_command)".to_string(),
        };
        // In a private mkdtemp folder, created exclusively, never through
        // a symlink (see `super::softrouter::create_log`).
        let log_path = super::softrouter::private_dir("softrouter-bench-cmd-")
            .context("creating the DUT's log folder")?
            .join("dut.log");
        let log = super::softrouter::create_log(&log_path)
            .with_context(|| format!("creating {}", log_path.display()))?;
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &ns, "sh", "-c", command])
            .envs(env.clone())
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        super::child_setup(&mut cmd);
        let child = cmd
            .spawn()
            .with_context(|| format!("starting `sh -c {command:?}` in namespace {ns}"))?;
        let pgid = child.id() as i32;
        let mut dut = CommandDut {
            bed,
            child: Some(child),
            pgid,
            command: command.clone(),
            version,
            env,
            log_path,
            backend: opts.backend,
            addresses,
        };
        let settle = Duration::from_secs_f64(settle_seconds.unwrap_or(1.0));
        let until = Instant::now() + settle;
        loop {
            if let Some(c) = dut.child.as_mut() {
                if let Ok(Some(st)) = c.try_wait() {
                    bail!(
                        "DUT command `{command}` in namespace {ns} exited ({st}) during its {settle:?} settle time; its output:\n{}",
                        std::fs::read_to_string(&dut.log_path).unwrap_or_default().trim()
                    );
                }
            }
            if Instant::now() >= until {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        dut.bed.thread_dut_napi()?;
        Ok(dut)
    }

    fn terminate(&mut self) -> Option<String> {
        let mut child = self.child.take()?;
        let ended = terminate_group(&mut child, self.pgid, Duration::from_secs(5));
        if !matches!(ended, Ended::Killed(_)) {
            // The leader is gone, but its group may live on.
            // SAFETY: signalling the process group we created.
            unsafe { libc::kill(-self.pgid, libc::SIGKILL) };
        }
        match ended {
            Ended::Before(st) => Some(format!("exited by itself: {st}")),
            Ended::Exited(st) => Some(st.to_string()),
            Ended::Killed(st) => st.map(|s| format!("killed: {s}")),
        }
    }
}

impl Dut for CommandDut {
    fn kind(&self) -> &'static str {
        "command"
    }

    fn plan(&self, ipv6: bool, flows_per_pair: u32) -> TrafficPlan {
        self.bed.plan(ipv6, flows_per_pair, self.backend)
    }

    fn probe(&self) -> Box<dyn DutProbe> {
        Box::new(CommandProbe {
            meter: CpuMeter::new(Direct::ProcessGroup(self.pgid)),
            ns: dut_ns(&self.bed),
            ifaces: self.bed.dut_ifaces(),
            start: None,
        })
    }

    fn describe(&self) -> DutDescription {
        let ns = dut_ns(&self.bed);
        DutDescription::Command(description::Command {
            command: self.command.clone(),
            version: self.version.clone(),
            environment: self.env.iter().cloned().collect(),
            kernel_addresses: self.addresses,
            ip_forward: ns
                .as_deref()
                .map(|n| shell_output(Some(n), "sysctl -n net.ipv4.ip_forward")),
            kernel: super::kernel_release(),
            testbed: describe_bed(&self.bed),
            final_stats: None,
        })
    }

    fn bed(&self) -> &Bed {
        &self.bed
    }

    fn stop(mut self: Box<Self>) -> Result<FinalStats> {
        let ns = dut_ns(&self.bed);
        let ifs = if_counters(ns.as_deref(), &self.bed.dut_ifaces()).ok();
        let status = self.terminate();
        Ok(FinalStats::Command {
            exit: status,
            interfaces: ifs.map(|c| self.bed.dut_ifaces().into_iter().zip(c).collect()),
            output_tail: log_tail(&self.log_path, 2000),
        })
    }
}

impl Drop for CommandDut {
    fn drop(&mut self) {
        self.terminate();
        let _ = std::fs::remove_file(&self.log_path);
        if let Some(dir) = self.log_path.parent() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

struct CommandProbe {
    meter: CpuMeter,
    ns: Option<String>,
    ifaces: Vec<String>,
    start: Option<Vec<IfCounters>>,
}

impl DutProbe for CommandProbe {
    fn begin(&mut self) -> Result<()> {
        self.start = Some(if_counters(self.ns.as_deref(), &self.ifaces)?);
        self.meter.begin()
    }

    fn end(&mut self) -> Result<DutSample> {
        let c0 = self
            .start
            .take()
            .context("command probe: end() without begin()")?;
        let c1 = if_counters(self.ns.as_deref(), &self.ifaces)?;
        let d = counters_since(&c1, &c0);
        let fwd = d.iter().map(|c| c.tx_packets).sum::<u64>();
        let (sys, cpu) = self.meter.end(Some((fwd, "DUT interface TX packets")))?;
        let stats = DutStats {
            interfaces: Some(named_counters(&self.ifaces, &d)),
            dropped: Some(rx_dropped(&d)),
            ..DutStats::new("command", cpu)
        };
        Ok(DutSample {
            sys: Some(sys),
            dut_stats: Some(stats),
        })
    }
}
