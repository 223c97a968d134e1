//! The benchmark's test-frame parser (`packet::test_frame::parse`) and receive
//! analyzer (`bench::analyzer::Analyzer`).
//!
//! * The whole input is parsed as a received buffer: no panic; if it is
//!   accepted, `checksums_ok` must not panic either, and the lengths are
//!   consistent.
//! * Round trip: a flow, frame size, flags, sequence and timestamp drawn
//!   from the input are `build` + `patch`ed; the frame parses back to the
//!   same stream/seq/tx_ns/flags/size (truncated to the short form's
//!   widths where it applies), and its checksums are valid after each
//!   incremental patch.
//! * Analyzer: a mix of raw buffers and built frames with arbitrary
//!   sequence numbers is recorded, analyzers are merged, and the per-stream
//!   identities `unique + lost == sent` and
//!   `received == unique + duplicates + beyond_sent` hold.
//!
//! Shared by the cargo-fuzz target (fuzz/fuzz_targets/bench_frame.rs) and
//! the stable test crates/softrouter/tests/fuzz_targets.rs.

use arbitrary::{Result, Unstructured};
use bench::analyzer::Analyzer;
use packet::test_frame::{self as frame, Flow, FrameLayout, MAX_FRAME, MIN_FRAME_V4, MIN_FRAME_V6};
use std::net::IpAddr;

fn flow(u: &mut Unstructured) -> Result<Flow> {
    let v6: bool = u.arbitrary()?;
    let (src_ip, dst_ip) = if v6 {
        (
            IpAddr::V6(u.arbitrary::<[u8; 16]>()?.into()),
            IpAddr::V6(u.arbitrary::<[u8; 16]>()?.into()),
        )
    } else {
        (
            IpAddr::V4(u.arbitrary::<[u8; 4]>()?.into()),
            IpAddr::V4(u.arbitrary::<[u8; 4]>()?.into()),
        )
    };
    Ok(Flow {
        dst_mac: u.arbitrary()?,
        src_mac: u.arbitrary()?,
        src_ip,
        dst_ip,
        src_port: u.arbitrary()?,
        // Mostly the test port, sometimes another (then parse says None).
        dst_port: if u.ratio(7, 8)? {
            frame::UDP_DST_PORT
        } else {
            u.arbitrary()?
        },
        stream: u.arbitrary()?,
    })
}

fn size(u: &mut Unstructured, v6: bool) -> Result<usize> {
    let min = if v6 { MIN_FRAME_V6 } else { MIN_FRAME_V4 };
    // Favour the interesting small sizes around the short/long boundary.
    if u.ratio(3, 4)? {
        u.int_in_range(min..=min + 64)
    } else {
        u.int_in_range(min..=MAX_FRAME)
    }
}

/// Builds and patches one frame and checks it parses back; returns it.
fn round_trip(u: &mut Unstructured) -> Result<(Flow, Vec<u8>, FrameLayout)> {
    let flow = flow(u)?;
    let v6 = flow.src_ip.is_ipv6();
    let size = size(u, v6)?;
    let flags: u32 = u.arbitrary()?;
    let mut buf = vec![0u8; size];
    let layout = frame::build(&flow, size, flags, &mut buf).expect("valid size builds");
    buf.truncate(layout.buf_len);
    assert_eq!(buf.len() + frame::FCS_LEN, size);
    assert!(frame::checksums_ok(&buf), "fresh frame checksums");
    for _ in 0..u.int_in_range(1..=3)? {
        let (seq, tx): (u64, u64) = (u.arbitrary()?, u.arbitrary()?);
        layout.patch(&mut buf, seq, tx);
        assert!(
            frame::checksums_ok(&buf),
            "checksums after patch seq={seq} tx={tx}"
        );
        let parsed = frame::parse(&buf);
        if flow.dst_port != frame::UDP_DST_PORT {
            assert_eq!(parsed, None);
            continue;
        }
        let p = parsed.expect("built frame parses");
        assert_eq!(p.len, size);
        assert_eq!(p.short, !layout.long);
        if layout.long {
            assert_eq!(
                (p.stream, p.flags, p.seq, p.tx_ns),
                (flow.stream, flags, seq, tx)
            );
        } else {
            assert_eq!(
                (p.stream, p.flags, p.seq, p.tx_ns),
                (flow.stream & 0xffff, 0, seq & 0xffff_ffff, tx & 0xffff_ffff)
            );
        }
    }
    Ok((flow, buf, layout))
}

fn check_report(an: &Analyzer, sent: &[u64]) {
    let r = an.finish(sent);
    for s in &r.streams {
        assert_eq!(s.unique + s.lost, s.sent, "{s:?}");
        assert_eq!(s.received, s.unique + s.duplicates + s.beyond_sent, "{s:?}");
        let lost = an.lost_seqs(s.stream, s.sent).count() as u64;
        assert_eq!(lost, s.lost, "{s:?}");
    }
    let _ = an.latency();
}

fn analyzer(u: &mut Unstructured) -> Result<()> {
    let n_streams = u.int_in_range(1..=4)?;
    let expected = u.int_in_range(0..=1024)?;
    let mut a = Analyzer::new(n_streams, expected);
    let mut b = Analyzer::new(u.int_in_range(0..=4)?, expected);
    let mut rx_ns: u64 = u.arbitrary()?;
    for _ in 0..u.int_in_range(0..=32)? {
        let an = if u.arbitrary()? { &mut a } else { &mut b };
        rx_ns = rx_ns.wrapping_add(u.int_in_range(0..=1_000_000)?);
        if u.ratio(1, 4)? {
            let n = u.int_in_range(0..=200)?;
            an.record_buf(u.bytes(n)?, rx_ns);
        } else {
            let (flow, mut buf, layout) = round_trip(u)?;
            // Small sequence numbers mostly (duplicates, reordering), any
            // 64-bit value sometimes (corrupt or foreign frames).
            let seq = if u.ratio(7, 8)? {
                u.int_in_range(0..=2048)?
            } else {
                u.arbitrary()?
            };
            let tx = rx_ns.wrapping_sub(u.int_in_range(0..=100_000)?);
            let _ = flow;
            layout.patch(&mut buf, seq, tx);
            an.record_buf(&buf, rx_ns);
        }
    }
    let sent: Vec<u64> = (0..u.int_in_range(0..=5)?)
        .map(|_| u.int_in_range(0..=4096))
        .collect::<Result<_>>()?;
    check_report(&a, &sent);
    check_report(&b, &sent);
    a.merge(&b);
    check_report(&a, &sent);
    Ok(())
}

/// The target's body: any bytes; panics on a broken invariant.
pub fn run(data: &[u8]) {
    if let Some(f) = frame::parse(data) {
        assert_eq!(f.len, data.len() + frame::FCS_LEN);
        let _ = frame::checksums_ok(data);
        let mut an = Analyzer::new(2, 64);
        an.record(&f, f.tx_ns.wrapping_add(1000));
        an.record_buf(data, 0);
        check_report(&an, &[64, 64]);
    }
    let mut u = Unstructured::new(data);
    if let Ok((reference, low)) = u.arbitrary::<(u64, u32)>() {
        let x = bench::analyzer::extend32(reference, low);
        assert_eq!(x as u32, low);
    }
    let _ = round_trip(&mut u);
    let _ = analyzer(&mut u);
}
