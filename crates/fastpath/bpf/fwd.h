/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * The XDP fast path's view of softrouter's tables and its own maps. Every
 * layout here has a Rust twin, named in the comment; `src/layout.rs`
 * asserts sizes and offsets, so the two cannot drift apart.
 */
#ifndef SR_FWD_H
#define SR_FWD_H

#include <linux/types.h>

/* Router ports and RX queues the program serves (map sizes). */
#define FP_MAX_PORTS 64
#define FP_MAX_QUEUES 64

/* Ethernet and IP, as `packet` names them. */
#define ETH_LEN 14
#define ETH_IPV4 0x0800
#define ETH_IPV6 0x86dd
#define IPV4_LEN 20
#define IPV6_LEN 40
#define ETH_ARP 0x0806
#define PROTO_ICMP 1
#define PROTO_TCP 6
#define PROTO_UDP 17
#define PROTO_ICMPV6 58
#define ICMP_ECHO 8
#define ICMPV6_ECHO_REQUEST 128
#define IPV6_NH_HOP_BY_HOP 0

/* fib::entry: valid | ext | 30-bit payload. */
#define ENTRY_VALID (1u << 31)
#define ENTRY_EXT (1u << 30)
#define ENTRY_PAYLOAD (ENTRY_EXT - 1)
/* fib::Target: bit 29 marks an ECMP group. */
#define TARGET_GROUP (1u << 29)
#define TARGET_INDEX (TARGET_GROUP - 1)
/* fib::lpm6: levels of tbl8 groups below tbl24 (bits 24..128). */
#define LPM6_LEVELS 13

/* fib::nexthop descriptor: bit 63 valid | kind in bits 32..35 | port. */
#define NH_VALID (1ull << 63)
#define NH_KIND_GW4 1
#define NH_KIND_GW6 2
#define NH_KIND_CONNECTED 3
#define NH_KIND_LOCAL 4
#define NH_KIND_BLACKHOLE 5

/* dataplane::neighbor: word = MAC (48) | state (3) | generation (13). */
#define NEIGH_MAC_MASK 0xffffffffffffull
#define NEIGH_STATE_SHIFT 48
#define NEIGH_STATE_REACHABLE 1
#define NEIGH_STATE_STATIC 2
/* dataplane::neighbor::TOUCH_MS: `used_ms` is written at most this often. */
#define NEIGH_TOUCH_MS 1000

/* Table memory shared with the workers (fib::memory): u32 and u64 arrays
 * stored as 64-byte values, so the mmap is one contiguous array. */
struct u32x16 {
	__u32 v[16];
};
struct u64x8 {
	__u64 v[8];
};

/* dataplane::neighbor::NeighEntry (#[repr(C, align(64))]). */
struct fp_neigh {
	__u64 word;
	__u64 confirmed_ms;
	__u64 solicited_ms;
	__u64 since_ms;
	__u64 used_ms;
	__u32 life;
	__u8 dynamic;
	__u8 _pad[19];
};

/* fastpath::layout::PortSlot: a router port as the program sees it. */
struct fp_port {
	__u8 mac[6];
	__u16 mtu;
	__u32 flags;
	__u32 _pad;
};
/* The port takes redirected XDP frames (its driver has ndo_xdp_xmit and,
 * for a veth, its peer can receive them). Without it, traffic to the port
 * goes through the workers. */
#define FP_PORT_XDP_TX 1
/* `[kernel] local`: the kernel's stack on this interface takes what the
 * workers do not answer for the router's addresses (all but ICMP echo
 * requests), every ARP and ND frame, link-local unicast and multicast. */
#define FP_PORT_KERNEL_LOCAL 2

/* fastpath::layout::Clock: the workers' clock, so both tiers age
 * neighbours alike (now_ms = (monotonic - epoch_ns) / 1e6 + offset_ms). */
struct fp_clock {
	__u64 epoch_ns;
	__u64 offset_ms;
	__u64 reachable_ms;
};

/* fastpath::Counter: per port and CPU. Forwarded frames count on their
 * ingress port (rx_*) and egress port (tx_*); punts count on the ingress
 * port by reason. */
enum fp_counter {
	FP_RX_FORWARDED,
	FP_RX_FORWARDED_BYTES,
	FP_TX,
	FP_TX_BYTES,
	FP_PUNT_L2,        /* not to the port's MAC, or from a group MAC */
	FP_PUNT_NOT_IP,    /* ARP, 802.1Q, other EtherTypes */
	FP_PUNT_HEADER,    /* any IP header check the workers must judge */
	FP_PUNT_NO_ROUTE,
	FP_PUNT_LOCAL,     /* for the router itself */
	FP_PUNT_CONNECTED, /* a host on a connected subnet, no host entry yet */
	FP_PUNT_BLACKHOLE,
	FP_PUNT_TTL,       /* TTL / hop limit <= 1 */
	FP_PUNT_MTU,       /* larger than the egress MTU */
	FP_PUNT_NEIGH,     /* neighbour not REACHABLE or STATIC */
	FP_PUNT_EGRESS,    /* egress port cannot take XDP frames */
	FP_PUNT_TABLE,     /* an id beyond a table (writer bug or resize) */
	FP_XMIT_DROPS,     /* redirected here, dropped by the driver (egress port) */
	FP_TO_KERNEL,      /* FP_PORT_KERNEL_LOCAL: passed to the kernel's stack */
	FP_NCOUNTERS,
};

struct fp_counters {
	__u64 c[FP_NCOUNTERS];
};

/* fastpath::layout::Identity: what the tracepoint programs recognise the
 * forwarding program's events by (kernel ids, written at load). */
struct fp_identity {
	__u32 prog_id;
	__u32 tx_map_id;
};

#endif
