//! The floor DUT's program run on crafted frames (`BPF_PROG_TEST_RUN`):
//! a frame of the testbed's plan is redirected to the port its
//! destination names with that hop's MACs and not a byte else changed;
//! everything else passes to the kernel untouched.
//!
//! In a test run the egress is the loopback device (ifindex 1): the
//! program's verdict and the frame it leaves are what is checked.

use dut::floor::{Floor, Hop};

const DUT_MAC: [u8; 6] = [2, 0, 0, 0, 0xd0, 0];
const TESTER_MAC: [u8; 6] = [2, 0, 0, 0, 0x7e, 0];

fn hop(port: u8) -> Hop {
    let mut h = Hop {
        dst: TESTER_MAC,
        src: DUT_MAC,
        valid: 1,
    };
    h.dst[5] = port;
    h.src[5] = port;
    h
}

fn root(test: &str) -> bool {
    // SAFETY: no arguments.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        eprintln!("{test}: skipped (BPF programs need root)");
    }
    root
}

/// Ports 0..3 served, all out of loopback.
fn floor() -> Floor {
    let mut f = Floor::load().expect("load the floor program");
    for p in 0..3u8 {
        f.set_port(u32::from(p), 1, hop(p)).unwrap();
    }
    f
}

/// A UDP frame of `len` bytes (zero padded) to `dst` from port 0's tester.
fn v4(dst: [u8; 4], len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[..6].copy_from_slice(&DUT_MAC);
    f[6..12].copy_from_slice(&TESTER_MAC);
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    f[14] = 0x45;
    f[22] = 64;
    f[23] = 17;
    f[26..30].copy_from_slice(&[198, 18, 0, 2]);
    f[30..34].copy_from_slice(&dst);
    f
}

fn v6(dst: [u16; 8], len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[..6].copy_from_slice(&DUT_MAC);
    f[6..12].copy_from_slice(&TESTER_MAC);
    f[12..14].copy_from_slice(&0x86ddu16.to_be_bytes());
    f[14] = 0x60;
    f[20] = 17;
    f[21] = 64;
    for (i, w) in dst.iter().enumerate() {
        f[38 + 2 * i..40 + 2 * i].copy_from_slice(&w.to_be_bytes());
    }
    f
}

/// Redirected to `port`: the MACs of its hop, every other byte as sent.
fn assert_redirected(f: &mut Floor, frame: &[u8], port: u8) {
    let (action, out) = bpf::run_once(f.program().unwrap(), frame);
    assert_eq!(action, bpf::XDP_REDIRECT, "{frame:02x?}");
    let h = hop(port);
    assert_eq!(out[..6], h.dst, "destination MAC of port {port}");
    assert_eq!(out[6..12], h.src, "source MAC of port {port}");
    assert_eq!(out[12..], frame[12..], "nothing else changes");
}

fn assert_passed(f: &mut Floor, frame: &[u8]) {
    let (action, out) = bpf::run_once(f.program().unwrap(), frame);
    assert_eq!(action, bpf::XDP_PASS, "{frame:02x?}");
    assert_eq!(out, frame, "passed untouched");
}

#[test]
fn plan_frames_go_to_their_port_with_its_macs() {
    if !root("plan_frames_go_to_their_port_with_its_macs") {
        return;
    }
    let mut f = floor();
    // 198.19.i.x and 2001:2:0:(0x100+i)::x name port i, at any size.
    assert_redirected(&mut f, &v4([198, 19, 1, 7], 60), 1);
    assert_redirected(&mut f, &v4([198, 19, 2, 200], 1514), 2);
    assert_redirected(&mut f, &v4([198, 19, 0, 2], 60), 0);
    assert_redirected(&mut f, &v6([0x2001, 2, 0, 0x101, 0, 0, 0, 9], 78), 1);
    assert_redirected(&mut f, &v6([0x2001, 2, 0, 0x102, 0, 0, 0, 9], 1514), 2);
}

#[test]
fn everything_else_passes_untouched() {
    if !root("everything_else_passes_untouched") {
        return;
    }
    let mut f = floor();
    // A port without a hop.
    assert_passed(&mut f, &v4([198, 19, 7, 1], 60));
    assert_passed(&mut f, &v6([0x2001, 2, 0, 0x107, 0, 0, 0, 1], 78));
    // Multicast ND (byte 6 of the destination is not the plan's 0x01).
    assert_passed(&mut f, &v6([0xff02, 0, 0, 0, 0, 1, 0xff00, 1], 86));
    // ARP, unpadded as veth carries it.
    let mut arp = vec![0u8; 42];
    arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
    assert_passed(&mut f, &arp);
    // Too short to hold the byte the port is read from.
    assert_passed(&mut f, &v4([198, 19, 1, 1], 45));
    assert_passed(&mut f, &[0u8; 14]);
    // Another EtherType.
    let mut other = v4([198, 19, 1, 1], 60);
    other[12..14].copy_from_slice(&0x88b5u16.to_be_bytes());
    assert_passed(&mut f, &other);
}

#[test]
fn ports_beyond_the_maps_are_refused() {
    if !root("ports_beyond_the_maps_are_refused") {
        return;
    }
    let mut f = Floor::load().unwrap();
    let e = f
        .set_port(dut::floor::MAX_PORTS as u32, 1, hop(0))
        .unwrap_err();
    assert!(e.to_string().contains("beyond"), "{e}");
}
