// SPDX-License-Identifier: Apache-2.0 OR MIT
/*
 * The counter, attached to every tester port: recognises test frames
 * (sr_layout.h) like `packet::test_frame::parse` on the Rust side and
 * accounts them as the `Analyzer` does (per-stream received, duplicates, reordered; a sequence bitmap for
 * loss; latency histogram and RFC 3393 IPDV between consecutive samples
 * of a stream, of the frames the generator samples: one in 2^k per
 * stream, by sequence number), then drops them. Everything else (ARP, ND, ...) is XDP_PASS,
 * so the kernel of the tester namespace answers the DUT's neighbour
 * queries.
 *
 * Why in XDP: counting in the receive path costs a few dozen instructions
 * per frame and no copy, wake-up or syscall; user space reads the maps
 * through mmap after the drain.
 *
 * Deliberate differences from the Rust analyzer: IPv4 with options is not
 * a test frame here (the tester never sends any); min/max latency, the
 * highest sequence and the IPDV state are updated without atomics (a veth
 * port receives on one queue, so on one CPU at a time; the counters and
 * the bitmap are atomic regardless).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "sr_layout.h"
#include "count.h"

/* Bitmap words per stream (sequence limit = 64 x this): set at load. */
const volatile __u32 words_per_stream = 1;

struct glob {
	__u64 w[G_WORDS];
};

struct stream_stats {
	__u64 w[ST_WORDS];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct glob);
} cnt_glob SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* set at load: number of streams */
	__type(key, __u32);
	__type(value, struct stream_stats);
} cnt_stream SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* set at load: streams x words_per_stream */
	__type(key, __u32);
	__type(value, __u64);
} cnt_bits SEC(".maps");

struct test_hdr {
	__u32 stream;
	__u64 seq;
	__u64 ts;
	int short_form;
};

static __always_inline void add(__u64 *w, __u64 v)
{
	__sync_fetch_and_add(w, v);
}

/* UDP at `l4`, IP datagram ending at `ip_end` (bytes from the start). */
static __always_inline int parse_udp(void *data, void *end, __u32 l4, __u32 ip_end,
				     struct test_hdr *h)
{
	__u32 frame_len = end - data;
	if (ip_end > frame_len)
		return -1;
	__u8 *udp = data + l4;
	if ((void *)(udp + UDP_LEN) > end)
		return -1;
	if (*(__u16 *)(udp + UDP_DEST) != bpf_htons(UDP_DST_PORT))
		return -1;
	__u32 ulen = bpf_ntohs(*(__u16 *)(udp + UDP_LENGTH));
	if (ulen != ip_end - l4)
		return -1;
	__u32 plen = ulen - UDP_LEN;
	__u8 *p = udp + UDP_LEN;
	if (plen >= LONG_HEADER_LEN) {
		if ((void *)(p + LONG_HEADER_LEN) > end)
			return -1;
		if (*(__u64 *)p != SIGNATURE_LE)
			return -1;
		if (bpf_ntohl(*(__u32 *)(p + LONG_FLAGS)) & FLAG_LEARNING)
			return 1;
		h->stream = bpf_ntohl(*(__u32 *)(p + LONG_STREAM));
		h->seq = bpf_be64_to_cpu(*(__u64 *)(p + LONG_SEQ));
		h->ts = bpf_be64_to_cpu(*(__u64 *)(p + LONG_TS));
		h->short_form = 0;
		return 0;
	}
	if (plen < SHORT_HEADER_LEN)
		return -1;
	/* Short form: a weak signature, so also no padding after the datagram. */
	if (ip_end != frame_len || (void *)(p + SHORT_HEADER_LEN) > end)
		return -1;
	if (*(__u16 *)p != SHORT_SIGNATURE_LE)
		return -1;
	h->stream = bpf_ntohs(*(__u16 *)(p + SHORT_STREAM));
	h->seq = bpf_ntohl(*(__u32 *)(p + SHORT_SEQ));
	h->ts = bpf_ntohl(*(__u32 *)(p + SHORT_TS));
	h->short_form = 1;
	return 0;
}

/* 0: a test frame in `h`; 1: a learning frame; -1: not ours. */
static __always_inline int parse(struct xdp_md *ctx, struct test_hdr *h)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	if (data + ETH_LEN + IPV4_LEN + UDP_LEN + SHORT_HEADER_LEN > end)
		return -1;
	__u16 proto = *(__u16 *)(data + ETH_TYPE);
	__u8 *ip = data + ETH_LEN;
	if (proto == bpf_htons(ETH_IPV4)) {
		if (ip[IPV4_VER_IHL] != IPV4_VER_IHL_PLAIN || ip[IPV4_PROTOCOL] != PROTO_UDP)
			return -1;
		/* MF or a fragment offset: not ours (DF is allowed). */
		if (*(__u16 *)(ip + IPV4_FRAG_OFF) & bpf_htons(IP_MF | IP_OFFSET))
			return -1;
		__u32 ip_end = ETH_LEN + bpf_ntohs(*(__u16 *)(ip + IPV4_TOT_LEN));
		return parse_udp(data, end, ETH_LEN + IPV4_LEN, ip_end, h);
	}
	if (proto == bpf_htons(ETH_IPV6)) {
		if ((void *)(ip + IPV6_LEN + UDP_LEN + SHORT_HEADER_LEN) > end)
			return -1;
		if ((ip[0] >> 4) != 6 || ip[IPV6_NEXTHDR] != PROTO_UDP)
			return -1;
		__u32 ip_end = ETH_LEN + IPV6_LEN + bpf_ntohs(*(__u16 *)(ip + IPV6_PAYLOAD_LEN));
		return parse_udp(data, end, ETH_LEN + IPV6_LEN, ip_end, h);
	}
	return -1;
}

/* Histogram bucket of `v` ns: exact below 32, then 32 log-linear
 * sub-buckets per power of two (at most 3 % wide). */
static __always_inline __u32 bucket(__u64 v)
{
	if (v < 32)
		return v;
	/* e = floor(log2(v)) by halving (BPF has no count-leading-zeros). */
	__u32 e = 0;
	__u64 x = v;
	if (x >> 32) { x >>= 32; e += 32; }
	if (x >> 16) { x >>= 16; e += 16; }
	if (x >> 8) { x >>= 8; e += 8; }
	if (x >> 4) { x >>= 4; e += 4; }
	if (x >> 2) { x >>= 2; e += 2; }
	if (x >> 1) { e += 1; }
	return (((e - 4) << SUB_BITS) + ((v >> (e - SUB_BITS)) & 31)) & (NBUCKETS - 1);
}

static __always_inline void latency(struct glob *g, struct stream_stats *st, __u64 lat)
{
	if (!lat)
		lat = 1;
	if (lat > LAT_CAP)
		lat = LAT_CAP;
	add(&g->w[G_LAT_COUNT], 1);
	add(&g->w[G_LAT_SUM], lat);
	if (lat < g->w[G_LAT_MIN])
		g->w[G_LAT_MIN] = lat;
	if (lat > g->w[G_LAT_MAX])
		g->w[G_LAT_MAX] = lat;
	add(&g->w[G_BUCKETS + bucket(lat)], 1);
	__u64 prev1 = st->w[ST_LAST_LAT1];
	if (prev1) {
		__u64 prev = prev1 - 1;
		__u64 d = lat > prev ? lat - prev : prev - lat;
		st->w[ST_IPDV_SUM] += d;
		st->w[ST_IPDV_COUNT] += 1;
		if (d > st->w[ST_IPDV_MAX])
			st->w[ST_IPDV_MAX] = d;
	}
	st->w[ST_LAST_LAT1] = lat + 1;
}

SEC("xdp")
int sr_count(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct glob *g = bpf_map_lookup_elem(&cnt_glob, &zero);
	if (!g)
		return XDP_PASS;
	struct test_hdr h = {};
	int kind = parse(ctx, &h);
	if (kind < 0) {
		add(&g->w[G_NON_TEST], 1);
		return XDP_PASS;
	}
	if (kind == 1) {
		add(&g->w[G_LEARNING], 1);
		return XDP_DROP;
	}
	struct stream_stats *st = bpf_map_lookup_elem(&cnt_stream, &h.stream);
	if (!st) {
		add(&g->w[G_UNKNOWN], 1);
		return XDP_DROP;
	}
	add(&st->w[ST_RECEIVED], 1);
	__u64 seq = h.seq;
	if (h.short_form) {
		/* Extend the 32-bit sequence against the highest seen (like
		 * RTP's extended sequence number). */
		__u64 high1 = st->w[ST_HIGH1];
		__u64 ref = high1 ? high1 - 1 : 0;
		__s64 ext = (__s64)ref + (__s32)((__u32)seq - (__u32)ref);
		if (ext >= 0)
			seq = ext;
	}
	if (seq >= (__u64)words_per_stream * 64) {
		add(&st->w[ST_BEYOND], 1);
		return XDP_DROP;
	}
	__u32 key = h.stream * words_per_stream + (__u32)(seq >> 6);
	__u64 *word = bpf_map_lookup_elem(&cnt_bits, &key);
	if (!word)
		return XDP_DROP;
	__u64 bit = 1ULL << (seq & 63);
	if (__sync_fetch_and_or(word, bit) & bit)
		add(&st->w[ST_DUPLICATES], 1);
	__u64 high1 = st->w[ST_HIGH1];
	if (!high1 || seq + 1 > high1)
		st->w[ST_HIGH1] = seq + 1;
	else if (seq + 1 < high1)
		add(&st->w[ST_REORDERED], 1);

	/* Latency of the samples only (the generator stamps their exact
	 * send time): the clock costs ~40 ns a reading. */
	if (seq & g->w[G_SAMPLE_MASK])
		return XDP_DROP;
	__u64 now = bpf_ktime_get_ns();
	__u64 lat;
	if (h.short_form) {
		lat = (__u32)((__u32)now - (__u32)h.ts);
	} else {
		if (now < h.ts) {
			add(&g->w[G_CLOCK_ERR], 1);
			return XDP_DROP;
		}
		lat = now - h.ts;
	}
	latency(g, st, lat);
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
