//! The DUT's longest receive gap in a trial (`bpf/gap.bpf.c`): the
//! longest time frames waited in one of the DUT's receive rings because
//! its receive work (the NAPI poll of its veth end) did not run.
//!
//! Why: on a VM a stall of the DUT's CPU (the hypervisor ran something
//! else, a higher-priority task) overflows a veth's 256-frame ring and
//! fails a zero-loss trial at any rate; the bench reports the longest gap
//! with every trial so a reader can tell such a stall from the DUT's
//! capacity. It is reported, never used to discard a trial.
//!
//! What exactly is measured, per NAPI instance of the named devices, while
//! armed, for each poll that did work (found frames): with the device's
//! sender known ([`Receiver::sender`], the `xdp` tester's end, whose XDP
//! transmits are seen), the time from when frames became pending (the
//! first transmit into an empty ring) to the poll's end: the wait of the
//! oldest frame it found, within one batch. Without it, the time since
//! the previous poll ended: an upper bound that also counts time in which
//! no frame arrived (a tester's own stall). Gaps ended by empty polls do
//! not count (an empty ring needs no polling). See the program's comment.
//!
//! Cost: one program run per NAPI poll and per XDP transmit flush (a batch
//! of up to 64 frames each) on the host: a name read and a few map
//! lookups, no per-frame work.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use aya::maps::{HashMap, MapData};

use crate::programs;
use bpf::{Loaded, MmapArray};

// Word indices of bpf/gap.h.
pub const GC_EPOCH: usize = 0;
pub const GC_UNTIL: usize = 1;
pub const GC_PEND: usize = 2;
pub const MAX_SLOTS: usize = 64;
pub const GC_ARMED: usize = GC_PEND + MAX_SLOTS;
pub const GC_WORDS: usize = GC_ARMED + 1;
pub const DEV_SENDER: u32 = 1 << 16;
pub const DEV_TRACKED: u32 = 1 << 17;
pub const DEV_RECEIVER: u32 = 1 << 18;
pub const GN_EPOCH: usize = 0;
/// When the slot's last poll ended, ns; the program's alone.
pub const GN_LAST: usize = 1;
pub const GN_MAX_GAP: usize = 2;
pub const GN_POLLS: usize = 3;
pub const GN_MAX_AT: usize = 4;
pub const GN_WORDS: usize = 5;
/// IFNAMSIZ: the key of the program's device set.
const IFNAMSIZ: usize = 16;

/// A device whose receive gaps are measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receiver {
    /// Its interface name (names are host-wide unique for the testbed's
    /// veths, which is what makes a name a device).
    pub name: String,
    /// The interface that transmits into its ring with XDP (the `xdp`
    /// tester's end of the same veth), when known: gaps are then measured
    /// from when frames became pending.
    pub sender: Option<String>,
}

/// The loaded, attached gap programs and their maps. Dropping it detaches.
pub struct GapMeter {
    obj: Loaded,
    ctl: Arc<MmapArray>,
}

/// Arms the meter for one trial; cheap to clone and to use from another
/// thread (the one that starts the traffic).
#[derive(Clone)]
pub struct GapArm(Arc<MmapArray>);

/// What the meter saw in the last armed window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Gaps {
    /// The longest gap ended by a poll that did work, over all instances.
    pub longest: Duration,
    /// When that gap began, from the window's opening (the traffic's
    /// start): tells a stall at the start of every trial (a cold path, a
    /// waking CPU) from one anywhere in it.
    pub longest_began: Duration,
    /// When the window opened, CLOCK_MONOTONIC ns (to line the gap up
    /// with a trace of the host, e.g. `perf sched record -k mono`).
    pub armed_ns: u64,
    /// Polls of the devices' NAPI instances in the window.
    pub polls: u64,
}

impl GapMeter {
    /// Load the programs and attach them to the `napi_poll` and
    /// `xdp_devmap_xmit` tracepoints for `devices`. Fails without kernel
    /// BTF or the permission to trace (the caller runs the trial without
    /// the figure).
    pub fn new(devices: &[Receiver]) -> Result<GapMeter> {
        if devices.is_empty() || devices.len() > MAX_SLOTS {
            bail!(
                "a receive-gap meter for {} devices (1..={MAX_SLOTS})",
                devices.len()
            );
        }
        let mut obj = programs::load_raw_tracepoints(
            "gap",
            programs::GAP_OBJ,
            &[
                ("sr_gap_poll", "napi_poll"),
                ("sr_gap_xmit", "xdp_devmap_xmit"),
            ],
        )?;
        let ctl = Arc::new(obj.mmap("gap_ctl", GC_WORDS * 8, 1)?);
        ctl.zero();
        let map = obj
            .ebpf
            .map_mut("gap_devs")
            .context("gap: no map gap_devs")?;
        let mut devs: HashMap<&mut MapData, [u8; IFNAMSIZ], u32> =
            HashMap::try_from(map).context("gap: gap_devs")?;
        for (slot, d) in devices.iter().enumerate() {
            let slot = slot as u32;
            let tracked = if d.sender.is_some() { DEV_TRACKED } else { 0 };
            devs.insert(name_key(&d.name)?, slot | DEV_RECEIVER | tracked, 0)
                .with_context(|| format!("gap: adding device {}", d.name))?;
            if let Some(s) = &d.sender {
                devs.insert(name_key(s)?, slot | DEV_SENDER, 0)
                    .with_context(|| format!("gap: adding device {s}"))?;
            }
        }
        Ok(GapMeter { obj, ctl })
    }

    /// A handle that arms the meter.
    pub fn arm_handle(&self) -> GapArm {
        GapArm(self.ctl.clone())
    }

    /// The gaps of the last armed window (read after it closed, or while
    /// it is open for the figures so far).
    pub fn read(&self) -> Result<Gaps> {
        let epoch = self.ctl.get(GC_EPOCH);
        let armed = self.ctl.get(GC_ARMED);
        let map = self
            .obj
            .ebpf
            .map("gap_napi")
            .context("gap: no map gap_napi")?;
        let napi: HashMap<&MapData, u64, [u64; GN_WORDS]> =
            HashMap::try_from(map).context("gap: gap_napi")?;
        let mut g = Gaps {
            armed_ns: armed,
            ..Gaps::default()
        };
        for entry in napi.iter() {
            let (_, w) = entry.context("gap: reading gap_napi")?;
            if epoch != 0 && w[GN_EPOCH] == epoch {
                let gap = Duration::from_nanos(w[GN_MAX_GAP]);
                if gap > g.longest {
                    g.longest = gap;
                    let began = w[GN_MAX_AT].saturating_sub(w[GN_MAX_GAP]);
                    g.longest_began = Duration::from_nanos(began.saturating_sub(armed));
                }
                g.polls += w[GN_POLLS];
            }
        }
        Ok(g)
    }
}

impl GapArm {
    /// Start a new window: from now for `window` (events after it are
    /// ignored, so a stray frame long after the traffic ends no gap).
    pub fn arm(&self, window: Duration) {
        let now = bpf::mono_ns();
        let until = now.saturating_add(window.as_nanos() as u64);
        for s in 0..MAX_SLOTS {
            self.0.set(GC_PEND + s, 0);
        }
        self.0.set(GC_UNTIL, until);
        self.0.set(GC_ARMED, now);
        let e = self.0.get(GC_EPOCH);
        self.0.set(GC_EPOCH, e.wrapping_add(1).max(1));
    }
}

/// An interface name as the program's key: its bytes, zero padded.
fn name_key(name: &str) -> Result<[u8; IFNAMSIZ]> {
    let b = name.as_bytes();
    if b.is_empty() || b.len() >= IFNAMSIZ {
        bail!("gap: {name:?} is not an interface name");
    }
    let mut k = [0u8; IFNAMSIZ];
    k[..b.len()].copy_from_slice(b);
    Ok(k)
}

#[cfg(test)]
mod tests;
