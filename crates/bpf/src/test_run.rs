//! Running an XDP program once on a crafted frame (`BPF_PROG_TEST_RUN`, no
//! transmit): how every program of the project is tested.

use aya::programs::{TestRun, TestRunOptions, Xdp};

pub const XDP_ABORTED: u32 = 0;
pub const XDP_DROP: u32 = 1;
pub const XDP_PASS: u32 = 2;
pub const XDP_TX: u32 = 3;
pub const XDP_REDIRECT: u32 = 4;

/// Run `prog` once on `data`: (XDP action, the frame as the program left
/// it).
///
/// # Panics
/// If the kernel refuses the test run (a test helper: the caller's test
/// fails with the error).
pub fn run_once(prog: &Xdp, data: &[u8]) -> (u32, Vec<u8>) {
    let mut out = vec![0u8; 4096];
    let r = prog
        .test_run(TestRunOptions {
            data_in: Some(data),
            data_out: Some(&mut out),
            repeat: 1,
            ..TestRunOptions::new()
        })
        .expect("BPF_PROG_TEST_RUN");
    out.truncate(r.data_size_out as usize);
    (r.return_value, out)
}
