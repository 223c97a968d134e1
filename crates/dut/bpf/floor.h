/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * The floor DUT's map value and the bytes of a frame that name its egress
 * port; the Rust twin of `struct floor_hop` is `dut::floor::Hop` (its
 * size is asserted there).
 */
#ifndef SR_FLOOR_H
#define SR_FLOOR_H

#include <linux/types.h>

#include "sr_layout.h"

/* Ports the program serves (the addressing plan has at most 256). */
#define FLOOR_MAX_PORTS 256

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

_Static_assert(sizeof(struct floor_hop) == 16, "floor_hop is dut::floor::Hop");

#endif
