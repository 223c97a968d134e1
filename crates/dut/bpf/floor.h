/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * The floor DUT's map value and frame offsets; the Rust twin of
 * `struct floor_hop` is `dut::floor::Hop` (its size is asserted there).
 */
#ifndef SR_FLOOR_H
#define SR_FLOOR_H

#include <linux/types.h>

/* Ports the program serves (the addressing plan has at most 256). */
#define FLOOR_MAX_PORTS 256

#define FLOOR_ETHERTYPE_OFF 12
#define FLOOR_ETH_IPV4 0x0800
#define FLOOR_ETH_IPV6 0x86dd
/* Ethernet 14 + IPv4 destination at 16 + byte 2 (198.19.i.x). */
#define FLOOR_V4_PORT_OFF 32
/* Ethernet 14 + IPv6 destination at 24 + byte 7 (2001:2:0:01ii::). */
#define FLOOR_V6_PORT_OFF 45
#define FLOOR_V6_NET_BYTE 0x01

struct floor_hop {
	__u8 dst[6]; /* the tester port's MAC */
	__u8 src[6]; /* the DUT port's own */
	__u32 valid;
};

_Static_assert(sizeof(struct floor_hop) == 16, "floor_hop is dut::floor::Hop");

#endif
