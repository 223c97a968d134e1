/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * The floor DUT's map value and the bytes of a frame that name its egress
 * port. The Rust twin of `struct floor_hop` is `dut::floor::Hop`: its
 * size and offsets, and the maps' size FLOOR_MAX_PORTS, come from there
 * through sr_layout.h.
 */
#ifndef SR_FLOOR_H
#define SR_FLOOR_H

#include <linux/types.h>

#include "sr_layout.h"

/* Byte 2 of an IPv4 destination (198.19.i.x). */
#define FLOOR_V4_PORT_OFF (ETH_LEN + IPV4_DADDR + 2)
/* Byte 7 of an IPv6 destination (2001:2:0:01ii::). */
#define FLOOR_V6_PORT_OFF (ETH_LEN + IPV6_DADDR + 7)
#define FLOOR_V6_NET_BYTE 0x01

struct floor_hop {
	__u8 dst[6]; /* the tester port's MAC */
	__u8 src[6]; /* the DUT port's own */
	__u32 valid;
};

_Static_assert(sizeof(struct floor_hop) == FLOOR_HOP_SIZE, "dut::floor::Hop");
_Static_assert(__builtin_offsetof(struct floor_hop, dst) == FLOOR_HOP_OFF_DST, "dut::floor::Hop");
_Static_assert(__builtin_offsetof(struct floor_hop, src) == FLOOR_HOP_OFF_SRC, "dut::floor::Hop");
_Static_assert(__builtin_offsetof(struct floor_hop, valid) == FLOOR_HOP_OFF_VALID, "dut::floor::Hop");

#endif
