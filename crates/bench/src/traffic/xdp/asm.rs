//! A tiny eBPF assembler: instruction constructors, labels and jump
//! fix-ups.
//!
//! Why: the tester's XDP programs are small and must load on any machine
//! without clang or libbpf; generating them from Rust also lets one code
//! path be emitted once per constant header offset (IPv4/IPv6, long/short
//! test header), which keeps every packet access a constant offset the
//! verifier checks trivially.

/// Registers.
pub const R0: u8 = 0;
pub const R1: u8 = 1;
pub const R2: u8 = 2;
pub const R3: u8 = 3;
pub const R4: u8 = 4;
pub const R5: u8 = 5;
pub const R6: u8 = 6;
pub const R7: u8 = 7;
pub const R8: u8 = 8;
pub const R9: u8 = 9;
pub const FP: u8 = 10;

/// Access sizes.
pub const W: u8 = 0x00;
pub const H: u8 = 0x08;
pub const B: u8 = 0x10;
pub const DW: u8 = 0x18;

/// ALU operations.
pub const ADD: u8 = 0x00;
pub const SUB: u8 = 0x10;
pub const MUL: u8 = 0x20;
pub const AND: u8 = 0x50;
pub const LSH: u8 = 0x60;
pub const RSH: u8 = 0x70;
pub const XOR: u8 = 0xa0;
pub const MOV: u8 = 0xb0;
pub const ARSH: u8 = 0xc0;

/// Jump conditions.
pub const JEQ: u8 = 0x10;
pub const JGT: u8 = 0x20;
pub const JGE: u8 = 0x30;
pub const JSET: u8 = 0x40;
pub const JNE: u8 = 0x50;
pub const JSLT: u8 = 0xc0;
pub const JLT: u8 = 0xa0;

/// Helpers.
pub const MAP_LOOKUP_ELEM: i32 = 1;
pub const KTIME_GET_NS: i32 = 5;

/// XDP actions.
pub const XDP_DROP: i32 = 1;
pub const XDP_PASS: i32 = 2;
pub const XDP_TX: i32 = 3;

const ALU64: u8 = 0x07;
const JMP: u8 = 0x05;
const LDX_MEM: u8 = 0x01 | 0x60;
const STX_MEM: u8 = 0x03 | 0x60;
const ST_MEM: u8 = 0x02 | 0x60;
const STX_ATOMIC: u8 = 0x03 | 0xc0;
const K: u8 = 0x00;
const X: u8 = 0x08;

/// A jump target, bound with [`Asm::bind`].
#[derive(Debug, Clone, Copy)]
pub struct Label(usize);

/// An instruction buffer.
#[derive(Default)]
pub struct Asm {
    insns: Vec<u64>,
    labels: Vec<Option<usize>>,
    fixups: Vec<(usize, usize)>,
}

fn enc(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> u64 {
    u64::from(code)
        | u64::from(dst & 0xf | (src & 0xf) << 4) << 8
        | u64::from(off as u16) << 16
        | u64::from(imm as u32) << 32
}

impl Asm {
    pub fn new() -> Asm {
        Asm::default()
    }
    pub fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }
    /// The next instruction is `l`'s target.
    pub fn bind(&mut self, l: Label) {
        self.labels[l.0] = Some(self.insns.len());
    }
    fn raw(&mut self, code: u8, dst: u8, src: u8, off: i16, imm: i32) {
        self.insns.push(enc(code, dst, src, off, imm));
    }
    /// `dst op= imm` (64-bit).
    pub fn alu(&mut self, op: u8, dst: u8, imm: i32) {
        self.raw(ALU64 | op | K, dst, 0, 0, imm);
    }
    /// `dst op= src` (64-bit).
    pub fn alu_r(&mut self, op: u8, dst: u8, src: u8) {
        self.raw(ALU64 | op | X, dst, src, 0, 0);
    }
    pub fn mov(&mut self, dst: u8, imm: i32) {
        self.alu(MOV, dst, imm);
    }
    pub fn mov_r(&mut self, dst: u8, src: u8) {
        self.alu_r(MOV, dst, src);
    }
    /// 64-bit immediate (two instruction slots).
    pub fn ld_imm64(&mut self, dst: u8, v: u64) {
        self.raw(0x18, dst, 0, 0, v as u32 as i32);
        self.raw(0, 0, 0, 0, (v >> 32) as u32 as i32);
    }
    /// A map's address from its fd (`BPF_PSEUDO_MAP_FD`).
    pub fn ld_map(&mut self, dst: u8, fd: i32) {
        self.raw(0x18, dst, 1, 0, fd);
        self.raw(0, 0, 0, 0, 0);
    }
    /// Convert the low `bits` of `dst` from/to big endian (a swap here).
    pub fn be(&mut self, dst: u8, bits: i32) {
        self.raw(0x04 | 0xd0 | 0x08, dst, 0, 0, bits);
    }
    pub fn ldx(&mut self, size: u8, dst: u8, src: u8, off: i16) {
        self.raw(LDX_MEM | size, dst, src, off, 0);
    }
    pub fn stx(&mut self, size: u8, dst: u8, off: i16, src: u8) {
        self.raw(STX_MEM | size, dst, src, off, 0);
    }
    pub fn st(&mut self, size: u8, dst: u8, off: i16, imm: i32) {
        self.raw(ST_MEM | size, dst, 0, off, imm);
    }
    /// `*(u64 *)(dst + off) += src`, atomically.
    pub fn atomic_add(&mut self, dst: u8, off: i16, src: u8) {
        self.raw(STX_ATOMIC | DW, dst, src, off, 0x00);
    }
    /// `src = fetch_or(*(u64 *)(dst + off), src)`, atomically.
    pub fn atomic_fetch_or(&mut self, dst: u8, off: i16, src: u8) {
        self.raw(STX_ATOMIC | DW, dst, src, off, 0x40 | 0x01);
    }
    /// `if dst op imm goto l`.
    pub fn jmp(&mut self, op: u8, dst: u8, imm: i32, l: Label) {
        self.fixups.push((self.insns.len(), l.0));
        self.raw(JMP | op | K, dst, 0, 0, imm);
    }
    /// `if dst op src goto l`.
    pub fn jmp_r(&mut self, op: u8, dst: u8, src: u8, l: Label) {
        self.fixups.push((self.insns.len(), l.0));
        self.raw(JMP | op | X, dst, src, 0, 0);
    }
    pub fn ja(&mut self, l: Label) {
        self.fixups.push((self.insns.len(), l.0));
        self.raw(JMP, 0, 0, 0, 0);
    }
    pub fn call(&mut self, helper: i32) {
        self.raw(JMP | 0x80, 0, 0, 0, helper);
    }
    pub fn exit(&mut self) {
        self.raw(JMP | 0x90, 0, 0, 0, 0);
    }
    /// `return v`.
    pub fn ret(&mut self, v: i32) {
        self.mov(R0, v);
        self.exit();
    }
    /// Resolve jumps; panics on an unbound label (a generator bug).
    pub fn finish(mut self) -> Vec<u64> {
        for &(at, l) in &self.fixups {
            let t = self.labels[l].expect("unbound label") as i64;
            let off = t - at as i64 - 1;
            let i = &mut self.insns[at];
            *i = (*i & !0xffff_0000) | u64::from(off as i16 as u16) << 16;
        }
        self.insns
    }
}

/// Emit `acc += sum of the 16-bit words of the low `bytes` of `x`` (one's
/// complement arithmetic is byte-order independent, so raw little-endian
/// loads of big-endian fields are fine). Clobbers `tmp`.
pub fn sum_words(a: &mut Asm, acc: u8, x: u8, tmp: u8, bytes: u8) {
    for i in 0..bytes / 2 {
        a.mov_r(tmp, x);
        if i > 0 {
            a.alu(RSH, tmp, 16 * i32::from(i));
        }
        if i < 3 {
            a.alu(AND, tmp, 0xffff);
        }
        a.alu_r(ADD, acc, tmp);
    }
}

/// Emit the fold of `acc` to 16 bits (acc < 2^32 on entry).
pub fn fold16(a: &mut Asm, acc: u8, tmp: u8) {
    for _ in 0..3 {
        a.mov_r(tmp, acc);
        a.alu(RSH, tmp, 16);
        a.alu(AND, acc, 0xffff);
        a.alu_r(ADD, acc, tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jumps_are_relative_to_the_next_insn() {
        let mut a = Asm::new();
        let l = a.label();
        a.jmp(JEQ, R1, 0, l);
        a.mov(R0, 1);
        a.bind(l);
        a.exit();
        let p = a.finish();
        assert_eq!((p[0] >> 16) as u16, 1);
        assert_eq!(p[0] & 0xff, 0x15);
    }
}
