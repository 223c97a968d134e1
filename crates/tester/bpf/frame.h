/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * The test frame as the BPF programs see it: the same layout as the Rust
 * side (`packet::test_frame`, RFC 2544 Appendix C frames), named the
 * same way, so the two can be read side by side.
 *
 *   Ethernet II | IPv4 (20, no options) or IPv6 (40) | UDP (dst port 7)
 *   | test header | incrementing octets
 *
 * Test header, by UDP payload length:
 *   long  (>= 32): "SRBENCH1" | stream u32 | flags u32 | seq u64 | tx_ns u64
 *   short (12..32): "SR" | stream u16 | seq u32 | tx_ns low 32 bits u32
 * All big-endian.
 */
#ifndef SR_FRAME_H
#define SR_FRAME_H

#include <linux/types.h>

#define ETH_LEN 14
#define IPV4_LEN 20
#define IPV6_LEN 40
#define UDP_LEN 8
#define ETH_P_IPV4_BE 0x0008 /* htons(0x0800) as loaded little-endian */
#define ETH_P_IPV6_BE 0xDD86 /* htons(0x86DD) */
#define IPPROTO_UDP_ 17
#define UDP_DST_PORT 7

#define LONG_HEADER_LEN 32
#define SHORT_HEADER_LEN 12
#define FLAG_LEARNING 1

/* Offsets inside the test header (from the UDP payload start). */
#define LONG_STREAM 8
#define LONG_FLAGS 12
#define LONG_SEQ 16
#define LONG_TS 24
#define SHORT_STREAM 2
#define SHORT_SEQ 4
#define SHORT_TS 8

/* "SRBENCH1" and "SR" as loaded little-endian from the wire. */
#define SIGNATURE_LE 0x3148434e45425253ULL
#define SHORT_SIGNATURE_LE 0x5253

/* One's complement sum helpers (RFC 1071 / RFC 1624). */
static __always_inline __u32 csum_add_u64(__u32 acc, __u64 v)
{
	return acc + (__u32)(v >> 48) + (__u32)((v >> 32) & 0xffff) +
	       (__u32)((v >> 16) & 0xffff) + (__u32)(v & 0xffff);
}

static __always_inline __u16 csum_fold(__u32 acc)
{
	acc = (acc & 0xffff) + (acc >> 16);
	acc = (acc & 0xffff) + (acc >> 16);
	return (__u16)acc;
}

#endif
