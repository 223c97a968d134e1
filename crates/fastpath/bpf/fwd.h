/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * The XDP fast path's view of softrouter's tables and its own maps. Every
 * layout here has a Rust twin, named in the comment; the numbers come
 * from the Rust side (sr_layout.h, generated from it), and each struct is
 * asserted against them, so the two cannot drift apart.
 */
#ifndef SR_FWD_H
#define SR_FWD_H

#include <linux/types.h>

#include "sr_layout.h"

/* Table memory shared with the workers (fib::memory): u32 and u64 arrays
 * stored as 64-byte values, so the mmap is one contiguous array. */
struct u32x16 {
	__u32 v[16];
};
struct u64x8 {
	__u64 v[8];
};
_Static_assert(sizeof(struct u32x16) == FP_TABLE_VALUE, "fastpath::layout::TABLE_VALUE");
_Static_assert(sizeof(struct u64x8) == FP_TABLE_VALUE, "fastpath::layout::TABLE_VALUE");

/* dataplane::neighbor::NeighEntry: the fields read here, at the Rust
 * offsets; the rest only keep the size. */
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
_Static_assert(sizeof(struct fp_neigh) == NEIGH_SIZE, "NeighEntry");
_Static_assert(__builtin_offsetof(struct fp_neigh, word) == NEIGH_OFF_WORD, "NeighEntry");
_Static_assert(__builtin_offsetof(struct fp_neigh, confirmed_ms) == NEIGH_OFF_CONFIRMED_MS,
	       "NeighEntry");
_Static_assert(__builtin_offsetof(struct fp_neigh, used_ms) == NEIGH_OFF_USED_MS, "NeighEntry");

/* fastpath::layout::PortSlot: a router port as the program sees it.
 * Flags: FP_PORT_XDP_TX, the port takes redirected XDP frames (its driver
 * has ndo_xdp_xmit and, for a veth, its peer can receive them; without
 * it, traffic to the port goes through the workers); FP_PORT_KERNEL_LOCAL,
 * `[kernel] local`: the kernel's stack on this interface takes what the
 * workers do not answer for the router's addresses (all but ICMP echo
 * requests), every ARP and ND frame, link-local unicast and multicast. */
struct fp_port {
	__u8 mac[6];
	__u16 mtu;
	__u32 flags;
	__u32 _pad;
};
_Static_assert(sizeof(struct fp_port) == FP_PORT_SIZE, "PortSlot");
_Static_assert(__builtin_offsetof(struct fp_port, mac) == FP_PORT_OFF_MAC, "PortSlot");
_Static_assert(__builtin_offsetof(struct fp_port, mtu) == FP_PORT_OFF_MTU, "PortSlot");
_Static_assert(__builtin_offsetof(struct fp_port, flags) == FP_PORT_OFF_FLAGS, "PortSlot");

/* fastpath::layout::Clock: the workers' clock, so both tiers age
 * neighbours alike (now_ms = (monotonic - epoch_ns) / 1e6 + offset_ms). */
struct fp_clock {
	__u64 epoch_ns;
	__u64 offset_ms;
	__u64 reachable_ms;
};
_Static_assert(sizeof(struct fp_clock) == FP_CLOCK_SIZE, "Clock");
_Static_assert(__builtin_offsetof(struct fp_clock, epoch_ns) == FP_CLOCK_OFF_EPOCH_NS, "Clock");
_Static_assert(__builtin_offsetof(struct fp_clock, offset_ms) == FP_CLOCK_OFF_OFFSET_MS, "Clock");
_Static_assert(__builtin_offsetof(struct fp_clock, reachable_ms) == FP_CLOCK_OFF_REACHABLE_MS,
	       "Clock");

/* fastpath::layout::Counters: per port and CPU, indexed by enum
 * fp_counter (fastpath::layout::Counter, which says what each counts). */
struct fp_counters {
	__u64 c[FP_NCOUNTERS];
};
_Static_assert(sizeof(struct fp_counters) == FP_COUNTERS_SIZE, "Counters");

/* fastpath::layout::Identity: what the tracepoint programs recognise the
 * forwarding program's events by (kernel ids, written at load). */
struct fp_identity {
	__u32 prog_id;
	__u32 tx_map_id;
	__u64 netns_cookie;
};
_Static_assert(sizeof(struct fp_identity) == FP_IDENTITY_SIZE, "Identity");
_Static_assert(__builtin_offsetof(struct fp_identity, prog_id) == FP_IDENTITY_OFF_PROG_ID,
	       "Identity");
_Static_assert(__builtin_offsetof(struct fp_identity, tx_map_id) == FP_IDENTITY_OFF_TX_MAP_ID,
	       "Identity");
_Static_assert(__builtin_offsetof(struct fp_identity, netns_cookie) ==
		       FP_IDENTITY_OFF_NETNS_COOKIE,
	       "Identity");

/* fastpath::layout::InSlot: the ingress port cache's slot of an
 * interface (slot ifindex % FP_IN_SLOTS; ifindex 0: empty). */
struct fp_in_slot {
	__u32 ifindex;
	__u32 port;
};
_Static_assert(sizeof(struct fp_in_slot) == FP_IN_SLOT_SIZE, "InSlot");
_Static_assert(__builtin_offsetof(struct fp_in_slot, ifindex) == FP_IN_SLOT_OFF_IFINDEX, "InSlot");
_Static_assert(__builtin_offsetof(struct fp_in_slot, port) == FP_IN_SLOT_OFF_PORT, "InSlot");
_Static_assert((FP_IN_SLOTS & (FP_IN_SLOTS - 1)) == 0, "IN_SLOTS is a power of two");

#endif
