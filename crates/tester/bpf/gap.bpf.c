// SPDX-License-Identifier: Apache-2.0 OR MIT
/*
 * The receive-gap meter: how long frames waited in one of the DUT's
 * receive rings because its receive work (the NAPI poll of its veth end)
 * did not run, while armed (`GC_EPOCH` != 0, until `GC_UNTIL`). Two raw
 * tracepoint programs (no tracefs, no copy of the event):
 *
 * - `sr_gap_xmit` on `xdp_devmap_xmit` (the tester's XDP frames flushed
 *   into a veth: once per batch, not per frame): when the tester end that
 *   feeds a slot's ring transmits and nothing was pending, frames are
 *   pending from now (`GC_PEND`).
 * - `sr_gap_poll` on `napi_poll`, for the DUT's ends: a poll that did work
 *   (`work > 0`) ends a gap. With the sender's transmits seen (the `xdp`
 *   tester), the gap is from when frames became pending to the poll's
 *   end: the wait of the oldest frame it found, give or take one batch.
 *   The poll leaves frames pending if it used its whole budget, else the
 *   ring is empty and the next transmit starts the clock again. Without
 *   them (the skb testers), the gap is from the previous poll's end: an
 *   upper bound that also holds the time no frame arrived (at most one
 *   inter-arrival time while traffic flows, but all of a tester's own
 *   stall). Gaps ended by empty polls are not counted: an idle ring needs
 *   no polling.
 *
 * Devices are matched by name (the testbed's veth names are unique on the
 * host), read through the napi_struct / net_device pointers with CO-RE
 * against the kernel's BTF. Per NAPI instance one CPU polls at a time
 * (NAPI_STATE_SCHED); the pending word races benignly with the sender's
 * CPU (a late or early reset moves a gap's start by one batch).
 *
 * Cost: both tracepoints fire on the DUT's CPU for every poll and flush
 * of every device, and what they cost is charged to the DUT's cycles per
 * packet. Reading the name and hashing it for every event, and the clock
 * before knowing whether the event matters, was ~7 % of the floor DUT's
 * busy time (`perf record -C 0` at 1.8 Mpps). So the role of a pointer is
 * remembered per CPU for the epoch (`gap_memo`, direct mapped: an array
 * lookup the verifier inlines), and the clock is read only for an event
 * that uses it.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "gap.h"

#define IFNAMSIZ 16

/* Just the fields read, relocated against the kernel's BTF at load. */
struct net_device {
	char name[IFNAMSIZ];
} __attribute__((preserve_access_index));

struct napi_struct {
	struct net_device *dev;
} __attribute__((preserve_access_index));

struct gap_ctl {
	__u64 w[GC_WORDS];
};

struct napi_gap {
	__u64 w[GN_WORDS];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gap_ctl);
} gap_ctl SEC(".maps");

/* Device name (zero padded) -> slot and role (DEV_*). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2 * MAX_SLOTS);
	__type(key, char[IFNAMSIZ]);
	__type(value, __u32);
} gap_devs SEC(".maps");

/* napi_struct address -> its state. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, struct napi_gap);
} gap_napi SEC(".maps");

/* A pointer's role for one epoch (`gap_memo`). */
struct dev_memo {
	__u64 ptr;
	__u64 epoch;
	__u32 role;
	__u32 pad;
};

#define MEMO_SLOTS 64

/* napi_struct or net_device address -> its role, per CPU (no races). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MEMO_SLOTS);
	__type(key, __u32);
	__type(value, struct dev_memo);
} gap_memo SEC(".maps");

/* The control words while armed (epoch != 0), or NULL. The window's end
 * (`GC_UNTIL`) needs the clock: callers check it once they read it. */
static __always_inline struct gap_ctl *armed(void)
{
	__u32 zero = 0;
	struct gap_ctl *c = bpf_map_lookup_elem(&gap_ctl, &zero);
	if (!c || !c->w[GC_EPOCH])
		return 0;
	return c;
}

/* The slot and role (DEV_*) of `dev` by its name, or 0 when it is not
 * measured. */
static __always_inline __u32 device(struct net_device *dev)
{
	char name[IFNAMSIZ] = {};
	if (!dev || bpf_probe_read_kernel_str(name, sizeof(name), &dev->name) < 0)
		return 0;
	__u32 *v = bpf_map_lookup_elem(&gap_devs, name);
	return v ? *v : 0;
}

/* The memo slot of `ptr`: kernel objects are at least cache-line aligned. */
static __always_inline __u32 memo_slot(__u64 ptr)
{
	return (__u32)((ptr >> 6) ^ (ptr >> 12)) & (MEMO_SLOTS - 1);
}

/* The role of the device behind `ptr` in `epoch`: remembered, or by name
 * (`dev` of a napi_struct, read only then) and remembered. A pointer the
 * kernel freed and reused within one epoch keeps the old role for that
 * epoch; every trial is a new epoch. */
static __always_inline __u32 role(__u64 ptr, int is_napi, __u64 epoch)
{
	__u32 k = memo_slot(ptr);
	struct dev_memo *m = bpf_map_lookup_elem(&gap_memo, &k);
	if (m && m->ptr == ptr && m->epoch == epoch)
		return m->role;
	struct net_device *dev = (struct net_device *)ptr;
	if (is_napi)
		dev = BPF_CORE_READ((struct napi_struct *)ptr, dev);
	__u32 d = device(dev);
	if (m) {
		m->ptr = ptr;
		m->epoch = epoch;
		m->role = d;
	}
	return d;
}

SEC("raw_tracepoint/xdp_devmap_xmit")
int sr_gap_xmit(struct bpf_raw_tracepoint_args *ctx)
{
	/* TP_PROTO(from_dev, to_dev, int sent, int drops, int err) */
	int sent = (int)ctx->args[2], drops = (int)ctx->args[3];
	if (sent <= 0 && drops <= 0)
		return 0;
	struct gap_ctl *c = armed();
	if (!c)
		return 0;
	__u32 d = role(ctx->args[1], 0, c->w[GC_EPOCH]);
	if (!(d & DEV_SENDER))
		return 0;
	__u32 slot = d & DEV_SLOT_MASK;
	if (slot >= MAX_SLOTS || c->w[GC_PEND + slot])
		return 0;
	/* Nothing was pending: frames are from now. */
	__u64 now = bpf_ktime_get_ns();
	if (now <= c->w[GC_UNTIL])
		c->w[GC_PEND + slot] = now;
	return 0;
}

SEC("raw_tracepoint/napi_poll")
int sr_gap_poll(struct bpf_raw_tracepoint_args *ctx)
{
	/* TP_PROTO(struct napi_struct *napi, int work, int budget) */
	__u64 napi = ctx->args[0];
	int work = (int)ctx->args[1], budget = (int)ctx->args[2];
	struct gap_ctl *c = armed();
	if (!c)
		return 0;
	__u64 epoch = c->w[GC_EPOCH];
	__u32 d = role(napi, 1, epoch);
	if (!(d & DEV_RECEIVER))
		return 0;
	__u32 slot = d & DEV_SLOT_MASK;
	if (slot >= MAX_SLOTS)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	if (now > c->w[GC_UNTIL])
		return 0;
	__u64 since = 0;
	if (d & DEV_TRACKED) {
		since = c->w[GC_PEND + slot];
		c->w[GC_PEND + slot] = work >= budget ? now : 0;
	}
	__u64 gap = work > 0 && since && now > since ? now - since : 0;
	__u64 key = napi;
	struct napi_gap *g = bpf_map_lookup_elem(&gap_napi, &key);
	if (!g || g->w[GN_EPOCH] != epoch) {
		/* The first poll of the epoch: with the sender's transmits
		 * seen, its frames' wait (user space clears GC_PEND when it
		 * arms); else no previous poll to measure from. */
		struct napi_gap fresh = { .w = { epoch, now, gap, 1, now } };
		bpf_map_update_elem(&gap_napi, &key, &fresh, BPF_ANY);
		return 0;
	}
	if (!(d & DEV_TRACKED) && work > 0 && now > g->w[GN_LAST])
		gap = now - g->w[GN_LAST];
	if (gap > g->w[GN_MAX_GAP]) {
		g->w[GN_MAX_GAP] = gap;
		g->w[GN_MAX_AT] = now;
	}
	g->w[GN_LAST] = now;
	g->w[GN_POLLS] += 1;
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
