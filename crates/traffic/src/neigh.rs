//! ARP and IPv6 neighbor-solicitation answers for the tester's own
//! addresses.
//!
//! Why: the DUT resolves the tester's address as its next hop. On an AF_XDP
//! tester port the XDP program redirects every frame to our socket, so the
//! tester namespace's kernel never sees the DUT's ARP requests or neighbor
//! solicitations: unanswered, the DUT would drop all test traffic (or, for
//! a kernel DUT, queue a few frames and then drop). The receiver therefore
//! answers them itself. Only requests for the port's own addresses are
//! answered; everything else is left alone (and counted as non-test).
//!
//! Both functions are allocation-free and never panic on malformed input:
//! every length is checked before it is read.

use std::net::{Ipv4Addr, Ipv6Addr};

const ETH_LEN: usize = 14;
const ARP_LEN: usize = 28;
/// Answers are padded to the Ethernet minimum (60 bytes without FCS).
const MIN_ETH: usize = 60;

/// Who this responder answers for.
#[derive(Debug, Clone, Copy)]
pub struct NeighIdentity {
    pub mac: [u8; 6],
    pub v4: Ipv4Addr,
    pub v6: Ipv6Addr,
}

/// If `req` is an ARP request or an IPv6 neighbor solicitation for one of
/// `me`'s addresses, write the answer into `out` and return its length.
pub fn answer(me: &NeighIdentity, req: &[u8], out: &mut [u8]) -> Option<usize> {
    if req.len() < ETH_LEN {
        return None;
    }
    match u16::from_be_bytes([req[12], req[13]]) {
        0x0806 => arp_reply(me, req, out),
        0x86DD => neighbor_advert(me, req, out),
        _ => None,
    }
}

fn arp_reply(me: &NeighIdentity, req: &[u8], out: &mut [u8]) -> Option<usize> {
    let a = req.get(ETH_LEN..ETH_LEN + ARP_LEN)?;
    // Ethernet/IPv4, hlen 6, plen 4, operation 1 (request).
    if a[0..8] != [0, 1, 8, 0, 6, 4, 0, 1] || a[24..28] != me.v4.octets() {
        return None;
    }
    if out.len() < MIN_ETH {
        return None;
    }
    let (sha, spa) = (&a[8..14], &a[14..18]);
    out[..MIN_ETH].fill(0);
    out[0..6].copy_from_slice(sha);
    out[6..12].copy_from_slice(&me.mac);
    out[12..14].copy_from_slice(&[0x08, 0x06]);
    let r = &mut out[ETH_LEN..ETH_LEN + ARP_LEN];
    r[0..8].copy_from_slice(&[0, 1, 8, 0, 6, 4, 0, 2]);
    r[8..14].copy_from_slice(&me.mac);
    r[14..18].copy_from_slice(&me.v4.octets());
    r[18..24].copy_from_slice(sha);
    r[24..28].copy_from_slice(spa);
    Some(MIN_ETH)
}

const IP6_LEN: usize = 40;
/// ICMPv6 neighbor advertisement with a target link-layer address option.
const NA_LEN: usize = 32;

fn neighbor_advert(me: &NeighIdentity, req: &[u8], out: &mut [u8]) -> Option<usize> {
    let ip = req.get(ETH_LEN..ETH_LEN + IP6_LEN)?;
    // Next header ICMPv6 directly (NS never carries extension headers in
    // practice), hop limit 255 (RFC 4861 7.1.1).
    if ip[0] >> 4 != 6 || ip[6] != 58 || ip[7] != 255 {
        return None;
    }
    let icmp = req.get(ETH_LEN + IP6_LEN..ETH_LEN + IP6_LEN + 24)?;
    if icmp[0] != 135 || icmp[1] != 0 || icmp[8..24] != me.v6.octets() {
        return None;
    }
    let src: [u8; 16] = ip[8..24].try_into().ok()?;
    // Duplicate address detection (source ::): not a resolution; a real
    // host would defend its address, but the DUT is not configuring ours.
    if src == [0; 16] {
        return None;
    }
    let total = ETH_LEN + IP6_LEN + NA_LEN;
    if out.len() < total {
        return None;
    }
    out[0..6].copy_from_slice(&req[6..12]);
    out[6..12].copy_from_slice(&me.mac);
    out[12..14].copy_from_slice(&[0x86, 0xDD]);
    let o = &mut out[ETH_LEN..total];
    o[0..4].copy_from_slice(&0x6000_0000u32.to_be_bytes());
    o[4..6].copy_from_slice(&(NA_LEN as u16).to_be_bytes());
    o[6] = 58;
    o[7] = 255;
    o[8..24].copy_from_slice(&me.v6.octets());
    o[24..40].copy_from_slice(&src);
    let n = &mut o[IP6_LEN..];
    n[0] = 136;
    n[1] = 0;
    n[2..4].fill(0);
    // Solicited + override.
    n[4..8].copy_from_slice(&0x6000_0000u32.to_be_bytes());
    n[8..24].copy_from_slice(&me.v6.octets());
    n[24] = 2; // target link-layer address
    n[25] = 1; // 8 bytes
    n[26..32].copy_from_slice(&me.mac);
    let c = icmp6_checksum(&me.v6.octets(), &src, n);
    n[2..4].copy_from_slice(&c.to_be_bytes());
    Some(total)
}

fn icmp6_checksum(src: &[u8; 16], dst: &[u8; 16], msg: &[u8]) -> u16 {
    let mut s: u64 = 0;
    let mut add = |b: &[u8]| {
        let mut it = b.chunks_exact(2);
        for c in &mut it {
            s += u64::from(u16::from_be_bytes([c[0], c[1]]));
        }
        if let [x] = it.remainder() {
            s += u64::from(*x) << 8;
        }
    };
    add(src);
    add(dst);
    add(&(msg.len() as u32).to_be_bytes());
    add(&[0, 0, 0, 58]);
    add(msg);
    while s > 0xFFFF {
        s = (s & 0xFFFF) + (s >> 16);
    }
    !(s as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> NeighIdentity {
        NeighIdentity {
            mac: [2, 0, 0, 0, 0, 2],
            v4: "198.18.0.2".parse().unwrap(),
            v6: "2001:2::2".parse().unwrap(),
        }
    }

    /// 02:..:01 (198.18.0.1) asks who has 198.18.0.2.
    fn arp_request() -> [u8; 42] {
        let mut req = [0u8; 42];
        req[0..6].fill(0xFF);
        req[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
        req[12..14].copy_from_slice(&[8, 6]);
        req[14..22].copy_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
        req[22..28].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
        req[28..32].copy_from_slice(&[198, 18, 0, 1]);
        req[38..42].copy_from_slice(&[198, 18, 0, 2]);
        req
    }

    /// 2001:2::1 (02:..:01) solicits 2001:2::2, without options.
    fn solicitation() -> [u8; 86] {
        let mut req = [0u8; 86];
        req[0..6].copy_from_slice(&[0x33, 0x33, 0xff, 0, 0, 2]);
        req[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
        req[12..14].copy_from_slice(&[0x86, 0xDD]);
        req[14] = 0x60;
        req[18..20].copy_from_slice(&32u16.to_be_bytes());
        req[20] = 58;
        req[21] = 255;
        req[22..38].copy_from_slice(&sol_src().octets());
        req[54] = 135;
        req[62..78].copy_from_slice(&me().v6.octets());
        req
    }

    fn sol_src() -> Ipv6Addr {
        "2001:2::1".parse().unwrap()
    }

    #[test]
    fn answers_arp_for_own_address_only() {
        let mut req = arp_request();
        let mut out = [0u8; 128];
        let n = answer(&me(), &req, &mut out).unwrap();
        assert_eq!(n, 60);
        assert_eq!(&out[0..6], &[2, 0, 0, 0, 0, 1]);
        assert_eq!(&out[20..22], &[0, 2]);
        assert_eq!(&out[22..28], &me().mac);
        assert_eq!(&out[28..32], &[198, 18, 0, 2]);
        assert_eq!(&out[38..42], &[198, 18, 0, 1]);
        req[41] = 3;
        assert!(answer(&me(), &req, &mut out).is_none());
        for l in 0..42 {
            assert!(answer(&me(), &req[..l], &mut out).is_none());
        }
        // No room for the padded answer.
        assert!(answer(&me(), &arp_request(), &mut out[..59]).is_none());
    }

    #[test]
    fn answers_neighbor_solicitation_with_valid_checksum() {
        let req = solicitation();
        let src = sol_src();
        let mut out = [0u8; 128];
        let n = answer(&me(), &req, &mut out).unwrap();
        assert_eq!(n, 86);
        assert_eq!(&out[0..6], &[2, 0, 0, 0, 0, 1]);
        assert_eq!(out[54], 136);
        assert_eq!(&out[38..54], &src.octets());
        // A correct checksum sums to zero over pseudo header + message.
        let sd: [u8; 16] = out[22..38].try_into().unwrap();
        assert_eq!(icmp6_checksum(&sd, &src.octets(), &out[54..86]), 0);
        // Other target, DAD, truncation, no room: no answer.
        let mut other = req;
        other[77] = 9;
        assert!(answer(&me(), &other, &mut out).is_none());
        let mut dad = req;
        dad[22..38].fill(0);
        assert!(answer(&me(), &dad, &mut out).is_none());
        for l in 0..78 {
            assert!(answer(&me(), &req[..l], &mut out).is_none());
        }
        assert!(answer(&me(), &req, &mut out[..85]).is_none());
    }

    /// The answers byte for byte, as the hand-built frames were before the
    /// responder used `packet::build` (captured from that code). The output
    /// buffer starts dirty so that padding and reserved bytes must be
    /// written.
    #[test]
    fn answers_are_the_same_bytes_as_the_hand_built_frames() {
        #[rustfmt::skip]
        const ARP_REPLY: [u8; 60] = [
            2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 8, 6,
            0, 1, 8, 0, 6, 4, 0, 2, 2, 0, 0, 0, 0, 2, 198, 18, 0, 2,
            2, 0, 0, 0, 0, 1, 198, 18, 0, 1,
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        #[rustfmt::skip]
        const NA: [u8; 86] = [
            2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 134, 221,
            96, 0, 0, 0, 0, 32, 58, 255,
            32, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
            32, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
            136, 0, 179, 147, 96, 0, 0, 0,
            32, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
            2, 1, 2, 0, 0, 0, 0, 2,
        ];
        let mut out = [0xAAu8; 128];
        let n = answer(&me(), &arp_request(), &mut out).unwrap();
        assert_eq!(out[..n], ARP_REPLY);
        let mut out = [0xAAu8; 128];
        let n = answer(&me(), &solicitation(), &mut out).unwrap();
        assert_eq!(out[..n], NA);
    }
}
