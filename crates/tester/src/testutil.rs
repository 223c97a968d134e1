//! Shared by the tests of the BPF programs: test flows and frames, and
//! running a program once on a frame (`BPF_PROG_TEST_RUN`, no transmit).

use std::net::IpAddr;

use packet::test_frame::{build, Flow, FrameLayout, UDP_DST_PORT, UDP_SRC_PORT};

pub use bpf::{run_once, XDP_DROP, XDP_PASS, XDP_REDIRECT};

/// Held by every live test (the generator's, the gap meter's): one at a
/// time, as a generator spins on a CPU for its whole run and two at a
/// time starve each other.
pub fn live_lock() -> std::sync::MutexGuard<'static, ()> {
    static LIVE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether BPF tests can run here (they need root); says why not.
pub fn can_run(test: &str) -> bool {
    if testbed::netns::is_root() {
        return true;
    }
    eprintln!("{test}: skipped (BPF programs need root)");
    false
}

/// Flow `stream` from 198.18.0.2 (or 2001:2::2) to 198.19.0.2 (2001:2:0:1::2).
pub fn flow(stream: u32, v6: bool) -> Flow {
    let (src, dst): (IpAddr, IpAddr) = if v6 {
        (
            "2001:2::2".parse().unwrap(),
            "2001:2:0:1::2".parse().unwrap(),
        )
    } else {
        ("198.18.0.2".parse().unwrap(), "198.19.0.2".parse().unwrap())
    };
    Flow {
        dst_mac: [2, 0, 0, 0, 0, 1],
        src_mac: [2, 0, 0, 0, 0, 2],
        src_ip: src,
        dst_ip: dst,
        src_port: UDP_SRC_PORT + stream as u16,
        dst_port: UDP_DST_PORT,
        stream,
    }
}

/// A test frame of `size` (with FCS) for `stream`, stamped `seq`/`tx_ns`.
pub fn frame(stream: u32, size: usize, v6: bool, seq: u64, tx_ns: u64) -> (Vec<u8>, FrameLayout) {
    let mut buf = vec![0u8; size];
    let l = build(&flow(stream, v6), size, 0, &mut buf).expect("test frame");
    buf.truncate(l.buf_len);
    l.patch(&mut buf, seq, tx_ns);
    (buf, l)
}

/// Move the calling thread into namespace `name` (for the rest of its life).
pub fn enter_netns(name: &str) {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(format!("/run/netns/{name}")).expect("netns file");
    // SAFETY: setns on a valid netns fd; affects this thread only.
    let r = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
    assert_eq!(r, 0, "setns: {}", std::io::Error::last_os_error());
}

/// The ifindex of `name` in the calling thread's namespace.
pub fn ifindex(name: &str) -> u32 {
    let c = std::ffi::CString::new(name).unwrap();
    // SAFETY: valid C string.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    assert!(i != 0, "no interface {name}");
    i
}
