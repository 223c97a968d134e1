//! The traffic engine: real frames through a real DUT, as a
//! [`search::Trial`](bench::search::Trial).
//!
//! Why it is built this way (see also the submodules):
//!
//! * Two threads for the whole lifetime of a [`NetTrial`]: a generator
//!   ([`gen`]) that owns the sending ports' TX paths, and a receiver
//!   ([`rx`]) that owns every port's RX queues and answers ARP/ND. Each
//!   owns its buffer pool (pools are per thread by design in `netio`).
//!   Both enter the ports' network namespaces before opening queues
//!   ([`ports::enter_netns`]); the caller's thread never changes namespace.
//! * A trial (R6): learning frames before the first trial (the DUT
//!   resolves our addresses; we answer its ARP/ND), then the receiver gets
//!   a fresh analyzer, the generator sends the spec's frames, and the
//!   counters are read only after the receiver drained (every frame in, or
//!   no test frame for `drain_quiet`, at most `drain_max`).
//! * Self-checks: the achieved transmit rate per port is compared with the
//!   target (`rate_tolerance_pct`); frames the tester itself dropped (its
//!   AF_XDP TX ring, its pool, its RX rings: `XDP_STATISTICS`) or a
//!   generator that fell behind mark the trial tester-limited with the
//!   reason: such a result is never the DUT's.
//! * Rates are per sending port (as [`TrialSpec`](bench::search::TrialSpec)
//!   says); a port with several pairs (mesh) spreads its rate over them.
//!
//! [`calibrate`] measures what the tester itself can do over one veth.
//!
//! Where the engine's parts are (each file says why it is built so):
//!
//! * [`threads`]: [`NetTrial::new`] (ports opened, threads started), the
//!   commands to the receiver and generator threads, and stopping them;
//! * [`flows`]: the plan's flows, which port sends which, frame templates;
//! * [`learning`]: the learning phase before the first trial;
//! * [`trial`]: one trial with the user-space backends (`xdp::trial` for
//!   the `xdp` backend);
//! * [`limits`]: whether the tester limited a trial, and its outcome
//!   (with where its frames were lost and whether the tester spoiled it);
//! * [`noise`]: steal and the DUT's longest receive gap with every trial;
//! * [`gen`], [`rx`], [`neigh`], [`ports`], [`clock`], [`cpu`]: the
//!   generator, the receiver, ARP/ND answers, the tester ports, time and
//!   CPU placement; [`xdp`]: the in-kernel backend.
//!
//! Why a crate of its own (`softrouter-traffic`): it is the bench's only
//! packet I/O, on `netio`'s AF_XDP and AF_PACKET ports and the `tester`
//! crate's XDP generator and counter, while the procedures it serves
//! (`bench`) are tested without a network against the simulated DUT. It
//! knows a DUT only through `bench::plan` (the [`TrafficPlan`] and
//! [`DutProbe`] the launchers hand it), so it does not depend on the
//! launchers (`dut`), nor they on it. The public API is [`NetTrial`] with
//! [`TrafficOptions`], [`calibrate`], [`supported_size`], and the tester's
//! CPU placement ([`cpu`]), clock, ports and ARP/ND answers; the
//! generator, the receiver and the backends' internals stay `pub(crate)`.

mod calibrate;
pub mod clock;
pub mod cpu;
mod flows;
mod gen;
mod learning;
mod limits;
pub mod neigh;
mod noise;
pub mod ports;
mod rx;
mod threads;
mod trial;
mod xdp;

pub use calibrate::{
    calibrate, calibrate_through, tester_held, wire_plan, Calibration, SizeCalibration, FLOOR,
    LOOPBACK,
};
pub use learning::LearningReport;

use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{bail, Result};

use bench::plan::{DutProbe, TrafficPlan};
use bench::sizes::FrameSize;
use packet::test_frame::Flow;
use ports::{PortHandle, MAX_TESTER_FRAME};
use rx::{RxCmd, RxShared};
use threads::GenCmd;

/// Knobs of the traffic engine.
#[derive(Debug, Clone, PartialEq)]
pub struct TrafficOptions {
    /// Achieved-rate shortfall above which a trial is tester-limited, %.
    pub rate_tolerance_pct: f64,
    /// The drain ends when no test frame arrived for this long.
    pub drain_quiet: Duration,
    /// The drain ends after this long at the latest (R6: RFC 2544 says 2 s).
    pub drain_max: Duration,
    /// Learning: rounds of one frame per flow, this far apart...
    pub learning_interval: Duration,
    /// ...until one round came back complete, or this long passed.
    pub learning_timeout: Duration,
}

impl Default for TrafficOptions {
    fn default() -> Self {
        TrafficOptions {
            rate_tolerance_pct: 1.0,
            drain_quiet: Duration::from_millis(100),
            drain_max: Duration::from_secs(2),
            learning_interval: Duration::from_millis(100),
            learning_timeout: Duration::from_secs(5),
        }
    }
}

/// The traffic engine on one [`TrafficPlan`]: implements
/// [`Trial`](bench::search::Trial).
pub struct NetTrial {
    plan: TrafficPlan,
    opts: TrafficOptions,
    probe: Option<Box<dyn DutProbe>>,
    ports: Vec<PortHandle>,
    /// Flow (= stream id) definitions; index = stream id.
    flows: Vec<Flow>,
    /// Per sending port (index into the generator's TX list): its streams.
    send_ports: Vec<(usize, Vec<u32>)>,
    rx_cmd: Option<Sender<RxCmd>>,
    gen_cmd: Option<Sender<GenCmd>>,
    threads: Vec<JoinHandle<()>>,
    shared: Arc<RxShared>,
    learned: Option<LearningReport>,
    tx_describe: Vec<String>,
    /// The `xdp` backend's worker (then no receiver/generator threads).
    xdp: Option<xdp::XdpNet>,
    /// Steal and the DUT's receive gaps over each trial.
    noise: noise::NoiseMeter,
}

impl NetTrial {
    /// The plan this engine runs.
    pub fn plan(&self) -> &TrafficPlan {
        &self.plan
    }

    /// The generator's TX path per sending port, for reports.
    pub fn tx_paths(&self) -> &[String] {
        &self.tx_describe
    }

    /// The ports that send: each gets a trial's rate (the plan's
    /// distinct pair sources).
    pub fn senders(&self) -> u32 {
        let mut ports: Vec<usize> = self.plan.pairs.iter().map(|p| p.0).collect();
        ports.sort_unstable();
        ports.dedup();
        ports.len() as u32
    }

    /// ARP/NA answers sent so far.
    pub fn neighbor_answers(&self) -> u64 {
        self.shared.answers.load(Ordering::Relaxed)
    }

    /// The learning phase's report, once it ran.
    pub fn learning(&self) -> Option<&LearningReport> {
        self.learned.as_ref()
    }
}

/// `size` as a [`FrameSize`] check: every size the tester can send.
pub fn supported_size(size: &FrameSize, ipv6: bool) -> Result<()> {
    for s in size.effective(ipv6).sizes() {
        if s > MAX_TESTER_FRAME {
            bail!("frame size {s} above the tester's maximum {MAX_TESTER_FRAME}");
        }
    }
    Ok(())
}
