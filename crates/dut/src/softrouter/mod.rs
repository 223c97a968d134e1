//! softrouter as the DUT: a `softrouter run` child process in the DUT
//! namespace, owning the bare DUT veth ends through AF_XDP (or AF_PACKET).
//!
//! The configuration is generated for the testbed unless the settings name
//! a file: one `[[port]]` per DUT veth with the DUT's `.1`/`::1` addresses,
//! one `[[route]]` per destination network via the tester's address on
//! that port, and static `[[neighbor]]` entries for the tester addresses
//! (why: with AF_XDP on the tester ports the tester's kernel never sees
//! ARP/ND, so the router must not depend on resolving them). A user's file
//! may name the testbed's random interfaces as `iface = "{if0}"`,
//! `"{if1}"`, ... and the tester MACs as `mac = "{tester_mac0}"`, ...;
//! they are filled in before the run. Its relative paths (captures,
//! `routes_file`) keep meaning what they mean next to it, although the
//! router reads a copy in a private folder.
//!
//! Both are the router's own configuration model, `schema::config_file`: the
//! generated one is filled in as a [`ConfigFile`], a user's file is read
//! into one and adapted field by field, and either is written with
//! `toml::to_string` and checked with the router's validator
//! (`config::parse`) before the router is started. So the text is always
//! a file the router reads, with no quoting or template mistakes to make.
//!
//! Readiness: the engine logs "forwarding on N port(s)" once every worker
//! has opened its queues and the signal handlers are installed (so SIGUSR1
//! no longer kills it); with a generated configuration every DUT port must
//! also answer a ping from the tester namespace. If the child exits first,
//! the error carries its stderr.
//!
//! Per-trial statistics: the probe sends SIGUSR1 at begin and end, waits
//! for the statistics file to be rewritten (its `elapsed_s` changes),
//! reads it as the router's own type (`schema::report::Report`) and
//! reports the difference (`schema::dut_sample::SoftrouterTrial`): packets
//! per port, forwarded, drops by reason, TSC cycles per stage.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use schema::addr::Cidr;
use schema::config_file::{
    ConfigFile, ControlTable, Driver, MetricsTable, Mode, NeighborTable, PortTable, RouteTable,
    RouterTable, XdpMode,
};
use schema::dut_description::{self as description, DutDescription, FinalStats};
use schema::dut_sample::{DutStats, PortTraffic, SoftrouterTrial};
use schema::report::{Cycles, PortReport, Report};
use schema::stats::StageCycles;
use testbed::link::format_mac;
use testbed::RouterMode;

use super::bed::{if_counters, ping_from_tester, Bed, BedPort, RxMechanism};
use super::probe::{CpuMeter, Direct};
use super::{
    counters_since, describe_bed, dut_ns, log_tail, named_counters, terminate_group, Dut,
    DutOptions, Ended,
};
use bench::plan::{DutProbe, DutSample, TrafficPlan};
use bench::settings::{DutSettings, FastPathMode, Pattern, PortDriver, SoftrouterMode};

mod config_file;
mod control_latency;
mod stats_file;

pub use config_file::{adapt_config, generate_config, Knobs};
use config_file::{config_text, driver_of, fast_path_of, mode_of};
pub use stats_file::stats_delta;
use stats_file::{read_stats, SoftrouterProbe};

/// A running softrouter on its testbed.
pub struct SoftrouterDut {
    // Dropped after `Drop::drop` kills the child, so the namespaces go last.
    bed: Bed,
    child: Option<Child>,
    pid: i32,
    dir: PathBuf,
    bin: PathBuf,
    version: String,
    config_text: String,
    config_source: String,
    stats_path: PathBuf,
    /// Where its metrics endpoint listens (in its namespace), if anywhere.
    metrics: Option<std::net::SocketAddr>,
    /// `forwarding = "cross-connect"`: frames go to the far tester port.
    l2: bool,
    log_path: PathBuf,
    driver: String,
    /// `softrouter`, or `softrouter-noxdp` without the XDP tier.
    name: String,
    backend: bench::plan::TesterBackend,
}

/// Where to find the binary: the option, else `softrouter` on `$PATH`.
fn resolve_bin(opts: &DutOptions) -> Result<PathBuf> {
    match &opts.softrouter_bin {
        Some(p) => {
            if !p.is_file() {
                bail!(
                    "softrouter binary {} not found; build it with `cargo build --release -p softrouter`",
                    p.display()
                );
            }
            Ok(p.clone())
        }
        None => Ok(PathBuf::from("softrouter")),
    }
}

/// A new private folder for one DUT run, from `mkdtemp(3)` under the temp
/// folder: mode 0700 and a random name, so a folder (or symlink) someone
/// else created in advance is never used.
pub fn private_dir(prefix: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let template = std::env::temp_dir().join(format!("{prefix}XXXXXX"));
    let mut bytes =
        std::ffi::CString::new(template.into_os_string().into_vec())?.into_bytes_with_nul();
    // SAFETY: bytes is a writable NUL-terminated template ending in XXXXXX.
    let p = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
    if p.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    bytes.pop();
    Ok(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

/// Creates a DUT log that did not exist before (`O_EXCL`), never through
/// a symlink (`O_NOFOLLOW`), readable by its owner only.
pub fn create_log(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

impl SoftrouterDut {
    pub fn start(settings: &DutSettings, pattern: Pattern, opts: &DutOptions) -> Result<Self> {
        let DutSettings::Softrouter {
            config,
            workers,
            mode,
            driver,
            budget,
            fast_path,
        } = settings
        else {
            bail!("not softrouter settings: {settings:?}");
        };
        let bin = resolve_bin(opts)?;
        let version = Command::new(&bin)
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| anyhow!("running `{} --version`: {e}", bin.display()))
            .and_then(|o| {
                if o.status.success() {
                    Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
                } else {
                    Err(anyhow!(
                        "`{} --version` failed: {}",
                        bin.display(),
                        String::from_utf8_lossy(&o.stderr).trim()
                    ))
                }
            })?;
        let driver = driver.unwrap_or_default();
        let bed = Bed::build(
            pattern,
            opts.queues,
            RouterMode::Bare,
            opts.rx_placement().as_ref(),
        )?;
        let (config_text, config_source) = match config {
            None => {
                let file = generate_config(
                    &bed,
                    &Knobs {
                        driver: driver_of(driver),
                        // Workers on the DUT's CPUs.
                        cores: opts.dut_cpus.as_deref().filter(|c| !c.is_empty()),
                        workers: workers.map(|w| w as usize),
                        // interrupt unless told otherwise: the DUT shares
                        // its CPUs with its receive softirqs; it measured
                        // fastest here.
                        mode: Some(mode.map_or(Mode::Interrupt, mode_of)),
                        budget: *budget,
                        // With RPS placement generic XDP runs after the
                        // steering, on the DUT's CPUs (`testbed::rps`);
                        // with threaded NAPI native XDP runs in the DUT
                        // ends' NAPI threads, and gives them NAPI, which
                        // the xdp tester's frames need.
                        xdp_mode: match bed.rx_placement.as_ref().map(|p| p.mechanism) {
                            _ if driver != PortDriver::AfXdp => None,
                            Some(RxMechanism::Rps) => Some(XdpMode::Generic),
                            Some(RxMechanism::ThreadedNapi) => Some(XdpMode::Native),
                            None => None,
                        },
                        fast_path: fast_path.map(fast_path_of),
                    },
                );
                let header = "# generated by the benchmark for its namespace testbed";
                (config_text(&file, header)?, "generated".to_string())
            }
            Some(p) => {
                let t = std::fs::read_to_string(p)
                    .with_context(|| format!("reading softrouter config {}", p.display()))?;
                let file: ConfigFile = toml::from_str(&t)
                    .with_context(|| format!("reading softrouter config {}", p.display()))?;
                let folder = std::path::absolute(p)
                    .with_context(|| format!("softrouter config {}", p.display()))?
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_default();
                let file = adapt_config(file, &bed, &folder, fast_path.map(fast_path_of))
                    .with_context(|| format!("softrouter config {}", p.display()))?;
                let header = format!(
                    "# {}, adapted by the benchmark to its namespace testbed",
                    p.display()
                );
                (config_text(&file, &header)?, p.display().to_string())
            }
        };
        let dir = private_dir("softrouter-bench-").context("creating the DUT's work folder")?;
        let config_path = dir.join("router.toml");
        std::fs::write(&config_path, &config_text)
            .with_context(|| format!("writing {}", config_path.display()))?;
        // The router's own validator, on the file it is about to read: a
        // mistake is reported here, with its line, instead of as an early
        // exit of the router.
        let parsed = config::parse(&config_text, &config_path).map_err(|e| {
            anyhow!("softrouter's configuration (from {config_source}) is not valid: {e}\n{config_text}")
        })?;
        // What tables call this DUT: the XDP tier is the router's default,
        // so only a router without it gets another name.
        let tier = parsed.router.fast_path == schema::config_file::FastPath::Xdp
            && parsed.ports.iter().any(|p| p.driver == Driver::AfXdp);
        // A cross-connect switches frames: the tester addresses them to
        // the receiving tester port (an L2 plan), and tables name it.
        let l2 = parsed.router.forwarding == schema::config_file::Forwarding::CrossConnect;
        let name = if l2 {
            "softrouter-xc"
        } else if tier {
            "softrouter"
        } else {
            "softrouter-noxdp"
        }
        .to_string();
        let stats_path = dir.join("stats.json");
        let log_path = dir.join("softrouter.log");
        let log =
            create_log(&log_path).with_context(|| format!("creating {}", log_path.display()))?;
        let ns = bed.dut_ns("softrouter")?.name().to_string();
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &ns])
            .arg(&bin)
            .args(["run", "--config"])
            .arg(&config_path)
            .arg("--stats-json")
            .arg(&stats_path)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        super::child_setup(&mut cmd);
        super::confine_child(&mut cmd, opts.dut_cpus.as_deref());
        let child = cmd
            .spawn()
            .with_context(|| format!("starting {} in namespace {ns}", bin.display()))?;
        let pid = child.id() as i32;
        let mut dut = SoftrouterDut {
            bed,
            child: Some(child),
            pid,
            dir,
            bin,
            version,
            config_text,
            config_source,
            stats_path,
            log_path,
            metrics: parsed.metrics,
            l2,
            driver: driver.to_string(),
            name,
            backend: opts.backend,
        };
        dut.wait_ready(opts.ready_timeout, config.is_none())
            .with_context(|| format!("softrouter in namespace {ns}"))?;
        dut.bed.thread_dut_napi()?;
        Ok(dut)
    }

    fn exited(&mut self) -> Option<String> {
        let child = self.child.as_mut()?;
        match child.try_wait() {
            Ok(Some(st)) => Some(format!(
                "softrouter exited ({st}) before it was ready; its output:\n{}",
                log_tail(&self.log_path, 4000)
            )),
            _ => None,
        }
    }

    fn wait_ready(&mut self, timeout: Duration, ping: bool) -> Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(e) = self.exited() {
                bail!(e);
            }
            if std::fs::read_to_string(&self.log_path).is_ok_and(|s| s.contains("forwarding on")) {
                break;
            }
            if Instant::now() > deadline {
                bail!(
                    "not ready after {:?} (no \"forwarding on\" in its log); its output:\n{}",
                    timeout,
                    log_tail(&self.log_path, 4000)
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if ping {
            for p in self.bed.ports.clone() {
                let addr = p.dut_v4.to_string();
                loop {
                    if ping_from_tester(&self.bed, &addr, 1)? {
                        break;
                    }
                    if let Some(e) = self.exited() {
                        bail!(e);
                    }
                    if Instant::now() > deadline {
                        bail!(
                            "port {} ({}) never answered a ping to {addr} from the tester namespace within {:?}; its output:\n{}",
                            p.index,
                            p.dut_if,
                            timeout,
                            log_tail(&self.log_path, 4000)
                        );
                    }
                }
            }
        }
        Ok(())
    }

    /// Send SIGTERM to the group, wait up to `grace`, then SIGKILL.
    fn terminate(&mut self, grace: Duration) -> Option<std::process::ExitStatus> {
        let mut child = self.child.take()?;
        match terminate_group(&mut child, self.pid, grace) {
            Ended::Before(st) | Ended::Exited(st) => Some(st),
            Ended::Killed(st) => st,
        }
    }
}

impl Dut for SoftrouterDut {
    fn kind(&self) -> &'static str {
        "softrouter"
    }

    fn plan(&self, ipv6: bool, flows_per_pair: u32) -> TrafficPlan {
        TrafficPlan {
            l2: self.l2,
            ..self.bed.plan(ipv6, flows_per_pair, self.backend)
        }
    }

    fn probe(&self) -> Box<dyn DutProbe> {
        Box::new(SoftrouterProbe {
            meter: CpuMeter::new(Direct::ProcessGroup(self.pid)),
            pid: self.pid,
            stats_path: self.stats_path.clone(),
            ns: dut_ns(&self.bed),
            ifaces: self.bed.dut_ifaces(),
            start: None,
            control_socket: self.dir.join("ctl.sock"),
            metrics: self.metrics,
            sampler: None,
            sample_control: false,
        })
    }

    fn describe(&self) -> DutDescription {
        DutDescription::Softrouter(description::Softrouter {
            name: self.name.clone(),
            version: self.version.clone(),
            binary: self.bin.display().to_string(),
            driver: self.driver.clone(),
            config_source: self.config_source.clone(),
            config: self.config_text.clone(),
            kernel: super::kernel_release(),
            testbed: describe_bed(&self.bed),
            final_stats: None,
        })
    }

    fn bed(&self) -> &Bed {
        &self.bed
    }

    fn stop(mut self: Box<Self>) -> Result<FinalStats> {
        let status = self.terminate(Duration::from_secs(10));
        // The final statistics go into the results as the router's own
        // `Report`, the type the probe reads every trial's with.
        let stats = read_stats(&self.stats_path).ok().flatten().map(Box::new);
        let ok = status.is_some_and(|s| s.success());
        let log = log_tail(&self.log_path, 2000);
        let v = FinalStats::Softrouter {
            exit_status: status.map(|s| s.to_string()),
            stats,
            log_tail: log.clone(),
        };
        if !ok {
            bail!(
                "softrouter did not exit cleanly ({}); its output:\n{log}",
                status.map_or("unknown".into(), |s| s.to_string())
            );
        }
        Ok(v)
    }
}

impl Drop for SoftrouterDut {
    fn drop(&mut self) {
        self.terminate(Duration::from_secs(5));
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schema::stats::{PortCounters, StatsSnapshot};
    use serde_json::json;

    /// A two-port bed without namespaces: the addressing plan with made-up
    /// interface names and MACs.
    fn bed() -> Bed {
        let ports = (0..2)
            .map(|i| BedPort {
                dut_if: format!("srd{i}x7"),
                tester_if: format!("srt{i}x7"),
                tester_mac: [0x02, 0, 0, 0, 0xee, i as u8],
                dut_mac: [0x02, 0, 0, 0, 0xdd, i as u8],
                ..BedPort::addresses(i).unwrap()
            })
            .collect();
        Bed {
            star: None,
            ports,
            pattern: Pattern::Bidirectional,
            queues: 1,
            rx_placement: None,
            napi_threads: Vec::new(),
        }
    }

    fn knobs() -> Knobs<'static> {
        Knobs {
            driver: Driver::AfXdp,
            cores: Some(&[2, 3]),
            workers: Some(2),
            mode: Some(Mode::Interrupt),
            budget: Some(32),
            xdp_mode: Some(XdpMode::Native),
            fast_path: Some(schema::config_file::FastPath::Off),
        }
    }

    /// Through the router's own validator, as `softrouter run` reads it.
    fn validate(file: &ConfigFile) -> Result<config::Config, config::ConfigError> {
        let text = config_text(file, "# test").unwrap();
        config::parse(&text, Path::new("/tmp/softrouter-bench-test/router.toml"))
    }

    #[test]
    fn the_generated_configuration_is_what_the_router_reads() {
        let bed = bed();
        let c = validate(&generate_config(&bed, &knobs())).unwrap();
        assert_eq!(c.router.workers, 2);
        assert_eq!(c.router.cores, [2, 3]);
        assert_eq!(c.router.mode, Mode::Interrupt);
        assert_eq!(c.router.budget, 32);
        assert_eq!(c.router.fast_path, schema::config_file::FastPath::Off);
        assert_eq!(c.ports.len(), 2);
        assert_eq!(c.routes.len(), 4);
        assert_eq!(c.neighbors.len(), 4);
        for (i, p) in bed.ports.iter().enumerate() {
            let port = &c.ports[i];
            assert_eq!(port.name, format!("p{i}"));
            assert_eq!(port.driver, Driver::AfXdp);
            assert_eq!(port.xdp_mode, XdpMode::Native);
            assert_eq!(port.iface.as_deref(), Some(p.dut_if.as_str()));
            let addrs: Vec<String> = port.addresses.iter().map(|a| a.to_string()).collect();
            assert_eq!(
                addrs,
                [format!("{}/24", p.dut_v4), format!("{}/64", p.dut_v6)]
            );
            let (v4, v6) = (&c.routes[2 * i], &c.routes[2 * i + 1]);
            assert_eq!(v4.prefix.to_string(), p.dest_v4_net());
            assert_eq!(v4.via, [(p.tester_v4.into(), i)]);
            assert_eq!(v6.prefix.to_string(), p.dest_v6_net());
            assert_eq!(v6.via, [(p.tester_v6.into(), i)]);
            for n in &c.neighbors[2 * i..2 * i + 2] {
                assert_eq!((n.mac, n.port), (p.tester_mac, i));
            }
            assert_eq!(c.neighbors[2 * i].address, IpAddr::from(p.tester_v4));
            assert_eq!(c.neighbors[2 * i + 1].address, IpAddr::from(p.tester_v6));
        }

        // Unset knobs are left to the router's defaults.
        let plain = Knobs {
            driver: Driver::AfPacket,
            cores: None,
            workers: None,
            mode: None,
            budget: None,
            xdp_mode: None,
            fast_path: None,
        };
        let c = validate(&generate_config(&bed, &plain)).unwrap();
        assert_eq!((c.router.workers, c.router.budget), (1, 64));
        assert_eq!(c.ports[0].driver, Driver::AfPacket);
    }

    /// The check above has teeth: a wrong field is refused by the
    /// validator, naming it.
    #[test]
    fn a_wrong_field_fails_the_validator() {
        let bed = bed();
        let good = generate_config(&bed, &knobs());
        let refused = |f: &mut dyn FnMut(&mut ConfigFile), needle: &str| {
            let mut file = good.clone();
            f(&mut file);
            let e = validate(&file).expect_err(needle);
            assert!(e.to_string().contains(needle), "{needle}: {e}");
        };
        refused(
            &mut |f| f.neighbor[0].port = "p9".into(),
            "no port is named",
        );
        refused(
            &mut |f| f.neighbor[1].mac = "02:00".into(),
            "not a MAC address",
        );
        refused(
            &mut |f| f.route[0].via = vec![bed.ports[0].dut_v4.into()],
            "router's own address",
        );
        refused(
            &mut |f| f.router.as_mut().unwrap().workers = Some(3),
            "3 workers but 2 cores",
        );
        refused(&mut |f| f.port[1].iface = None, "needs iface");
    }

    #[test]
    fn a_users_file_gets_the_beds_names_field_by_field() {
        let bed = bed();
        let text = r#"
[router]
workers = 1

[[port]]
name = "in"
driver = "afpacket"
iface = "{if0}"
addresses = ["198.18.0.1/24"]

[[port]]
name = "out"
driver = "afpacket"
iface = "{if1}"
addresses = ["198.18.1.1/24"]

[[route]]
prefix = "198.19.1.0/24"
via = ["198.18.1.2"]

[[neighbor]]
address = "198.18.1.2"
mac = "{tester_mac1}"
port = "out"
"#;
        let folder = Path::new("/etc/sr");
        let file = adapt_config(toml::from_str(text).unwrap(), &bed, folder, None).unwrap();
        let c = validate(&file).unwrap();
        assert_eq!(c.ports[0].iface.as_deref(), Some("srd0x7"));
        assert_eq!(c.ports[1].iface.as_deref(), Some("srd1x7"));
        assert_eq!(c.neighbors[0].mac, bed.ports[1].tester_mac);
        assert_eq!(c.ports[0].name, "in");
        assert_eq!(c.router.mode, Mode::Adaptive, "the user's defaults stay");
        assert_eq!(c.router.fast_path, schema::config_file::FastPath::Xdp);
        let written = config_text(&file, "# test").unwrap();
        assert!(!written.contains('{'), "{written}");

        // A port the bed does not have is named, not passed on.
        let e = adapt_config(
            toml::from_str(&text.replace("{if1}", "{if5}")).unwrap(),
            &bed,
            folder,
            None,
        )
        .unwrap_err();
        assert!(format!("{e:#}").contains("no port 5"), "{e:#}");

        // Relative paths mean what they meant next to the user's file.
        let paths = "[routes_file]\npath = \"routes.txt\"\n";
        let file = adapt_config(toml::from_str(paths).unwrap(), &bed, folder, None).unwrap();
        let path = file.routes_file.unwrap().path;
        assert_eq!(path, Path::new("/etc/sr/routes.txt"));
        let paths = "[routes_file]\npath = \"/srv/routes.txt\"\n";
        let file = adapt_config(toml::from_str(paths).unwrap(), &bed, folder, None).unwrap();
        assert_eq!(file.routes_file.unwrap().path, Path::new("/srv/routes.txt"));
    }

    fn report(
        elapsed_s: f64,
        ports: [(u64, u64); 2],
        drops: &[(&str, u64)],
        cycles: u64,
    ) -> Report {
        let port = |(rx, tx): (u64, u64)| PortCounters {
            rx_packets: rx,
            tx_packets: tx,
            rx_bytes: rx * 60,
            tx_bytes: tx * 60,
            received: rx,
            forwarded: rx,
            ..PortCounters::default()
        };
        let totals = StatsSnapshot {
            ports: ports.map(port).to_vec(),
            cycles: StageCycles {
                rx: cycles,
                process: 2 * cycles,
                tx: cycles,
                packets: ports[0].0 + ports[1].0,
            },
            forwarded: ports[0].0 + ports[1].0,
            held: 1,
            generated: 2,
            ..StatsSnapshot::default()
        };
        Report {
            control_plane: None,
            memory: vec![],
            version: "0.1.0".into(),
            elapsed_s,
            workers: 1,
            mode: "interrupt".into(),
            fast_path: "off".into(),
            ports: ["p0", "p1"]
                .iter()
                .zip(&totals.ports)
                .map(|(n, c)| PortReport::new(n.to_string(), c.clone()))
                .collect(),
            drops: drops.iter().map(|&(k, v)| (k.to_string(), v)).collect(),
            cycles_per_packet: Cycles {
                rx: 0.0,
                process: 0.0,
                tx: 0.0,
                total: 0.0,
            },
            sleeps: 0,
            notes: Vec::new(),
            per_worker: vec![totals.clone()],
            totals,
        }
    }

    /// The trial's `dut_stats.softrouter`, field for field as the bench
    /// has always written it.
    #[test]
    fn trial_statistics_are_the_difference_of_two_files() {
        let a = report(1.0, [(10, 0), (0, 10)], &[("no_route", 1)], 1000);
        let b = report(
            2.0,
            [(110, 0), (0, 100)],
            &[("no_route", 1), ("ttl_exceeded", 10)],
            5000,
        );
        // The XDP tier's share, in both files (a counter it reset would
        // count 0, never negative).
        let (mut a, mut b) = (a, b);
        let tier = |forwarded: u64, ttl: u64| schema::report::FastPathPort {
            forwarded,
            punted: [("ttl".to_string(), ttl)].into(),
            ..Default::default()
        };
        a.ports[0].fast_path = Some(tier(10, 2));
        b.ports[0].fast_path = Some(tier(30, 12));
        // Through the file, as the probe reads it.
        let b: Report = serde_json::from_str(&serde_json::to_string(&b).unwrap()).unwrap();
        let d = serde_json::to_value(stats_delta(&a, &b)).unwrap();
        assert_eq!(
            d,
            json!({
                "forwarded": 100, "local": 0, "generated": 0, "held": 0,
                "fast_path_forwarded": 20, "fast_path_punted": 10,
                "rx_packets": 100, "tx_packets": 90,
                "ports": [
                    {"name": "p0", "rx_packets": 100, "tx_packets": 0,
                     "rx_bytes": 6000, "tx_bytes": 0},
                    {"name": "p1", "rx_packets": 0, "tx_packets": 90,
                     "rx_bytes": 0, "tx_bytes": 5400},
                ],
                "drops": {"ttl_exceeded": 10},
                "cycles": {"rx": 4000, "process": 8000, "tx": 4000, "packets": 100},
                "cycles_per_packet": {"rx": 40.0, "process": 80.0, "tx": 40.0, "total": 160.0},
            })
        );
        // No packets: no cycles per packet, rather than a division by 0.
        let d = stats_delta(&a, &a);
        assert_eq!(d.cycles_per_packet.total, 0.0);
    }
}
