// SPDX-License-Identifier: Apache-2.0 OR MIT
/*
 * softrouter's XDP fast path: forwards the common case in the driver hook
 * and punts everything else to the workers over AF_XDP.
 *
 * Why (the XDP paper, and this machine): on interfaces without zero-copy
 * AF_XDP every frame the workers forward is copied into the UMEM and out
 * again through an skb; forwarding in the hook costs neither.
 *
 * The rules it keeps:
 *
 * - One FIB, two readers. The LPM tables, next hops and neighbour entries
 *   are the workers' own memory (`BPF_F_MMAPABLE` arrays mapped into the
 *   router, written by its single writer), read here with plain loads of
 *   whole words, as the workers read them. A route change reaches both
 *   tiers at once.
 * - It decides only what it is sure of. A frame is forwarded only when the
 *   workers would forward it unchanged but for TTL, checksum and MACs:
 *   for the port's own MAC, IPv4 without options or IPv6, every RFC 1812 /
 *   RFC 8200 check passed, a route through a gateway whose neighbour is
 *   REACHABLE (confirmed within the reachable time) or STATIC, TTL or hop
 *   limit above 1, no larger than the egress MTU, and an egress port that
 *   takes XDP frames. Anything else is punted to the workers, which drop,
 *   answer (ICMP, ARP, ND), resolve or fragment it exactly as without this
 *   tier; so behaviour seen from outside does not depend on the tier.
 * - The same ECMP member as the workers: the flow hash is fib::flow_hash,
 *   written out below with the same constants, on the same fields.
 * - Counters per CPU and port: forwarded (ingress and egress) and punted
 *   by reason; user space merges them into the router's statistics.
 * - With `[kernel] local` (FP_PORT_KERNEL_LOCAL) the kernel's stack on
 *   the same interface and addresses takes the router's traffic that the
 *   workers do not answer (BGP's TCP, OSPF), ARP, ND and link-local
 *   traffic (XDP_PASS, counted FP_TO_KERNEL), so a routing daemon runs
 *   beside softrouter; echo requests stay the workers'.
 *
 * Names and constants are those of `packet`, `fib` and the dataplane's
 * neighbour entry (sr_layout.h, generated from them), so the C and the
 * Rust can be read side by side.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>

#include "csum.h"
#include "fwd.h"

/* The shared tables (fib::memory::names). Sizes are set at load. */
#define TABLE(name, vtype)                                \
	struct {                                          \
		__uint(type, BPF_MAP_TYPE_ARRAY);          \
		__uint(map_flags, BPF_F_MMAPABLE);         \
		__uint(max_entries, 1);                    \
		__type(key, __u32);                        \
		__type(value, vtype);                      \
	} name SEC(".maps")

TABLE(lpm4_tbl24, struct u32x16);
TABLE(lpm4_tbl8, struct u32x16);
TABLE(lpm6_tbl24, struct u32x16);
TABLE(lpm6_tbl8, struct u32x16);
TABLE(nh_desc, struct u64x8);
TABLE(nh_groups, struct u64x8);
TABLE(nh_members, struct u32x16);
TABLE(neigh, struct fp_neigh);
TABLE(clock, struct fp_clock);

/* Router port of each attached interface (key: ifindex). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FP_MAX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} in_ports SEC(".maps");

/* The same, direct-mapped (fastpath::layout::InSlot says why): read
 * first, the hash only when the slot holds another interface. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FP_IN_SLOTS);
	__type(key, __u32);
	__type(value, struct fp_in_slot);
} in_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FP_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct fp_port);
} ports SEC(".maps");

/* Egress: router port -> ifindex. */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, FP_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
} tx_ports SEC(".maps");

/* Punt: the workers' AF_XDP sockets (key: port * FP_MAX_QUEUES + queue). */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, FP_MAX_PORTS * FP_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FP_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct fp_counters);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fp_identity);
} identity SEC(".maps");

/* The router port of interface `ifindex`: 0 with it in *port, or -1
 * when the interface is not the router's. */
static __always_inline int port_of(__u32 ifindex, __u32 *port)
{
	__u32 k = ifindex & (FP_IN_SLOTS - 1);
	struct fp_in_slot *s = bpf_map_lookup_elem(&in_slots, &k);
	if (s && s->ifindex == ifindex) {
		*port = s->port;
		return 0;
	}
	__u32 *p = bpf_map_lookup_elem(&in_ports, &ifindex);
	if (!p)
		return -1;
	*port = *p;
	return 0;
}

/* Per CPU: the coarse clock as read at jiffy `jiffies` (the program's
 * own, user space never reads it). */
struct fp_now {
	__u64 jiffies;
	__u64 mono_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fp_now);
} now_cache SEC(".maps");

/* CLOCK_MONOTONIC, coarse: bpf_ktime_get_coarse_ns() read once a jiffy
 * per CPU. Why: the helper costs ~17 ns a call here (tier_cost), the
 * jiffies counter one load (the verifier inlines bpf_jiffies64), and the
 * coarse clock moves only at a tick anyway. The cost: a CPU that reads
 * the new jiffy just before the tick updates the clock keeps the old
 * value until the next jiffy, so this clock lags by up to two ticks
 * instead of one (8 ms at HZ 250), against a reachable time of seconds. */
static __always_inline __u64 coarse_ns(void)
{
	__u32 zero = 0;
	struct fp_now *c = bpf_map_lookup_elem(&now_cache, &zero);
	__u64 j = bpf_jiffies64();
	if (!c)
		return bpf_ktime_get_coarse_ns();
	if (c->jiffies != j) {
		c->jiffies = j;
		c->mono_ns = bpf_ktime_get_coarse_ns();
	}
	return c->mono_ns;
}

/* ---- table reads (fib::lpm4 / lpm6 / nexthop, reader side) ---- */

/* Entry i of a u32 table; 0 ("no route") beyond its end. */
static __always_inline __u32 u32_at(void *table, __u32 i, int *bad)
{
	__u32 k = i >> 4;
	struct u32x16 *b = bpf_map_lookup_elem(table, &k);
	if (!b) {
		*bad = 1;
		return 0;
	}
	return *(volatile __u32 *)&b->v[i & 15];
}

static __always_inline __u64 u64_at(void *table, __u32 i, int *bad)
{
	__u32 k = i >> 3;
	struct u64x8 *b = bpf_map_lookup_elem(table, &k);
	if (!b) {
		*bad = 1;
		return 0;
	}
	return *(volatile __u64 *)&b->v[i & 7];
}

/* DIR-24-8 (fib::lpm4::lookup): the entry for `dst` (host order). */
static __always_inline __u32 lookup4(__u32 dst, int *bad)
{
	__u32 e = u32_at(&lpm4_tbl24, dst >> 8, bad);
	if (e & ENTRY_EXT)
		e = u32_at(&lpm4_tbl8, (e & ENTRY_PAYLOAD) * TBL8_GROUP_SIZE + (dst & 0xff), bad);
	return e;
}

/* Multibit trie (fib::lpm6::lookup): tbl24, then one byte per level;
 * `d` is the destination in the frame (the caller checked the header's
 * bounds), read where the walk needs it rather than copied. */
static __always_inline __u32 lookup6(const __u8 *d, int *bad)
{
	__u32 e = u32_at(&lpm6_tbl24, (__u32)d[0] << 16 | (__u32)d[1] << 8 | d[2], bad);
	/* A bounded loop (the verifier checks it); not unrolled: each level
	 * is a map read that ends the walk when the entry is not extended. */
	for (int l = 0; l < LPM6_LEVELS; l++) {
		if (!(e & ENTRY_EXT))
			break;
		e = u32_at(&lpm6_tbl8, (e & ENTRY_PAYLOAD) * TBL8_GROUP_SIZE + d[3 + l], bad);
	}
	return e;
}

/* fib::flow_hash: multiply-xorshift finaliser. */
static __always_inline __u64 mix(__u64 x)
{
	x = (x ^ (x >> 32)) * 0xd6e8feb86659fd93ull;
	x = (x ^ (x >> 32)) * 0xd6e8feb86659fd93ull;
	return x ^ (x >> 32);
}

#define K1 0x9e3779b97f4a7c15ull
#define K2 0xc2b2ae3d27d4eb4full
#define K3 0x165667b19e3779f9ull
#define K4 0x85ebca77c2b2ae63ull

static __always_inline __u64 hash_ports(__u8 proto, __u16 sport, __u16 dport)
{
	return (__u64)proto << 32 | (__u64)sport << 16 | dport;
}

static __always_inline __u64 rotl(__u64 x, int r)
{
	return x << r | x >> (64 - r);
}

/* The LPM entry's target is an ECMP group: only then does the member
 * depend on the flow hash, so only then is it computed (a route to one
 * next hop, the common case, skips it). */
static __always_inline int is_group(__u32 entry)
{
	return (entry & ENTRY_VALID) && (entry & ENTRY_PAYLOAD & TARGET_GROUP);
}

/* fib::nexthop::NextHopReader::resolve: the member for `hash`. */
static __always_inline __u32 resolve(__u32 target, __u32 hash, int *bad)
{
	if (!(target & TARGET_GROUP))
		return target & TARGET_INDEX;
	__u64 w = u64_at(&nh_groups, target & TARGET_INDEX, bad);
	__u32 n = (__u32)(w >> NH_KIND_SHIFT) & NH_COUNT_MASK;
	if (!n)
		return 0;
	__u32 k = ((__u64)hash * n) >> 32;
	return u32_at(&nh_members, (__u32)w + k, bad);
}

/* ---- packet helpers ---- */

/* Big-endian words of the frame, one load each (the verifier allows
 * unaligned packet loads where the CPU does them; the JIT makes the
 * byte swap one instruction). */
static __always_inline __u16 load16(const __u8 *p)
{
	return bpf_ntohs(*(const __u16 *)p);
}

static __always_inline __u32 load32(const __u8 *p)
{
	return bpf_ntohl(*(const __u32 *)p);
}

static __always_inline __u64 load64(const __u8 *p)
{
	return bpf_be64_to_cpu(*(const __u64 *)p);
}

static __always_inline int mac_eq(const __u8 *a, const __u8 *b)
{
	return *(const __u32 *)a == *(const __u32 *)b &&
	       *(const __u16 *)(a + 4) == *(const __u16 *)(b + 4);
}

/* A punt: to the worker's socket on this port and queue, or to the stack
 * if there is none (as without this tier).
 *
 * A function of its own (a BPF-to-BPF call), so that its redirect and
 * send()'s are two call sites, each with one map: clang merges two
 * inlined bpf_redirect_map calls into one, and the verifier, seeing two
 * maps there, cannot bind the call to the map's own redirect; the
 * generic helper's indirect call cost ~18 ns a forwarded frame here
 * (tests/tier_cost.rs). */
static __attribute__((noinline)) int punt(struct xdp_md *ctx, struct fp_counters *cin, __u32 in_port,
				int reason)
{
	if (reason >= 0 && reason < FP_NCOUNTERS)
		cin->c[reason]++;
	__u32 q = ctx->rx_queue_index;
	if (q >= FP_MAX_QUEUES)
		return XDP_PASS;
	return bpf_redirect_map(&xsks, in_port * FP_MAX_QUEUES + q, XDP_PASS);
}

/* Where a packet goes, once the tables are read. */
struct verdict {
	__u32 port;  /* egress router port */
	__u64 mac;   /* neighbour MAC (NEIGH_MAC_MASK bits) */
	__u16 mtu;
	__u8 src[6]; /* egress port MAC */
};

/* The LPM entry resolved for `hash` to a usable neighbour: -1 with the
 * verdict filled, or the punt reason (a counter index). */
static __always_inline int next_hop(__u32 entry, __u32 hash, struct verdict *v)
{
	int bad = 0;
	if (!(entry & ENTRY_VALID))
		return FP_PUNT_NO_ROUTE;
	__u32 id = resolve(entry & ENTRY_PAYLOAD, hash, &bad);
	__u64 nh = u64_at(&nh_desc, id, &bad);
	if (bad || !(nh & NH_VALID))
		return FP_PUNT_TABLE;
	switch ((nh >> NH_KIND_SHIFT) & NH_KIND_MASK) {
	case NH_KIND_GW4:
	case NH_KIND_GW6:
		break;
	case NH_KIND_CONNECTED:
		return FP_PUNT_CONNECTED;
	case NH_KIND_LOCAL:
		return FP_PUNT_LOCAL;
	default:
		return FP_PUNT_BLACKHOLE;
	}
	__u32 port = (__u32)(nh & NH_PORT_MASK);
	struct fp_port *p = bpf_map_lookup_elem(&ports, &port);
	if (!p)
		return FP_PUNT_TABLE;
	if (!(p->flags & FP_PORT_XDP_TX))
		return FP_PUNT_EGRESS;

	/* dataplane::neighbor::NeighEntry::lookup, the Send case only. */
	struct fp_neigh *ne = bpf_map_lookup_elem(&neigh, &id);
	__u32 zero = 0;
	struct fp_clock *clk = bpf_map_lookup_elem(&clock, &zero);
	if (!ne || !clk)
		return FP_PUNT_TABLE;
	__u64 w = *(volatile __u64 *)&ne->word;
	__u64 state = (w >> NEIGH_STATE_SHIFT) & NEIGH_STATE_MASK;
	__u64 mono = coarse_ns();
	__u64 now_ms = (mono > clk->epoch_ns ? (mono - clk->epoch_ns) / 1000000 : 0) +
		       clk->offset_ms;
	if (state == NEIGH_STATE_REACHABLE) {
		__u64 c = *(volatile __u64 *)&ne->confirmed_ms;
		if (now_ms > c && now_ms - c > clk->reachable_ms)
			return FP_PUNT_NEIGH;
	} else if (state != NEIGH_STATE_STATIC) {
		return FP_PUNT_NEIGH;
	}
	/* NeighEntry::touch: the collector must see the entry in use. */
	__u64 used = *(volatile __u64 *)&ne->used_ms;
	if (now_ms > used && now_ms - used >= NEIGH_TOUCH_MS)
		*(volatile __u64 *)&ne->used_ms = now_ms;

	v->port = port;
	v->mac = w & NEIGH_MAC_MASK;
	v->mtu = p->mtu;
	__builtin_memcpy(v->src, p->mac, 6);
	return -1;
}

/* Trim Ethernet padding beyond the IP packet (the workers send only the
 * packet's own length), rewrite the MACs, count and redirect. */
static __always_inline int send(struct xdp_md *ctx, struct fp_counters *cin, struct verdict *v,
				__u32 len)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	if (data + ETH_LEN > end)
		return XDP_ABORTED;
	__u8 *eth = data;
#pragma unroll
	for (int i = 0; i < ETH_ALEN; i++)
		eth[ETH_DST + i] = (__u8)(v->mac >> (40 - 8 * i));
	__builtin_memcpy(eth + ETH_SRC, v->src, ETH_ALEN);
	__u32 frame = (__u32)(end - data);
	if (frame > len && bpf_xdp_adjust_tail(ctx, -(int)(frame - len)))
		return XDP_ABORTED;
	struct fp_counters *cout = bpf_map_lookup_elem(&counters, &v->port);
	if (cout) {
		cout->c[FP_TX]++;
		cout->c[FP_TX_BYTES] += len;
	}
	cin->c[FP_RX_FORWARDED]++;
	cin->c[FP_RX_FORWARDED_BYTES] += frame;
	return bpf_redirect_map(&tx_ports, v->port, 0);
}

/* IPv4 (dataplane::input::check_v4 and dataplane::forward::v4). */
static __always_inline int forward_v4(struct xdp_md *ctx, struct fp_counters *cin, __u32 in_port)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u8 *ip = data + ETH_LEN;
	if ((void *)(ip + IPV4_LEN) > end)
		return punt(ctx, cin, in_port, FP_PUNT_HEADER);
	/* Version 4 without options; options are the workers'. */
	if (ip[IPV4_VER_IHL] != IPV4_VER_IHL_PLAIN)
		return punt(ctx, cin, in_port, FP_PUNT_HEADER);
	/* RFC 1071: the sum in any byte order folds to 0xffff; five 32-bit
	 * words of a 64-bit sum fold as the ten 16-bit ones. */
	__u64 sum = 0;
#pragma unroll
	for (int i = 0; i < IPV4_LEN; i += 4)
		sum += *(const __u32 *)(ip + i);
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	if (csum_fold((__u32)sum) != 0xffff)
		return punt(ctx, cin, in_port, FP_PUNT_HEADER);
	__u32 total = load16(ip + IPV4_TOT_LEN);
	if (total < IPV4_LEN || (void *)ip + total > end)
		return punt(ctx, cin, in_port, FP_PUNT_HEADER);
	__u32 src = load32(ip + IPV4_SADDR), dst = load32(ip + IPV4_DADDR);
	__u32 stop = src >> 24, dtop = dst >> 24;
	/* RFC 1812 5.3.7 martians, broadcast and multicast destinations. */
	if (stop == 0 || stop == 127 || stop >= 224 || dtop == 0 || dtop == 127 || dtop >= 224)
		return punt(ctx, cin, in_port, FP_PUNT_HEADER);
	if (ip[IPV4_TTL] <= 1)
		return punt(ctx, cin, in_port, FP_PUNT_TTL);

	int bad = 0;
	__u32 e = lookup4(dst, &bad);
	__u32 hash = 0;
	if (is_group(e)) {
		/* ECMP key (dataplane::forward::flow_hash_v4): ports of
		 * unfragmented TCP/UDP. */
		__u8 proto = ip[IPV4_PROTOCOL];
		__u16 sp = 0, dp = 0;
		if ((proto == PROTO_TCP || proto == PROTO_UDP) &&
		    !(load16(ip + IPV4_FRAG_OFF) & (IP_MF | IP_OFFSET)) && total >= IPV4_LEN + 4 &&
		    (void *)(ip + IPV4_LEN + 4) <= end) {
			sp = load16(ip + IPV4_LEN + L4_SPORT);
			dp = load16(ip + IPV4_LEN + L4_DPORT);
		}
		__u64 a = (__u64)src << 32 | dst;
		hash = mix(mix(a ^ K1) ^ hash_ports(proto, sp, dp) ^ K2) >> 32;
	}
	struct verdict v = {};
	int r = bad ? FP_PUNT_TABLE : next_hop(e, hash, &v);
	if (r >= 0)
		return punt(ctx, cin, in_port, r);
	if (total > v.mtu)
		return punt(ctx, cin, in_port, FP_PUNT_MTU);

	/* TTL - 1 (the word it shares with the protocol), checksum updated.
	 * The new word is computed, not read back: a 16-bit load of the byte
	 * just stored cannot be forwarded from the store, and waits for it
	 * to reach the cache, which for a frame another CPU wrote last is a
	 * cross-CPU transfer (14.5 % of the program's samples sat on it in
	 * `perf record -C 0`, none after). TTL > 1 here, so the subtraction
	 * does not borrow from the protocol byte. */
	__u16 old = load16(ip + IPV4_TTL);
	__u16 new = old - 0x100;
	ip[IPV4_TTL] = new >> 8;
	__u16 c = csum_update16(load16(ip + IPV4_CHECK), old, new);
	ip[IPV4_CHECK] = c >> 8;
	ip[IPV4_CHECK + 1] = c & 0xff;
	return send(ctx, cin, &v, ETH_LEN + total);
}

/* IPv6 (dataplane::input::check_v6 and dataplane::forward::v6). */
static __always_inline int forward_v6(struct xdp_md *ctx, struct fp_counters *cin, __u32 in_port)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u8 *ip = data + ETH_LEN;
	if ((void *)(ip + IPV6_LEN) > end)
		return punt(ctx, cin, in_port, FP_PUNT_HEADER);
	if (ip[0] >> 4 != 6)
		return punt(ctx, cin, in_port, FP_PUNT_HEADER);
	__u32 plen = load16(ip + IPV6_PAYLOAD_LEN);
	/* A zero payload length (jumbogram or bare header) is the workers'. */
	if (plen == 0 || (void *)ip + IPV6_LEN + plen > end)
		return punt(ctx, cin, in_port, FP_PUNT_HEADER);
	__u64 s_hi = load64(ip + IPV6_SADDR), s_lo = load64(ip + IPV6_SADDR + 8);
	__u64 d_hi = load64(ip + IPV6_DADDR), d_lo = load64(ip + IPV6_DADDR + 8);
	/* Multicast, unspecified, loopback and link-local sources and
	 * destinations (RFC 4291 2.5.2, 2.5.3, 2.5.6). */
	if (ip[IPV6_SADDR] == 0xff || ip[IPV6_DADDR] == 0xff || (s_hi == 0 && s_lo <= 1) ||
	    (d_hi == 0 && d_lo <= 1) ||
	    (s_hi >> 54) == 0x3fa || (d_hi >> 54) == 0x3fa)
		return punt(ctx, cin, in_port, FP_PUNT_HEADER);
	/* Hop-by-Hop options are for every router to read: the workers'. */
	__u8 next = ip[IPV6_NEXTHDR];
	if (next == IPV6_NH_HOP_BY_HOP)
		return punt(ctx, cin, in_port, FP_PUNT_HEADER);
	if (ip[IPV6_HOP_LIMIT] <= 1)
		return punt(ctx, cin, in_port, FP_PUNT_TTL);

	int bad = 0;
	__u32 e = lookup6(ip + IPV6_DADDR, &bad);
	__u32 hash = 0;
	if (is_group(e)) {
		/* ECMP key (dataplane::forward::flow_hash_v6): ports when
		 * TCP/UDP follows. */
		__u16 sp = 0, dp = 0;
		if ((next == PROTO_TCP || next == PROTO_UDP) && plen >= 4 &&
		    (void *)(ip + IPV6_LEN + 4) <= end) {
			sp = load16(ip + IPV6_LEN + L4_SPORT);
			dp = load16(ip + IPV6_LEN + L4_DPORT);
		}
		__u64 h = mix(s_hi ^ K1) ^ rotl(mix(s_lo ^ K2), 16) ^
			  rotl(mix(d_hi ^ K3), 32) ^ rotl(mix(d_lo ^ K4), 48);
		hash = mix(h ^ hash_ports(next, sp, dp)) >> 32;
	}
	struct verdict v = {};
	int r = bad ? FP_PUNT_TABLE : next_hop(e, hash, &v);
	if (r >= 0)
		return punt(ctx, cin, in_port, r);
	if (IPV6_LEN + plen > v.mtu)
		return punt(ctx, cin, in_port, FP_PUNT_MTU);
	ip[IPV6_HOP_LIMIT]--;
	return send(ctx, cin, &v, ETH_LEN + IPV6_LEN + plen);
}

/* ---- [kernel] local: the kernel's share of the router's traffic ---- */

/* The LPM entry names one of the router's own addresses. */
static __always_inline int is_local(__u32 entry)
{
	int bad = 0;
	if (!(entry & ENTRY_VALID))
		return 0;
	__u32 id = resolve(entry & ENTRY_PAYLOAD, 0, &bad);
	__u64 nh = u64_at(&nh_desc, id, &bad);
	return !bad && (nh & NH_VALID) && ((nh >> 32) & 7) == NH_KIND_LOCAL;
}

/* An IPv4 packet for the kernel: multicast or limited broadcast, or to a
 * local address and not an unfragmented ICMP echo request (those stay
 * the workers', so ping answers are softrouter's). A frame too short for
 * its header or of another version stays the workers' to judge and count;
 * the kernel checks the rest (checksum, lengths) of what it takes. */
static __always_inline int kernel_v4(void *data, void *end)
{
	__u8 *ip = data + ETH_LEN;
	if ((void *)(ip + IPV4_LEN) > end || ip[IPV4_VER_IHL] >> 4 != 4)
		return 0;
	__u32 dst = load32(ip + IPV4_DADDR);
	if (dst >> 28 == 14 || dst == 0xffffffff)
		return 1;
	int bad = 0;
	__u32 e = lookup4(dst, &bad);
	if (bad || !is_local(e))
		return 0;
	if (ip[IPV4_PROTOCOL] != PROTO_ICMP || (load16(ip + IPV4_FRAG_OFF) & (IP_MF | IP_OFFSET)))
		return 1;
	__u8 *icmp = ip + (ip[IPV4_VER_IHL] & 0xf) * 4;
	if ((void *)(icmp + ICMP_TYPE + 1) > end)
		return 1;
	return icmp[ICMP_TYPE] != ICMP_ECHO;
}

/* IPv6: multicast (ND, OSPFv3, MLD), link-local unicast (the workers have
 * no link-local address; BGP and OSPFv3 use the kernel's), or a local
 * address unless an ICMPv6 echo request directly follows the header. */
static __always_inline int kernel_v6(void *data, void *end)
{
	__u8 *ip = data + ETH_LEN;
	if ((void *)(ip + IPV6_LEN + ICMPV6_TYPE + 1) > end || ip[0] >> 4 != 6)
		return 0;
	if (ip[IPV6_DADDR] == 0xff || (ip[IPV6_DADDR] == 0xfe && (ip[IPV6_DADDR + 1] & 0xc0) == 0x80))
		return 1;
	int bad = 0;
	__u32 e = lookup6(ip + IPV6_DADDR, &bad);
	if (bad || !is_local(e))
		return 0;
	return ip[IPV6_NEXTHDR] != PROTO_ICMPV6 || ip[IPV6_LEN + ICMPV6_TYPE] != ICMPV6_ECHO_REQUEST;
}

static __always_inline int to_kernel(struct fp_counters *cin)
{
	cin->c[FP_TO_KERNEL]++;
	return XDP_PASS;
}

SEC("xdp")
int sr_fwd(struct xdp_md *ctx)
{
	__u32 in_port;
	if (port_of(ctx->ingress_ifindex, &in_port))
		return XDP_PASS;
	struct fp_counters *cin = bpf_map_lookup_elem(&counters, &in_port);
	struct fp_port *p = bpf_map_lookup_elem(&ports, &in_port);
	if (!cin || !p)
		return XDP_PASS;

	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u8 *eth = data;
	if ((void *)(eth + ETH_LEN) > end)
		return punt(ctx, cin, in_port, FP_PUNT_L2);
	/* Only unicast to this port, from a unicast source (replies and ICMP
	 * errors go back to it): broadcast, multicast, other hosts' frames
	 * are the workers' (ARP, ND, the drop counters). */
	int kernel = p->flags & FP_PORT_KERNEL_LOCAL;
	/* With [kernel] local, broadcast and multicast (ARP requests, ND,
	 * OSPF, RA) from a unicast source are the kernel's. */
	if (kernel && (eth[ETH_DST] & 1) && !(eth[ETH_SRC] & 1))
		return to_kernel(cin);
	if (!mac_eq(eth + ETH_DST, p->mac) || (eth[ETH_SRC] & 1))
		return punt(ctx, cin, in_port, FP_PUNT_L2);
	__u16 type = load16(eth + ETH_TYPE);
	if (kernel && (type == ETH_ARP || (type == ETH_IPV4 && kernel_v4(data, end)) ||
		       (type == ETH_IPV6 && kernel_v6(data, end))))
		return to_kernel(cin);
	if (type == ETH_IPV4)
		return forward_v4(ctx, cin, in_port);
	if (type == ETH_IPV6)
		return forward_v6(ctx, cin, in_port);
	return punt(ctx, cin, in_port, FP_PUNT_NOT_IP);
}

/* ---- egress drops (tracepoint programs) ---- */

/* A redirected frame an egress driver dropped: counted on the egress port
 * (FP_XMIT_DROPS), so none is silent; a refusal also clears the port's
 * FP_PORT_XDP_TX at once, so the next frames for it are punted to the
 * workers. User space sets the flag again when the kernel's xdp_features
 * say the device takes XDP frames again. */
static __always_inline void egress_dropped(__u32 port, __u32 n, int refused)
{
	struct fp_counters *c = bpf_map_lookup_elem(&counters, &port);
	if (c)
		c->c[FP_XMIT_DROPS] += n;
	if (refused) {
		struct fp_port *p = bpf_map_lookup_elem(&ports, &port);
		if (p)
			__sync_fetch_and_and(&p->flags, ~FP_PORT_XDP_TX);
	}
}

/* The tracepoint xdp:xdp_redirect_err (format in tracefs,
 * events/xdp/xdp_redirect_err/format). */
struct redirect_err_args {
	__u64 common;
	int prog_id;
	__u32 act;
	int ifindex;
	int err;
	int to_ifindex;
	__u32 map_id;
	int map_index;
};

/* The redirect itself failed: the egress device does not take XDP frames
 * (no ndo_xdp_xmit; a veth whose peer has neither an XDP program nor GRO
 * fails here), or is down. Recognised by this program's id and the
 * tx_ports map's id; the map index is the egress port. */
SEC("tracepoint/xdp/xdp_redirect_err")
int sr_redirect_err(struct redirect_err_args *a)
{
	__u32 zero = 0;
	struct fp_identity *me = bpf_map_lookup_elem(&identity, &zero);
	if (!me || (__u32)a->prog_id != me->prog_id || a->map_id != me->tx_map_id)
		return 0;
	egress_dropped((__u32)a->map_index, 1, 1);
	return 0;
}

/* Just the fields read, relocated against the kernel's BTF at load. */
struct net {
	__u64 net_cookie;
} __attribute__((preserve_access_index));

typedef struct {
	struct net *net;
} __attribute__((preserve_access_index)) possible_net_t;

struct net_device {
	int ifindex;
	possible_net_t nd_net;
} __attribute__((preserve_access_index));

/*
 * Frames the egress driver did not send at the flush, after the redirect
 * was accepted: a full ring (a veth's peer that does not keep up), or a
 * refusal (err < 0). The event does not name the program, so only
 * flushes between two of the router's ports count: both devices in the
 * router's network namespace (`fp_identity.netns_cookie`) with ifindexes
 * of its ports. Why the namespace: ifindexes are per namespace, and a
 * tester's XDP generator flushes from its own veth end into the router's
 * ingress ring; with its device indexes those of router ports, the
 * frames the router's full receive ring refused were counted as the
 * router's egress drops on port 0 (128,923 at 4 Mfps offered in one
 * bench trial). A program of the router's own namespace redirecting
 * between two of its ports is still counted.
 *
 * A raw tracepoint, not the tracefs one: the event fires at every flush
 * of redirected frames on every CPU (each of the router's NAPI polls, a
 * tester's generator batches), nearly always with nothing dropped, and
 * the tracefs form first copies the whole event into a buffer for each.
 * That cost ~2 % of the DUT CPU's busy time with the tier forwarding at
 * 1.6-2.2 Mpps (`perf record -C 0`); this program reads two arguments and
 * returns.
 */
SEC("raw_tracepoint/xdp_devmap_xmit")
int sr_xmit_drops(struct bpf_raw_tracepoint_args *ctx)
{
	/* TP_PROTO(from_dev, to_dev, int sent, int drops, int err) */
	int drops = (int)ctx->args[3], err = (int)ctx->args[4];
	if (drops <= 0)
		return 0;
	/* Locals: inside BPF_CORE_READ, `ctx->args[i]` would be relocated
	 * too (a zero-length array: refused at load). */
	struct net_device *from_dev = (struct net_device *)ctx->args[0];
	struct net_device *to_dev = (struct net_device *)ctx->args[1];
	__u32 zero = 0;
	struct fp_identity *me = bpf_map_lookup_elem(&identity, &zero);
	if (!me || BPF_CORE_READ(from_dev, nd_net.net, net_cookie) != me->netns_cookie ||
	    BPF_CORE_READ(to_dev, nd_net.net, net_cookie) != me->netns_cookie)
		return 0;
	__u32 from = (__u32)BPF_CORE_READ(from_dev, ifindex);
	__u32 to = (__u32)BPF_CORE_READ(to_dev, ifindex);
	if (!bpf_map_lookup_elem(&in_ports, &from))
		return 0;
	__u32 *port = bpf_map_lookup_elem(&in_ports, &to);
	if (!port)
		return 0;
	egress_dropped(*port, (__u32)drops, err < 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
