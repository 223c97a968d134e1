//! The receiver: polls every tester RX queue, accounts test frames in the
//! trial's [`Analyzer`], and answers ARP / neighbor solicitations.
//!
//! Why one thread for all ports, living as long as the [`super::NetTrial`]:
//! it must answer the DUT's ARP/ND at any time (also between trials, or
//! the DUT's neighbor entries go stale and the next trial starts with
//! loss), and on a 2-core machine one receiver plus one generator is all
//! the CPU the tester may take. When no frame is waiting it sleeps in
//! `poll(2)` on the queues' descriptors: it never spins idle.
//!
//! A trial is bracketed by two commands: `Start` installs the trial's
//! analyzer (acknowledged, so the generator starts only once every frame
//! will be counted), `Finish` starts the drain: the analyzer is handed back
//! once every sent frame arrived (plus a 5 ms grace for duplicates), or
//! no test frame arrived for `quiet` after the end, or `max` passed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::time::Duration;

use netio::{Burst, Pool, RxQueue, TxQueue};

use super::clock::mono_ns;
use super::neigh::{answer, NeighIdentity};
use bench::analyzer::Analyzer;
use packet::test_frame::{parse, FLAG_LEARNING};

/// Commands to the receiver.
pub(crate) enum RxCmd {
    Start {
        analyzer: Analyzer,
        ack: Sender<()>,
    },
    Finish {
        /// Test frames sent in the trial.
        expected: u64,
        quiet: Duration,
        max: Duration,
        reply: Sender<RxDone>,
    },
}

/// A finished trial's receive side.
pub(crate) struct RxDone {
    pub analyzer: Analyzer,
    /// How long the drain took, ns.
    pub drain_ns: u64,
}

/// Counters readable while the receiver runs.
#[derive(Default)]
pub(crate) struct RxShared {
    /// Learning frames received (all time).
    pub learning: AtomicU64,
    /// ARP / NA answers sent (all time).
    pub answers: AtomicU64,
    /// Answers that could not be sent (no buffer, TX refused).
    pub answer_failures: AtomicU64,
}

/// One port as the receiver holds it.
pub(crate) struct RxPort {
    pub queues: Vec<Box<dyn RxQueue>>,
    /// For ARP/ND answers.
    pub tx: Box<dyn TxQueue>,
    pub me: NeighIdentity,
}

struct Drain {
    expected: u64,
    since: u64,
    quiet_ns: u64,
    max_ns: u64,
    all_in_at: Option<u64>,
    reply: Sender<RxDone>,
}

/// The receiver loop; returns when `cmds` is closed.
pub(crate) fn run(
    mut ports: Vec<RxPort>,
    mut pool: Pool,
    cmds: Receiver<RxCmd>,
    shared: Arc<RxShared>,
) {
    // Descriptors to sleep on when idle. A queue without one (none of the
    // live backends) degrades to 200 us naps.
    let mut fds: Vec<libc::pollfd> = ports
        .iter()
        .flat_map(|p| p.queues.iter())
        .filter_map(|q| q.wait_fd())
        .map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let all_fds = fds.len() == ports.iter().map(|p| p.queues.len()).sum::<usize>();
    let mut an = Analyzer::new(0, 0);
    let mut test_frames = 0u64;
    let mut last_test = 0u64;
    let mut drain: Option<Drain> = None;
    let mut burst = Burst::new();
    let mut scratch = [0u8; 128];
    loop {
        match cmds.try_recv() {
            Ok(RxCmd::Start { analyzer, ack }) => {
                an = analyzer;
                test_frames = 0;
                drain = None;
                let _ = ack.send(());
            }
            Ok(RxCmd::Finish {
                expected,
                quiet,
                max,
                reply,
            }) => {
                drain = Some(Drain {
                    expected,
                    since: mono_ns(),
                    quiet_ns: quiet.as_nanos() as u64,
                    max_ns: max.as_nanos() as u64,
                    all_in_at: None,
                    reply,
                });
            }
            Err(TryRecvError::Empty) => {}
            Err(TryRecvError::Disconnected) => break,
        }
        let mut got = 0usize;
        for p in ports.iter_mut() {
            let mut answered = false;
            for q in p.queues.iter_mut() {
                // The receiver takes whatever the burst has room for.
                let room = burst.room();
                let n = q.rx_burst(&mut pool, &mut burst, room);
                if n == 0 {
                    continue;
                }
                got += n;
                let now = mono_ns();
                for &b in burst.as_slice() {
                    let data = pool.data(b);
                    match parse(data) {
                        Some(f) => {
                            if f.flags & FLAG_LEARNING != 0 {
                                shared.learning.fetch_add(1, Ordering::Relaxed);
                            } else {
                                test_frames += 1;
                                last_test = now;
                            }
                            an.record(&f, now);
                        }
                        None => {
                            an.record_non_test();
                            if let Some(len) = answer(&p.me, data, &mut scratch) {
                                answered = true;
                                send_answer(&mut p.tx, &mut pool, &scratch[..len], &shared);
                            }
                        }
                    }
                }
                pool.free_all(burst.as_slice());
                burst.clear();
            }
            if answered || p.tx.in_flight() > 0 {
                p.tx.flush(&mut pool);
            }
        }
        if let Some(d) = &mut drain {
            let now = mono_ns();
            if test_frames >= d.expected && d.all_in_at.is_none() {
                d.all_in_at = Some(now);
            }
            let done = d.all_in_at.is_some_and(|t| now - t >= 5_000_000)
                || now.saturating_sub(last_test.max(d.since)) >= d.quiet_ns
                || now - d.since >= d.max_ns;
            if done {
                let d = drain.take().expect("drain state");
                let done = RxDone {
                    analyzer: std::mem::replace(&mut an, Analyzer::new(0, 0)),
                    drain_ns: now - d.since,
                };
                let _ = d.reply.send(done);
                continue;
            }
        }
        if got == 0 {
            let timeout_ms = if drain.is_some() { 1 } else { 5 };
            if all_fds && !fds.is_empty() {
                // SAFETY: fds is a valid array of pollfd.
                unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
            } else {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }
    for p in ports.iter_mut() {
        for q in p.queues.iter_mut() {
            q.release(&mut pool);
        }
        p.tx.release(&mut pool);
    }
    // Queues (sockets) close before the pool (their UMEM) is unmapped.
    drop(ports);
    drop(pool);
}

fn send_answer(tx: &mut Box<dyn TxQueue>, pool: &mut Pool, frame: &[u8], shared: &RxShared) {
    let Some(mut b) = pool.alloc() else {
        shared.answer_failures.fetch_add(1, Ordering::Relaxed);
        return;
    };
    pool.room_mut(b)[..frame.len()].copy_from_slice(frame);
    b.len = frame.len() as u32;
    if tx.tx_burst(pool, &[b]) == 1 {
        shared.answers.fetch_add(1, Ordering::Relaxed);
    } else {
        pool.free(b);
        shared.answer_failures.fetch_add(1, Ordering::Relaxed);
    }
}
