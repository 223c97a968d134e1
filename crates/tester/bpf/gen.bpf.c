// SPDX-License-Identifier: Apache-2.0 OR MIT
/*
 * The generator: an XDP program run by BPF_PROG_TEST_RUN in live-frames
 * mode (BPF_F_TEST_XDP_LIVE_FRAMES), one long call per trial. Each run
 * (iteration) of the program either sends one test frame or, when no frame
 * is due yet, drops its page straight back to the pool.
 *
 * Why it is built this way (measured on a 2-vCPU VM, kernel 6.18):
 *
 * - One call per trial, not per batch: each call pays one RCU grace period
 *   (~24 ms) when its page pool is destroyed; 256 frames per call gave
 *   0.011 Mfps, one call of millions of frames 5-6 Mfps.
 * - Pacing inside the program: an iteration costs ~100 ns, so the program
 *   itself is the clock. A frame is due at t0 + k * interval (exact
 *   picosecond arithmetic, no drift, no division); iterations before that return
 *   XDP_DROP. A frame that is late goes at once (the lateness is recorded
 *   as `max_lag_ns`); the test run flushes redirected frames every
 *   `batch_size` iterations.
 * - No catch-up burst longer than `catchup_frames`: when the generator is
 *   kept off its CPU (an interrupt, a real-time thread, the kernel's fair
 *   server running a starved task for milliseconds), the frames that came
 *   due meanwhile would otherwise leave back to back at the generator's
 *   full speed, and a burst of a few hundred frames overflows a veth's
 *   256-frame ring at any rate: loss the tester made, counted against the
 *   DUT. Lateness beyond that many intervals moves the rest of the
 *   schedule instead (`stall_ns`, `stalls`): the DUT sees a pause in the
 *   offered load, then the same rate, as from a tester that paused.
 * - The whole frame is written on every run: live-frame pages are recycled
 *   and a DUT that rewrites frames in place (TTL, MACs) returns them
 *   modified; only writing everything keeps every frame correct.
 * - The clock only when needed: bpf_ktime_get_ns costs ~40 ns here, as
 *   much as the rest of the program. It is read to pace a frame not yet
 *   known to be due (behind schedule, or within the pacing slack, the
 *   last reading proves the next frames due), for latency samples (one
 *   frame in 2^k per stream, as the counter samples them: exact send times
 *   where they are used) and every 16th frame (first/last times stay
 *   within 16 frames).
 * - bpf_redirect to the port's ifindex: the frame leaves through the
 *   tester's veth end and arrives at the DUT's end, with no skb.
 * - User space ends the call with a signal (the test run returns -EINTR)
 *   once the last frame is due; `repeat` is only an upper bound.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "csum.h"
#include "sr_layout.h"
#include "gen.h"

/*
 * Pacing slack: a frame due within this many intervals (at most
 * GEN_PACE_SLACK_MAX_NS) of the last clock reading goes without a new
 * reading. Without it, a generator on schedule found each frame due after
 * its last reading and read the clock for every frame (~40 ns here), just
 * where it had the least time to spare: near its maximum, sharing the CPU
 * with the tester's receive. Paired with the raw pair through the floor
 * (bench/floor/pair.sh, 0.7x the raw rate), it held 9 of 24 trials
 * against 4 without, its sending rate closer to the target in 7 pairs of 8.
 * Finer pacing buys nothing on the wire: frames leave in the test run's
 * flushes and the devmap's bulks of 16, not one by one. The rate is
 * unchanged; frames go at most the slack early.
 */
#define GEN_PACE_SLACK_FRAMES 8
#define GEN_PACE_SLACK_MAX_NS 4000

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gen_ctl);
} gen_ctl SEC(".maps");

/* Stream ids of all ports, concatenated (see gen_port.stream_off). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* set at load: number of streams */
	__type(key, __u32);
	__type(value, __u32);
} gen_streams SEC(".maps");

/* Next sequence number per stream (key = stream id). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* set at load: number of streams */
	__type(key, __u32);
	__type(value, __u64);
} gen_seq SEC(".maps");

/* Frames: key = stream * nsizes + size index. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* set at load: streams x sizes */
	__type(key, __u32);
	__type(value, struct gen_tmpl);
} gen_tmpl SEC(".maps");

static __always_inline __u64 read_clock(struct gen_ctl *c)
{
	__u64 t = bpf_ktime_get_ns();
	c->clock_ns = t;
	c->clock_reads++;
	return t;
}

static __always_inline int fail(struct gen_ctl *c, __u32 why)
{
	c->errors++;
	c->error = why;
	return XDP_DROP;
}

/* The frame of port `p` that is due: its stream, then its size slot. */
static __always_inline struct gen_tmpl *next_frame(struct gen_ctl *c, struct gen_port *p,
						   __u32 *stream)
{
	__u32 si = p->stream_off + p->cur_stream;
	__u32 *s = bpf_map_lookup_elem(&gen_streams, &si);
	if (!s)
		return 0;
	*stream = *s;
	__u32 slot = c->schedule[p->cur_sched & (GEN_MAX_SCHED - 1)];
	if (++p->cur_stream >= p->nstreams) {
		p->cur_stream = 0;
		if (++p->cur_sched >= c->sched_len)
			p->cur_sched = 0;
	}
	__u32 key = *stream * c->nsizes + slot;
	return bpf_map_lookup_elem(&gen_tmpl, &key);
}

/* Sequence, timestamp and UDP checksum of a frame whose UDP header is at
 * the constant `l4` (the template carries zeros there, so the new sum is
 * the old one plus the new words, RFC 1624). */
static __always_inline int stamp(struct gen_ctl *c, void *data, void *end, const __u32 l4,
				 int long_form, __u64 seq, __u64 now, __u32 acc)
{
	__u8 *u = data + l4;
	if (long_form) {
		if ((void *)(u + UDP_LEN + LONG_HEADER_LEN) > end)
			return fail(c, GEN_ERR_STORE);
		*(__u64 *)(u + UDP_LEN + LONG_SEQ) = bpf_cpu_to_be64(seq);
		*(__u64 *)(u + UDP_LEN + LONG_TS) = bpf_cpu_to_be64(now);
		acc = csum_add_u64(acc, seq);
		acc = csum_add_u64(acc, now);
	} else {
		if ((void *)(u + UDP_LEN + SHORT_HEADER_LEN) > end)
			return fail(c, GEN_ERR_STORE);
		*(__u32 *)(u + UDP_LEN + SHORT_SEQ) = bpf_htonl((__u32)seq);
		*(__u32 *)(u + UDP_LEN + SHORT_TS) = bpf_htonl((__u32)now);
		acc = csum_add_u64(acc, (__u32)seq);
		acc = csum_add_u64(acc, (__u32)now);
	}
	__u16 sum = (__u16)~csum_fold(acc);
	*(__u16 *)(u + UDP_CHECK) = bpf_htons(sum ? sum : 0xffff);
	return XDP_PASS; /* not a verdict: "written" */
}

/* Write template `t` over the whole frame, then its sequence number and
 * timestamp, and fix the UDP checksum incrementally (RFC 1624): the
 * template carries zeros there, so the new sum is the old one plus the
 * new words. */
static __always_inline int write_frame(struct xdp_md *ctx, struct gen_ctl *c,
				       struct gen_tmpl *t, __u64 seq, __u64 now)
{
	__u32 len = t->len;
	if (len < ETH_ZLEN || len > GEN_TMPL_CAP)
		return fail(c, GEN_ERR_BAD_LEN);
	int cur = (int)(ctx->data_end - ctx->data);
	int delta = (int)len - cur;
	if (delta && bpf_xdp_adjust_tail(ctx, delta))
		return fail(c, GEN_ERR_ADJUST);
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	if (data + ETH_ZLEN > end)
		return fail(c, GEN_ERR_STORE);
	/* The first ETH_ZLEN bytes, which every frame has, by direct stores (at
	 * 64 B the helper call cost more than the copy); the rest, if any,
	 * with the helper. */
	__u64 *d = data;
	const __u64 *src = (const __u64 *)t->data;
	d[0] = src[0];
	d[1] = src[1];
	d[2] = src[2];
	d[3] = src[3];
	d[4] = src[4];
	d[5] = src[5];
	d[6] = src[6];
	*(__u32 *)(data + ETH_ZLEN - 4) = *(const __u32 *)(t->data + ETH_ZLEN - 4);
	if (len > ETH_ZLEN) {
		if (bpf_xdp_store_bytes(ctx, ETH_ZLEN, t->data + ETH_ZLEN, len - ETH_ZLEN))
			return fail(c, GEN_ERR_STORE);
		data = (void *)(long)ctx->data;
		end = (void *)(long)ctx->data_end;
	}

	__u32 co = t->csum_off;
	if (co > GEN_TMPL_CAP - 2)
		return fail(c, GEN_ERR_BAD_LEN);
	__u16 old = ((__u16)t->data[co] << 8) | t->data[co + 1];
	__u32 acc = (__u16)~old;
	/* Direct stores at constant offsets per header form (cheaper than
	 * a helper call per field). */
	if (t->ipv6)
		return stamp(c, data, end, ETH_LEN + IPV6_LEN, t->long_form, seq, now, acc);
	return stamp(c, data, end, ETH_LEN + IPV4_LEN, t->long_form, seq, now, acc);
}

SEC("xdp")
int sr_gen(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct gen_ctl *c = bpf_map_lookup_elem(&gen_ctl, &zero);
	if (!c)
		return XDP_ABORTED;

	__u32 ph = c->cur_phase;
	if (ph >= c->nphases || ph >= GEN_MAX_PHASES) {
		c->idle++;
		return XDP_DROP;
	}
	struct gen_phase *phase = &c->phase[ph & (GEN_MAX_PHASES - 1)];
	if (c->phase_sent >= phase->frames) {
		/* Next phase: its schedule starts at its own t0. */
		c->cur_phase = ph + 1;
		c->phase_sent = 0;
		if (ph + 1 < GEN_MAX_PHASES)
			c->due_ns = c->phase[(ph + 1) & (GEN_MAX_PHASES - 1)].t0_ns;
		c->due_rem_ps = 0;
		c->idle++;
		return XDP_DROP;
	}

	/* The clock is read only when needed: to pace a frame not yet known
	 * to be due, to stamp a latency sample, and every 16th frame (the
	 * first/last times). Other frames carry the last reading. */
	__u64 now = c->clock_ns;
	int fresh = 0;
	if (!c->first_ns) {
		now = read_clock(c);
		fresh = 1;
		if (now > c->due_ns) {
			/* The call started late (setup, a busy CPU): shift the
			 * whole schedule rather than burst to catch up. */
			__u64 shift = now - c->due_ns;
			for (int i = 0; i < GEN_MAX_PHASES; i++)
				c->phase[i].t0_ns += shift;
			c->due_ns = now;
			c->shift_ns = shift;
		}
	}
	__u64 due = c->due_ns;
	if (phase->paced) {
		/* Due within the slack of the last reading counts as due. */
		__u64 slack = phase->interval_ns * GEN_PACE_SLACK_FRAMES;
		if (slack > GEN_PACE_SLACK_MAX_NS)
			slack = GEN_PACE_SLACK_MAX_NS;
		if (now + slack < due && !fresh) {
			now = read_clock(c);
			fresh = 1;
		}
		if (now + slack < due) {
			c->early++;
			return XDP_DROP;
		}
		/* Next due time: + interval, carrying the sub-ns remainder. */
		c->due_ns += phase->interval_ns;
		c->due_rem_ps += phase->interval_frac_ps;
		if (c->due_rem_ps >= 1000) {
			c->due_rem_ps -= 1000;
			c->due_ns += 1;
		}
	}

	__u32 pi = c->cur_port & (GEN_MAX_PORTS - 1);
	c->cur_port = pi + 1 >= c->nports ? 0 : pi + 1;
	struct gen_port *p = &c->port[pi];
	__u32 stream = 0;
	struct gen_tmpl *t = next_frame(c, p, &stream);
	if (!t)
		return fail(c, GEN_ERR_NO_TEMPLATE);
	__u64 *seq = bpf_map_lookup_elem(&gen_seq, &stream);
	if (!seq)
		return fail(c, GEN_ERR_NO_STREAM);
	if (!fresh && (!(*seq & c->sample_mask) || !(c->sent & 15))) {
		now = read_clock(c);
		fresh = 1;
	}
	/* Late by more than `catchup_frames` intervals (the generator was
	 * kept off its CPU): catch up that many at most, move the rest of
	 * the schedule by the excess, and count it. Checked at every fresh
	 * reading, so a stall is seen within 16 frames even when the
	 * generator was already behind. */
	if (fresh && phase->paced && c->catchup_frames) {
		__u64 catchup = phase->interval_ns * c->catchup_frames;
		if (now > due + catchup) {
			__u64 excess = now - due - catchup;
			for (int i = 0; i < GEN_MAX_PHASES; i++)
				c->phase[i].t0_ns += excess;
			due += excess;
			c->due_ns += excess;
			c->stall_ns += excess;
			c->stalls++;
			if (excess > c->max_stall_ns)
				c->max_stall_ns = excess;
			if (excess >= c->long_stall_ns) {
				c->long_stall_sum_ns += excess;
				c->long_stalls++;
			}
		}
	}
	/* Lateness from a fresh reading only (a cached one is older); a
	 * frame within the slack may be early. */
	if (fresh && phase->paced && now > due && now - due > c->max_lag_ns)
		c->max_lag_ns = now - due;
	if (write_frame(ctx, c, t, *seq, now) != XDP_PASS)
		return XDP_DROP;
	*seq += 1;
	p->sent++;
	c->sent++;
	c->phase_sent++;
	if (!c->first_ns)
		c->first_ns = now;
	c->last_ns = now;
	return bpf_redirect(p->ifindex, 0);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
