//! The generator program: run by `BPF_PROG_TEST_RUN` in live-frames mode
//! on a template test frame, it stamps the stream's next sequence number
//! and `bpf_ktime_get_ns()` (CLOCK_MONOTONIC, like `clock::mono_ns`) into
//! the test header, fixes the UDP checksum and returns XDP_TX, so the
//! kernel transmits the frame out of the test run's ingress interface.
//!
//! Why it re-parses the frame: the stream id is in the template, so one
//! program (and one map of per-stream counters, key = stream id) serves
//! every stream and size, with no per-call map update. Live-mode pages are
//! recycled without being re-initialised, so the checksum is updated
//! incrementally against whatever the page holds (template or a previous
//! run's stamp), exactly like `FrameLayout::patch` (RFC 1624): always
//! valid, for IPv4 and IPv6.

use super::asm::*;

/// Instructions for the generator, with the per-stream sequence counter
/// map `seq_map` (u64 values, key = stream id).
pub fn program(seq_map: i32) -> Vec<u64> {
    let mut a = Asm::new();
    let drop = a.label();
    let v4 = a.label();
    let v6 = a.label();
    a.ldx(W, R7, R1, 0);
    a.ldx(W, R8, R1, 4);
    a.mov_r(R2, R7);
    a.alu(ADD, R2, 54);
    a.jmp_r(JGT, R2, R8, drop);
    a.ldx(H, R2, R7, 12);
    a.jmp(JEQ, R2, 0x0008, v4);
    a.jmp(JEQ, R2, 0xDD86, v6);
    a.ja(drop);
    a.bind(v4);
    per_l4(&mut a, 34, seq_map, drop);
    a.bind(v6);
    a.mov_r(R2, R7);
    a.alu(ADD, R2, 74);
    a.jmp_r(JGT, R2, R8, drop);
    per_l4(&mut a, 54, seq_map, drop);
    a.bind(drop);
    a.ret(XDP_DROP);
    a.finish()
}

/// UDP header at constant `l4`: pick the header form from the UDP length.
fn per_l4(a: &mut Asm, l4: i16, seq_map: i32, drop: Label) {
    let long = a.label();
    a.ldx(H, R2, R7, l4 + 4);
    a.be(R2, 16);
    a.alu(SUB, R2, 8);
    a.jmp(JGE, R2, 32, long);
    stamp(a, l4, false, seq_map, drop);
    a.bind(long);
    a.mov_r(R2, R7);
    a.alu(ADD, R2, i32::from(l4) + 8 + 32);
    a.jmp_r(JGT, R2, R8, drop);
    stamp(a, l4, true, seq_map, drop);
}

/// Stamp seq and time into the header form at `l4 + 8`; returns XDP_TX.
/// Bounds up to the header's end are checked by the caller.
fn stamp(a: &mut Asm, l4: i16, long: bool, seq_map: i32, drop: Label) {
    let p = l4 + 8;
    let (sz, bits, bytes, stream_off, seq_off, ts_off) = if long {
        (DW, 64, 8u8, 8, 16, 24)
    } else {
        (W, 32, 4u8, 2, 4, 8)
    };
    if long {
        a.ldx(W, R2, R7, p + stream_off);
        a.be(R2, 32);
    } else {
        a.ldx(H, R2, R7, p + stream_off);
        a.be(R2, 16);
    }
    a.stx(W, FP, -8, R2);
    a.ld_map(R1, seq_map);
    a.mov_r(R2, FP);
    a.alu(ADD, R2, -8);
    a.call(MAP_LOOKUP_ELEM);
    a.jmp(JEQ, R0, 0, drop);
    a.ldx(DW, R9, R0, 0);
    a.mov_r(R3, R9);
    a.alu(ADD, R3, 1);
    a.stx(DW, R0, 0, R3);
    a.call(KTIME_GET_NS);
    // r3 = new seq, r4 = new ts (wire order), r1/r2 = old, r5 = old csum.
    a.mov_r(R3, R9);
    a.be(R3, bits);
    a.mov_r(R4, R0);
    a.be(R4, bits);
    a.ldx(sz, R1, R7, p + seq_off);
    a.ldx(sz, R2, R7, p + ts_off);
    a.ldx(H, R5, R7, l4 + 6);
    // acc = ~csum + sum(~old words) + sum(new words); ~w = 0xffff - w.
    a.mov(R0, 0xffff);
    a.alu_r(SUB, R0, R5);
    a.alu(ADD, R0, 0xffff * i32::from(bytes)); // 2 fields x bytes/2 words
    a.mov(R9, 0);
    sum_words(a, R9, R1, R6, bytes);
    sum_words(a, R9, R2, R6, bytes);
    a.alu_r(SUB, R0, R9);
    sum_words(a, R0, R3, R6, bytes);
    sum_words(a, R0, R4, R6, bytes);
    fold16(a, R0, R6);
    a.alu(XOR, R0, 0xffff);
    let nz = a.label();
    a.jmp(JNE, R0, 0, nz);
    a.mov(R0, 0xffff);
    a.bind(nz);
    a.stx(sz, R7, p + seq_off, R3);
    a.stx(sz, R7, p + ts_off, R4);
    a.stx(H, R7, l4 + 6, R0);
    a.ret(XDP_TX);
}
