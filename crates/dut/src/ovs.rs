//! Open vSwitch as the DUT (`--dut ovs`), paper 001's fastest forwarder
//! on the Linux stack.
//!
//! This kernel has no OVS module (`openvswitch.ko`), so the switch runs
//! its **user-space datapath** (`datapath_type=netdev`): ovs-vswitchd
//! reads and writes the DUT's veth ends itself (through packet sockets,
//! its `system` port type) and does the flow lookup in user space. The
//! paper measured the kernel datapath; this is the same OVS with the
//! other datapath, and the results say so (`describe().datapath`).
//!
//! Configured in the DUT namespace, every file in a private folder (no
//! system-wide OVS database or socket is touched): a fresh database,
//! `ovsdb-server` and `ovs-vswitchd` as the bench's children (they die
//! with it: `PR_SET_PDEATHSIG`), bridge `br0` over the DUT ports, and
//! one OpenFlow rule per tester port (`dl_dst=<its MAC>,
//! actions=output:<its DUT port>`) instead of the NORMAL learning
//! switch, so nothing is flooded and no MAC needs learning (as the
//! bridge DUT's static entries). The tester addresses frames to the
//! receiving tester port ([`TrafficPlan::l2`]).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use schema::dut_description::{self as description, DutDescription, FinalStats};
use testbed::link::format_mac;
use testbed::RouterMode;

use super::bed::{if_counters, Bed};
use super::bridge::PortCountersProbe;
use super::probe::{CpuMeter, Direct};
use super::stages::StageProfiler;
use super::{describe_bed, dut_ns, named_counters, Dut, DutOptions};
use bench::plan::{DutProbe, TesterBackend, TrafficPlan};
use bench::settings::Pattern;

const SCHEMA: &str = "/usr/share/openvswitch/vswitch.ovsschema";

pub struct OvsDut {
    bed: Bed,
    backend: TesterBackend,
    dir: PathBuf,
    db: Option<Child>,
    switch: Option<Child>,
    version: String,
    /// Per-trial stage profiling (`DutOptions::profile_stages`).
    stages: Option<StageProfiler>,
}

impl OvsDut {
    pub fn start(pattern: Pattern, opts: &DutOptions) -> Result<Self> {
        if !Path::new(SCHEMA).is_file() {
            bail!(
                "ovs DUT: {SCHEMA} not found: install openvswitch-switch (scripts/setup.sh does)"
            );
        }
        let placement = opts.rx_placement();
        let stages = StageProfiler::for_dut(opts)?;
        let bed = Bed::build(pattern, opts.queues, RouterMode::Bare, placement.as_ref())?;
        let dir = super::softrouter::private_dir("sr-ovs-")?;
        let version = Command::new("ovs-vswitchd")
            .arg("--version")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.lines().next().map(str::to_string))
            .unwrap_or_else(|| "ovs-vswitchd (version unknown)".into());
        let mut dut = OvsDut {
            bed,
            backend: opts.backend,
            dir,
            db: None,
            switch: None,
            version,
            stages,
        };
        dut.configure(opts)?;
        Ok(dut)
    }

    fn path(&self, f: &str) -> String {
        self.dir.join(f).display().to_string()
    }

    /// A daemon in the DUT namespace, in the foreground, as our child.
    fn spawn(&self, args: &[String]) -> Result<Child> {
        let ns = self.bed.dut_ns("ovs")?.name().to_string();
        let log = std::fs::File::create(self.dir.join(format!("{}.out", args[0])))?;
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &ns])
            .args(args)
            .env("OVS_RUNDIR", &self.dir)
            .env("OVS_LOGDIR", &self.dir)
            .env("OVS_DBDIR", &self.dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        super::child_setup(&mut cmd);
        cmd.spawn()
            .with_context(|| format!("starting {} in namespace {ns}", args[0]))
    }

    /// `ovs-vsctl` against our database.
    fn vsctl(&self, args: &[&str]) -> Result<String> {
        let db = format!("--db=unix:{}", self.path("db.sock"));
        let mut a = vec!["ovs-vsctl", db.as_str(), "--timeout=10"];
        a.extend_from_slice(args);
        self.bed.dut_ns("ovs")?.run(&a)
    }

    fn configure(&mut self, opts: &DutOptions) -> Result<()> {
        let out = Command::new("ovsdb-tool")
            .args(["create", &self.path("conf.db"), SCHEMA])
            .output()
            .context("running ovsdb-tool")?;
        if !out.status.success() {
            bail!(
                "ovsdb-tool create: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let s = |x: &str| x.to_string();
        self.db = Some(self.spawn(&[
            s("ovsdb-server"),
            self.path("conf.db"),
            format!("--remote=punix:{}", self.path("db.sock")),
            format!("--unixctl={}", self.path("db.ctl")),
            format!("--log-file={}", self.path("ovsdb-server.log")),
        ])?);
        wait_for_file(&self.dir.join("db.sock"), "ovsdb-server's socket")?;
        self.vsctl(&["--no-wait", "init"])?;
        self.switch = Some(self.spawn(&[
            s("ovs-vswitchd"),
            format!("unix:{}", self.path("db.sock")),
            format!("--unixctl={}", self.path("vswitchd.ctl")),
            format!("--log-file={}", self.path("ovs-vswitchd.log")),
        ])?);
        wait_for_file(
            &self.dir.join("vswitchd.ctl"),
            "ovs-vswitchd's control socket",
        )?;
        self.vsctl(&[
            "add-br",
            "br0",
            "--",
            "set",
            "bridge",
            "br0",
            "datapath_type=netdev",
            "fail_mode=secure",
        ])?;
        let ns = self.bed.dut_ns("ovs")?;
        for p in &self.bed.ports {
            let ofport = (p.index + 1).to_string();
            self.vsctl(&[
                "add-port",
                "br0",
                &p.dut_if,
                "--",
                "set",
                "interface",
                &p.dut_if,
                &format!("ofport_request={ofport}"),
            ])?;
            if opts.backend.counts_in_xdp() {
                ns.run(&["ethtool", "-K", &p.dut_if, "gro", "on"])?;
            }
        }
        let mgmt = format!("unix:{}", self.path("br0.mgmt"));
        wait_for_file(&self.dir.join("br0.mgmt"), "br0's OpenFlow socket")?;
        for p in &self.bed.ports {
            let flow = format!(
                "dl_dst={},actions=output:{}",
                format_mac(&p.tester_mac),
                p.index + 1
            );
            ns.run(&["ovs-ofctl", "add-flow", &mgmt, &flow])
                .with_context(|| format!("ovs-ofctl add-flow {flow}"))?;
        }
        self.bed.thread_dut_napi()?;
        Ok(())
    }

    fn stop_daemons(&mut self) {
        for c in [self.switch.take(), self.db.take()].into_iter().flatten() {
            let mut c = c;
            // SAFETY: signalling our own child.
            unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
            let t = Instant::now();
            while t.elapsed() < Duration::from_secs(5) {
                if c.try_wait().ok().flatten().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn wait_for_file(p: &Path, what: &str) -> Result<()> {
    let t = Instant::now();
    while !p.exists() {
        if t.elapsed() > Duration::from_secs(10) {
            bail!("ovs DUT: no {what} ({}) after 10 s", p.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

impl Drop for OvsDut {
    fn drop(&mut self) {
        self.stop_daemons();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Dut for OvsDut {
    fn kind(&self) -> &'static str {
        "ovs"
    }

    fn plan(&self, ipv6: bool, flows_per_pair: u32) -> TrafficPlan {
        TrafficPlan {
            l2: true,
            ..self.bed.plan(ipv6, flows_per_pair, self.backend)
        }
    }

    fn probe(&self) -> Box<dyn DutProbe> {
        // ovs-vswitchd does the work in user space: its busy time is the
        // DUT's, as a process's (plus the kernel's softirqs on its CPUs).
        let pid = self.switch.as_ref().map_or(0, |c| c.id() as i32);
        Box::new(PortCountersProbe {
            kind: "ovs",
            meter: CpuMeter::new(Direct::ProcessGroup(pid)),
            ns: dut_ns(&self.bed).unwrap_or_default(),
            ifaces: self.bed.dut_ifaces(),
            start: None,
            stages: self
                .stages
                .as_ref()
                .map(|p| p.fresh().with_dut_threads(super::stages::OVS_THREADS)),
        })
    }

    fn describe(&self) -> DutDescription {
        DutDescription::Ovs(description::Ovs {
            version: self.version.clone(),
            datapath: "netdev (user space): this kernel has no openvswitch module; the paper \
                measured the kernel datapath"
                .into(),
            flows: "one per tester port: dl_dst=<its MAC>,actions=output:<its DUT port>".into(),
            stage_profiler: self.stages.as_ref().map(StageProfiler::source),
            testbed: describe_bed(&self.bed),
            final_stats: None,
        })
    }

    fn bed(&self) -> &Bed {
        &self.bed
    }

    fn stop(mut self: Box<Self>) -> Result<FinalStats> {
        let ns = dut_ns(&self.bed).unwrap_or_default();
        let ifaces = self.bed.dut_ifaces();
        let ifs = if_counters(Some(&ns), &ifaces).ok();
        let flows = self
            .bed
            .dut_ns("ovs")
            .ok()
            .and_then(|n| {
                n.run(&[
                    "ovs-ofctl",
                    "dump-flows",
                    &format!("unix:{}", self.path("br0.mgmt")),
                ])
                .ok()
            })
            .unwrap_or_default();
        self.stop_daemons();
        Ok(FinalStats::Ovs {
            interfaces: ifs.map(|c| named_counters(&ifaces, &c)),
            flows: flows.lines().map(|l| l.trim().to_string()).collect(),
        })
    }
}
