/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * The Internet checksum (RFC 1071) and its incremental update (RFC 1624)
 * for every BPF program, with the conventions of `packet::checksum`: a
 * partial sum is a __u32 of 16-bit words, folded (not complemented) into
 * 16 bits by csum_fold; a received header verifies when the fold of its
 * sum is 0xffff; the value written into a header is the complement.
 */
#ifndef SR_CSUM_H
#define SR_CSUM_H

#include <linux/types.h>
#include <bpf/bpf_helpers.h>

/* A partial sum folded into 16 bits with end-around carry
 * (packet::checksum::fold). */
static __always_inline __u16 csum_fold(__u32 s)
{
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u16)s;
}

/* `acc` plus the four 16-bit words of `v`. */
static __always_inline __u32 csum_add_u64(__u32 acc, __u64 v)
{
	return acc + (__u32)(v >> 48) + (__u32)((v >> 32) & 0xffff) +
	       (__u32)((v >> 16) & 0xffff) + (__u32)(v & 0xffff);
}

/* The checksum field `check` after one 16-bit word it covers changed from
 * `old` to `new`: RFC 1624 eqn. 3, HC' = ~(~HC + ~m + m')
 * (packet::checksum::update_u16). */
static __always_inline __u16 csum_update16(__u16 check, __u16 old, __u16 new)
{
	return ~csum_fold((__u32)(__u16)~check + (__u16)~old + new);
}

#endif
