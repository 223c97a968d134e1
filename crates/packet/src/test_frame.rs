//! RFC 2544 Appendix C test frames (requirements R1, R3, R4, R5).
//!
//! Why this module exists: the generator needs a template per flow and
//! frame size that it can stamp with a sequence number and a timestamp per
//! packet in O(1), and the analyzer needs a fast, allocation-free parser
//! that recognises only *our* frames.
//!
//! # Frame sizes
//!
//! Sizes are layer-2 sizes *including* the 4-byte FCS, as RFC 2544 counts
//! them: a "64-byte frame" is 60 bytes in the buffer (the NIC or veth adds
//! or omits the FCS). [`TestFrame::len`] reports the size the same way.
//!
//! # Layout
//!
//! Ethernet II (no 802.1Q) + IPv4 (20 bytes, no options, TTL 10, DF clear)
//! or IPv6 (40 bytes, hop limit 10) + UDP (source port 0xC020 + flow, dest
//! port 7) + test header + incrementing octets (`byte[k] = k mod 256`, `k`
//! counted from the start of the UDP payload) up to the frame size.
//!
//! # Test header: two forms
//!
//! A 64-byte IPv4 frame has only 18 bytes of UDP payload, and the smallest
//! IPv6/UDP frame with any payload has 12 (see below), so one header cannot
//! carry an 8-byte signature plus 64-bit sequence and timestamp everywhere.
//! The form follows from the UDP payload length alone (builder and parser
//! agree without a flag):
//!
//! * **long** (UDP payload >= 32 bytes; IPv4 frames >= 78, IPv6 >= 98):
//!   `"SRBENCH1"` (8) | stream u32 | flags u32 | seq u64 | tx_ns u64,
//!   all big-endian.
//! * **short** (12..32 bytes; IPv4 64..77, IPv6 78..97):
//!   `0x5352` ("SR", 2) | stream u16 | seq u32 | tx_ns low 32 bits u32.
//!   The analyzer extends the 32-bit sequence against the highest one seen
//!   (like RTP's extended sequence number) and recovers the full timestamp
//!   from the receive time, which is exact for latencies below 4.29 s.
//!   Because a 2-byte signature is weak, a short-form frame is also
//!   required to be UDP to port 7 with the exact length the builder writes.
//!
//! # IPv6 minimum size
//!
//! Ethernet + IPv6 + UDP is 62 bytes, plus FCS 66: a 64-byte IPv6 frame
//! cannot carry UDP at all. Following RFC 5180 (which notes that 64-byte
//! frames are too small for IPv6 test traffic and adds the 20 bytes of
//! extra header) the smallest IPv6 size here is **78 bytes**
//! ([`MIN_FRAME_V6`]); a size list containing 64 is run as 78 for IPv6 and
//! the results say so (see `sizes::effective_size`).
//!
//! # Checksums
//!
//! The IPv4 header checksum is computed. The UDP checksum is computed for
//! both IPv4 and IPv6 (mandatory for IPv6; for IPv4 it lets a receiver
//! detect corruption), and [`FrameLayout::patch`] keeps it correct when
//! rewriting sequence and timestamp, incrementally (RFC 1624), in O(1).
//! All patched fields sit at even offsets from the UDP header, so the
//! incremental update works on aligned 16-bit words.

use crate::checksum;
use crate::ethernet::{self, Address, ETH_FCS_LEN, ETH_IPV4, ETH_IPV6, ETH_LEN};
use crate::field::{get_array, get_u16, get_u32};
use crate::ip::PROTO_UDP;
use crate::ipv4::{self, IPV4_LEN};
use crate::ipv6::{self, IPV6_LEN};
use crate::udp::{self, UDP_CHECK, UDP_LEN};
use crate::Protocol;
use std::net::IpAddr;

/// Smallest IPv4 test frame (with FCS).
pub const MIN_FRAME_V4: usize = 64;
/// Smallest IPv6 test frame (with FCS), per RFC 5180; see the module docs.
pub const MIN_FRAME_V6: usize = 78;
/// Largest frame accepted (jumbo frames up to 9018 + VLAN room).
pub const MAX_FRAME: usize = 9022;
/// FCS length, counted in frame sizes but not present in buffers.
pub const FCS_LEN: usize = ETH_FCS_LEN;
/// UDP destination port of test frames (echo, RFC 2544 Appendix C).
pub const UDP_DST_PORT: u16 = 7;
/// UDP source port of the first flow (RFC 2544 Appendix C).
pub const UDP_SRC_PORT: u16 = 0xC020;
/// TTL / hop limit of test frames.
pub const TTL: u8 = 10;
/// Signature of the long header form.
pub const SIGNATURE: [u8; 8] = *b"SRBENCH1";
/// Signature of the short header form.
pub const SHORT_SIGNATURE: [u8; 2] = *b"SR";
/// Length of the long test header.
pub const LONG_HEADER_LEN: usize = 32;
/// Length of the short test header.
pub const SHORT_HEADER_LEN: usize = 12;
/// Flag (long form): learning frame, not counted by the analyzer.
pub const FLAG_LEARNING: u32 = 1;

/// Offset of the stream id in the long test header (from the UDP payload;
/// the signature is at 0).
pub const LONG_STREAM: usize = 8;
/// Offset of the flags in the long test header.
pub const LONG_FLAGS: usize = 12;
/// Offset of the sequence number in the long test header.
pub const LONG_SEQ: usize = 16;
/// Offset of the transmit timestamp in the long test header.
pub const LONG_TS: usize = 24;
/// Offset of the stream id in the short test header (after the signature).
pub const SHORT_STREAM: usize = 2;
/// Offset of the sequence number in the short test header.
pub const SHORT_SEQ: usize = 4;
/// Offset of the transmit timestamp in the short test header.
pub const SHORT_TS: usize = 8;

/// Why a frame could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// Frame size outside `min..=MAX_FRAME` for this IP version.
    BadSize {
        /// The size asked for.
        size: usize,
        /// The smallest size of that IP version.
        min: usize,
    },
    /// Buffer shorter than the frame.
    BufferTooSmall {
        /// Bytes the frame needs.
        need: usize,
        /// Bytes the buffer has.
        have: usize,
    },
    /// Source and destination are of different IP versions.
    MixedVersions,
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::BadSize { size, min } => {
                write!(f, "frame size {size} outside {min}..={MAX_FRAME}")
            }
            FrameError::BufferTooSmall { need, have } => {
                write!(f, "buffer of {have} bytes, frame needs {need}")
            }
            FrameError::MixedVersions => write!(f, "source and destination IP versions differ"),
        }
    }
}

impl std::error::Error for FrameError {}

/// One flow: the header fields that stay constant for all its frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flow {
    /// Destination MAC (the DUT's port, learned by ARP/ND).
    pub dst_mac: [u8; 6],
    /// Source MAC (the tester's port).
    pub src_mac: [u8; 6],
    /// Source IP address.
    pub src_ip: IpAddr,
    /// Destination IP address (same version as `src_ip`).
    pub dst_ip: IpAddr,
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port (7 unless a test says otherwise).
    pub dst_port: u16,
    /// Stream id written into the test header (per flow, or per port).
    pub stream: u32,
}

/// `n` flows derived from a base flow, spreading over RSS hashes: flow `i`
/// has stream `base.stream + i`, source port `0xC020 + i` (wrapping within
/// 0xC020..=0xFFFF) and destination host `base.dst_ip + (i mod dst_hosts)`
/// (added to the last octet / last 16-bit group). Use `dst_hosts = 1` when
/// only one destination host exists (e.g. `three_hosts`), up to 253 with
/// the `star` plan's routed destination networks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowSet {
    /// The flows, in order.
    pub flows: Vec<Flow>,
}

impl FlowSet {
    /// Derive `n` flows from `base` (see the type docs).
    pub fn new(base: Flow, n: usize, dst_hosts: u16) -> FlowSet {
        let span = 0x1_0000 - u32::from(UDP_SRC_PORT);
        let hosts = dst_hosts.max(1) as usize;
        let flows = (0..n)
            .map(|i| {
                let mut f = base;
                f.stream = base.stream.wrapping_add(i as u32);
                let off =
                    (u32::from(base.src_port - UDP_SRC_PORT.min(base.src_port)) + i as u32) % span;
                f.src_port = (u32::from(UDP_SRC_PORT) + off) as u16;
                f.dst_ip = add_host(base.dst_ip, (i % hosts) as u16);
                f
            })
            .collect();
        FlowSet { flows }
    }

    /// Number of flows.
    pub fn len(&self) -> usize {
        self.flows.len()
    }

    /// Whether there are no flows.
    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }
}

fn add_host(ip: IpAddr, k: u16) -> IpAddr {
    match ip {
        IpAddr::V4(a) => {
            let mut o = a.octets();
            o[3] = o[3].wrapping_add(k as u8);
            IpAddr::V4(o.into())
        }
        IpAddr::V6(a) => {
            let mut s = a.segments();
            s[7] = s[7].wrapping_add(k);
            IpAddr::V6(s.into())
        }
    }
}

/// Where the per-packet fields of a built frame are, for [`FrameLayout::patch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameLayout {
    /// Bytes in the buffer (frame size minus FCS).
    pub buf_len: usize,
    /// Offset of the UDP checksum.
    pub udp_csum_off: usize,
    /// Offset of the sequence number.
    pub seq_off: usize,
    /// Offset of the timestamp.
    pub ts_off: usize,
    /// Long form (64-bit fields) or short form (32-bit fields).
    pub long: bool,
}

/// The UDP payload length a frame of `size` (with FCS) has.
pub fn udp_payload_len(size: usize, v6: bool) -> usize {
    let ip = if v6 { IPV6_LEN } else { IPV4_LEN };
    size.saturating_sub(FCS_LEN + ETH_LEN + ip + UDP_LEN)
}

/// Build a test frame of `size` bytes (with FCS) for `flow` into `buf`,
/// with sequence 0 and timestamp 0; returns its layout for patching.
pub fn build(
    flow: &Flow,
    size: usize,
    flags: u32,
    buf: &mut [u8],
) -> Result<FrameLayout, FrameError> {
    let v6 = match (flow.src_ip, flow.dst_ip) {
        (IpAddr::V4(_), IpAddr::V4(_)) => false,
        (IpAddr::V6(_), IpAddr::V6(_)) => true,
        _ => return Err(FrameError::MixedVersions),
    };
    let min = if v6 { MIN_FRAME_V6 } else { MIN_FRAME_V4 };
    if !(min..=MAX_FRAME).contains(&size) {
        return Err(FrameError::BadSize { size, min });
    }
    let len = size - FCS_LEN;
    if buf.len() < len {
        return Err(FrameError::BufferTooSmall {
            need: len,
            have: buf.len(),
        });
    }
    let buf = &mut buf[..len];
    let mut eth = ethernet::Frame::new_unchecked(&mut *buf);
    let (dst_mac, src_mac) = (Address(flow.dst_mac), Address(flow.src_mac));
    let l4 = match (flow.src_ip, flow.dst_ip) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            eth.write_header(dst_mac, src_mac, ETH_IPV4);
            // ident 0, no flags, no fragment offset, TOS 0.
            ipv4::Repr {
                src_addr: s,
                dst_addr: d,
                protocol: Protocol::Udp,
                payload_len: len - ETH_LEN - IPV4_LEN,
                ttl: TTL,
                dscp_ecn: 0,
                ident: 0,
                dont_frag: false,
            }
            .emit(&mut ipv4::Packet::new_unchecked(eth.payload_mut()));
            ETH_LEN + IPV4_LEN
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            eth.write_header(dst_mac, src_mac, ETH_IPV6);
            ipv6::Repr {
                src_addr: s,
                dst_addr: d,
                next_header: Protocol::Udp,
                payload_len: len - ETH_LEN - IPV6_LEN,
                hop_limit: TTL,
            }
            .emit(&mut ipv6::Packet::new_unchecked(eth.payload_mut()));
            ETH_LEN + IPV6_LEN
        }
        _ => unreachable!(),
    };
    let udp_len = len - l4;
    let mut udp = udp::Packet::new_unchecked(&mut buf[l4..]);
    udp::Repr {
        src_port: flow.src_port,
        dst_port: flow.dst_port,
        payload_len: udp_len - UDP_LEN,
    }
    .emit(&mut udp);
    let payload = udp.payload_mut();
    for (k, b) in payload.iter_mut().enumerate() {
        *b = k as u8;
    }
    let long = payload.len() >= LONG_HEADER_LEN;
    let (seq_off, ts_off) = if long {
        payload[..LONG_STREAM].copy_from_slice(&SIGNATURE);
        payload[LONG_STREAM..LONG_FLAGS].copy_from_slice(&flow.stream.to_be_bytes());
        payload[LONG_FLAGS..LONG_SEQ].copy_from_slice(&flags.to_be_bytes());
        payload[LONG_SEQ..LONG_HEADER_LEN].fill(0);
        (l4 + UDP_LEN + LONG_SEQ, l4 + UDP_LEN + LONG_TS)
    } else {
        payload[..SHORT_STREAM].copy_from_slice(&SHORT_SIGNATURE);
        payload[SHORT_STREAM..SHORT_SEQ].copy_from_slice(&(flow.stream as u16).to_be_bytes());
        payload[SHORT_SEQ..SHORT_HEADER_LEN].fill(0);
        (l4 + UDP_LEN + SHORT_SEQ, l4 + UDP_LEN + SHORT_TS)
    };
    let csum = udp_checksum(buf, l4);
    udp::Packet::new_unchecked(&mut buf[l4..]).set_checksum(csum);
    Ok(FrameLayout {
        buf_len: len,
        udp_csum_off: l4 + UDP_CHECK,
        seq_off,
        ts_off,
        long,
    })
}

/// Full UDP checksum (with pseudo header) of the frame in `buf` whose UDP
/// header starts at `l4`, over everything from `l4` to the end of `buf`
/// (the field itself counted as zero); 0 is sent as 0xFFFF.
pub fn udp_checksum(buf: &[u8], l4: usize) -> u16 {
    let udp = &buf[l4..];
    let pseudo = if ethernet::Frame::new_unchecked(buf).ethertype_raw() == ETH_IPV4 {
        let ip = ipv4::Packet::new_unchecked(&buf[ETH_LEN..]);
        checksum::pseudo_header_v4(ip.src_addr(), ip.dst_addr(), PROTO_UDP, udp.len() as u16)
    } else {
        let ip = ipv6::Packet::new_unchecked(&buf[ETH_LEN..]);
        checksum::pseudo_header_v6(ip.src_addr(), ip.dst_addr(), PROTO_UDP, udp.len() as u32)
    };
    let s = pseudo + checksum::sum(&udp[..UDP_CHECK]) + checksum::sum(&udp[UDP_CHECK + 2..]);
    match checksum::finish(s) {
        0 => 0xFFFF,
        c => c,
    }
}

impl FrameLayout {
    /// Write `seq` and `tx_ns` into a frame built with this layout and fix
    /// the UDP checksum incrementally (RFC 1624 eqn. 3). O(1): touches only
    /// the changed words (sequence and timestamp are adjacent). The short
    /// form keeps the low 32 bits of each.
    #[inline]
    pub fn patch(&self, buf: &mut [u8], seq: u64, tx_ns: u64) {
        let mut new = [0u8; 16];
        let n = if self.long {
            new[..8].copy_from_slice(&seq.to_be_bytes());
            new[8..].copy_from_slice(&tx_ns.to_be_bytes());
            16
        } else {
            new[..4].copy_from_slice(&(seq as u32).to_be_bytes());
            new[4..8].copy_from_slice(&(tx_ns as u32).to_be_bytes());
            8
        };
        debug_assert_eq!(self.ts_off, self.seq_off + n / 2);
        let field = self.seq_off..self.seq_off + n;
        let old_c = get_u16(buf, self.udp_csum_off);
        let c = match checksum::update(old_c, &buf[field.clone()], &new[..n]) {
            0 => 0xFFFF,
            c => c,
        };
        buf[field].copy_from_slice(&new[..n]);
        buf[self.udp_csum_off..self.udp_csum_off + 2].copy_from_slice(&c.to_be_bytes());
    }
}

/// What [`parse`] extracts from a test frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestFrame {
    /// Stream id (16 bits in the short form).
    pub stream: u32,
    /// Sequence number (low 32 bits only when `short`).
    pub seq: u64,
    /// Transmit timestamp, ns CLOCK_MONOTONIC (low 32 bits only when `short`).
    pub tx_ns: u64,
    /// Frame size including the FCS (buffer length + 4).
    pub len: usize,
    /// Header flags (0 in the short form).
    pub flags: u32,
    /// Short header form: `seq` and `tx_ns` are truncated to 32 bits.
    pub short: bool,
}

/// Recognise a test frame: Ethernet II (no VLAN) + IPv4 (any IHL, not a
/// fragment) or IPv6 (no extension headers) + UDP to port 7, lengths
/// consistent with the buffer, and the signature of the header form the
/// payload length implies. Anything else is `None` (R5: non-test frames are
/// ignored). Allocation-free; checksums are not verified.
#[inline]
pub fn parse(buf: &[u8]) -> Option<TestFrame> {
    if buf.len() < ETH_LEN + IPV4_LEN + UDP_LEN + SHORT_HEADER_LEN {
        return None;
    }
    let eth = ethernet::Frame::new_unchecked(buf);
    let (l4, ip_end) = match eth.ethertype_raw() {
        ETH_IPV4 => {
            let ip = ipv4::Packet::new_unchecked(eth.payload());
            let ihl = ip.header_len();
            if ip.version() != 4 || ihl < IPV4_LEN || ip.protocol_raw() != PROTO_UDP {
                return None;
            }
            // More-fragments or a fragment offset: not a whole test frame.
            if ip.is_fragment() {
                return None;
            }
            (ETH_LEN + ihl, ETH_LEN + usize::from(ip.total_len()))
        }
        ETH_IPV6 => {
            if buf.len() < ETH_LEN + IPV6_LEN + UDP_LEN + SHORT_HEADER_LEN {
                return None;
            }
            let ip = ipv6::Packet::new_unchecked(eth.payload());
            if ip.version() != 6 || ip.next_header_raw() != PROTO_UDP {
                return None;
            }
            let plen = usize::from(ip.payload_len());
            (ETH_LEN + IPV6_LEN, ETH_LEN + IPV6_LEN + plen)
        }
        _ => return None,
    };
    if ip_end > buf.len() || l4 + UDP_LEN > ip_end {
        return None;
    }
    let udp = udp::Packet::new_unchecked(&buf[l4..ip_end]);
    if udp.dst_port() != UDP_DST_PORT || usize::from(udp.len()) != ip_end - l4 {
        return None;
    }
    let p = &buf[l4 + UDP_LEN..ip_end];
    let len = buf.len() + FCS_LEN;
    if p.len() >= LONG_HEADER_LEN {
        if p[..LONG_STREAM] != SIGNATURE {
            return None;
        }
        Some(TestFrame {
            stream: get_u32(p, LONG_STREAM),
            flags: get_u32(p, LONG_FLAGS),
            seq: u64::from_be_bytes(get_array(p, LONG_SEQ)),
            tx_ns: u64::from_be_bytes(get_array(p, LONG_TS)),
            len,
            short: false,
        })
    } else if p.len() >= SHORT_HEADER_LEN {
        // The short form is only written into frames without padding
        // beyond the IP datagram: insist on it to strengthen the 2-byte
        // signature.
        if p[..SHORT_STREAM] != SHORT_SIGNATURE || ip_end != buf.len() {
            return None;
        }
        Some(TestFrame {
            stream: u32::from(get_u16(p, SHORT_STREAM)),
            flags: 0,
            seq: u64::from(get_u32(p, SHORT_SEQ)),
            tx_ns: u64::from(get_u32(p, SHORT_TS)),
            len,
            short: true,
        })
    } else {
        None
    }
}

/// Whether the IPv4 header checksum (if IPv4) and the UDP checksum of a
/// test frame are correct. For tests and for diagnosing corrupting DUTs.
pub fn checksums_ok(buf: &[u8]) -> bool {
    let l4 = match ethernet::Frame::new_unchecked(buf).ethertype_raw() {
        ETH_IPV4 => {
            let ip = ipv4::Packet::new_unchecked(&buf[ETH_LEN..]);
            if !ip.verify_checksum() {
                return false;
            }
            ETH_LEN + ip.header_len()
        }
        ETH_IPV6 => ETH_LEN + IPV6_LEN,
        _ => return false,
    };
    let stored = udp::Packet::new_unchecked(&buf[l4..]).checksum();
    stored == 0 || stored == udp_checksum(buf, l4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn flow(v6: bool) -> Flow {
        let (s, d): (IpAddr, IpAddr) = if v6 {
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
            src_ip: s,
            dst_ip: d,
            src_port: UDP_SRC_PORT,
            dst_port: UDP_DST_PORT,
            stream: 7,
        }
    }

    #[test]
    fn sizes_include_fcs_and_fields_are_rfc2544() {
        let mut buf = [0u8; 2048];
        let l = build(&flow(false), 64, 0, &mut buf).unwrap();
        assert_eq!(l.buf_len, 60);
        assert!(!l.long, "64-byte IPv4 has 18 bytes of payload: short form");
        assert_eq!(buf[14 + 8], 10, "TTL 10");
        assert_eq!(&buf[34..36], &0xC020u16.to_be_bytes());
        assert_eq!(&buf[36..38], &7u16.to_be_bytes());
        assert_eq!(u16::from_be_bytes([buf[16], buf[17]]), 46);
        // incrementing octets after the 12-byte short header
        assert_eq!(&buf[42 + 12..60], &[12, 13, 14, 15, 16, 17]);
        assert!(checksums_ok(&buf[..60]));
        let l = build(&flow(false), 1518, 0, &mut buf).unwrap();
        assert!(l.long);
        assert_eq!(buf[42 + 100], 100);
        assert_eq!(buf[42 + 300], 44, "300 mod 256");
        let l = build(&flow(true), 78, 0, &mut buf).unwrap();
        assert_eq!(l.buf_len, 74);
        assert_eq!(buf[14 + 7], 10, "hop limit 10");
        assert!(checksums_ok(&buf[..74]));
        assert!(build(&flow(true), 98, 0, &mut buf).unwrap().long);
        assert!(!build(&flow(true), 97, 0, &mut buf).unwrap().long);
        assert!(!build(&flow(false), 77, 0, &mut buf).unwrap().long);
        assert!(build(&flow(false), 78, 0, &mut buf).unwrap().long);
    }

    #[test]
    fn rejects_bad_sizes_and_mixed_versions() {
        let mut buf = [0u8; 2048];
        assert!(matches!(
            build(&flow(true), 64, 0, &mut buf),
            Err(FrameError::BadSize { min: 78, .. })
        ));
        assert!(build(&flow(false), 63, 0, &mut buf).is_err());
        assert!(matches!(
            build(&flow(false), 1518, 0, &mut buf[..100]),
            Err(FrameError::BufferTooSmall { .. })
        ));
        let mut f = flow(false);
        f.dst_ip = "2001:2::1".parse().unwrap();
        assert_eq!(build(&f, 64, 0, &mut buf), Err(FrameError::MixedVersions));
    }

    #[test]
    fn patch_matches_full_recompute_and_parses_back() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let mut buf = [0u8; 2048];
        for &v6 in &[false, true] {
            for &size in &[64usize, 78, 90, 98, 128, 1518] {
                if v6 && size < MIN_FRAME_V6 {
                    continue;
                }
                let l = build(&flow(v6), size, 0, &mut buf).unwrap();
                for _ in 0..200 {
                    let seq: u64 = rng.gen();
                    let ts: u64 = rng.gen();
                    l.patch(&mut buf, seq, ts);
                    let frame = &buf[..l.buf_len];
                    assert!(checksums_ok(frame), "v6={v6} size={size}");
                    let l4 = if v6 { 54 } else { 34 };
                    let stored = u16::from_be_bytes([frame[l4 + 6], frame[l4 + 7]]);
                    assert_eq!(stored, udp_checksum(frame, l4));
                    let t = parse(frame).unwrap();
                    assert_eq!(t.len, size);
                    assert_eq!(t.stream, 7);
                    if l.long {
                        assert_eq!((t.seq, t.tx_ns), (seq, ts));
                    } else {
                        assert_eq!((t.seq, t.tx_ns), (seq & 0xFFFF_FFFF, ts & 0xFFFF_FFFF));
                    }
                }
            }
        }
    }

    #[test]
    fn parse_ignores_non_test_frames() {
        let mut buf = [0u8; 2048];
        let l = build(&flow(false), 128, 0, &mut buf).unwrap();
        let good = buf[..l.buf_len].to_vec();
        assert!(parse(&good).is_some());
        let mut bad = good.clone();
        bad[42] ^= 1; // signature
        assert!(parse(&bad).is_none());
        let mut bad = good.clone();
        bad[37] = 8; // dst port
        assert!(parse(&bad).is_none());
        let mut bad = good.clone();
        bad[12] = 0x08;
        bad[13] = 0x06; // ARP
        assert!(parse(&bad).is_none());
        assert!(parse(&good[..50]).is_none(), "truncated");
        assert!(parse(&good[..100]).is_none(), "IP length beyond buffer");
        let mut bad = good.clone();
        bad[20] = 0x20; // more fragments
        assert!(parse(&bad).is_none());
        assert!(parse(&[0u8; 60]).is_none());
        // short form: trailing padding is rejected
        let l = build(&flow(false), 64, 0, &mut buf).unwrap();
        let mut padded = buf[..l.buf_len].to_vec();
        assert!(parse(&padded).is_some());
        padded[16..18].copy_from_slice(&44u16.to_be_bytes());
        padded[38..40].copy_from_slice(&16u16.to_be_bytes());
        assert!(parse(&padded).is_none());
    }

    /// FNV-1a over the bytes of frames of every size from the minimum to
    /// 1518 (and a jumbo one), both families, patched with a few
    /// sequence numbers and timestamps: a change of one byte anywhere in
    /// the wire format (which the BPF programs in `bpf/` must match)
    /// changes it.
    fn wire_digest() -> (u64, String, String) {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut buf = [0u8; MAX_FRAME];
        let mut first = (String::new(), String::new());
        for &v6 in &[false, true] {
            let min = if v6 { MIN_FRAME_V6 } else { MIN_FRAME_V4 };
            for size in (min..=1518).chain([9018]) {
                let mut f = flow(v6);
                f.src_port = UDP_SRC_PORT + (size as u16 % 7);
                let l = build(&f, size, (size % 3) as u32, &mut buf).unwrap();
                for (seq, ts) in [
                    (0u64, 0u64),
                    (1, 0xffff_ffff_ffff),
                    (size as u64 * 977, u64::MAX),
                ] {
                    l.patch(&mut buf, seq, ts);
                    for &b in &buf[..l.buf_len] {
                        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
                    }
                }
                if size == min {
                    let hex: String = buf[..l.buf_len]
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect();
                    if v6 {
                        first.1 = hex;
                    } else {
                        first.0 = hex;
                    }
                }
            }
        }
        (h, first.0, first.1)
    }

    /// The bytes the builder wrote before it used `packet` (captured from
    /// that code): the layout is the tester's contract with its BPF
    /// programs and with the bench's analyzer.
    #[test]
    fn wire_format_is_unchanged() {
        let (digest, v4, v6) = wire_digest();
        assert_eq!(
            v4,
            "02000000000102000000000208004500002e000000000a112496c6120002c6130002c021000700\
             1a41a0535200070000f440ffffffff0c0d0e0f1011"
        );
        assert_eq!(
            v6,
            "02000000000102000000000286dd600000000014110a200100020000000000000000000000022001\
             0002000000010000000000000002c02100070014828a53520007000129aeffffffff"
        );
        assert_eq!(digest, 0x0a0a_49f1_76c4_8690, "{digest:#018x}");
    }

    #[test]
    fn flowset_varies_ports_and_hosts() {
        let fs = FlowSet::new(flow(false), 5, 2);
        assert_eq!(fs.len(), 5);
        let ports: Vec<u16> = fs.flows.iter().map(|f| f.src_port).collect();
        assert_eq!(ports, vec![0xC020, 0xC021, 0xC022, 0xC023, 0xC024]);
        let hosts: Vec<String> = fs.flows.iter().map(|f| f.dst_ip.to_string()).collect();
        assert_eq!(hosts[0], "198.19.0.2");
        assert_eq!(hosts[1], "198.19.0.3");
        assert_eq!(hosts[2], "198.19.0.2");
        assert_eq!(fs.flows[4].stream, 11);
        let fs = FlowSet::new(flow(true), 3, 3);
        assert_eq!(fs.flows[2].dst_ip.to_string(), "2001:2:0:1::4");
        let big = FlowSet::new(flow(false), 20000, 1);
        assert!(big.flows.iter().all(|f| f.src_port >= 0xC020));
    }
}
