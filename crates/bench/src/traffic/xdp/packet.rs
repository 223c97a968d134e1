//! `Packet` generation for the xdp backend: the shared paced generator
//! (`traffic::gen`) on AF_PACKET sockets, with the XDP counting program
//! on the receiving side. Same trial contract as the live-frames path
//! (phases, bursts, timeline, self-checks).

use anyhow::{anyhow, Result};
use netio::Pool;

use super::super::gen::{self, GenJob};
use super::super::ports::GenTx;
use super::super::timeline;
use super::super::{Counted, SendTiming};
use super::{Engine, XdpJob, XdpOut};

/// Send one copy of `bytes` on `tx` (learning frames; not per-packet hot).
pub(super) fn send_copy(tx: &mut GenTx, pool: Option<&mut Pool>, bytes: &[u8]) -> Result<()> {
    let pool = pool.ok_or_else(|| anyhow!("no generator pool"))?;
    let mut b = pool
        .alloc()
        .ok_or_else(|| anyhow!("generator pool empty"))?;
    pool.room_mut(b)[..bytes.len()].copy_from_slice(bytes);
    b.len = bytes.len() as u32;
    if tx.q.tx_burst(pool, &[b]) == 0 {
        // Refused by the peer: a lost learning frame, as on a wire.
        pool.free(b);
    }
    tx.q.flush(pool);
    Ok(())
}

impl Engine {
    /// A trial with AF_PACKET generation (maps already reset).
    pub(super) fn trial_packet(&mut self, mut job: XdpJob) -> Result<XdpOut> {
        let rounds_hint = job
            .phases
            .iter()
            .map(|p| p.frames.div_ceil(gen::batch_for(p.rate_fps).max(1)) as usize)
            .sum::<usize>()
            + 16;
        let gjob = GenJob {
            ports: gen::port_jobs(&job.ports),
            templates: std::mem::take(&mut job.templates),
            nsizes: job.nsizes,
            schedule: job.schedule.clone(),
            phases: job.phases.clone(),
            n_streams: self.n_streams,
            record_rounds: job.timeline_ns.is_some(),
            rounds_hint,
        };
        let pool = self
            .pool
            .as_mut()
            .ok_or_else(|| anyhow!("no generator pool"))?;
        let g = gen::run(&gjob, &mut self.txs, pool);
        let expected: u64 = g.sent.iter().sum();
        self.drain(expected, job.drain_quiet, job.drain_max);
        tracing::debug!(sent = expected, refused = g.refused, "xdp trial sent");
        let out = XdpOut {
            counted: Counted::sent_only(expected),
            timing: SendTiming::from_gen(&g),
            clock_errors: 0,
            own: gen::own_limits(&g),
        };
        let mut out = self.read_out(&job, &g.sent, &[], out);
        out.counted.timeline = job
            .timeline_ns
            .map(|iv| timeline(iv, &gjob, &g, |s, q| self.is_set(s, q)));
        Ok(out)
    }
}
