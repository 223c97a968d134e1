//! Several tester CPUs (`--tester-cpus N`): one generator per CPU, each
//! sending its share of every port's streams, and one receive queue per
//! CPU whose NAPI thread runs there.
//!
//! Why this way: a generator runs the whole trial inside one
//! `BPF_PROG_TEST_RUN` call on its own CPU, so more CPUs means more calls
//! in parallel, each with its own program instance and maps (the
//! generator's state lives in its maps). A stream belongs to one
//! generator, so its sequence numbers stay in one place and the counter's
//! per-stream state is written from one CPU only; the counts are summed
//! (per-stream counters, each generator's [`Sent`]). A veth delivers a
//! frame to the receive queue of the sending CPU (`smp_processor_id() %
//! queues`), so each queue's NAPI thread goes to the CPU that feeds it.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;

use anyhow::{anyhow, bail, Context, Result};
use tester::gen::{Frame, Generator, Phase, Plan, Port, Sent};

use super::super::ports::enter_netns;

/// `plan` split over `n` generators: generator g sends streams g, g + n,
/// ... of every port, its share of every phase's frames (the first ones
/// one more when they do not divide) at 1/n of the rate. Every port's
/// stream count must be a multiple of `n`, so that each generator's ports
/// carry equal shares (the program sends its ports round robin).
pub(crate) fn split_plan(plan: &Plan, n: usize) -> Result<Vec<Plan>> {
    if n == 0 {
        bail!("no generators");
    }
    if let Some(p) = plan.ports.iter().find(|p| p.streams.len() % n != 0) {
        bail!(
            "{n} tester CPUs need a multiple of {n} flows per sending port, not {} \
             (ifindex {}): set the flows accordingly",
            p.streams.len(),
            p.ifindex
        );
    }
    Ok((0..n)
        .map(|g| Plan {
            ports: plan
                .ports
                .iter()
                .map(|p| Port {
                    ifindex: p.ifindex,
                    streams: p.streams.iter().copied().skip(g).step_by(n).collect(),
                })
                .collect(),
            phases: plan
                .phases
                .iter()
                .map(|ph| Phase {
                    frames: ph.frames / n as u64 + u64::from((g as u64) < ph.frames % n as u64),
                    rate_fps: ph.rate_fps.map(|r| r / n as f64),
                })
                .collect(),
            ..plan.clone()
        })
        .collect())
}

/// What `n` generators did, as one: frames summed (each stream counted by
/// the one generator that sent it), times and pauses the worst of any.
/// The sending time is the longest of any generator's, from the earliest
/// first frame: each sent its share over its own span, and a generator
/// whose call began a few ms after the others (a test run's set-up waits
/// for the other CPUs) offered its share late, not slower. The loss
/// timeline's clocks are the first generator's.
pub(crate) fn merge(parts: Vec<Sent>) -> Sent {
    let span = parts
        .iter()
        .map(|s| s.last_ns.saturating_sub(s.first_ns))
        .max()
        .unwrap_or(0);
    let mut it = parts.into_iter();
    let mut m = it.next().unwrap_or_default();
    for s in it {
        let add = |a: &mut Vec<u64>, b: &[u64]| {
            a.resize(a.len().max(b.len()), 0);
            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
        };
        add(&mut m.port_frames, &s.port_frames);
        add(&mut m.stream_frames, &s.stream_frames);
        add(&mut m.phase_frames, &s.phase_frames);
        m.sent += s.sent;
        m.planned += s.planned;
        m.max_lag_ns = m.max_lag_ns.max(s.max_lag_ns);
        if s.first_ns != 0 && (m.first_ns == 0 || s.first_ns < m.first_ns) {
            m.first_ns = s.first_ns;
        }
        m.last_ns = m.last_ns.max(s.last_ns);
        m.t0_ns = m.t0_ns.min(s.t0_ns);
        m.ideal_end_ns = m.ideal_end_ns.max(s.ideal_end_ns);
        m.shift_ns = m.shift_ns.max(s.shift_ns);
        m.stall_ns = m.stall_ns.max(s.stall_ns);
        m.stalls += s.stalls;
        m.max_stall_ns = m.max_stall_ns.max(s.max_stall_ns);
        m.long_stall_ns = m.long_stall_ns.max(s.long_stall_ns);
        m.long_stalls += s.long_stalls;
        m.early += s.early;
        m.clock_reads += s.clock_reads;
        m.errors += s.errors;
        m.last_error = m.last_error.or(s.last_error);
        m.calls += s.calls;
    }
    m.last_ns = m.first_ns.saturating_add(span);
    m
}

/// The CPU for the NAPI thread of receive queue `q` of `queues`: the
/// tester CPU that sends into it (`cpu % queues == q`), else by turn.
pub(crate) fn napi_cpu(q: usize, queues: usize, cpus: &[usize]) -> usize {
    cpus.iter()
        .copied()
        .find(|c| c % queues.max(1) == q)
        .unwrap_or(cpus[q % cpus.len()])
}

/// One trial's share for a helper: its plan, the frames, and when to
/// start (CLOCK_MONOTONIC, the same for every generator).
pub(crate) struct Share {
    pub plan: Plan,
    /// (stream, size index, frame).
    pub frames: Vec<(u32, usize, Frame)>,
    pub nsizes: usize,
    pub start_ns: u64,
}

/// A generator thread on one more tester CPU.
pub(crate) struct Helper {
    jobs: Option<Sender<Share>>,
    done: Receiver<Result<Sent>>,
    thread: Option<JoinHandle<()>>,
}

impl Helper {
    /// Start it on `cpu` in namespace `ns` for `n_streams` streams, its
    /// generator loaded (loading takes longer than a trial's start lead).
    pub fn start(cpu: usize, ns: Option<String>, n_streams: usize) -> Result<Helper> {
        let (jobs, rx) = channel::<Share>();
        let (tx, done) = channel();
        let thread = std::thread::Builder::new()
            .name(format!("sr-bench-xdp{cpu}"))
            .spawn(move || {
                super::super::clock::small_timer_slack();
                super::super::cpu::pin_to(cpu);
                let loaded = enter_netns(ns.as_deref())
                    .and_then(|_| Generator::new(n_streams, super::MIN_SIZES));
                let mut gen = match loaded {
                    Ok(g) => {
                        let _ = tx.send(Ok(Sent::default()));
                        Some(g)
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                while let Ok(share) = rx.recv() {
                    let _ = tx.send(run_share(&mut gen, n_streams, share));
                }
            })
            .context("spawning a tester generator thread")?;
        let h = Helper {
            jobs: Some(jobs),
            done,
            thread: Some(thread),
        };
        h.wait()
            .with_context(|| format!("the generator on tester CPU {cpu}"))?;
        Ok(h)
    }

    pub fn send(&self, share: Share) -> Result<()> {
        self.jobs
            .as_ref()
            .ok_or_else(|| anyhow!("generator thread stopped"))?
            .send(share)
            .map_err(|_| anyhow!("a tester generator thread is gone"))
    }

    pub fn wait(&self) -> Result<Sent> {
        self.done
            .recv()
            .map_err(|_| anyhow!("a tester generator thread died"))?
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn run_share(gen: &mut Option<Generator>, n_streams: usize, s: Share) -> Result<Sent> {
    if gen.as_ref().is_none_or(|g| g.nsizes() < s.nsizes) {
        *gen = None;
        *gen = Some(Generator::new(n_streams, s.nsizes.max(super::MIN_SIZES))?);
    }
    let g = gen.as_mut().expect("just loaded");
    for (stream, size, f) in &s.frames {
        g.set_frame(*stream, *size, f)?;
    }
    g.reset_sequences();
    let mut plan = s.plan;
    plan.lead = std::time::Duration::from_nanos(s.start_ns.saturating_sub(bpf::mono_ns()));
    super::run_realtime(|| g.run(&plan))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn plan(streams: &[&[u32]], phases: &[(u64, Option<f64>)]) -> Plan {
        Plan {
            ports: streams
                .iter()
                .enumerate()
                .map(|(i, s)| Port {
                    ifindex: 10 + i as u32,
                    streams: s.to_vec(),
                })
                .collect(),
            phases: phases
                .iter()
                .map(|&(frames, rate_fps)| Phase { frames, rate_fps })
                .collect(),
            schedule: vec![0],
            batch: 64,
            catchup_frames: 128,
            grace: Duration::from_millis(20),
            lead: Duration::ZERO,
            latency_every: 1,
        }
    }

    #[test]
    fn each_generator_gets_every_nth_stream_and_its_share() {
        let p = plan(&[&[0, 1, 2, 3], &[4, 5]], &[(1001, Some(2e6)), (10, None)]);
        let parts = split_plan(&p, 2).unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].ports[0].streams, [0, 2]);
        assert_eq!(parts[1].ports[0].streams, [1, 3]);
        assert_eq!(
            (
                parts[0].ports[1].streams.as_slice(),
                parts[1].ports[1].ifindex
            ),
            (&[4][..], 11)
        );
        assert_eq!(parts[1].ports[1].streams, [5]);
        // Frames add up; the rate is shared; a burst stays a burst.
        assert_eq!(parts[0].phases[0].frames + parts[1].phases[0].frames, 1001);
        assert_eq!(
            (parts[0].phases[0].frames, parts[1].phases[0].frames),
            (501, 500)
        );
        assert_eq!(parts[1].phases[0].rate_fps, Some(1e6));
        assert_eq!(parts[0].phases[1].rate_fps, None);
        // One generator: the plan itself.
        let one = split_plan(&p, 1).unwrap();
        assert_eq!(one[0].ports[0].streams, p.ports[0].streams);
        assert_eq!(one[0].phases[0].frames, 1001);
    }

    #[test]
    fn streams_that_do_not_divide_are_refused() {
        let p = plan(&[&[0, 1, 2]], &[(100, Some(1e6))]);
        let e = split_plan(&p, 2).unwrap_err().to_string();
        assert!(e.contains("multiple of 2 flows"), "{e}");
        assert!(split_plan(&p, 0).is_err());
    }

    #[test]
    fn merged_counts_add_up_and_times_take_the_worst() {
        let a = Sent {
            port_frames: vec![5, 5],
            stream_frames: vec![5, 0, 5, 0],
            sent: 10,
            planned: 10,
            first_ns: 100,
            last_ns: 900,
            t0_ns: 90,
            max_lag_ns: 7,
            stalls: 1,
            long_stall_ns: 3,
            calls: 1,
            ..Sent::default()
        };
        let b = Sent {
            port_frames: vec![4, 5],
            stream_frames: vec![0, 4, 0, 5],
            sent: 9,
            planned: 10,
            first_ns: 95,
            last_ns: 1000,
            t0_ns: 91,
            max_lag_ns: 3,
            stalls: 2,
            long_stall_ns: 8,
            errors: 1,
            last_error: Some("x"),
            calls: 1,
            ..Sent::default()
        };
        let m = merge(vec![a, b]);
        assert_eq!((m.sent, m.planned), (19, 20));
        assert_eq!(m.port_frames, [9, 10]);
        assert_eq!(m.stream_frames, [5, 4, 5, 5]);
        // From the earliest first frame, the longest span (b's 905 ns).
        assert_eq!((m.first_ns, m.last_ns, m.t0_ns), (95, 1000, 90));
        let late = Sent {
            first_ns: 400,
            last_ns: 1100,
            ..Sent::default()
        };
        let early = Sent {
            first_ns: 100,
            last_ns: 900,
            ..Sent::default()
        };
        let skewed = merge(vec![late, early]);
        assert_eq!(
            (skewed.first_ns, skewed.last_ns),
            (100, 900),
            "a late start is no slower rate"
        );
        assert_eq!((m.max_lag_ns, m.stalls, m.long_stall_ns), (7, 3, 8));
        assert_eq!((m.errors, m.last_error, m.calls), (1, Some("x"), 2));
    }

    #[test]
    fn each_queue_is_received_where_it_is_fed() {
        // veth picks the receive queue by the sending CPU: cpu % queues.
        assert_eq!(napi_cpu(0, 2, &[0, 1]), 0);
        assert_eq!(napi_cpu(1, 2, &[0, 1]), 1);
        assert_eq!(napi_cpu(0, 2, &[3, 2]), 2);
        assert_eq!(napi_cpu(1, 2, &[3, 2]), 3);
        // No CPU feeds it (more queues than CPUs): by turn.
        assert_eq!(napi_cpu(2, 4, &[0, 1]), 0);
        assert_eq!(napi_cpu(0, 1, &[1]), 1);
    }
}
