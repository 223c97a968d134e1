//! The one Rust description of every header softrouter touches: Ethernet,
//! 802.1Q, ARP, IPv4, IPv6, ICMP, ICMPv6 with Neighbor Discovery, UDP, and
//! the Internet checksum.
//!
//! Modelled on smoltcp's `wire` module: each protocol has one file with
//! its layout as constants (offsets, lengths, type and code values), a
//! view type (`Packet<T>` / `Frame<T>` / `Tag<T>`) that wraps any
//! `T: AsRef<[u8]>` without copying, and (where useful) a plain `Repr`
//! struct that can be parsed from and emitted into a view. [`build`]
//! writes whole frames a router or a test host originates (ARP, NS/NA,
//! ICMP errors).
//!
//! Who uses what: the dataplane reads and rewrites packets through the
//! views (zero-cost: a view is the slice, a getter one bounds-checked load)
//! and builds its replies with [`build`]; the tester builds and parses its
//! test frames with the `Repr`s and views; tests build frames with both.
//!
//! Constants carry the names a C program uses, so an XDP program mirrors
//! them word for word: lengths, EtherTypes and protocol numbers as the
//! project's C headers already name them (`ETH_LEN`, `ETH_IPV4`,
//! `IPV4_LEN`, `IPV6_LEN`, `UDP_LEN`, `PROTO_UDP`, ...), field offsets
//! after the Linux structs (`IPV4_TTL` for `iphdr.ttl`, `IPV6_HOP_LIMIT`,
//! `ARP_SHA`, ...), and types, codes and flags as the Linux UAPI headers
//! have them (`ICMP_DEST_UNREACH`, `ICMPV6_PKT_TOOBIG`,
//! `NDISC_NEIGHBOUR_SOLICITATION`, `ND_OPT_SOURCE_LL_ADDR`, `IP_DF`, ...).
//!
//! Safety contract: `new_checked` validates every length that a getter or
//! `payload()` later relies on, so all getters of a checked view are
//! panic-free on arbitrary input. `new_unchecked` skips validation and is
//! meant for buffers the caller has just sized itself (e.g. before `emit`).
//! Nothing here allocates.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use core::fmt;

/// A header view's skeleton, written once: the struct over any
/// `T: AsRef<[u8]>` (its `buffer` field private, or as visible as given),
/// and its `new_unchecked`, `new_checked` and `into_inner`. Each view's
/// own `impl` adds `check_len` (what `new_checked` proves) and the
/// getters that rely on it.
macro_rules! view {
    ($(#[$doc:meta])* $name:ident { $field_vis:vis buffer }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name<T: AsRef<[u8]>> {
            $field_vis buffer: T,
        }

        impl<T: AsRef<[u8]>> $name<T> {
            /// Wraps `buffer` without checking it.
            #[inline]
            pub const fn new_unchecked(buffer: T) -> $name<T> {
                $name { buffer }
            }

            /// Wraps `buffer` after [`check_len`](Self::check_len).
            #[inline]
            pub fn new_checked(buffer: T) -> Result<$name<T>> {
                let v = Self::new_unchecked(buffer);
                v.check_len()?;
                Ok(v)
            }

            /// Returns the wrapped buffer.
            #[inline]
            pub fn into_inner(self) -> T {
                self.buffer
            }
        }
    };
}

pub mod arp;
pub mod build;
pub mod checksum;
pub mod ethernet;
pub mod icmpv4;
pub mod icmpv6;
pub mod ip;
pub mod ipv4;
pub mod ipv6;
pub mod ndp;
pub mod test_frame;
pub mod udp;
pub mod vlan;

pub use ip::Protocol;

/// Why a buffer could not be viewed or parsed as a given protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Error {
    /// The buffer is shorter than the header or a length field claims.
    Truncated,
    /// A field holds a value the format forbids (bad version, IHL < 5, ...).
    Malformed,
    /// The checksum does not verify.
    Checksum,
    /// Well-formed, but outside what this crate represents (e.g. an ARP
    /// packet for a non-Ethernet/IPv4 pair, an IPv4 `Repr` with options).
    Unsupported,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Error::Truncated => "truncated packet",
            Error::Malformed => "malformed packet",
            Error::Checksum => "checksum error",
            Error::Unsupported => "unsupported packet",
        };
        f.write_str(s)
    }
}

impl std::error::Error for Error {}

/// Result alias used throughout the crate.
pub type Result<T> = core::result::Result<T, Error>;

/// Big-endian field accessors, shared by the views and by code that reads
/// a field at one of the offset constants (a transport port for a flow
/// hash). Each is a bounds check plus a plain load/store; views call them
/// only with offsets that their `check_len` has already proven in range.
pub mod field {
    // One range check, then the `unwrap` on a slice of known length is
    // folded away: a load plus a byte swap (checked with --emit asm).
    /// The big-endian `u16` at `at`.
    #[inline]
    pub fn get_u16(b: &[u8], at: usize) -> u16 {
        u16::from_be_bytes(b[at..at + 2].try_into().unwrap())
    }
    /// The big-endian `u32` at `at`.
    #[inline]
    pub fn get_u32(b: &[u8], at: usize) -> u32 {
        u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
    }
    /// Writes `v` big-endian at `at`.
    #[inline]
    pub fn set_u16(b: &mut [u8], at: usize, v: u16) {
        b[at..at + 2].copy_from_slice(&v.to_be_bytes());
    }
    /// Writes `v` big-endian at `at`.
    #[inline]
    pub fn set_u32(b: &mut [u8], at: usize, v: u32) {
        b[at..at + 4].copy_from_slice(&v.to_be_bytes());
    }
    /// The `N` bytes at `at`.
    #[inline]
    pub fn get_array<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
        let mut out = [0u8; N];
        out.copy_from_slice(&b[at..at + N]);
        out
    }
}
