//! The XDP program, hand-assembled: redirect every frame to the AF_XDP
//! socket registered for its RX queue, or pass it to the stack if there is
//! none.
//!
//! ```c
//! SEC("xdp") int sr_xsk_redir(struct xdp_md *ctx) {
//!     __u32 index = ctx->rx_queue_index;
//!     return bpf_redirect_map(&xsks_map, index, XDP_PASS);
//! }
//! ```
//!
//! Since Linux 5.3 the low bits of `bpf_redirect_map`'s flags are the
//! action returned when the map has no entry for the key, so a queue
//! without a socket falls back to `XDP_PASS` without a lookup first.
//!
//! Listing (`struct bpf_insn`: opcode, src:4 dst:4 as one byte, off: i16, imm: i32):
//!
//! ```text
//! 0: 61 12 1000 00000000   r2 = *(u32 *)(r1 + 16)   ; xdp_md.rx_queue_index
//! 1: 18 11 0000 <map fd>   r1 = map[fd] ll          ; BPF_LD_IMM64, src = BPF_PSEUDO_MAP_FD
//! 2: 00 00 0000 00000000        (second half of the 16-byte load)
//! 3: b7 03 0000 00000002   r3 = 2                   ; XDP_PASS
//! 4: 85 00 0000 00000033   call 51                  ; bpf_redirect_map(r1, r2, r3)
//! 5: 95 00 0000 00000000   exit                     ; return r0
//! ```

/// Opcodes (linux/bpf_common.h, linux/bpf.h).
const BPF_LDX_MEM_W: u8 = 0x61; // BPF_LDX | BPF_MEM | BPF_W
const BPF_LD_IMM_DW: u8 = 0x18; // BPF_LD | BPF_IMM | BPF_DW
const BPF_ALU64_MOV_K: u8 = 0xb7; // BPF_ALU64 | BPF_MOV | BPF_K
const BPF_JMP_CALL: u8 = 0x85; // BPF_JMP | BPF_CALL
const BPF_JMP_EXIT: u8 = 0x95; // BPF_JMP | BPF_EXIT

const BPF_PSEUDO_MAP_FD: u8 = 1;
const BPF_FUNC_REDIRECT_MAP: i32 = 51;
const XDP_PASS: i32 = 2;
/// `offsetof(struct xdp_md, rx_queue_index)`.
const XDP_MD_RX_QUEUE_INDEX: i16 = 16;

/// License string passed with the program.
pub const LICENSE: &str = "Dual MIT/GPL";

/// Encodes one `struct bpf_insn` as its little-endian 8 bytes.
const fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> u64 {
    (code as u64)
        | (((dst & 0xf) | ((src & 0xf) << 4)) as u64) << 8
        | ((off as u16) as u64) << 16
        | ((imm as u32) as u64) << 32
}

/// The program with the XSKMAP's fd patched in.
pub fn program(xskmap_fd: i32) -> [u64; 6] {
    [
        insn(BPF_LDX_MEM_W, 2, 1, XDP_MD_RX_QUEUE_INDEX, 0),
        insn(BPF_LD_IMM_DW, 1, BPF_PSEUDO_MAP_FD, 0, xskmap_fd),
        insn(0, 0, 0, 0, 0),
        insn(BPF_ALU64_MOV_K, 3, 0, 0, XDP_PASS),
        insn(BPF_JMP_CALL, 0, 0, 0, BPF_FUNC_REDIRECT_MAP),
        insn(BPF_JMP_EXIT, 0, 0, 0, 0),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_like_the_listing() {
        let p = program(7);
        assert_eq!(p[0].to_le_bytes(), [0x61, 0x12, 16, 0, 0, 0, 0, 0]);
        assert_eq!(p[1].to_le_bytes(), [0x18, 0x11, 0, 0, 7, 0, 0, 0]);
        assert_eq!(p[3].to_le_bytes(), [0xb7, 0x03, 0, 0, 2, 0, 0, 0]);
        assert_eq!(p[4].to_le_bytes(), [0x85, 0, 0, 0, 51, 0, 0, 0]);
        assert_eq!(p[5].to_le_bytes(), [0x95, 0, 0, 0, 0, 0, 0, 0]);
    }
}
