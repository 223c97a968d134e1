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

const MAX_FRAMES: usize = 256;
/// `fuzz_one`'s pool has 2048-byte buffers; the pcap port drops frames
/// longer than a buffer minus headroom before the worker sees them (as a
/// NIC would), and `fuzz_one` counts only what the worker received, so
/// longer records are truncated to this.
const MAX_LEN: usize = 2048 - netio::HEADROOM as usize;
const P0_MAC: [u8; 6] = [2, 0, 0, 0, 0, 0x10];

fn sum(data: &[u8], mut s: u64) -> u64 {
    let mut c = data.chunks_exact(2);
    for w in &mut c {
        s += u64::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [b] = c.remainder() {
        s += u64::from(*b) << 8;
    }
    s
}

fn finish(mut s: u64) -> u16 {
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// Fills the checksum at `at` of the L4 segment `l4`, `pseudo` being the
/// pseudo-header sum (0 for ICMPv4).
fn fill_l4(l4: &mut [u8], at: usize, pseudo: u64) {
    if l4.len() < at + 2 {
        return;
    }
    l4[at..at + 2].fill(0);
    let c = finish(sum(l4, pseudo));
    l4[at..at + 2].copy_from_slice(&c.to_be_bytes());
}

fn csum_at(proto: u8) -> Option<usize> {
    match proto {
        1 | 58 => Some(2),
        6 => Some(16),
        17 => Some(6),
        _ => None,
    }
}

fn fix_checksums(f: &mut [u8]) {
    if f.len() < 14 {
        return;
    }
    let mut l3 = 14;
    let mut et = u16::from_be_bytes([f[12], f[13]]);
    if et == 0x8100 && f.len() >= 18 {
        et = u16::from_be_bytes([f[16], f[17]]);
        l3 = 18;
    }
    let ip = &mut f[l3..];
    match et {
        0x0800 if ip.len() >= 20 => {
            let ihl = usize::from(ip[0] & 0x0f) * 4;
            if ihl < 20 || ip.len() < ihl {
                return;
            }
            ip[10..12].fill(0);
            let c = finish(sum(&ip[..ihl], 0));
            ip[10..12].copy_from_slice(&c.to_be_bytes());
            let total = usize::from(u16::from_be_bytes([ip[2], ip[3]])).clamp(ihl, ip.len());
            let first_fragment = u16::from_be_bytes([ip[6], ip[7]]) & 0x1fff == 0;
            let proto = ip[9];
            let (Some(at), true) = (csum_at(proto), first_fragment) else {
                return;
            };
            let l4_len = total - ihl;
            let pseudo = if proto == 1 {
                0
            } else {
                sum(&ip[12..20], u64::from(proto) + l4_len as u64)
            };
            fill_l4(&mut ip[ihl..total], at, pseudo);
        }
        0x86dd if ip.len() >= 40 => {
            let plen = usize::from(u16::from_be_bytes([ip[4], ip[5]])).min(ip.len() - 40);
            let nh = ip[6];
            let Some(at) = csum_at(nh).filter(|_| nh != 1) else {
                return;
            };
            let pseudo = sum(&ip[8..40], u64::from(nh) + plen as u64);
            fill_l4(&mut ip[40..40 + plen], at, pseudo);
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
        if f.len() >= 6 {
            match ctl & 3 {
                1 => f[..6].copy_from_slice(&P0_MAC),
                2 => f[..6].fill(0xff),
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
