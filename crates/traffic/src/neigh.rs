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

use packet::arp::{self, ARPOP_REPLY};
use packet::build::{self, ND_HOP_LIMIT, NEIGHBOR_FRAME_LEN};
use packet::ethernet::{self, ETH_ARP, ETH_IPV6, ETH_LEN, ETH_ZLEN};
use packet::icmpv6::{self, NDISC_NEIGHBOUR_SOLICITATION};
use packet::ip::PROTO_ICMPV6;
use packet::ipv6::{self, IPV6_LEN};
use packet::ndp::{self, ND_NA_FLAG_OVERRIDE, ND_NA_FLAG_SOLICITED, ND_NEIGHBOR_LEN};
use std::net::{Ipv4Addr, Ipv6Addr};

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
    let eth = ethernet::Frame::new_checked(req).ok()?;
    match eth.ethertype_raw() {
        ETH_ARP => arp_reply(me, req, out),
        ETH_IPV6 => neighbor_advert(me, req, out),
        _ => None,
    }
}

fn arp_reply(me: &NeighIdentity, req: &[u8], out: &mut [u8]) -> Option<usize> {
    let a = arp::Packet::new_checked(req.get(ETH_LEN..)?).ok()?;
    // Ethernet/IPv4 (hlen 6, plen 4), a request for our address.
    if !a.is_ethernet_ipv4()
        || a.operation() != arp::Operation::Request
        || a.target_protocol_addr() != me.v4
    {
        return None;
    }
    // The answer is padded to the Ethernet minimum (60 bytes without FCS).
    if out.len() < ETH_ZLEN {
        return None;
    }
    let sha = a.source_hardware_addr().0;
    let spa = a.source_protocol_addr();
    Some(build::arp(
        out,
        sha,
        ARPOP_REPLY,
        (me.mac, me.v4),
        (sha, spa),
    ))
}

fn neighbor_advert(me: &NeighIdentity, req: &[u8], out: &mut [u8]) -> Option<usize> {
    // The fixed header only (its payload length is not relied on): next
    // header ICMPv6 directly (NS never carries extension headers in
    // practice), hop limit 255 (RFC 4861 7.1.1).
    let ip = ipv6::Packet::new_unchecked(req.get(ETH_LEN..ETH_LEN + IPV6_LEN)?);
    if ip.version() != 6 || ip.next_header_raw() != PROTO_ICMPV6 || ip.hop_limit() != ND_HOP_LIMIT {
        return None;
    }
    let msg = req.get(ETH_LEN + IPV6_LEN..ETH_LEN + IPV6_LEN + ND_NEIGHBOR_LEN)?;
    let icmp = icmpv6::Packet::new_checked(msg).ok()?;
    if icmp.msg_type_raw() != NDISC_NEIGHBOUR_SOLICITATION || icmp.code() != 0 {
        return None;
    }
    if ndp::Neighbor::new_checked(msg).ok()?.target_addr() != me.v6 {
        return None;
    }
    let src = ip.src_addr();
    // Duplicate address detection (source ::): not a resolution; a real
    // host would defend its address, but the DUT is not configuring ours.
    if ipv6::is_unspecified(src) {
        return None;
    }
    if out.len() < NEIGHBOR_FRAME_LEN {
        return None;
    }
    // Back to the soliciting interface (`answer` has checked the header).
    let eth_dst = ethernet::Frame::new_unchecked(req).src_addr().0;
    Some(build::neighbor_advert(
        out,
        (eth_dst, src),
        me.mac,
        me.v6,
        ND_NA_FLAG_SOLICITED | ND_NA_FLAG_OVERRIDE,
    ))
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
        let msg = icmpv6::Packet::new_checked(&out[54..86]).unwrap();
        assert!(msg.verify_checksum(me().v6, src));
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
