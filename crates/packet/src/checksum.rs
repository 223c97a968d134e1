//! The Internet checksum (RFC 1071) and its incremental update (RFC 1624).
//!
//! Conventions: [`sum`] and the `pseudo_header_*` functions return a
//! *partial* one's complement sum (already folded below 2^16, returned as
//! `u32` so several can be added without overflow). [`fold`] and
//! [`combine`] fold partial sums into 16 bits *without* complementing;
//! the value written into a header is `!fold(..)` (see [`finish`]).
//! A received header verifies when `fold(sum(header)) == 0xffff`.

use std::net::{Ipv4Addr, Ipv6Addr};

/// One's complement sum of `data` as big-endian 16-bit words (an odd
/// trailing byte is padded with zero on the right).
///
/// Works 8 bytes at a time: adding big-endian 32-bit words into a 64-bit
/// accumulator is congruent to adding 16-bit words modulo 0xffff because
/// 2^16 ≡ 1 (mod 0xffff), so the folded result is the same.
#[inline]
pub fn sum(data: &[u8]) -> u32 {
    let mut acc: u64 = 0;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_be_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        acc += (w >> 32) + (w & 0xffff_ffff);
    }
    let mut rest = chunks.remainder();
    if rest.len() >= 4 {
        acc += u64::from(u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]));
        rest = &rest[4..];
    }
    if rest.len() >= 2 {
        acc += u64::from(u16::from_be_bytes([rest[0], rest[1]]));
        rest = &rest[2..];
    }
    if let Some(&b) = rest.first() {
        acc += u64::from(b) << 8;
    }
    // 2^32 ≡ 1 (mod 0xffff) as well, so fold 64 -> 32 -> 16 bits.
    let acc = (acc & 0xffff_ffff) + (acc >> 32);
    let acc = (acc & 0xffff_ffff) + (acc >> 32);
    u32::from(fold(acc as u32))
}

/// Folds a 32-bit partial sum into 16 bits with end-around carry.
/// Does not complement.
#[inline]
pub fn fold(mut s: u32) -> u16 {
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    s as u16
}

/// One's complement sum of already-folded 16-bit partial sums.
#[inline]
pub fn combine(parts: &[u16]) -> u16 {
    let s: u32 = parts.iter().map(|&p| u32::from(p)).sum();
    fold(s)
}

/// The checksum field value for a partial sum: `!fold(s)`.
#[inline]
pub fn finish(s: u32) -> u16 {
    !fold(s)
}

/// Partial sum of the IPv4 pseudo header (RFC 768 / RFC 793): source,
/// destination, zero, protocol, upper-layer length.
#[inline]
pub fn pseudo_header_v4(src: Ipv4Addr, dst: Ipv4Addr, proto: u8, len: u16) -> u32 {
    let s = u32::from(src);
    let d = u32::from(dst);
    let acc =
        (s >> 16) + (s & 0xffff) + (d >> 16) + (d & 0xffff) + u32::from(proto) + u32::from(len);
    u32::from(fold(acc))
}

/// Partial sum of the IPv6 pseudo header (RFC 8200 §8.1): source,
/// destination, 32-bit upper-layer length, zeros, next header.
#[inline]
pub fn pseudo_header_v6(src: Ipv6Addr, dst: Ipv6Addr, next_header: u8, len: u32) -> u32 {
    let mut acc = sum(&src.octets()) + sum(&dst.octets());
    acc += (len >> 16) + (len & 0xffff) + u32::from(next_header);
    u32::from(fold(acc))
}

/// Incrementally updates a checksum after one 16-bit word of the covered
/// data changed from `old_word` to `new_word`, per RFC 1624 eqn. 3:
/// `HC' = ~(~HC + ~m + m')`.
///
/// This is the form that, unlike RFC 1141's `HC + m - m'`, never produces
/// the 0xffff/-0 anomaly, so the result equals a full recomputation.
#[inline]
pub fn update_u16(old_checksum: u16, old_word: u16, new_word: u16) -> u16 {
    let s = u32::from(!old_checksum) + u32::from(!old_word) + u32::from(new_word);
    !fold(s)
}

/// [`update_u16`] for a 32-bit field (e.g. an IPv4 address in a NAT
/// rewrite): applies the update to both 16-bit halves.
#[inline]
pub fn update_u32(old_checksum: u16, old: u32, new: u32) -> u16 {
    let s = u32::from(!old_checksum)
        + u32::from(!(old >> 16) as u16)
        + u32::from(!(old as u16))
        + (new >> 16)
        + (new & 0xffff);
    !fold(s)
}

/// [`update_u16`] for a field of several 16-bit words changed from `old`
/// to `new` (equal lengths, a whole number of words, starting at an even
/// offset of the covered data): `HC' = ~(~HC + sum(~m) + sum(m'))`, in one
/// pass, so the result is what one full recomputation gives.
#[inline]
pub fn update(old_checksum: u16, old: &[u8], new: &[u8]) -> u16 {
    debug_assert!(old.len() == new.len() && old.len().is_multiple_of(2));
    let mut s = u64::from(!old_checksum);
    for (o, n) in old.chunks_exact(2).zip(new.chunks_exact(2)) {
        s += u64::from(!u16::from_be_bytes([o[0], o[1]]))
            + u64::from(u16::from_be_bytes([n[0], n[1]]));
    }
    let s = (s & 0xffff_ffff) + (s >> 32);
    !fold(((s & 0xffff_ffff) + (s >> 32)) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reference: RFC 1071 word-at-a-time sum.
    fn naive(data: &[u8]) -> u16 {
        let mut acc: u32 = 0;
        for c in data.chunks(2) {
            let w = if c.len() == 2 {
                u16::from_be_bytes([c[0], c[1]])
            } else {
                u16::from(c[0]) << 8
            };
            acc += u32::from(w);
        }
        fold(acc)
    }

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3: bytes 00 01 f2 03 f4 f5 f6 f7 sum to 0xddf2.
        assert_eq!(
            fold(sum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7])),
            0xddf2
        );
    }

    #[test]
    fn known_ipv4_header() {
        // Classic example header (Wikipedia "IPv4 header checksum"), checksum b861.
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(finish(sum(&h)), 0xb861);
    }

    #[test]
    fn odd_and_empty() {
        assert_eq!(sum(&[]), 0);
        assert_eq!(fold(sum(&[0xab])), 0xab00);
        assert_eq!(fold(sum(&[0xff; 4096])), 0xffff);
    }

    #[test]
    fn update_u32_matches_two_u16() {
        let c = update_u32(0x1234, 0xc0a8_0001, 0xc612_0001);
        let c2 = update_u16(update_u16(0x1234, 0xc0a8, 0xc612), 0x0001, 0x0001);
        assert_eq!(c, c2);
    }

    proptest! {
        #[test]
        fn sum_matches_naive(data in proptest::collection::vec(any::<u8>(), 0..300)) {
            prop_assert_eq!(fold(sum(&data)), naive(&data));
        }

        #[test]
        fn combine_splits(data in proptest::collection::vec(any::<u8>(), 0..200), at in 0usize..100) {
            // Splitting at an even offset must not change the sum.
            let at = (at * 2).min(data.len() & !1);
            let (a, b) = data.split_at(at);
            prop_assert_eq!(combine(&[fold(sum(a)), fold(sum(b))]), naive(&data));
        }

        /// RFC 1624: incremental update equals full recomputation for a
        /// random IPv4-like header (first word nonzero, as in every real
        /// IPv4 header) with a random word replaced.
        #[test]
        fn incremental_equals_recompute(
            mut hdr in proptest::array::uniform20(any::<u8>()),
            idx in 0usize..10,
            new_word in any::<u16>(),
        ) {
            hdr[0] = 0x45;
            prop_assume!(idx != 5);
            hdr[10] = 0; hdr[11] = 0;
            let ck = finish(sum(&hdr));
            hdr[10..12].copy_from_slice(&ck.to_be_bytes());
            let old_word = u16::from_be_bytes([hdr[idx * 2], hdr[idx * 2 + 1]]);
            hdr[idx * 2..idx * 2 + 2].copy_from_slice(&new_word.to_be_bytes());
            let inc = update_u16(ck, old_word, new_word);
            hdr[10] = 0; hdr[11] = 0;
            prop_assert_eq!(inc, finish(sum(&hdr)));
        }

        /// A 16-byte field rewritten at once (the tester's sequence and
        /// timestamp) equals a full recomputation, as the word form does.
        #[test]
        fn incremental_field_equals_recompute(
            mut data in proptest::collection::vec(any::<u8>(), 40..80),
            at in 0usize..10,
            new in proptest::array::uniform16(any::<u8>()),
        ) {
            data[0] = 0x45;
            let at = 4 + at * 2;
            let ck = finish(sum(&data));
            let old = data[at..at + 16].to_vec();
            data[at..at + 16].copy_from_slice(&new);
            prop_assert_eq!(update(ck, &old, &new), finish(sum(&data)));
        }

        #[test]
        fn incremental_u32_equals_recompute(
            mut hdr in proptest::array::uniform20(any::<u8>()),
            new_src in any::<u32>(),
        ) {
            hdr[0] = 0x45;
            hdr[10] = 0; hdr[11] = 0;
            let ck = finish(sum(&hdr));
            let old = u32::from_be_bytes([hdr[12], hdr[13], hdr[14], hdr[15]]);
            hdr[12..16].copy_from_slice(&new_src.to_be_bytes());
            prop_assert_eq!(update_u32(ck, old, new_src), finish(sum(&hdr)));
        }
    }
}
