// SPDX-License-Identifier: Apache-2.0 OR MIT
/*
 * The floor DUT (`--dut floor`): on every DUT port, redirect each frame to
 * the port its destination address names in the testbed's addressing plan,
 * with the MACs of that hop, and nothing else: no TTL, no checksum, no
 * table walk, no counter.
 *
 * Why: on a veth wire most of what any XDP forwarder costs per packet is
 * the wire's (veth NAPI, the redirect, the peer's receive), not the
 * program. This DUT pays exactly that and the least a forwarder can add
 * (one byte of the destination, one array lookup, the MAC rewrite), so a
 * run that has it beside another DUT says how far that DUT is from the
 * limit of the hook: its rate and cycles per packet "x the floor".
 *
 * The egress port is the testbed's plan (`testbed::topology`): port i's
 * destination networks are 198.19.i.0/24 and 2001:2:0:(0x100+i)::/64, so
 * it is byte 2 of an IPv4 destination, byte 7 of an IPv6 one (byte 6
 * must be 0x01, which also keeps multicast ND off the ports). Everything
 * else (ARP, ND, anything outside the plan) is XDP_PASS: the DUT's ports
 * are bare, the kernel there ignores it.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "floor.h"

/* Egress port -> the MACs of its hop (`dut::floor::Hop`). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FLOOR_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct floor_hop);
} floor_hops SEC(".maps");

/* Egress port -> ifindex. */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, FLOOR_MAX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} floor_tx SEC(".maps");

SEC("xdp")
int sr_floor(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u8 *f = data;
	__u32 port;

	/* Every frame of the plan is longer (the shortest is 60 bytes). */
	if (data + FLOOR_V6_PORT_OFF + 1 > end)
		return XDP_PASS;
	__u16 proto = *(__u16 *)(f + ETH_TYPE);
	if (proto == bpf_htons(ETH_IPV4))
		port = f[FLOOR_V4_PORT_OFF];
	else if (proto == bpf_htons(ETH_IPV6) && f[FLOOR_V6_PORT_OFF - 1] == FLOOR_V6_NET_BYTE)
		port = f[FLOOR_V6_PORT_OFF];
	else
		return XDP_PASS;
	struct floor_hop *hop = bpf_map_lookup_elem(&floor_hops, &port);
	if (!hop || !hop->valid)
		return XDP_PASS;
	__builtin_memcpy(f + ETH_DST, hop->dst, ETH_ALEN);
	__builtin_memcpy(f + ETH_SRC, hop->src, ETH_ALEN);
	return bpf_redirect_map(&floor_tx, port, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
