// SPDX-License-Identifier: Apache-2.0 OR MIT
/*
 * The receive-gap meter: on the `napi_poll` tracepoint (raw: no tracefs,
 * no copy of the event), for the NAPI instances of the devices named in
 * `gap_devs` (the DUT's receiving veth ends), the longest time between the
 * ends of two consecutive polls of one instance where the second poll did
 * work (`work > 0`), while armed (`GC_EPOCH` != 0, before `GC_UNTIL`).
 *
 * What that measures: how long frames waited for the DUT's receive work.
 * A poll that did work found frames in the ring; they arrived after the
 * previous poll ended, so the gap bounds their wait from above (it also
 * holds the time the ring was empty, at most one inter-arrival time of
 * the offered traffic, and the poll's own run time). Gaps ended by empty
 * polls are not counted: an idle ring needs no polling.
 *
 * Why a raw tracepoint with CO-RE: the device's name sits behind the
 * napi_struct pointer, whose layout is the running kernel's (its BTF);
 * a raw tracepoint needs no tracefs mount and costs one program call per
 * poll (a poll handles up to 64 frames). Per instance one CPU polls at a
 * time (NAPI_STATE_SCHED), so the state needs no atomics.
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

/* Device name (zero padded) -> 1: the devices measured. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
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

SEC("raw_tracepoint/napi_poll")
int sr_gap(struct bpf_raw_tracepoint_args *ctx)
{
	/* TP_PROTO(struct napi_struct *napi, int work, int budget) */
	struct napi_struct *napi = (struct napi_struct *)ctx->args[0];
	int work = (int)ctx->args[1];
	__u32 zero = 0;
	struct gap_ctl *c = bpf_map_lookup_elem(&gap_ctl, &zero);
	if (!c)
		return 0;
	__u64 epoch = c->w[GC_EPOCH];
	if (!epoch)
		return 0;
	char name[IFNAMSIZ] = {};
	struct net_device *dev = BPF_CORE_READ(napi, dev);
	if (!dev || bpf_probe_read_kernel_str(name, sizeof(name), &dev->name) < 0)
		return 0;
	if (!bpf_map_lookup_elem(&gap_devs, name))
		return 0;
	__u64 now = bpf_ktime_get_ns();
	if (now > c->w[GC_UNTIL])
		return 0;
	__u64 key = (__u64)napi;
	struct napi_gap *g = bpf_map_lookup_elem(&gap_napi, &key);
	if (!g || g->w[GN_EPOCH] != epoch) {
		/* The first poll of the epoch starts the clock. */
		struct napi_gap fresh = { .w = { epoch, now, 0, 1 } };
		bpf_map_update_elem(&gap_napi, &key, &fresh, BPF_ANY);
		return 0;
	}
	__u64 gap = now - g->w[GN_LAST];
	if (work > 0 && gap > g->w[GN_MAX_GAP])
		g->w[GN_MAX_GAP] = gap;
	g->w[GN_LAST] = now;
	g->w[GN_POLLS] += 1;
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
