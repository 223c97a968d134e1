//! The XDP counter (`bpf/count.bpf.c`) from user space: load it with maps
//! sized for a trial plan, attach it to the tester's receiving ends, reset
//! and read its counts.
//!
//! Attach it in driver (native) mode: on veth that gives the port a NAPI
//! context, without which a veth drops the XDP frames redirected to it,
//! and with threaded NAPI (`testbed::napi`) the counting runs in a kthread
//! pinned to the tester's CPU.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use aya::programs::XdpMode;

use crate::programs::{self, Loaded};
use crate::MmapArray;

/// Mirrors of `bpf/count.h`.
pub const ST_RECEIVED: usize = 0;
pub const ST_DUPLICATES: usize = 1;
pub const ST_REORDERED: usize = 2;
pub const ST_BEYOND: usize = 3;
pub const ST_HIGH1: usize = 4;
/// Latency of the previous frame + 1 (0: none); the program's alone.
pub const ST_LAST_LAT1: usize = 5;
pub const ST_IPDV_SUM: usize = 6;
pub const ST_IPDV_COUNT: usize = 7;
pub const ST_IPDV_MAX: usize = 8;
pub const ST_WORDS: usize = 16;
pub const G_NON_TEST: usize = 0;
pub const G_LEARNING: usize = 1;
pub const G_UNKNOWN: usize = 2;
pub const G_CLOCK_ERR: usize = 3;
pub const G_LAT_COUNT: usize = 4;
pub const G_LAT_SUM: usize = 5;
pub const G_LAT_MIN: usize = 6;
pub const G_LAT_MAX: usize = 7;
pub const G_SAMPLE_MASK: usize = 8;
pub const G_BUCKETS: usize = 16;
pub const NBUCKETS: usize = 2048;
pub const G_WORDS: usize = G_BUCKETS + NBUCKETS;
/// Latencies are clamped below this (about 18 minutes).
pub const LAT_CAP: u64 = (1 << 40) - 1;
pub const SUB_BITS: u32 = 5;

/// Histogram bucket of `v` ns as the program computes it: exact below 32,
/// then 32 log-linear sub-buckets per power of two (at most 3 % wide).
pub fn bucket(v: u64) -> usize {
    let v = v.clamp(1, LAT_CAP);
    if v < 32 {
        return v as usize;
    }
    let e = 63 - v.leading_zeros();
    ((e - 4) << SUB_BITS) as usize + ((v >> (e - SUB_BITS)) & 31) as usize
}

/// Smallest and largest value of bucket `b`.
pub fn bucket_range(b: usize) -> (u64, u64) {
    if b < 32 {
        return (b as u64, b as u64);
    }
    let e = (b >> SUB_BITS) as u32 + 4;
    let sub = (b & 31) as u64;
    let lo = (32 + sub) << (e - SUB_BITS);
    (lo, lo + (1 << (e - SUB_BITS)) - 1)
}

/// A trial's counts, consistent with each other (read until stable).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counts {
    pub received: u64,
    pub duplicates: u64,
    pub reordered: u64,
    /// Sent frames whose sequence bit is not set.
    pub lost: u64,
    /// Frames beyond the bitmap (counted received, not tracked).
    pub beyond: u64,
    pub non_test: u64,
    pub learning: u64,
    /// Test frames of a stream the counter does not know.
    pub unknown: u64,
    pub clock_errors: u64,
    pub latency: Latency,
}

/// Latency and delay variation of the sampled frames
/// ([`Counter::set_latency_every`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Latency {
    /// Samples.
    pub count: u64,
    pub sum_ns: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub hist: Vec<u64>,
    /// RFC 3393 IPDV between consecutive samples of a stream, all
    /// streams.
    pub ipdv_sum_ns: u64,
    pub ipdv_count: u64,
    pub ipdv_max_ns: u64,
}

impl Latency {
    /// Percentile `p` (0..=1) from the histogram: the middle of its
    /// bucket, clamped to the observed min/max.
    pub fn quantile(&self, p: f64) -> u64 {
        let total: u64 = self.hist.iter().sum();
        let rank = ((p * total as f64).ceil() as u64).clamp(1, total.max(1));
        let mut acc = 0;
        for (b, &c) in self.hist.iter().enumerate() {
            acc += c;
            if acc >= rank {
                let (lo, hi) = bucket_range(b);
                return ((lo + hi) / 2).clamp(self.min_ns, self.max_ns);
            }
        }
        self.max_ns
    }
}

/// The loaded counter, attached to the receiving ports.
pub struct Counter {
    obj: Loaded,
    glob: MmapArray,
    stats: MmapArray,
    bits: MmapArray,
    n_streams: usize,
    words_per_stream: usize,
    ifindexes: Vec<u32>,
}

/// Bitmap memory bound over all streams.
const MAX_BITMAP_BYTES: u64 = 512 << 20;

impl Counter {
    /// Load the counter for `n_streams` streams, tracking sequences below
    /// `seq_limit` (rounded up to 64), and attach it to `ifindexes` (in
    /// the calling thread's namespace).
    pub fn new(n_streams: usize, seq_limit: u64, ifindexes: &[u32]) -> Result<Counter> {
        if n_streams == 0 {
            bail!("counter without streams");
        }
        let wps = seq_limit.div_ceil(64).max(1);
        let bytes = wps * 8 * n_streams as u64;
        if bytes > MAX_BITMAP_BYTES || wps * n_streams as u64 >= 1 << 31 {
            bail!("a sequence bitmap of {bytes} bytes: trial too long for the xdp counter");
        }
        let mut obj = programs::load(
            "counter",
            programs::COUNT_OBJ,
            &[
                ("cnt_stream", n_streams as u32),
                ("cnt_bits", (wps * n_streams as u64) as u32),
            ],
            &[("words_per_stream", wps as u32)],
            "sr_count",
        )?;
        let glob = obj.mmap("cnt_glob", G_WORDS * 8, 1)?;
        let stats = obj.mmap("cnt_stream", ST_WORDS * 8, n_streams)?;
        let bits = obj.mmap("cnt_bits", 8, wps as usize * n_streams)?;
        let prog = obj.xdp("sr_count")?;
        for &i in ifindexes {
            prog.attach_to_if_index(i, XdpMode::Driver)
                .with_context(|| format!("attaching the counter to ifindex {i} (driver mode)"))?;
        }
        let me = Counter {
            obj,
            glob,
            stats,
            bits,
            n_streams,
            words_per_stream: wps as usize,
            ifindexes: ifindexes.to_vec(),
        };
        me.reset();
        Ok(me)
    }

    /// Sequences tracked per stream.
    pub fn seq_limit(&self) -> u64 {
        self.words_per_stream as u64 * 64
    }

    pub fn ifindexes(&self) -> &[u32] {
        &self.ifindexes
    }

    /// Measure the latency of one frame in `every` per stream (a power of
    /// two, as the generator's `Plan::latency_every`): the frames whose
    /// sequence is a multiple of it. Kept across [`Counter::reset`].
    pub fn set_latency_every(&self, every: u32) -> Result<()> {
        if !every.is_power_of_two() || every > crate::gen::MAX_LATENCY_EVERY {
            bail!("latency sampling must be a power of two, not {every}");
        }
        self.glob.set(G_SAMPLE_MASK, u64::from(every - 1));
        Ok(())
    }

    /// Zero every count (between trials, with no traffic); the latency
    /// sampling stays.
    pub fn reset(&self) {
        let mask = self.glob.get(G_SAMPLE_MASK);
        self.glob.zero();
        self.glob.set(G_SAMPLE_MASK, mask);
        self.glob.set(G_LAT_MIN, u64::MAX);
        self.stats.zero();
        self.bits.zero();
    }

    /// Test frames received so far (all streams).
    pub fn received(&self) -> u64 {
        (0..self.n_streams)
            .map(|s| self.stats.get(s * ST_WORDS + ST_RECEIVED))
            .sum()
    }

    /// Learning frames received so far.
    pub fn learning(&self) -> u64 {
        self.glob.get(G_LEARNING)
    }

    /// Whether frame `seq` of `stream` arrived.
    pub fn was_received(&self, stream: u32, seq: u64) -> bool {
        if stream as usize >= self.n_streams || seq >= self.seq_limit() {
            return false;
        }
        let w = stream as usize * self.words_per_stream + (seq / 64) as usize;
        self.bits.get(w) >> (seq % 64) & 1 == 1
    }

    /// Wait until `expected` frames arrived (then `settle` more for
    /// stragglers), nothing arrived for `quiet`, or `max` passed.
    pub fn drain(&self, expected: u64, settle: Duration, quiet: Duration, max: Duration) {
        let start = std::time::Instant::now();
        let (mut last, mut last_change, mut all_in) =
            (self.received(), std::time::Instant::now(), None);
        loop {
            std::thread::sleep(Duration::from_millis(1));
            let r = self.received();
            if r != last {
                (last, last_change) = (r, std::time::Instant::now());
            }
            if r >= expected && all_in.is_none() {
                all_in = Some(std::time::Instant::now());
            }
            if all_in.is_some_and(|t| t.elapsed() >= settle)
                || last_change.elapsed() >= quiet
                || start.elapsed() >= max
            {
                break;
            }
        }
    }

    /// The counts for streams that sent `sent[stream]` frames each.
    /// Re-read until the counters held still across one reading, so that
    /// counters and bitmap describe the same frames.
    pub fn read(&self, sent: &[u64]) -> Counts {
        let wps = self.words_per_stream;
        let mut c = Counts::default();
        for _ in 0..100 {
            let before = self.received();
            c = Counts::default();
            for (s, &n) in sent.iter().enumerate().take(self.n_streams) {
                let st = |w| self.stats.get(s * ST_WORDS + w);
                c.received += st(ST_RECEIVED);
                c.duplicates += st(ST_DUPLICATES);
                c.reordered += st(ST_REORDERED);
                c.beyond += st(ST_BEYOND);
                let tracked = n.min(self.seq_limit());
                let full = (tracked / 64) as usize;
                let mut unique: u64 = self
                    .bits
                    .words(s * wps, s * wps + full)
                    .iter()
                    .map(|w| u64::from(w.count_ones()))
                    .sum();
                for q in full as u64 * 64..tracked {
                    unique += u64::from(self.was_received(s as u32, q));
                }
                c.lost += n - unique.min(n);
            }
            if self.received() == before {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let g = |w| self.glob.get(w);
        c.non_test = g(G_NON_TEST);
        c.learning = g(G_LEARNING);
        c.unknown = g(G_UNKNOWN);
        c.clock_errors = g(G_CLOCK_ERR);
        let mut l = Latency {
            count: g(G_LAT_COUNT),
            sum_ns: g(G_LAT_SUM),
            min_ns: g(G_LAT_MIN),
            max_ns: g(G_LAT_MAX),
            hist: (0..NBUCKETS).map(|b| g(G_BUCKETS + b)).collect(),
            ..Latency::default()
        };
        if l.count == 0 {
            l.min_ns = 0;
        }
        for s in 0..self.n_streams {
            let st = |w| self.stats.get(s * ST_WORDS + w);
            l.ipdv_sum_ns += st(ST_IPDV_SUM);
            l.ipdv_count += st(ST_IPDV_COUNT);
            l.ipdv_max_ns = l.ipdv_max_ns.max(st(ST_IPDV_MAX));
        }
        c.latency = l;
        c
    }

    /// The loaded object (tests run the program directly).
    pub fn loaded(&mut self) -> &mut Loaded {
        &mut self.obj
    }
}

#[cfg(test)]
mod tests;
