//! Why a frame was dropped: one counter per reason, snake_case names.
//!
//! Reasons are split in two families (see [`DropReason::is_input`]):
//! *input* reasons account for received frames (they appear in the
//! accounting identity, see [`crate::accounting`]); *output* reasons count
//! frames the router itself produced and could not send, or ICMP errors it
//! chose not to send (rate limit).

macro_rules! reasons {
    ($($variant:ident => $name:literal, $input:literal;)*) => {
        /// A drop reason. The discriminant indexes the per-worker counters.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum DropReason { $($variant,)* }

        impl DropReason {
            /// Every reason, in counter order.
            pub const ALL: &'static [DropReason] = &[$(DropReason::$variant,)*];
            /// Number of reasons.
            pub const COUNT: usize = Self::ALL.len();

            /// The snake_case name used in statistics.
            pub const fn name(self) -> &'static str {
                match self { $(DropReason::$variant => $name,)* }
            }

            /// True for reasons that account for a received frame.
            pub const fn is_input(self) -> bool {
                match self { $(DropReason::$variant => $input,)* }
            }
        }
    };
}

reasons! {
    // Ethernet
    TruncatedFrame => "truncated_frame", true;
    OtherHostMac => "other_host_mac", true;
    L2BroadcastNotLocal => "l2_broadcast_not_local", true;
    UnsupportedEthertype => "unsupported_ethertype", true;
    // ARP / ND / local
    ArpInvalid => "arp_invalid", true;
    ArpNotForUs => "arp_not_for_us", true;
    NdInvalid => "nd_invalid", true;
    NdNotForUs => "nd_not_for_us", true;
    IcmpInvalid => "icmp_invalid", true;
    PortUnreachable => "port_unreachable", true;
    LocalUnsupported => "local_unsupported", true;
    // IPv4 input checks (RFC 1812 5.2.2, 4.2.2.11, 5.3.7)
    Ipv4Truncated => "ipv4_truncated", true;
    Ipv4BadVersion => "ipv4_bad_version", true;
    Ipv4BadIhl => "ipv4_bad_ihl", true;
    Ipv4BadChecksum => "ipv4_bad_checksum", true;
    Ipv4BadLength => "ipv4_bad_length", true;
    Ipv4MartianSource => "ipv4_martian_source", true;
    Ipv4BroadcastDestination => "ipv4_broadcast_destination", true;
    Ipv4MartianDestination => "ipv4_martian_destination", true;
    Ipv4MulticastDestination => "ipv4_multicast_destination", true;
    Ipv4BadOptions => "ipv4_bad_options", true;
    // IPv6 input checks (RFC 8200, RFC 4291 2.5.2/2.5.3)
    Ipv6Truncated => "ipv6_truncated", true;
    Ipv6BadVersion => "ipv6_bad_version", true;
    Ipv6BadLength => "ipv6_bad_length", true;
    Ipv6BadSource => "ipv6_bad_source", true;
    Ipv6BadDestination => "ipv6_bad_destination", true;
    Ipv6MulticastDestination => "ipv6_multicast_destination", true;
    Ipv6LinkLocalScope => "ipv6_link_local_scope", true;
    // Forwarding
    TtlExceeded => "ttl_exceeded", true;
    HopLimitExceeded => "hop_limit_exceeded", true;
    NoRoute => "no_route", true;
    Blackhole => "blackhole", true;
    FragNeeded => "frag_needed", true;
    PacketTooBig => "packet_too_big", true;
    BadPort => "bad_egress_port", true;
    // Neighbor resolution
    HoldQueueFull => "hold_queue_full", true;
    NeighborTableFull => "neighbor_table_full", true;
    NeighborUnresolved => "neighbor_unresolved", true;
    HeldAtShutdown => "held_at_shutdown", true;
    NoBuffer => "no_buffer", true;
    // Hardening (issue 12): hostile neighbours and RFC corner cases.
    L2MulticastSource => "l2_multicast_source", true;
    ArpBadSender => "arp_bad_sender", true;
    NeighborOwnAddress => "neighbor_own_address", true;
    NeighborRateLimited => "neighbor_rate_limited", true;
    DirectedBroadcast => "directed_broadcast", true;
    SubnetRouterAnycast => "subnet_router_anycast", true;
    Ipv6ZeroPayloadLength => "ipv6_zero_payload_length", true;
    FragOffsetOverflow => "frag_offset_overflow", true;
    // Output side: not part of the input accounting identity.
    TxFull => "tx_full", false;
    IcmpRateLimited => "icmp_rate_limited", false;
    ReplyNoBuffer => "reply_no_buffer", false;
}

/// The output drop reasons counted by the devices, not the workers
/// (named with the snapshot's counters in the `schema` crate).
pub use schema::stats::{DEVICE_DROPS, DEVICE_TX_DROPPED, XDP_XMIT_ERRORS};

/// A reason names its counter, so a snapshot's
/// `drop_count(DropReason::NoRoute)` reads it.
impl AsRef<str> for DropReason {
    fn as_ref(&self) -> &str {
        self.name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_snake_case() {
        let mut seen = std::collections::HashSet::new();
        for (i, r) in DropReason::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i);
            assert!(seen.insert(r.name()));
            assert!(r
                .name()
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'));
        }
    }
}
