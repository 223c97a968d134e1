//! The whole forwarding pipeline fed arbitrary frames, in batches.
//!
//! Input format (see fuzz/README.md): a sequence of records
//! `ctl:u8 len_hi:u8 len_lo:u8 bytes[len]` (a short last record takes what
//! is left). `ctl` lets the fuzzer reach the deeper paths without guessing
//! addresses and checksums:
//!
//! * bits 0-1: destination MAC: 0 = as given, 1 = port p0's MAC,
//!   2 = broadcast, 3 = IPv6 solicited-node multicast (33:33:ff + last 3
//!   bytes as given);
//! * bit 2: recompute the IPv4 header checksum and the ICMP/ICMPv6/UDP/TCP
//!   checksum (IPv4 or IPv6, after an optional 802.1Q tag);
//! * bit 3: repeat the frame 2..=9 times (`len_hi & 7` + 2 copies are
//!   pushed, for hold-queue overflow and rate limits); `len` then is
//!   `len_lo` only.
//!
//! Records longer than 1792 bytes (a pool buffer minus headroom) are
//! truncated to it: longer frames never reach the worker (see `MAX_LEN`).
//!
//! `dataplane::fuzzing::fuzz_one` checks that nothing panics, every frame
//! is either sent or counted as a drop, and no buffer leaks.
//!
//! Shared by the cargo-fuzz target (fuzz/fuzz_targets/pipeline.rs) and
//! the stable test crates/softrouter/tests/fuzz_targets.rs.

use packet::checksum::{self, pseudo_header_v4, pseudo_header_v6};
use packet::ethernet::{ETH_ALEN, ETH_IPV4, ETH_IPV6, ETH_LEN, ETH_TYPE, ETH_VLAN};
use packet::field::{get_array, get_u16, set_u16};
use packet::icmpv4::ICMP_CHECKSUM;
use packet::icmpv6::ICMPV6_CHECKSUM;
use packet::ip::{PROTO_ICMP, PROTO_ICMPV6, PROTO_TCP, PROTO_UDP};
use packet::ipv4::{
    IPV4_CHECK, IPV4_DADDR, IPV4_FRAG_OFF, IPV4_LEN, IPV4_PROTOCOL, IPV4_SADDR, IPV4_TOT_LEN,
    IP_OFFSET,
};
use packet::ipv6::{IPV6_DADDR, IPV6_LEN, IPV6_NEXTHDR, IPV6_PAYLOAD_LEN, IPV6_SADDR};
use packet::udp::UDP_CHECK;
use packet::vlan::{VLAN_ENCAP_TYPE, VLAN_HLEN};
use std::net::{Ipv4Addr, Ipv6Addr};

const MAX_FRAMES: usize = 256;
/// `fuzz_one`'s pool has 2048-byte buffers; the pcap port drops frames
/// longer than a buffer minus headroom before the worker sees them (as a
/// NIC would), and `fuzz_one` counts only what the worker received, so
/// longer records are truncated to this.
const MAX_LEN: usize = 2048 - netio::HEADROOM as usize;
const P0_MAC: [u8; 6] = [2, 0, 0, 0, 0, 0x10];
/// `tcphdr.check`: `packet` describes TCP only as far as its ports.
const TCP_CHECK: usize = 16;

/// Fills the checksum at `at` of the L4 segment `l4`, `pseudo` being the
/// pseudo-header partial sum (0 for ICMPv4).
fn fill_l4(l4: &mut [u8], at: usize, pseudo: u32) {
    if l4.len() < at + 2 {
        return;
    }
    set_u16(l4, at, 0);
    let c = checksum::finish(checksum::sum(l4) + pseudo);
    set_u16(l4, at, c);
}

fn csum_at(proto: u8) -> Option<usize> {
    match proto {
        PROTO_ICMP => Some(ICMP_CHECKSUM),
        PROTO_ICMPV6 => Some(ICMPV6_CHECKSUM),
        PROTO_TCP => Some(TCP_CHECK),
        PROTO_UDP => Some(UDP_CHECK),
        _ => None,
    }
}

fn fix_checksums(f: &mut [u8]) {
    if f.len() < ETH_LEN {
        return;
    }
    let mut l3 = ETH_LEN;
    let mut et = get_u16(f, ETH_TYPE);
    if et == ETH_VLAN && f.len() >= ETH_LEN + VLAN_HLEN {
        et = get_u16(f, ETH_LEN + VLAN_ENCAP_TYPE);
        l3 = ETH_LEN + VLAN_HLEN;
    }
    let ip = &mut f[l3..];
    match et {
        ETH_IPV4 if ip.len() >= IPV4_LEN => {
            let ihl = usize::from(ip[0] & 0x0f) * 4;
            if ihl < IPV4_LEN || ip.len() < ihl {
                return;
            }
            set_u16(ip, IPV4_CHECK, 0);
            let c = checksum::finish(checksum::sum(&ip[..ihl]));
            set_u16(ip, IPV4_CHECK, c);
            let total = usize::from(get_u16(ip, IPV4_TOT_LEN)).clamp(ihl, ip.len());
            let first_fragment = get_u16(ip, IPV4_FRAG_OFF) & IP_OFFSET == 0;
            let proto = ip[IPV4_PROTOCOL];
            let (Some(at), true) = (csum_at(proto), first_fragment) else {
                return;
            };
            // At most a pool buffer: fits the pseudo header's 16 bits.
            let l4_len = (total - ihl) as u16;
            let pseudo = if proto == PROTO_ICMP {
                0
            } else {
                let src = Ipv4Addr::from(get_array::<4>(ip, IPV4_SADDR));
                let dst = Ipv4Addr::from(get_array::<4>(ip, IPV4_DADDR));
                pseudo_header_v4(src, dst, proto, l4_len)
            };
            fill_l4(&mut ip[ihl..total], at, pseudo);
        }
        ETH_IPV6 if ip.len() >= IPV6_LEN => {
            let plen = usize::from(get_u16(ip, IPV6_PAYLOAD_LEN)).min(ip.len() - IPV6_LEN);
            let nh = ip[IPV6_NEXTHDR];
            let Some(at) = csum_at(nh).filter(|_| nh != PROTO_ICMP) else {
                return;
            };
            let src = Ipv6Addr::from(get_array::<16>(ip, IPV6_SADDR));
            let dst = Ipv6Addr::from(get_array::<16>(ip, IPV6_DADDR));
            let pseudo = pseudo_header_v6(src, dst, nh, plen as u32);
            fill_l4(&mut ip[IPV6_LEN..IPV6_LEN + plen], at, pseudo);
        }
        _ => {}
    }
}

/// Splits the input into frames as described in the module docs.
fn frames(mut data: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while data.len() >= 3 && out.len() < MAX_FRAMES {
        let (ctl, hi, lo) = (data[0], data[1], data[2]);
        data = &data[3..];
        let repeat = ctl & 8 != 0;
        let len = if repeat {
            usize::from(lo)
        } else {
            usize::from(u16::from_be_bytes([hi, lo]))
        };
        let (body, rest) = data.split_at(len.min(data.len()));
        data = rest;
        let mut f = body[..body.len().min(MAX_LEN)].to_vec();
        if f.len() >= ETH_ALEN {
            match ctl & 3 {
                1 => f[..ETH_ALEN].copy_from_slice(&P0_MAC),
                2 => f[..ETH_ALEN].fill(0xff),
                3 => f[..3].copy_from_slice(&[0x33, 0x33, 0xff]),
                _ => {}
            }
        }
        if ctl & 4 != 0 {
            fix_checksums(&mut f);
        }
        let copies = if repeat { usize::from(hi & 7) + 2 } else { 1 };
        for _ in 0..copies.min(MAX_FRAMES - out.len()) {
            out.push(f.clone());
        }
    }
    out
}

/// The target's body: any bytes; panics on a broken invariant.
pub fn run(data: &[u8]) {
    let frames = frames(data);
    let refs: Vec<&[u8]> = frames.iter().map(|f| &f[..]).collect();
    if let Err(e) = dataplane::fuzzing::fuzz_one(&refs) {
        panic!("pipeline invariant broken: {e}");
    }
}
