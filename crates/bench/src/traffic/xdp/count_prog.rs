//! The counting program, attached to every tester port (generic mode for
//! `xdp`, native for `xdp-live`, see `super`):
//! recognises test frames like `frame::parse` and accounts them in maps
//! that user space reads through mmap after the drain, then drops them.
//! Everything else (ARP, ND, ...) is XDP_PASS, so the kernel of the tester
//! namespace answers the DUT's neighbour queries.
//!
//! Why in XDP: counting in the kernel's receive path costs a few dozen
//! instructions per frame and no copy, wake-up or syscall, which is what
//! lets the tester count several times the kernel DUT's forwarding rate on
//! a 2-vCPU VM.
//!
//! Differences from `frame::parse` + `Analyzer` (documented, deliberate):
//! IPv4 with options is not a test frame here (the tester never sends
//! any); IPDV is not computed; min/max latency and the highest sequence
//! are updated without atomics (a veth port receives on one queue, so one
//! CPU at a time; counters and the bitmap are atomic regardless).

use super::asm::*;

/// Per-stream statistics value: u64 words.
pub const ST_RECEIVED: usize = 0;
pub const ST_DUPLICATES: usize = 1;
pub const ST_REORDERED: usize = 2;
pub const ST_BEYOND: usize = 3;
/// Highest sequence seen + 1 (0: none yet).
pub const ST_HIGH1: usize = 4;
pub const ST_WORDS: usize = 8;

/// Global value: u64 words, then the latency histogram.
pub const G_NON_TEST: usize = 0;
pub const G_LEARNING: usize = 1;
pub const G_UNKNOWN: usize = 2;
pub const G_CLOCK_ERR: usize = 3;
pub const G_LAT_COUNT: usize = 4;
pub const G_LAT_SUM: usize = 5;
pub const G_LAT_MIN: usize = 6;
pub const G_LAT_MAX: usize = 7;
pub const G_BUCKETS: usize = 8;
/// Histogram buckets allocated (a power of two so an AND bounds the index
/// for the verifier); [`bucket`] uses fewer.
pub const NBUCKETS: usize = 2048;
pub const G_WORDS: usize = G_BUCKETS + NBUCKETS;
/// Latencies are clamped below this (about 18 minutes).
pub const LAT_CAP: u64 = (1 << 40) - 1;
/// Sub-buckets per power of two: 32, i.e. at most 3 % bucket width.
const SUB_BITS: u32 = 5;

#[cfg_attr(not(test), allow(dead_code))]
/// Histogram bucket of `v` ns (what the program computes): exact below 32,
/// then 32 log-linear sub-buckets per power of two.
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

/// Maps the program uses, by fd, and the bitmap geometry.
pub struct CountMaps {
    pub glob: i32,
    pub stats: i32,
    pub bits: i32,
    /// Bitmap words per stream; sequence limit = 64 x this.
    pub words_per_stream: u32,
}

const STREAM: i16 = -8;
const SEQ: i16 = -16;
const TS: i16 = -24;
const SHORT: i16 = -32;
const NOW: i16 = -40;
const BITKEY: i16 = -48;
const ZERO: i16 = -52;

pub fn program(m: &CountMaps) -> Vec<u64> {
    let mut a = Asm::new();
    let pass = a.label();
    let drop = a.label();
    let learning = a.label();
    let account = a.label();
    let (v4, v6) = (a.label(), a.label());
    a.st(W, FP, ZERO, 0);
    a.ldx(W, R7, R1, 0);
    a.ldx(W, R8, R1, 4);
    a.mov_r(R2, R7);
    a.alu(ADD, R2, 54);
    a.jmp_r(JGT, R2, R8, pass);
    a.mov_r(R9, R8);
    a.alu_r(SUB, R9, R7); // frame length
    a.ldx(H, R2, R7, 12);
    a.jmp(JEQ, R2, 0x0008, v4);
    a.jmp(JEQ, R2, 0xDD86, v6);
    a.ja(pass);

    a.bind(v4);
    a.ldx(B, R2, R7, 14);
    a.jmp(JNE, R2, 0x45, pass);
    a.ldx(B, R2, R7, 23);
    a.jmp(JNE, R2, 17, pass);
    a.ldx(H, R2, R7, 20);
    a.alu(AND, R2, 0xFF3F); // MF | fragment offset, wire order
    a.jmp(JNE, R2, 0, pass);
    a.ldx(H, R6, R7, 16);
    a.be(R6, 16);
    a.alu(ADD, R6, 14);
    parse_udp(&mut a, 34, pass, learning, account);

    a.bind(v6);
    a.mov_r(R2, R7);
    a.alu(ADD, R2, 74);
    a.jmp_r(JGT, R2, R8, pass);
    a.ldx(B, R2, R7, 14);
    a.alu(RSH, R2, 4);
    a.jmp(JNE, R2, 6, pass);
    a.ldx(B, R2, R7, 20);
    a.jmp(JNE, R2, 17, pass);
    a.ldx(H, R6, R7, 18);
    a.be(R6, 16);
    a.alu(ADD, R6, 54);
    parse_udp(&mut a, 54, pass, learning, account);

    // Non-test frame: count, let the kernel have it.
    a.bind(pass);
    let pass_out = a.label();
    lookup(&mut a, m.glob, ZERO);
    a.jmp(JEQ, R0, 0, pass_out);
    add1(&mut a, R0, G_NON_TEST);
    a.bind(pass_out);
    a.ret(XDP_PASS);

    a.bind(learning);
    lookup(&mut a, m.glob, ZERO);
    a.jmp(JEQ, R0, 0, drop);
    add1(&mut a, R0, G_LEARNING);
    a.ja(drop);

    a.bind(account);
    account_frame(&mut a, m, drop);
    a.bind(drop);
    a.ret(XDP_DROP);
    a.finish()
}

/// `r0 = lookup(map, fp + key)`.
fn lookup(a: &mut Asm, map: i32, key: i16) {
    a.ld_map(R1, map);
    a.mov_r(R2, FP);
    a.alu(ADD, R2, i32::from(key));
    a.call(MAP_LOOKUP_ELEM);
}

/// `*(u64 *)(reg + 8 * word) += 1`, atomically (clobbers r1).
fn add1(a: &mut Asm, reg: u8, word: usize) {
    a.mov(R1, 1);
    a.atomic_add(reg, (word * 8) as i16, R1);
}

/// UDP at constant `l4`, IP datagram end in r6, frame length in r9: check
/// port and lengths, pick the header form, spill stream/seq/ts/short.
fn parse_udp(a: &mut Asm, l4: i16, pass: Label, learning: Label, account: Label) {
    let p = l4 + 8;
    let long = a.label();
    a.jmp_r(JGT, R6, R9, pass);
    a.ldx(H, R2, R7, l4 + 2);
    a.jmp(JNE, R2, 0x0700, pass);
    a.ldx(H, R2, R7, l4 + 4);
    a.be(R2, 16);
    a.mov_r(R3, R6);
    a.alu(SUB, R3, i32::from(l4));
    a.jmp_r(JNE, R2, R3, pass);
    a.alu(SUB, R2, 8);
    a.jmp(JGE, R2, 32, long);
    a.jmp(JLT, R2, 12, pass);
    // Short form: no padding after the datagram, "SR".
    a.jmp_r(JNE, R6, R9, pass);
    a.ldx(H, R2, R7, p);
    a.jmp(JNE, R2, i32::from(u16::from_le_bytes(*b"SR")), pass);
    a.ldx(H, R2, R7, p + 2);
    a.be(R2, 16);
    a.stx(W, FP, STREAM, R2);
    a.ldx(W, R2, R7, p + 4);
    a.be(R2, 32);
    a.stx(DW, FP, SEQ, R2);
    a.ldx(W, R2, R7, p + 8);
    a.be(R2, 32);
    a.stx(DW, FP, TS, R2);
    a.st(DW, FP, SHORT, 1);
    a.ja(account);

    a.bind(long);
    a.mov_r(R2, R7);
    a.alu(ADD, R2, i32::from(p) + 32);
    a.jmp_r(JGT, R2, R8, pass);
    a.ldx(DW, R2, R7, p);
    a.ld_imm64(R3, u64::from_le_bytes(*b"SRBENCH1"));
    a.jmp_r(JNE, R2, R3, pass);
    a.ldx(W, R2, R7, p + 12);
    a.be(R2, 32);
    a.jmp(JSET, R2, crate::frame::FLAG_LEARNING as i32, learning);
    a.ldx(W, R2, R7, p + 8);
    a.be(R2, 32);
    a.stx(W, FP, STREAM, R2);
    a.ldx(DW, R2, R7, p + 16);
    a.be(R2, 64);
    a.stx(DW, FP, SEQ, R2);
    a.ldx(DW, R2, R7, p + 24);
    a.be(R2, 64);
    a.stx(DW, FP, TS, R2);
    a.st(DW, FP, SHORT, 0);
    a.ja(account);
}

/// The analyzer's accounting for the spilled frame; ends in XDP_DROP.
fn account_frame(a: &mut Asm, m: &CountMaps, drop: Label) {
    let limit = u64::from(m.words_per_stream) * 64;
    a.call(KTIME_GET_NS);
    a.stx(DW, FP, NOW, R0);
    lookup(a, m.glob, ZERO);
    a.jmp(JEQ, R0, 0, drop);
    a.mov_r(R9, R0);
    lookup(a, m.stats, STREAM);
    let known = a.label();
    a.jmp(JNE, R0, 0, known);
    add1(a, R9, G_UNKNOWN);
    a.ja(drop);
    a.bind(known);
    a.mov_r(R8, R0);
    add1(a, R8, ST_RECEIVED);
    a.ldx(DW, R6, FP, SEQ);
    // Short form: extend the 32-bit sequence against the highest seen.
    let seq_ok = a.label();
    a.ldx(DW, R2, FP, SHORT);
    a.jmp(JEQ, R2, 0, seq_ok);
    a.ldx(DW, R3, R8, (ST_HIGH1 * 8) as i16);
    let have_ref = a.label();
    a.jmp(JEQ, R3, 0, have_ref);
    a.alu(SUB, R3, 1);
    a.bind(have_ref);
    a.mov_r(R4, R6);
    a.alu_r(SUB, R4, R3);
    a.alu(LSH, R4, 32);
    a.alu(ARSH, R4, 32);
    a.alu_r(ADD, R4, R3);
    a.jmp(JSLT, R4, 0, seq_ok);
    a.mov_r(R6, R4);
    a.bind(seq_ok);
    // Beyond the bitmap: counted, nothing else (like the analyzer).
    let tracked = a.label();
    a.ld_imm64(R2, limit);
    a.jmp_r(JLT, R6, R2, tracked);
    add1(a, R8, ST_BEYOND);
    a.ja(drop);
    a.bind(tracked);
    a.ldx(W, R2, FP, STREAM);
    a.alu(MUL, R2, m.words_per_stream as i32);
    a.mov_r(R3, R6);
    a.alu(RSH, R3, 6);
    a.alu_r(ADD, R2, R3);
    a.stx(W, FP, BITKEY, R2);
    lookup(a, m.bits, BITKEY);
    a.jmp(JEQ, R0, 0, drop);
    a.mov(R2, 1);
    a.mov_r(R3, R6);
    a.alu(AND, R3, 63);
    a.alu_r(LSH, R2, R3);
    a.mov_r(R4, R2);
    a.atomic_fetch_or(R0, 0, R2);
    a.alu_r(AND, R2, R4);
    let fresh = a.label();
    a.jmp(JEQ, R2, 0, fresh);
    add1(a, R8, ST_DUPLICATES);
    a.bind(fresh);
    // Highest sequence: below it = reordered.
    let (set_high, reord, lat) = (a.label(), a.label(), a.label());
    a.ldx(DW, R3, R8, (ST_HIGH1 * 8) as i16);
    a.mov_r(R2, R6);
    a.alu(ADD, R2, 1);
    a.jmp(JEQ, R3, 0, set_high);
    a.jmp_r(JLT, R2, R3, reord);
    a.jmp_r(JEQ, R2, R3, lat);
    a.bind(set_high);
    a.stx(DW, R8, (ST_HIGH1 * 8) as i16, R2);
    a.ja(lat);
    a.bind(reord);
    add1(a, R8, ST_REORDERED);

    // Latency.
    a.bind(lat);
    let (long_lat, have_lat) = (a.label(), a.label());
    a.ldx(DW, R2, FP, NOW);
    a.ldx(DW, R3, FP, TS);
    a.ldx(DW, R4, FP, SHORT);
    a.jmp(JEQ, R4, 0, long_lat);
    a.alu_r(SUB, R2, R3);
    a.alu(LSH, R2, 32);
    a.alu(RSH, R2, 32);
    a.ja(have_lat);
    a.bind(long_lat);
    let no_err = a.label();
    a.jmp_r(JGE, R2, R3, no_err);
    add1(a, R9, G_CLOCK_ERR);
    a.ja(drop);
    a.bind(no_err);
    a.alu_r(SUB, R2, R3);
    a.bind(have_lat);
    let (nz, capped) = (a.label(), a.label());
    a.jmp(JNE, R2, 0, nz);
    a.mov(R2, 1);
    a.bind(nz);
    a.ld_imm64(R3, LAT_CAP);
    a.jmp_r(JGE, R3, R2, capped);
    a.mov_r(R2, R3);
    a.bind(capped);
    add1(a, R9, G_LAT_COUNT);
    a.atomic_add(R9, (G_LAT_SUM * 8) as i16, R2);
    let (nomin, nomax) = (a.label(), a.label());
    a.ldx(DW, R3, R9, (G_LAT_MIN * 8) as i16);
    a.jmp_r(JGE, R2, R3, nomin);
    a.stx(DW, R9, (G_LAT_MIN * 8) as i16, R2);
    a.bind(nomin);
    a.ldx(DW, R3, R9, (G_LAT_MAX * 8) as i16);
    a.jmp_r(JGE, R3, R2, nomax);
    a.stx(DW, R9, (G_LAT_MAX * 8) as i16, R2);
    a.bind(nomax);
    // Bucket (see `bucket`): r5 = floor(log2), r4 = index.
    let (small, have_b) = (a.label(), a.label());
    a.mov_r(R4, R2);
    a.jmp(JLT, R2, 32, small);
    a.mov_r(R3, R2);
    a.mov(R5, 0);
    for s in [32, 16, 8, 4, 2, 1] {
        let skip = a.label();
        a.mov_r(R4, R3);
        a.alu(RSH, R4, s);
        a.jmp(JEQ, R4, 0, skip);
        a.mov_r(R3, R4);
        a.alu(ADD, R5, s);
        a.bind(skip);
    }
    a.mov_r(R4, R5);
    a.alu(SUB, R4, SUB_BITS as i32);
    a.mov_r(R3, R2);
    a.alu_r(RSH, R3, R4);
    a.alu(AND, R3, 31);
    a.mov_r(R4, R5);
    a.alu(SUB, R4, 4);
    a.alu(LSH, R4, SUB_BITS as i32);
    a.alu_r(ADD, R4, R3);
    a.ja(have_b);
    a.bind(small);
    a.bind(have_b);
    a.alu(AND, R4, (NBUCKETS - 1) as i32);
    a.alu(LSH, R4, 3);
    a.alu(ADD, R4, (G_BUCKETS * 8) as i32);
    a.mov_r(R3, R9);
    a.alu_r(ADD, R3, R4);
    add1(a, R3, 0);
    a.ja(drop);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotonic_and_narrow() {
        let mut last = 0;
        for v in (1..5_000_000u64).step_by(97).chain([LAT_CAP, u64::MAX]) {
            let b = bucket(v);
            assert!(b >= last && b < NBUCKETS, "{v}");
            last = b;
            let (lo, hi) = bucket_range(b);
            assert!(
                lo <= v.min(LAT_CAP) && v.min(LAT_CAP) <= hi,
                "{v} {b} {lo} {hi}"
            );
            assert!((hi - lo) as f64 <= lo as f64 / 31.0, "{v}");
        }
    }
}
