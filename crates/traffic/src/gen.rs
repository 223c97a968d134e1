//! The generator: paced batches of pre-built test frames on the sending
//! ports.
//!
//! Why it works this way:
//!
//! * Templates per (stream, size) are built before the trial; per frame
//!   the generator only copies its template into a pool buffer and patches
//!   sequence and timestamp in O(1) ([`FrameLayout::patch`]). Nothing is
//!   allocated per packet.
//! * Pacing is by batches (rounds) of up to 64 frames per port, each with a
//!   due time on an absolute schedule (`start + k * batch / rate`). Ahead of
//!   it, the thread sleeps (`clock_nanosleep`, 1 us timer slack); it never
//!   spins, because on a small machine the DUT and the kernel need that
//!   CPU. The batch is sized so that a round lasts about 50 us: small
//!   enough that the traffic is smooth at the DUT's time scale, large
//!   enough that a sleep per round costs little.
//! * Behind the schedule the generator catches up by sending rounds back
//!   to back; if it is still behind when the phase should have ended (plus
//!   a grace of 5 % or 50 ms) it stops the phase: the trial then reports a
//!   lower achieved rate and is tester-limited.
//! * All frames of a round are stamped with one CLOCK_MONOTONIC reading
//!   taken after the round is built, right before `tx_burst`.
//! * Frame `i` of a port belongs to its stream `i mod n` and gets size slot
//!   `(i / n) mod period` of the size schedule, so every stream sees the
//!   whole IMIX. Each stream numbers its frames from 0.

use netio::{Buf, Pool};

use super::clock::{mono_ns, sleep_until};
use super::ports::GenTx;
use packet::test_frame::FrameLayout;

/// A pre-built frame.
pub(crate) struct Template {
    pub bytes: Vec<u8>,
    pub layout: FrameLayout,
}

/// One sending port's part of a job.
pub(crate) struct GenPortJob {
    /// Index into the generator's TX paths.
    pub port: usize,
    /// Streams sent on this port, round robin.
    pub streams: Vec<u32>,
}

/// One job port per `(port, streams)` pair.
pub(crate) fn port_jobs(send_ports: &[(usize, Vec<u32>)]) -> Vec<GenPortJob> {
    send_ports
        .iter()
        .map(|(p, s)| GenPortJob {
            port: *p,
            streams: s.clone(),
        })
        .collect()
}

/// A constant-rate stretch (or, unpaced, a burst at full speed).
#[derive(Debug, Clone, Copy)]
pub(crate) struct GenPhase {
    pub rate_fps: f64,
    /// Frames per port.
    pub frames: u64,
    pub paced: bool,
}

/// Everything the generator needs for one trial, built by the caller.
pub(crate) struct GenJob {
    pub ports: Vec<GenPortJob>,
    /// `templates[stream * nsizes + size_index]`.
    pub templates: Vec<Template>,
    pub nsizes: usize,
    /// One period of size indices.
    pub schedule: Vec<u16>,
    pub phases: Vec<GenPhase>,
    pub n_streams: usize,
    /// Record per-round send times (loss timeline).
    pub record_rounds: bool,
    /// Capacity to reserve for those records (no growth in the loop).
    pub rounds_hint: usize,
}

/// What the generator did.
#[derive(Debug, Default)]
pub(crate) struct GenResult {
    /// Frames sent per stream (sequence numbers `0..sent`).
    pub sent: Vec<u64>,
    /// Frames sent per job port.
    pub port_frames: Vec<u64>,
    /// Time of the first and after the last round, ns.
    pub start_ns: u64,
    pub end_ns: u64,
    /// Ideal schedule length of the frames actually sent, ns.
    pub ideal_ns: u64,
    /// Frames our own AF_XDP TX ring would not take (dropped by the tester).
    pub ring_drops: u64,
    /// Frames the link peer refused (AF_PACKET ENOBUFS: the DUT's input).
    pub refused: u64,
    /// Rounds cut short because the pool was empty.
    pub pool_empty: u64,
    /// Phases stopped because the generator fell behind.
    pub fell_behind: bool,
    /// Largest lateness of a round against its due time, ns (at most the
    /// catch-up once a stall moved the schedule).
    pub max_lag_ns: u64,
    /// How far stalls moved the schedule, in all, how often, the longest
    /// (as [`tester::gen::Sent::stall_ns`]).
    pub stall_ns: u64,
    pub stalls: u64,
    pub max_stall_ns: u64,
    /// Those of at least [`tester::gen::LONG_PAUSE_NS`]: the host's.
    pub long_stall_ns: u64,
    pub long_stalls: u64,
    /// Per job port: (first frame index of the round, send time ns).
    pub rounds: Vec<Vec<(u64, u64)>>,
}

struct PortCursor {
    next_flow: usize,
    slot: usize,
    frames: u64,
}

/// Frames per round: about 50 us of traffic, 1..=64.
pub(crate) fn batch_for(rate_fps: f64) -> u64 {
    ((rate_fps * 50e-6).round() as u64).clamp(1, netio::BURST_SIZE as u64)
}

/// Run `job` on `txs` with buffers from `pool`.
pub(crate) fn run(job: &GenJob, txs: &mut [GenTx], pool: &mut Pool) -> GenResult {
    let np = job.ports.len();
    let mut r = GenResult {
        sent: vec![0; job.n_streams],
        port_frames: vec![0; np],
        rounds: (0..np)
            .map(|_| {
                if job.record_rounds {
                    Vec::with_capacity(job.rounds_hint)
                } else {
                    Vec::new()
                }
            })
            .collect(),
        ..GenResult::default()
    };
    let mut cur: Vec<PortCursor> = (0..np)
        .map(|_| PortCursor {
            next_flow: 0,
            slot: 0,
            frames: 0,
        })
        .collect();
    let mut bufs = [Buf::EMPTY; netio::BURST_SIZE];
    let mut seqs = [0u64; netio::BURST_SIZE];
    let mut tidx = [0u32; netio::BURST_SIZE];
    // The schedule starts a little in the future so the first round is on
    // time rather than late by the set-up.
    let t0 = mono_ns() + 100_000;
    let mut phase_t0 = t0 as f64;
    let mut ideal = 0f64;
    r.start_ns = 0;
    for ph in &job.phases {
        let b = if ph.paced {
            batch_for(ph.rate_fps)
        } else {
            netio::BURST_SIZE as u64
        };
        let interval = if ph.paced && ph.rate_fps > 0.0 {
            b as f64 * 1e9 / ph.rate_fps
        } else {
            0.0
        };
        let phase_ns = if ph.paced && ph.rate_fps > 0.0 {
            ph.frames as f64 * 1e9 / ph.rate_fps
        } else {
            0.0
        };
        let mut deadline = phase_t0 + phase_ns + (phase_ns * 0.05).max(50e6);
        // The longest catch-up, as the xdp generator's (`CATCHUP_FRAMES`).
        let catchup_ns = if ph.paced && ph.rate_fps > 0.0 {
            f64::from(tester::gen::CATCHUP_FRAMES) * 1e9 / ph.rate_fps
        } else {
            0.0
        };
        let mut done = 0u64;
        let mut k = 0u64;
        while done < ph.frames {
            let n = b.min(ph.frames - done) as usize;
            if ph.paced {
                let mut due = (phase_t0 + k as f64 * interval) as u64;
                let mut now = mono_ns();
                if now < due {
                    sleep_until(due);
                    now = mono_ns();
                }
                // Kept off the CPU past the catch-up: move the schedule
                // rather than burst (see `tester::gen::CATCHUP_FRAMES`).
                let excess = now.saturating_sub(due) as f64 - catchup_ns;
                if excess > 0.0 {
                    phase_t0 += excess;
                    due += excess as u64;
                    r.stall_ns += excess as u64;
                    r.stalls += 1;
                    r.max_stall_ns = r.max_stall_ns.max(excess as u64);
                    // Only the host's pauses move the deadline: a tester
                    // that cannot keep up still runs out of time.
                    if excess as u64 >= tester::gen::LONG_PAUSE_NS {
                        deadline += excess;
                        r.long_stall_ns += excess as u64;
                        r.long_stalls += 1;
                    }
                }
                r.max_lag_ns = r.max_lag_ns.max(now.saturating_sub(due));
                if now as f64 > deadline {
                    r.fell_behind = true;
                    break;
                }
            }
            if r.start_ns == 0 {
                r.start_ns = mono_ns();
            }
            for (pi, pj) in job.ports.iter().enumerate() {
                let tx = &mut txs[pj.port];
                let c = &mut cur[pi];
                let nf = pj.streams.len();
                let mut m = 0;
                while m < n {
                    let Some(mut buf) = pool.alloc() else {
                        // Completions not reaped yet: reap and retry once.
                        tx.q.flush(pool);
                        if pool.available() == 0 {
                            r.pool_empty += 1;
                            break;
                        }
                        continue;
                    };
                    let stream = pj.streams[c.next_flow] as usize;
                    let ti = stream * job.nsizes + usize::from(job.schedule[c.slot]);
                    c.next_flow += 1;
                    if c.next_flow == nf {
                        c.next_flow = 0;
                        c.slot += 1;
                        if c.slot == job.schedule.len() {
                            c.slot = 0;
                        }
                    }
                    let t = &job.templates[ti];
                    let len = t.bytes.len();
                    pool.room_mut(buf)[..len].copy_from_slice(&t.bytes);
                    buf.len = len as u32;
                    bufs[m] = buf;
                    seqs[m] = r.sent[stream];
                    r.sent[stream] += 1;
                    tidx[m] = ti as u32;
                    m += 1;
                }
                let ts = mono_ns();
                for i in 0..m {
                    let t = &job.templates[tidx[i] as usize];
                    t.layout.patch(pool.data_mut(bufs[i]), seqs[i], ts);
                }
                if job.record_rounds {
                    r.rounds[pi].push((c.frames, ts.saturating_sub(t0)));
                }
                send_all(tx, pool, &bufs[..m], &mut r);
                c.frames += m as u64;
                r.port_frames[pi] += m as u64;
                tx.q.flush(pool);
            }
            done += n as u64;
            k += 1;
        }
        ideal += if ph.paced && ph.rate_fps > 0.0 {
            done as f64 * 1e9 / ph.rate_fps
        } else {
            0.0
        };
        phase_t0 += phase_ns;
    }
    r.end_ns = mono_ns();
    r.ideal_ns = ideal as u64;
    // Hand everything to the wire before the caller starts the drain.
    for tx in txs.iter_mut() {
        for _ in 0..1000 {
            tx.q.flush(pool);
            if tx.q.in_flight() == 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }
    r
}

/// The generator's own limits in `r`, as tester-limit reasons.
pub(crate) fn own_limits(r: &GenResult) -> Vec<String> {
    let mut own = Vec::new();
    if r.ring_drops > 0 {
        own.push(format!(
            "tester TX ring full: {} frames could not be queued",
            r.ring_drops
        ));
    }
    if r.pool_empty > 0 {
        own.push(format!(
            "tester buffer pool empty in {} rounds",
            r.pool_empty
        ));
    }
    own
}

/// Transmit `bufs`, retrying what a full AF_XDP ring refused and skipping
/// what the link peer refused (see [`GenTx`] for why they differ).
fn send_all(tx: &mut GenTx, pool: &mut Pool, bufs: &[Buf], r: &mut GenResult) {
    let mut off = 0;
    let mut retries = 0;
    while off < bufs.len() {
        let took = tx.q.tx_burst(pool, &bufs[off..]);
        off += took;
        if off == bufs.len() {
            break;
        }
        if tx.xdp {
            retries += 1;
            tx.q.flush(pool);
            if retries > 16 {
                pool.free_all(&bufs[off..]);
                r.ring_drops += (bufs.len() - off) as u64;
                break;
            }
        } else {
            // The frame at `off` was refused by the peer; the rest of the
            // sendmmsg batch was not tried yet.
            pool.free(bufs[off]);
            r.refused += 1;
            off += 1;
        }
    }
}
