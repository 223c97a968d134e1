//! The generator's shared memory as `bpf/gen.h` lays it out: the Rust
//! twins of `struct gen_phase`, `gen_port`, `gen_ctl` and `gen_tmpl` (the
//! C side documents the fields).
//!
//! Public, fields and all, for one reader besides [`super`]: the C
//! vocabulary's generator (`crates/fastpath/tests/vocabulary.rs`) writes
//! their sizes and field offsets into `sr_layout.h` (`GEN_CTL_SIZE`,
//! `GEN_CTL_OFF_NPORTS`, ...), and `gen.h` asserts its structs against
//! those, so that neither side can move a field alone.

use super::{MAX_PHASES, MAX_PORTS, MAX_SCHED, TMPL_CAP};

/// `struct gen_phase`: a stretch at one rate.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct CPhase {
    pub frames: u64,
    pub interval_ns: u64,
    pub t0_ns: u64,
    pub interval_frac_ps: u32,
    pub paced: u32,
}

/// `struct gen_port`: a sending port and its cursors.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct CPort {
    pub ifindex: u32,
    pub nstreams: u32,
    pub stream_off: u32,
    pub cur_stream: u32,
    pub cur_sched: u32,
    pub _pad: u32,
    pub sent: u64,
}

/// `struct gen_ctl`: the plan (user space), then the program's state and
/// results.
#[repr(C)]
pub struct CCtl {
    pub nports: u32,
    pub nsizes: u32,
    pub sched_len: u32,
    pub nphases: u32,
    pub sample_mask: u32,
    pub catchup_frames: u32,
    pub phase: [CPhase; MAX_PHASES],
    pub port: [CPort; MAX_PORTS],
    pub schedule: [u16; MAX_SCHED],
    pub cur_phase: u32,
    pub cur_port: u32,
    pub phase_sent: u64,
    pub due_ns: u64,
    pub due_rem_ps: u64,
    pub clock_ns: u64,
    pub sent: u64,
    pub early: u64,
    pub idle: u64,
    pub errors: u64,
    pub max_lag_ns: u64,
    pub first_ns: u64,
    pub last_ns: u64,
    pub shift_ns: u64,
    pub clock_reads: u64,
    pub stall_ns: u64,
    pub stalls: u64,
    pub max_stall_ns: u64,
    pub long_stall_ns: u64,
    pub long_stall_sum_ns: u64,
    pub long_stalls: u64,
    pub error: u32,
    pub _pad2: u32,
}

/// `struct gen_tmpl`: a pre-built frame and where the program stamps it.
/// Never built whole: [`super::Generator::set_frame`] writes each field
/// at its offset into the mapped array.
#[repr(C)]
pub struct CTmpl {
    pub len: u16,
    pub csum_off: u16,
    pub seq_off: u16,
    pub long_form: u8,
    pub ipv6: u8,
    pub data: [u8; TMPL_CAP],
}
