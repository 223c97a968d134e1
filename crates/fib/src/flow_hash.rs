//! Flow hashing for ECMP member selection.
//!
//! A pure function of the 5-tuple, so every packet of a flow gets the same
//! hash and takes the same path (no reordering). Built from the 64-bit
//! `fmix`-style finaliser (two multiply-xorshift rounds), which mixes every
//! input bit into every output bit; that matters because
//! [`crate::nexthop::NextHopReader::resolve`] picks the member from the
//! *high* bits. Portable and identical on every CPU (a CRC32C instruction
//! would be as fast on x86 but needs a second, slower path elsewhere, and is
//! linear, so it mixes worse). Not keyed: it is for load spreading, not a
//! defence against an adversary choosing flows.

const K1: u64 = 0x9e37_79b9_7f4a_7c15;
const K2: u64 = 0xc2b2_ae3d_27d4_eb4f;
const K3: u64 = 0x1656_67b1_9e37_79f9;
const K4: u64 = 0x85eb_ca77_c2b2_ae63;

/// Multiply-xorshift finaliser (a bijection on u64).
#[inline]
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 32)).wrapping_mul(0xd6e8_feb8_6659_fd93);
    x = (x ^ (x >> 32)).wrapping_mul(0xd6e8_feb8_6659_fd93);
    x ^ (x >> 32)
}

#[inline]
fn ports(proto: u8, sport: u16, dport: u16) -> u64 {
    u64::from(proto) << 32 | u64::from(sport) << 16 | u64::from(dport)
}

/// Hash of an IPv4 5-tuple (addresses host order).
#[inline]
pub fn flow_hash_v4(src: u32, dst: u32, proto: u8, sport: u16, dport: u16) -> u32 {
    let a = u64::from(src) << 32 | u64::from(dst);
    (mix(mix(a ^ K1) ^ ports(proto, sport, dport) ^ K2) >> 32) as u32
}

/// Hash of an IPv6 5-tuple (addresses host order). The four address halves
/// are mixed independently (in parallel on an out-of-order core) and
/// combined by one last round.
#[inline]
pub fn flow_hash_v6(src: u128, dst: u128, proto: u8, sport: u16, dport: u16) -> u32 {
    let x1 = mix((src >> 64) as u64 ^ K1);
    let x2 = mix(src as u64 ^ K2);
    let x3 = mix((dst >> 64) as u64 ^ K3);
    let x4 = mix(dst as u64 ^ K4);
    let h = x1 ^ x2.rotate_left(16) ^ x3.rotate_left(32) ^ x4.rotate_left(48);
    (mix(h ^ ports(proto, sport, dport)) >> 32) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_direction_sensitive() {
        let a = flow_hash_v4(0xc612_0001, 0xc613_0001, 6, 1234, 80);
        assert_eq!(a, flow_hash_v4(0xc612_0001, 0xc613_0001, 6, 1234, 80));
        assert_ne!(a, flow_hash_v4(0xc613_0001, 0xc612_0001, 6, 80, 1234));
        let s = 0x2001_0002_u128 << 96 | 1;
        let d = 0x2001_0002_u128 << 96 | 2;
        let b = flow_hash_v6(s, d, 17, 1, 2);
        assert_eq!(b, flow_hash_v6(s, d, 17, 1, 2));
        assert_ne!(b, flow_hash_v6(d, s, 17, 1, 2));
    }

    /// Flipping any single input bit flips each output bit about half the
    /// time (avalanche), which the high-bit member selection relies on.
    #[test]
    fn avalanche() {
        let mut flips = [0u32; 32];
        let n = 2000u32;
        for i in 0..n {
            let src = 0xc612_0000 | i;
            let base = flow_hash_v4(src, 0xc613_0001, 6, 1000, 80);
            let changed = flow_hash_v4(src, 0xc613_0001, 6, 1001, 80) ^ base;
            for (b, f) in flips.iter_mut().enumerate() {
                *f += (changed >> b) & 1;
            }
        }
        for &f in &flips {
            assert!((f as f64 / n as f64 - 0.5).abs() < 0.06, "{flips:?}");
        }
    }

    #[test]
    fn even_over_2_to_8_members_v6() {
        for n in 2u64..=8 {
            let mut count = [0u32; 8];
            let flows = 40_000u32;
            for f in 0..flows {
                let src = 0x2001_0002_u128 << 96 | u128::from(f);
                let h = flow_hash_v6(src, 0x2001_0002_u128 << 96 | 1, 17, 5000, 53);
                count[((u64::from(h) * n) >> 32) as usize] += 1;
            }
            let expect = flows as f64 / n as f64;
            for &c in &count[..n as usize] {
                assert!((c as f64 - expect).abs() < expect * 0.05, "n={n} {count:?}");
            }
        }
    }
}
