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

use std::net::IpAddr;

/// Smallest IPv4 test frame (with FCS).
pub const MIN_FRAME_V4: usize = 64;
/// Smallest IPv6 test frame (with FCS), per RFC 5180; see the module docs.
pub const MIN_FRAME_V6: usize = 78;
/// Largest frame accepted (jumbo frames up to 9018 + VLAN room).
pub const MAX_FRAME: usize = 9022;
/// FCS length, counted in frame sizes but not present in buffers.
pub const FCS_LEN: usize = 4;
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

const ETH_LEN: usize = 14;
const IPV4_LEN: usize = 20;
const IPV6_LEN: usize = 40;
const UDP_LEN: usize = 8;

/// Why a frame could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// Frame size outside `min..=MAX_FRAME` for this IP version.
    BadSize { size: usize, min: usize },
    /// Buffer shorter than the frame.
    BufferTooSmall { need: usize, have: usize },
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
    buf[0..6].copy_from_slice(&flow.dst_mac);
    buf[6..12].copy_from_slice(&flow.src_mac);
    let l4 = match (flow.src_ip, flow.dst_ip) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            buf[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
            let ip = &mut buf[ETH_LEN..ETH_LEN + IPV4_LEN];
            ip[0] = 0x45;
            ip[1] = 0;
            ip[2..4].copy_from_slice(&((len - ETH_LEN) as u16).to_be_bytes());
            ip[4..8].fill(0); // id 0, no flags, no fragment offset
            ip[8] = TTL;
            ip[9] = 17;
            ip[10..12].fill(0);
            ip[12..16].copy_from_slice(&s.octets());
            ip[16..20].copy_from_slice(&d.octets());
            let c = !fold(sum_words(ip, 0));
            ip[10..12].copy_from_slice(&c.to_be_bytes());
            ETH_LEN + IPV4_LEN
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            buf[12..14].copy_from_slice(&0x86DDu16.to_be_bytes());
            let ip = &mut buf[ETH_LEN..ETH_LEN + IPV6_LEN];
            ip[0..4].copy_from_slice(&0x6000_0000u32.to_be_bytes());
            ip[4..6].copy_from_slice(&((len - ETH_LEN - IPV6_LEN) as u16).to_be_bytes());
            ip[6] = 17;
            ip[7] = TTL;
            ip[8..24].copy_from_slice(&s.octets());
            ip[24..40].copy_from_slice(&d.octets());
            ETH_LEN + IPV6_LEN
        }
        _ => unreachable!(),
    };
    let udp_len = len - l4;
    let (udp, _) = buf[l4..].split_at_mut(udp_len);
    udp[0..2].copy_from_slice(&flow.src_port.to_be_bytes());
    udp[2..4].copy_from_slice(&flow.dst_port.to_be_bytes());
    udp[4..6].copy_from_slice(&(udp_len as u16).to_be_bytes());
    udp[6..8].fill(0);
    let payload = &mut udp[UDP_LEN..];
    for (k, b) in payload.iter_mut().enumerate() {
        *b = k as u8;
    }
    let long = payload.len() >= LONG_HEADER_LEN;
    let (seq_off, ts_off) = if long {
        payload[0..8].copy_from_slice(&SIGNATURE);
        payload[8..12].copy_from_slice(&flow.stream.to_be_bytes());
        payload[12..16].copy_from_slice(&flags.to_be_bytes());
        payload[16..32].fill(0);
        (l4 + UDP_LEN + 16, l4 + UDP_LEN + 24)
    } else {
        payload[0..2].copy_from_slice(&SHORT_SIGNATURE);
        payload[2..4].copy_from_slice(&(flow.stream as u16).to_be_bytes());
        payload[4..12].fill(0);
        (l4 + UDP_LEN + 4, l4 + UDP_LEN + 8)
    };
    let csum = udp_checksum(buf, l4);
    buf[l4 + 6..l4 + 8].copy_from_slice(&csum.to_be_bytes());
    Ok(FrameLayout {
        buf_len: len,
        udp_csum_off: l4 + 6,
        seq_off,
        ts_off,
        long,
    })
}

/// One's-complement sum of big-endian 16-bit words (odd tail padded).
fn sum_words(data: &[u8], init: u32) -> u32 {
    let mut s = init as u64;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        s += u64::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        s += u64::from(*last) << 8;
    }
    while s > 0xFFFF_FFFF {
        s = (s & 0xFFFF_FFFF) + (s >> 32);
    }
    s as u32
}

fn fold(mut s: u32) -> u16 {
    while s > 0xFFFF {
        s = (s & 0xFFFF) + (s >> 16);
    }
    s as u16
}

/// Full UDP checksum (with pseudo header) of the frame in `buf` whose UDP
/// header starts at `l4`; 0 is sent as 0xFFFF.
pub fn udp_checksum(buf: &[u8], l4: usize) -> u16 {
    let udp = &buf[l4..];
    let mut s = 0u32;
    if buf[12..14] == [0x08, 0x00] {
        s = sum_words(&buf[ETH_LEN + 12..ETH_LEN + 20], s);
    } else {
        s = sum_words(&buf[ETH_LEN + 8..ETH_LEN + 40], s);
    }
    s = sum_words(&[0, 17], s);
    s = sum_words(&(udp.len() as u16).to_be_bytes(), s);
    // Sum the UDP header and data with the checksum field counted as zero.
    s = sum_words(&udp[0..6], s);
    s = sum_words(&udp[8..], s);
    match !fold(s) {
        0 => 0xFFFF,
        c => c,
    }
}

impl FrameLayout {
    /// Write `seq` and `tx_ns` into a frame built with this layout and fix
    /// the UDP checksum incrementally (RFC 1624 eqn. 3). O(1): touches only
    /// the changed words. The short form keeps the low 32 bits of each.
    #[inline]
    pub fn patch(&self, buf: &mut [u8], seq: u64, tx_ns: u64) {
        let mut acc: u32 = 0;
        let old_c = u16::from_be_bytes([buf[self.udp_csum_off], buf[self.udp_csum_off + 1]]);
        acc += u32::from(!old_c);
        if self.long {
            acc += replace_words::<8>(buf, self.seq_off, seq.to_be_bytes());
            acc += replace_words::<8>(buf, self.ts_off, tx_ns.to_be_bytes());
        } else {
            acc += replace_words::<4>(buf, self.seq_off, (seq as u32).to_be_bytes());
            acc += replace_words::<4>(buf, self.ts_off, (tx_ns as u32).to_be_bytes());
        }
        let c = match !fold(acc) {
            0 => 0xFFFF,
            c => c,
        };
        buf[self.udp_csum_off..self.udp_csum_off + 2].copy_from_slice(&c.to_be_bytes());
    }
}

/// Replace `N` bytes at `off`, returning sum(~old words) + sum(new words).
#[inline]
fn replace_words<const N: usize>(buf: &mut [u8], off: usize, new: [u8; N]) -> u32 {
    let mut acc = 0u32;
    for i in (0..N).step_by(2) {
        let old = u16::from_be_bytes([buf[off + i], buf[off + i + 1]]);
        let nw = u16::from_be_bytes([new[i], new[i + 1]]);
        acc += u32::from(!old) + u32::from(nw);
    }
    buf[off..off + N].copy_from_slice(&new);
    acc
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
    let (l4, ip_end) = match u16::from_be_bytes([buf[12], buf[13]]) {
        0x0800 => {
            let ip = &buf[ETH_LEN..];
            let ihl = usize::from(ip[0] & 0x0F) * 4;
            if ip[0] >> 4 != 4 || ihl < IPV4_LEN || ip[9] != 17 {
                return None;
            }
            // More-fragments or a fragment offset: not a whole test frame.
            if u16::from_be_bytes([ip[6], ip[7]]) & 0x3FFF != 0 {
                return None;
            }
            let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
            (ETH_LEN + ihl, ETH_LEN + total)
        }
        0x86DD => {
            if buf.len() < ETH_LEN + IPV6_LEN + UDP_LEN + SHORT_HEADER_LEN {
                return None;
            }
            let ip = &buf[ETH_LEN..];
            if ip[0] >> 4 != 6 || ip[6] != 17 {
                return None;
            }
            let plen = usize::from(u16::from_be_bytes([ip[4], ip[5]]));
            (ETH_LEN + IPV6_LEN, ETH_LEN + IPV6_LEN + plen)
        }
        _ => return None,
    };
    if ip_end > buf.len() || l4 + UDP_LEN > ip_end {
        return None;
    }
    let udp = &buf[l4..ip_end];
    if u16::from_be_bytes([udp[2], udp[3]]) != UDP_DST_PORT
        || usize::from(u16::from_be_bytes([udp[4], udp[5]])) != udp.len()
    {
        return None;
    }
    let p = &udp[UDP_LEN..];
    let len = buf.len() + FCS_LEN;
    if p.len() >= LONG_HEADER_LEN {
        if p[0..8] != SIGNATURE {
            return None;
        }
        Some(TestFrame {
            stream: u32::from_be_bytes(p[8..12].try_into().ok()?),
            flags: u32::from_be_bytes(p[12..16].try_into().ok()?),
            seq: u64::from_be_bytes(p[16..24].try_into().ok()?),
            tx_ns: u64::from_be_bytes(p[24..32].try_into().ok()?),
            len,
            short: false,
        })
    } else if p.len() >= SHORT_HEADER_LEN {
        // The short form is only written into frames without padding
        // beyond the IP datagram: insist on it to strengthen the 2-byte
        // signature.
        if p[0..2] != SHORT_SIGNATURE || ip_end != buf.len() {
            return None;
        }
        Some(TestFrame {
            stream: u32::from(u16::from_be_bytes([p[2], p[3]])),
            flags: 0,
            seq: u64::from(u32::from_be_bytes(p[4..8].try_into().ok()?)),
            tx_ns: u64::from(u32::from_be_bytes(p[8..12].try_into().ok()?)),
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
    let l4 = match u16::from_be_bytes([buf[12], buf[13]]) {
        0x0800 => {
            let ihl = usize::from(buf[ETH_LEN] & 0x0F) * 4;
            if fold(sum_words(&buf[ETH_LEN..ETH_LEN + ihl], 0)) != 0xFFFF {
                return false;
            }
            ETH_LEN + ihl
        }
        0x86DD => ETH_LEN + IPV6_LEN,
        _ => return false,
    };
    let stored = u16::from_be_bytes([buf[l4 + 6], buf[l4 + 7]]);
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
