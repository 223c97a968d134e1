//! The floor DUT (`--dut floor`): an XDP program on every DUT port that
//! redirects each frame to its egress port with the MACs rewritten and
//! nothing else (`bpf/floor.bpf.c`, whose header says why). What it costs
//! per packet is what the veth wire and the XDP hook cost any XDP
//! forwarder here, so the comparison sets every DUT beside it ("x the
//! floor").
//!
//! The testbed is the bare one (`RouterMode::Bare`): the frames are
//! addressed to the DUT ports' MACs as for a router, and the kernel of the
//! DUT namespace sees only what the program passes (nothing of the plan).
//! The program is loaded from this process, in a thread that enters the
//! DUT namespace (an XDP link is made for an ifindex of the caller's
//! namespace), and stays attached as long as the [`FloorDut`] holds it. Its
//! probe is the L2 DUTs' ([`PortCountersProbe`]): soaker CPU figures, and
//! the DUT ports' transmitted frames as forwarded.

use std::os::fd::AsRawFd;

use anyhow::{anyhow, bail, Context, Result};
use aya::maps::{Array, DevMap};
use aya::programs::XdpMode;
use schema::dut_description::{self as description, DutDescription, FinalStats};
use testbed::RouterMode;

use super::bed::{if_counters, Bed};
use super::bridge::PortCountersProbe;
use super::probe::{CpuMeter, Direct};
use super::stages::StageProfiler;
use super::{describe_bed, dut_ns, named_counters, Dut, DutOptions};
use bench::plan::{DutProbe, TesterBackend, TrafficPlan};
use bench::settings::Pattern;

/// The program object (`bpf/floor.bpf.c`).
pub const FLOOR_OBJ: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/floor.bpf.o"));
/// The XDP program in it.
pub const PROGRAM: &str = "sr_floor";
/// Ports the program serves (the addressing plan has at most 256); its
/// maps' size, `FLOOR_MAX_PORTS` in `sr_layout.h`, generated from this.
pub const MAX_PORTS: usize = 256;

/// `struct floor_hop` of `bpf/floor.h`: the MACs of egress port i's hop.
/// Its size and field offsets go into `sr_layout.h` (`FLOOR_HOP_*`, by
/// `crates/fastpath/tests/vocabulary.rs`), which `floor.h` asserts its
/// struct against.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hop {
    /// The tester port's MAC (the frame's new destination).
    pub dst: [u8; 6],
    /// The DUT port's own MAC (the frame's new source).
    pub src: [u8; 6],
    /// Non-zero: the port is served.
    pub valid: u32,
}
const _: () = assert!(std::mem::size_of::<Hop>() == 6 + 6 + 4, "no padding");
// SAFETY: plain bytes, no padding (asserted above).
unsafe impl aya::Pod for Hop {}

/// The loaded program and its maps (not attached).
pub struct Floor {
    obj: bpf::Loaded,
}

impl Floor {
    /// Load the program (the verifier's complaint, if any, in the error).
    pub fn load() -> Result<Floor> {
        Ok(Floor {
            obj: bpf::load("floor DUT", FLOOR_OBJ, &[], &[], PROGRAM)?,
        })
    }

    /// Frames for port `port`'s destinations leave on `ifindex` with the
    /// MACs of `hop`.
    pub fn set_port(&mut self, port: u32, ifindex: u32, hop: Hop) -> Result<()> {
        if port as usize >= MAX_PORTS {
            bail!("port {port} beyond the floor's {MAX_PORTS} ports");
        }
        let m = self
            .obj
            .ebpf
            .map_mut("floor_hops")
            .context("no map floor_hops")?;
        let mut hops: Array<_, Hop> = Array::try_from(m)?;
        hops.set(port, Hop { valid: 1, ..hop }, 0)
            .context("floor_hops map")?;
        let m = self
            .obj
            .ebpf
            .map_mut("floor_tx")
            .context("no map floor_tx")?;
        let mut tx: DevMap<_> = DevMap::try_from(m)?;
        tx.set(port, ifindex, None, 0)
            .map_err(|e| anyhow!("floor_tx map, port {port} -> ifindex {ifindex}: {e}"))?;
        Ok(())
    }

    /// Attach to interface `ifindex` of the calling thread's namespace, in
    /// driver mode (veth's native XDP; generic XDP cannot redirect to it).
    pub fn attach(&mut self, ifindex: u32) -> Result<()> {
        self.program()?
            .attach_to_if_index(ifindex, XdpMode::Driver)
            .with_context(|| format!("attaching the floor program to ifindex {ifindex}"))?;
        Ok(())
    }

    /// The program (tests run it with `BPF_PROG_TEST_RUN`).
    pub fn program(&mut self) -> Result<&mut aya::programs::Xdp> {
        self.obj.xdp(PROGRAM)
    }
}

pub struct FloorDut {
    bed: Bed,
    backend: TesterBackend,
    /// Holds the program's links: dropping it detaches the program.
    floor: Option<Floor>,
}

impl FloorDut {
    pub fn start(pattern: Pattern, opts: &DutOptions) -> Result<Self> {
        let placement = opts.rx_placement();
        let mut bed = Bed::build(pattern, opts.queues, RouterMode::Bare, placement.as_ref())?;
        let ns = bed.dut_ns("floor")?.name().to_string();
        let ports: Vec<(String, Hop)> = bed
            .ports
            .iter()
            .map(|p| {
                let hop = Hop {
                    dst: p.tester_mac,
                    src: p.dut_mac,
                    valid: 1,
                };
                (p.dut_if.clone(), hop)
            })
            .collect();
        // A thread of its own: entering the namespace is per thread.
        let floor = std::thread::spawn(move || -> Result<Floor> {
            enter_netns(&ns)?;
            let mut f = Floor::load()?;
            let mut ifindexes = Vec::with_capacity(ports.len());
            for (i, (name, hop)) in ports.iter().enumerate() {
                let ifindex = ifindex(name).with_context(|| format!("{name} in {ns}"))?;
                f.set_port(i as u32, ifindex, *hop)?;
                ifindexes.push(ifindex);
            }
            for (&ifindex, (name, _)) in ifindexes.iter().zip(&ports) {
                f.attach(ifindex)
                    .with_context(|| format!("{name} in {ns}"))?;
            }
            Ok(f)
        })
        .join()
        .map_err(|_| anyhow!("the floor DUT's loader thread panicked"))??;
        // After the attach, which can recreate the ends' NAPI threads.
        bed.thread_dut_napi()?;
        Ok(FloorDut {
            bed,
            backend: opts.backend,
            floor: Some(floor),
        })
    }
}

/// Move the calling thread into network namespace `name`.
fn enter_netns(name: &str) -> Result<()> {
    let path = format!("/var/run/netns/{name}");
    let f = std::fs::File::open(&path).with_context(|| format!("opening {path}"))?;
    // SAFETY: plain syscall on a valid fd; affects only this thread.
    if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        bail!("setns into {name}: {}", std::io::Error::last_os_error());
    }
    Ok(())
}

/// The ifindex of `name` in the calling thread's namespace.
fn ifindex(name: &str) -> Result<u32> {
    let c = std::ffi::CString::new(name).context("interface name")?;
    // SAFETY: a valid C string.
    match unsafe { libc::if_nametoindex(c.as_ptr()) } {
        0 => Err(anyhow!("no interface {name}")),
        i => Ok(i),
    }
}

impl Dut for FloorDut {
    fn kind(&self) -> &'static str {
        "floor"
    }

    fn plan(&self, ipv6: bool, flows_per_pair: u32) -> TrafficPlan {
        self.bed.plan(ipv6, flows_per_pair, self.backend)
    }

    fn probe(&self) -> Box<dyn DutProbe> {
        Box::new(PortCountersProbe {
            kind: "floor",
            meter: CpuMeter::new(Direct::Softirq),
            ns: dut_ns(&self.bed).unwrap_or_default(),
            ifaces: self.bed.dut_ifaces(),
            start: None,
            stages: None::<StageProfiler>,
        })
    }

    fn describe(&self) -> DutDescription {
        DutDescription::Floor(description::Floor {
            version: format!(
                "Linux {}, XDP redirect with MAC rewrite (bpf/floor.bpf.c)",
                super::kernel_release()
            ),
            program: PROGRAM.into(),
            xdp_mode: "driver".into(),
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
        // Detach before the testbed goes.
        self.floor.take();
        Ok(FinalStats::Floor {
            interfaces: ifs.map(|c| named_counters(&ifaces, &c)),
        })
    }
}
