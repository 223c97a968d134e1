/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * The generator's shared memory: user space writes the plan of one trial
 * (phases, ports, size schedule) into `gen_ctl` and the frames into
 * `gen_tmpl`, then runs the program with BPF_PROG_TEST_RUN (live frames);
 * the program keeps its state and results in the same structure.
 * Mirrored by `softrouter_tester::gen::CCtl` (#[repr(C)]): change both.
 */
#ifndef SR_GEN_H
#define SR_GEN_H

#include <linux/types.h>

#define GEN_MAX_PORTS 8		/* power of two: indices are masked */
#define GEN_MAX_PHASES 8	/* power of two */
#define GEN_MAX_SCHED 1024	/* power of two */
#define GEN_TMPL_CAP 1536	/* bytes of a template: frames up to 1518 B */

/* A stretch at one rate: `frames` frames (all ports together), one every
 * `interval_ns` + `interval_frac_ps` / 1000 ns from `t0_ns`
 * (CLOCK_MONOTONIC), or a burst at full speed if not `paced`. The
 * interval comes split so that the program never divides (a 64-bit
 * division costs tens of cycles a frame). */
struct gen_phase {
	__u64 frames;
	__u64 interval_ns;
	__u64 t0_ns;
	__u32 interval_frac_ps;	/* 0..999 */
	__u32 paced;
};

/* A sending port: its frames go out of `ifindex` (the tester's end of a
 * veth, so they arrive at the DUT's end). Its streams are
 * gen_streams[stream_off .. stream_off + nstreams], sent round robin;
 * the size slot advances each time the stream cursor wraps. */
struct gen_port {
	__u32 ifindex;
	__u32 nstreams;
	__u32 stream_off;
	__u32 cur_stream;
	__u32 cur_sched;
	__u32 _pad;
	__u64 sent;
};

struct gen_ctl {
	/* The plan (user space, before the run). */
	__u32 nports;
	__u32 nsizes;
	__u32 sched_len;
	__u32 nphases;
	/* Latency samples: frames whose sequence has these bits clear carry
	 * an exact send time (2^k - 1: one frame in 2^k per stream). */
	__u32 sample_mask;
	/* The longest catch-up burst: a frame later than this many intervals
	 * moves the rest of the schedule instead (see gen.bpf.c). */
	__u32 catchup_frames;
	struct gen_phase phase[GEN_MAX_PHASES];
	struct gen_port port[GEN_MAX_PORTS];
	__u16 schedule[GEN_MAX_SCHED];
	/* State (the program; zeroed by user space before the run). */
	__u32 cur_phase;
	__u32 cur_port;
	__u64 phase_sent;
	__u64 due_ns;
	__u64 due_rem_ps;
	__u64 clock_ns;		/* the last clock reading */
	/* Results. */
	__u64 sent;		/* frames redirected */
	__u64 early;		/* iterations that found no frame due */
	__u64 idle;		/* iterations after the last frame */
	__u64 errors;		/* iterations that failed (see `error`) */
	__u64 max_lag_ns;	/* worst lateness of a frame against its due time */
	__u64 first_ns;		/* time of the first frame */
	__u64 last_ns;		/* time of the last frame */
	__u64 shift_ns;		/* how late the first frame was: the schedule moved */
	__u64 clock_reads;	/* bpf_ktime_get_ns calls */
	__u64 stall_ns;		/* time the schedule moved mid-trial (stalls) */
	__u64 stalls;		/* times it moved */
	__u64 max_stall_ns;	/* the longest such move */
	/* Moves of at least `long_stall_ns` (plan): the host's stalls, told
	 * from the short waits behind the tester's own receive work. */
	__u64 long_stall_ns;
	__u64 long_stall_sum_ns;
	__u64 long_stalls;
	__u32 error;		/* last error: GEN_ERR_* */
	__u32 _pad2;
};

_Static_assert(sizeof(struct gen_ctl) == 2752, "mirrored by gen.rs: CCtl");

#define GEN_ERR_NO_TEMPLATE 1
#define GEN_ERR_BAD_LEN 2
#define GEN_ERR_ADJUST 3
#define GEN_ERR_STORE 4
#define GEN_ERR_NO_STREAM 5

/* A pre-built frame with sequence 0 and timestamp 0 (valid checksums). */
struct gen_tmpl {
	__u16 len;		/* bytes in the buffer (frame size - FCS) */
	__u16 csum_off;		/* UDP checksum */
	__u16 seq_off;		/* sequence; the timestamp follows it */
	__u8 long_form;		/* 64-bit fields (long) or 32-bit (short) */
	__u8 ipv6;		/* UDP after IPv6 (else after a 20-byte IPv4 header) */
	__u8 data[GEN_TMPL_CAP];
};

_Static_assert(sizeof(struct gen_tmpl) == 8 + GEN_TMPL_CAP, "mirrored by gen.rs: TMPL_SIZE");

#endif
