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

/// The ICMP fixed header's accessors, written once for ICMPv4 (RFC 792)
/// and ICMPv6 (RFC 4443), whose headers are the same: type, code,
/// checksum, then four bytes whose meaning depends on the type (echo
/// identifier and sequence, MTU, pointer), then the data. Given the
/// module's offsets (its own names, as its C twin has them), it adds to
/// that module's `Packet` view `check_len` (the fixed header) and the
/// getters and setters of those fields; `Message` is the module's type
/// enum. Each module keeps what differs: the type-specific words (a
/// 16-bit MTU and an 8-bit pointer in ICMPv4, 32-bit ones in ICMPv6) and
/// the checksum (ICMPv6's covers a pseudo header).
macro_rules! icmp_header {
    (
        len: $len:ident, msg_type: $typ:ident, code: $code:ident,
        checksum: $csum:ident, rest: $rest:ident
    ) => {
        impl<T: AsRef<[u8]>> Packet<T> {
            /// Checks that the buffer holds the fixed header.
            #[inline]
            pub fn check_len(&self) -> $crate::Result<()> {
                if self.buffer.as_ref().len() < $len {
                    Err($crate::Error::Truncated)
                } else {
                    Ok(())
                }
            }

            /// Message type.
            #[inline]
            pub fn msg_type(&self) -> Message {
                Message::from(self.msg_type_raw())
            }

            /// Message type as a number (one of the module's type
            /// constants).
            #[inline]
            pub fn msg_type_raw(&self) -> u8 {
                self.buffer.as_ref()[$typ]
            }

            /// Message code.
            #[inline]
            pub fn code(&self) -> u8 {
                self.buffer.as_ref()[$code]
            }

            /// Checksum field.
            #[inline]
            pub fn checksum(&self) -> u16 {
                $crate::field::get_u16(self.buffer.as_ref(), $csum)
            }

            /// Echo identifier (bytes 4..6).
            #[inline]
            pub fn echo_ident(&self) -> u16 {
                $crate::field::get_u16(self.buffer.as_ref(), $rest)
            }

            /// Echo sequence number (bytes 6..8).
            #[inline]
            pub fn echo_seq_no(&self) -> u16 {
                $crate::field::get_u16(self.buffer.as_ref(), $rest + 2)
            }

            /// Everything after the 8-byte header: echo data, or the
            /// invoking packet's header and first bytes for error messages.
            #[inline]
            pub fn data(&self) -> &[u8] {
                &self.buffer.as_ref()[$len..]
            }
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
            /// Sets the type.
            #[inline]
            pub fn set_msg_type(&mut self, m: Message) {
                self.buffer.as_mut()[$typ] = m.into();
            }
            /// Sets the code.
            #[inline]
            pub fn set_code(&mut self, c: u8) {
                self.buffer.as_mut()[$code] = c;
            }
            /// Sets the checksum field.
            #[inline]
            pub fn set_checksum(&mut self, v: u16) {
                $crate::field::set_u16(self.buffer.as_mut(), $csum, v);
            }
            /// Sets the whole rest of the header (bytes 4..8) at once.
            #[inline]
            pub fn set_rest(&mut self, rest: [u8; 4]) {
                self.buffer.as_mut()[$rest..$len].copy_from_slice(&rest);
            }
            /// Sets the echo identifier.
            #[inline]
            pub fn set_echo_ident(&mut self, v: u16) {
                $crate::field::set_u16(self.buffer.as_mut(), $rest, v);
            }
            /// Sets the echo sequence number.
            #[inline]
            pub fn set_echo_seq_no(&mut self, v: u16) {
                $crate::field::set_u16(self.buffer.as_mut(), $rest + 2, v);
            }
            /// Mutable data after the header.
            #[inline]
            pub fn data_mut(&mut self) -> &mut [u8] {
                &mut self.buffer.as_mut()[$len..]
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
