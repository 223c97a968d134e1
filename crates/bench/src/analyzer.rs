//! Receive-side accounting (R5, R9): exact per-stream counts and latency.
//!
//! Why: the classic tester failures are phantom loss and loss that was
//! really reordering or duplication. Here every count is exact:
//!
//! * `received`: test frames of a known stream, duplicates included;
//! * `unique`: distinct sequence numbers below the sent count (a bitset per
//!   stream, sized from the expected count, grows if needed);
//! * `lost = sent - unique` (only computable once `sent` is known, after
//!   the drain: see [`Analyzer::finish`]);
//! * `reordered`: frames whose sequence is lower than the highest already
//!   seen in their stream (RFC 4737's "reordered" singleton test);
//! * `duplicates`: frames whose sequence was already seen;
//! * `non_test`: frames that [`packet::test_frame::parse`] rejected (ARP, ND,
//!   foreign traffic), `unknown_stream` and `beyond_sent` (sequence at or
//!   above the sent count) are counted separately, never as test frames.
//!   Sequence numbers far beyond the expected count (see
//!   [`Analyzer::new`]) are not tracked in the bitset, so a corrupt or
//!   foreign frame with a huge sequence number cannot make the analyzer
//!   allocate without bound: they count as `beyond_sent` and nothing else.
//!
//! Latency is `rx_ns - tx_ns` (one shared CLOCK_MONOTONIC when tester and
//! DUT share a host) into an HDR histogram (ns, 3 significant digits).
//! Delay variation is reported two ways, both documented in
//! [`LatencySummary`]: RFC 3393 IPDV between consecutive frames of a stream
//! (mean and max of the absolute values) and RFC 5481 PDV (max - min).
//!
//! Analyzers are per receiver thread and [`Analyzer::merge`]d at the end.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use packet::test_frame::{parse, TestFrame, FLAG_LEARNING};

/// Latency statistics in nanoseconds.
///
/// `ipdv_*`: RFC 3393 IP packet delay variation between consecutive
/// received frames of the same stream (`D(i) - D(i-1)`), mean of absolute
/// values and maximum absolute value; `None` when not measured (a tester
/// backend that does not compute it, or no two frames of one stream):
/// JSON null and `n/a` in tables, never a made-up 0. `pdv_ns`: RFC 5481
/// packet delay variation, maximum delay minus minimum delay.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Frames with a latency sample.
    pub count: u64,
    /// Minimum.
    pub min_ns: u64,
    /// Mean.
    pub mean_ns: f64,
    /// Median (p50).
    pub median_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
    /// Maximum.
    pub max_ns: u64,
    /// Mean |IPDV| (RFC 3393); `None`: not measured.
    pub ipdv_mean_abs_ns: Option<f64>,
    /// Max |IPDV| (RFC 3393); `None`: not measured.
    pub ipdv_max_abs_ns: Option<u64>,
    /// max - min (RFC 5481 PDV).
    pub pdv_ns: u64,
}

impl LatencySummary {
    /// Mean of several summaries (RFC 2544 averages latency repetitions):
    /// every field is the plain mean over the inputs that had samples (the
    /// IPDV fields over those that measured it; `None` if none did).
    pub fn mean_of(list: &[LatencySummary]) -> LatencySummary {
        let v: Vec<&LatencySummary> = list.iter().filter(|s| s.count > 0).collect();
        if v.is_empty() {
            return LatencySummary::default();
        }
        let n = v.len() as f64;
        let avg = |f: &dyn Fn(&LatencySummary) -> f64| v.iter().map(|s| f(s)).sum::<f64>() / n;
        LatencySummary {
            count: v.iter().map(|s| s.count).sum(),
            min_ns: avg(&|s| s.min_ns as f64).round() as u64,
            mean_ns: avg(&|s| s.mean_ns),
            median_ns: avg(&|s| s.median_ns as f64).round() as u64,
            p99_ns: avg(&|s| s.p99_ns as f64).round() as u64,
            p999_ns: avg(&|s| s.p999_ns as f64).round() as u64,
            max_ns: avg(&|s| s.max_ns as f64).round() as u64,
            ipdv_mean_abs_ns: mean_some(v.iter().map(|s| s.ipdv_mean_abs_ns)),
            ipdv_max_abs_ns: mean_some(v.iter().map(|s| s.ipdv_max_abs_ns.map(|x| x as f64)))
                .map(|m| m.round() as u64),
            pdv_ns: avg(&|s| s.pdv_ns as f64).round() as u64,
        }
    }
}

/// Mean of the values that are present; `None` if none is.
fn mean_some(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let (sum, n) = values
        .flatten()
        .fold((0.0, 0u32), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / f64::from(n))
}

/// Receive state of one stream.
#[derive(Debug, Clone, Default)]
struct StreamRx {
    seen: Vec<u64>,
    received: u64,
    unique: u64,
    duplicates: u64,
    reordered: u64,
    highest: Option<u64>,
    last_latency: Option<u64>,
    ipdv_sum_abs: u128,
    ipdv_count: u64,
    ipdv_max_abs: u64,
    /// Frames with a sequence at or above the analyzer's tracking limit.
    untracked: u64,
}

impl StreamRx {
    fn test_and_set(&mut self, seq: u64) -> bool {
        let (w, b) = ((seq / 64) as usize, seq % 64);
        if w >= self.seen.len() {
            // Rare (more than the expected count): grow off the fast path.
            self.seen.resize((w + 1).next_power_of_two(), 0);
        }
        let was = self.seen[w] >> b & 1 == 1;
        self.seen[w] |= 1 << b;
        was
    }

    fn is_set(&self, seq: u64) -> bool {
        let w = (seq / 64) as usize;
        w < self.seen.len() && self.seen[w] >> (seq % 64) & 1 == 1
    }
}

/// Per-stream counts after [`Analyzer::finish`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamReport {
    /// Stream id.
    pub stream: u32,
    /// Frames the generator sent on this stream.
    pub sent: u64,
    /// Test frames received (duplicates included).
    pub received: u64,
    /// Distinct sequence numbers received below `sent`.
    pub unique: u64,
    /// `sent - unique`.
    pub lost: u64,
    /// Frames with a sequence lower than the highest seen before them.
    pub reordered: u64,
    /// Frames whose sequence had been received already.
    pub duplicates: u64,
    /// Frames with a sequence at or above `sent` (corrupt or foreign).
    pub beyond_sent: u64,
}

/// Totals of a trial's receive side.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RxReport {
    /// Per stream.
    pub streams: Vec<StreamReport>,
    /// Sum of `sent`.
    pub sent: u64,
    /// Sum of `received` (test frames, duplicates included).
    pub received: u64,
    /// Sum of `unique`.
    pub unique: u64,
    /// Sum of `lost`.
    pub lost: u64,
    /// Sum of `reordered`.
    pub reordered: u64,
    /// Sum of `duplicates`.
    pub duplicates: u64,
    /// Frames that were not test frames (ignored, R5).
    pub non_test: u64,
    /// Test frames of a stream id outside the trial's streams.
    pub unknown_stream: u64,
    /// Learning frames (flag set), not counted as test frames.
    pub learning: u64,
    /// Test frames whose timestamp was after their receive time.
    pub clock_errors: u64,
    /// Latency over all streams.
    pub latency: LatencySummary,
}

/// Receive accounting for one receiver thread (or all, after merging).
#[derive(Debug, Clone)]
pub struct Analyzer {
    streams: Vec<StreamRx>,
    /// Sequence numbers at or above this are not tracked (see [`Analyzer::new`]).
    seq_limit: u64,
    non_test: u64,
    unknown_stream: u64,
    learning: u64,
    clock_errors: u64,
    hist: Histogram<u64>,
}

impl Analyzer {
    /// An analyzer for streams `0..n_streams`, each with bitset room for
    /// `expected_per_stream` sequence numbers (it grows if more arrive).
    ///
    /// The bitset grows up to [`Analyzer::seq_limit`] =
    /// `max(4 * expected_per_stream, 2^26)` sequence numbers (8 MiB per
    /// stream at the floor): a frame with a sequence number at or above it
    /// is corrupt or foreign, and is counted as received and `beyond_sent`
    /// only (no duplicate, reordering or latency accounting), instead of
    /// growing the bitset to the size its sequence number implies (up to
    /// 2^61 bytes for a bit flip in a long-form header).
    pub fn new(n_streams: usize, expected_per_stream: u64) -> Analyzer {
        let words = expected_per_stream.div_ceil(64) as usize;
        Analyzer {
            seq_limit: expected_per_stream.saturating_mul(4).max(MIN_SEQ_LIMIT),
            streams: (0..n_streams)
                .map(|_| StreamRx {
                    seen: vec![0; words],
                    ..StreamRx::default()
                })
                .collect(),
            non_test: 0,
            unknown_stream: 0,
            learning: 0,
            clock_errors: 0,
            // 1 ns .. ~18 min, 3 significant digits: fixed size, so recording
            // never allocates; larger values saturate.
            hist: Histogram::new_with_bounds(1, 1 << 40, 3).expect("histogram"),
        }
    }

    /// Sequence numbers at or above this are counted as `beyond_sent`
    /// without being tracked (see [`Analyzer::new`]).
    pub fn seq_limit(&self) -> u64 {
        self.seq_limit
    }

    /// Account one received buffer (without FCS) at `rx_ns`.
    #[inline]
    pub fn record_buf(&mut self, buf: &[u8], rx_ns: u64) {
        match parse(buf) {
            Some(f) => self.record(&f, rx_ns),
            None => self.non_test += 1,
        }
    }

    /// Count one frame that is not a test frame.
    pub fn record_non_test(&mut self) {
        self.non_test += 1;
    }

    /// Account one parsed test frame received at `rx_ns`. Short-form
    /// frames get their 32-bit sequence extended against the stream's
    /// highest sequence and their timestamp completed from `rx_ns`.
    #[inline]
    pub fn record(&mut self, f: &TestFrame, rx_ns: u64) {
        if f.flags & FLAG_LEARNING != 0 {
            self.learning += 1;
            return;
        }
        let Some(s) = self.streams.get_mut(f.stream as usize) else {
            self.unknown_stream += 1;
            return;
        };
        let (seq, tx_ns) = if f.short {
            let seq = extend32(s.highest.unwrap_or(0), f.seq as u32);
            let age = (rx_ns as u32).wrapping_sub(f.tx_ns as u32);
            (seq, rx_ns.wrapping_sub(u64::from(age)))
        } else {
            (f.seq, f.tx_ns)
        };
        s.received += 1;
        if seq >= self.seq_limit {
            s.untracked += 1;
            return;
        }
        if s.test_and_set(seq) {
            s.duplicates += 1;
        } else {
            s.unique += 1;
        }
        match s.highest {
            Some(h) if seq < h => s.reordered += 1,
            Some(h) if seq == h => {}
            _ => s.highest = Some(seq),
        }
        if tx_ns > rx_ns {
            self.clock_errors += 1;
            return;
        }
        let lat = rx_ns - tx_ns;
        self.hist.saturating_record(lat.max(1));
        if let Some(prev) = s.last_latency {
            let d = lat.abs_diff(prev);
            s.ipdv_sum_abs += u128::from(d);
            s.ipdv_count += 1;
            s.ipdv_max_abs = s.ipdv_max_abs.max(d);
        }
        s.last_latency = Some(lat);
    }

    /// Merge another receiver thread's analyzer into this one. Counts stay
    /// exact when each stream is received by one thread (RSS keeps a flow
    /// on one queue); if a stream is split, uniques and duplicates stay
    /// exact (bitset union) but `reordered` counts reordering within each
    /// thread only.
    pub fn merge(&mut self, other: &Analyzer) {
        if other.streams.len() > self.streams.len() {
            self.streams
                .resize(other.streams.len(), StreamRx::default());
        }
        for (a, b) in self.streams.iter_mut().zip(&other.streams) {
            if b.seen.len() > a.seen.len() {
                a.seen.resize(b.seen.len(), 0);
            }
            for (x, y) in a.seen.iter_mut().zip(&b.seen) {
                *x |= *y;
            }
            a.received += b.received;
            a.untracked += b.untracked;
            a.unique = a.seen.iter().map(|w| u64::from(w.count_ones())).sum();
            a.duplicates = a.received - a.unique - a.untracked;
            a.reordered += b.reordered;
            a.highest = a.highest.max(b.highest);
            a.ipdv_sum_abs += b.ipdv_sum_abs;
            a.ipdv_count += b.ipdv_count;
            a.ipdv_max_abs = a.ipdv_max_abs.max(b.ipdv_max_abs);
        }
        self.seq_limit = self.seq_limit.max(other.seq_limit);
        self.non_test += other.non_test;
        self.unknown_stream += other.unknown_stream;
        self.learning += other.learning;
        self.clock_errors += other.clock_errors;
        self.hist.add(&other.hist).expect("histogram merge");
    }

    /// Sequence numbers below `sent` never received on `stream`, ascending.
    pub fn lost_seqs(&self, stream: u32, sent: u64) -> impl Iterator<Item = u64> + '_ {
        (0..sent).filter(move |&q| !self.was_received(stream, q))
    }

    /// Whether frame `seq` of `stream` arrived.
    pub fn was_received(&self, stream: u32, seq: u64) -> bool {
        self.streams
            .get(stream as usize)
            .is_some_and(|s| s.is_set(seq))
    }

    /// The latency summary so far.
    pub fn latency(&self) -> LatencySummary {
        let h = &self.hist;
        let (sum, cnt, max) = self.streams.iter().fold((0u128, 0u64, 0u64), |a, s| {
            (
                a.0 + s.ipdv_sum_abs,
                a.1 + s.ipdv_count,
                a.2.max(s.ipdv_max_abs),
            )
        });
        if h.is_empty() {
            return LatencySummary::default();
        }
        LatencySummary {
            count: h.len(),
            min_ns: h.min(),
            mean_ns: h.mean(),
            median_ns: h.value_at_quantile(0.5),
            p99_ns: h.value_at_quantile(0.99),
            p999_ns: h.value_at_quantile(0.999),
            max_ns: h.max(),
            ipdv_mean_abs_ns: (cnt > 0).then(|| sum as f64 / cnt as f64),
            ipdv_max_abs_ns: (cnt > 0).then_some(max),
            pdv_ns: h.max() - h.min(),
        }
    }

    /// The histogram (ns) for callers that want more percentiles.
    pub fn histogram(&self) -> &Histogram<u64> {
        &self.hist
    }

    /// Final counts, given what the generator sent per stream
    /// (`sent[i]` for stream `i`). Call only after the drain (R6).
    pub fn finish(&self, sent: &[u64]) -> RxReport {
        let mut r = RxReport {
            non_test: self.non_test,
            unknown_stream: self.unknown_stream,
            learning: self.learning,
            clock_errors: self.clock_errors,
            latency: self.latency(),
            ..RxReport::default()
        };
        let n = sent.len().max(self.streams.len());
        for i in 0..n {
            let sent_i = sent.get(i).copied().unwrap_or(0);
            let st = self.streams.get(i).cloned().unwrap_or_default();
            let below: u64 = count_below(&st.seen, sent_i);
            let sr = StreamReport {
                stream: i as u32,
                sent: sent_i,
                received: st.received,
                unique: below,
                lost: sent_i - below,
                reordered: st.reordered,
                duplicates: st.duplicates,
                beyond_sent: st.unique - below + st.untracked,
            };
            r.sent += sr.sent;
            r.received += sr.received;
            r.unique += sr.unique;
            r.lost += sr.lost;
            r.reordered += sr.reordered;
            r.duplicates += sr.duplicates;
            r.streams.push(sr);
        }
        r
    }
}

/// Set bits below `limit`.
fn count_below(bits: &[u64], limit: u64) -> u64 {
    let full = (limit / 64) as usize;
    let mut n: u64 = bits
        .iter()
        .take(full)
        .map(|w| u64::from(w.count_ones()))
        .sum();
    let rem = limit % 64;
    if rem > 0 {
        if let Some(w) = bits.get(full) {
            n += u64::from((w & ((1u64 << rem) - 1)).count_ones());
        }
    }
    n
}

/// Smallest [`Analyzer::seq_limit`]: 2^26 sequence numbers, an 8 MiB bitset.
const MIN_SEQ_LIMIT: u64 = 1 << 26;

/// Extend a 32-bit sequence number to the 64-bit value closest to `reference`.
pub fn extend32(reference: u64, low: u32) -> u64 {
    let base = reference & !0xFFFF_FFFF;
    let cand = base | u64::from(low);
    let lo = cand.checked_sub(1 << 32);
    let hi = cand.checked_add(1 << 32);
    let mut best = cand;
    for c in [lo, hi].into_iter().flatten() {
        if c.abs_diff(reference) < best.abs_diff(reference) {
            best = c;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use packet::test_frame::{build, Flow, UDP_DST_PORT, UDP_SRC_PORT};

    fn tf(stream: u32, seq: u64, tx: u64) -> TestFrame {
        TestFrame {
            stream,
            seq,
            tx_ns: tx,
            len: 128,
            flags: 0,
            short: false,
        }
    }

    #[test]
    fn exact_counts_for_injected_patterns() {
        let mut a = Analyzer::new(2, 100);
        // stream 0: 0..10 with 3 lost, 5 duplicated, 7 and 8 swapped
        for s in [0u64, 1, 2, 4, 5, 5, 6, 8, 7] {
            a.record(&tf(0, s, 1000), 2000 + s);
        }
        // stream 1: all 5 in order
        for s in 0..5 {
            a.record(&tf(1, s, 1000), 1500);
        }
        a.record_non_test();
        a.record(&tf(9, 0, 0), 1);
        let r = a.finish(&[10, 5]);
        let s0 = r.streams[0];
        assert_eq!(s0.received, 9);
        assert_eq!(s0.unique, 8);
        assert_eq!(s0.lost, 2, "3 and 9");
        assert_eq!(s0.duplicates, 1);
        assert_eq!(s0.reordered, 1);
        assert_eq!(r.streams[1].lost, 0);
        assert_eq!(r.lost, 2);
        assert_eq!(r.non_test, 1);
        assert_eq!(r.unknown_stream, 1);
        assert_eq!(a.lost_seqs(0, 10).collect::<Vec<_>>(), vec![3, 9]);
        assert_eq!(r.latency.count, 14);
        assert_eq!(r.latency.min_ns, 500);
    }

    #[test]
    fn beyond_sent_and_growth() {
        let mut a = Analyzer::new(1, 1);
        for s in [0u64, 1, 500] {
            a.record(&tf(0, s, 0), 10);
        }
        let r = a.finish(&[2]);
        assert_eq!(r.streams[0].unique, 2);
        assert_eq!(r.streams[0].beyond_sent, 1);
        assert_eq!(r.lost, 0);
    }

    /// Regression (found by the `bench_frame` fuzz target): a frame with a
    /// huge sequence number made `test_and_set` grow the bitset to 2^39
    /// bytes and abort on allocation failure.
    #[test]
    fn huge_sequence_numbers_are_beyond_sent_without_allocating() {
        let mut a = Analyzer::new(1, 10);
        assert_eq!(a.seq_limit(), 1 << 26);
        for s in [0u64, 1, 0x03e8_2003_e820_2122, u64::MAX, a.seq_limit()] {
            a.record(&tf(0, s, 0), 10);
        }
        // Not a reordering of the frames after it, not a latency sample.
        a.record(&tf(0, 2, 0), 10);
        assert!(a.streams[0].seen.len() <= 1);
        let r = a.finish(&[3]);
        let s = r.streams[0];
        assert_eq!((s.received, s.unique, s.lost), (6, 3, 0));
        assert_eq!((s.beyond_sent, s.duplicates, s.reordered), (3, 0, 0));
        assert_eq!(r.latency.count, 3);
        let mut b = Analyzer::new(1, 1 << 30);
        assert_eq!(b.seq_limit(), 1 << 32);
        b.record(&tf(0, 1, 0), 10);
        b.merge(&a);
        let s = b.finish(&[3]).streams[0];
        assert_eq!(
            (s.received, s.unique, s.duplicates, s.beyond_sent),
            (7, 3, 1, 3)
        );
    }

    /// Regression: `extend32` overflowed (debug panic) for a reference in
    /// the top 2^32 of the 64-bit range.
    #[test]
    fn extend32_at_the_top_of_the_range() {
        assert_eq!(extend32(u64::MAX, 5), 0xFFFF_FFFF_0000_0005);
        assert_eq!(extend32(u64::MAX - 3, u32::MAX), u64::MAX);
    }

    #[test]
    fn latency_and_ipdv() {
        let mut a = Analyzer::new(1, 10);
        // latencies 100, 300, 200 -> IPDV |200|, |100|
        a.record(&tf(0, 0, 0), 100);
        a.record(&tf(0, 1, 1000), 1300);
        a.record(&tf(0, 2, 2000), 2200);
        let l = a.latency();
        assert_eq!(l.count, 3);
        assert_eq!(l.min_ns, 100);
        assert!((l.max_ns as i64 - 300).abs() <= 1);
        assert!((l.mean_ns - 200.0).abs() < 1.0);
        assert_eq!(l.ipdv_max_abs_ns, Some(200));
        assert!((l.ipdv_mean_abs_ns.unwrap() - 150.0).abs() < 1e-9);
        assert!((l.pdv_ns as i64 - 200).abs() <= 1);
        // a timestamp in the future is a clock error, not a sample
        a.record(&tf(0, 3, 5000), 4000);
        assert_eq!(a.finish(&[4]).clock_errors, 1);
    }

    #[test]
    fn ipdv_is_absent_unless_measured() {
        // One frame per stream: latency, but no delay variation.
        let mut a = Analyzer::new(2, 10);
        a.record(&tf(0, 0, 0), 100);
        a.record(&tf(1, 0, 0), 300);
        let l = a.latency();
        assert_eq!(l.count, 2);
        assert_eq!((l.ipdv_mean_abs_ns, l.ipdv_max_abs_ns), (None, None));
        let j = serde_json::to_value(l).unwrap();
        assert!(j["ipdv_mean_abs_ns"].is_null() && j["ipdv_max_abs_ns"].is_null());
        // The mean of repetitions keeps the measured ones only.
        let measured = LatencySummary {
            count: 5,
            ipdv_mean_abs_ns: Some(40.0),
            ipdv_max_abs_ns: Some(90),
            ..l
        };
        let m = LatencySummary::mean_of(&[l, measured]);
        assert_eq!(
            (m.ipdv_mean_abs_ns, m.ipdv_max_abs_ns),
            (Some(40.0), Some(90))
        );
        assert_eq!(LatencySummary::mean_of(&[l, l]).ipdv_mean_abs_ns, None);
    }

    #[test]
    fn merge_is_exact_for_split_streams() {
        let mut a = Analyzer::new(1, 64);
        let mut b = Analyzer::new(1, 64);
        for s in 0..6 {
            a.record(&tf(0, s, 0), 10);
        }
        for s in [4u64, 5, 6, 7] {
            b.record(&tf(0, s, 0), 20);
        }
        b.record_non_test();
        a.merge(&b);
        let r = a.finish(&[10]);
        assert_eq!(r.received, 10);
        assert_eq!(r.unique, 8);
        assert_eq!(r.duplicates, 2);
        assert_eq!(r.lost, 2);
        assert_eq!(r.non_test, 1);
        assert_eq!(r.latency.count, 10);
    }

    #[test]
    fn short_form_extension_across_wrap() {
        assert_eq!(extend32(0, 5), 5);
        assert_eq!(extend32(0xFFFF_FFF0, 3), 0x1_0000_0003);
        assert_eq!(extend32(0x1_0000_0003, 0xFFFF_FFF0), 0xFFFF_FFF0);
        let mut a = Analyzer::new(1, 8);
        let flow = Flow {
            dst_mac: [0; 6],
            src_mac: [0; 6],
            src_ip: "198.18.0.2".parse().unwrap(),
            dst_ip: "198.19.0.2".parse().unwrap(),
            src_port: UDP_SRC_PORT,
            dst_port: UDP_DST_PORT,
            stream: 0,
        };
        let mut buf = [0u8; 64];
        let l = build(&flow, 64, 0, &mut buf).unwrap();
        let base_t = 10_000_000_000u64; // beyond 32 bits of ns
        for s in 0..4u64 {
            l.patch(&mut buf, s, base_t + s);
            a.record_buf(&buf[..60], base_t + s + 750);
        }
        let r = a.finish(&[4]);
        assert_eq!(r.lost, 0);
        assert_eq!(r.latency.min_ns, 750);
        assert_eq!(r.latency.max_ns, 750);
        a.record_buf(&[0u8; 60], 0);
        assert_eq!(a.finish(&[4]).non_test, 1);
    }
}
