/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * The generator's shared memory: user space writes the plan of one trial
 * (phases, ports, size schedule) into `gen_ctl` and the frames into
 * `gen_tmpl`, then runs the program with BPF_PROG_TEST_RUN (live frames);
 * the program keeps its state and results in the same structure.
 *
 * Each struct here has a #[repr(C)] twin in `tester::gen::layout`, whose
 * size and field offsets sr_layout.h holds (GEN_<STRUCT>_SIZE,
 * GEN_<STRUCT>_OFF_<FIELD>), as it holds the tables' sizes GEN_MAX_PORTS,
 * GEN_MAX_PHASES, GEN_MAX_SCHED and GEN_TMPL_CAP (bytes of a template:
 * frames up to 1518 B): a field moved on one side only fails the build.
 */
#ifndef SR_GEN_H
#define SR_GEN_H

#include <linux/types.h>

#include "sr_layout.h"

/* The program masks its indices into the tables. */
_Static_assert((GEN_MAX_PORTS & (GEN_MAX_PORTS - 1)) == 0, "GEN_MAX_PORTS is a power of two");
_Static_assert((GEN_MAX_PHASES & (GEN_MAX_PHASES - 1)) == 0, "GEN_MAX_PHASES is a power of two");
_Static_assert((GEN_MAX_SCHED & (GEN_MAX_SCHED - 1)) == 0, "GEN_MAX_SCHED is a power of two");

/* Field f of struct s lies where its Rust twin has it. */
#define GEN_AT(s, f, off) \
	_Static_assert(__builtin_offsetof(struct s, f) == (off), "tester::gen::layout: " #s "." #f)

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

_Static_assert(sizeof(struct gen_phase) == GEN_PHASE_SIZE, "tester::gen::layout::CPhase");
GEN_AT(gen_phase, frames, GEN_PHASE_OFF_FRAMES);
GEN_AT(gen_phase, interval_ns, GEN_PHASE_OFF_INTERVAL_NS);
GEN_AT(gen_phase, t0_ns, GEN_PHASE_OFF_T0_NS);
GEN_AT(gen_phase, interval_frac_ps, GEN_PHASE_OFF_INTERVAL_FRAC_PS);
GEN_AT(gen_phase, paced, GEN_PHASE_OFF_PACED);

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

_Static_assert(sizeof(struct gen_port) == GEN_PORT_SIZE, "tester::gen::layout::CPort");
GEN_AT(gen_port, ifindex, GEN_PORT_OFF_IFINDEX);
GEN_AT(gen_port, nstreams, GEN_PORT_OFF_NSTREAMS);
GEN_AT(gen_port, stream_off, GEN_PORT_OFF_STREAM_OFF);
GEN_AT(gen_port, cur_stream, GEN_PORT_OFF_CUR_STREAM);
GEN_AT(gen_port, cur_sched, GEN_PORT_OFF_CUR_SCHED);
GEN_AT(gen_port, _pad, GEN_PORT_OFF__PAD);
GEN_AT(gen_port, sent, GEN_PORT_OFF_SENT);

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

_Static_assert(sizeof(struct gen_ctl) == GEN_CTL_SIZE, "tester::gen::layout::CCtl");
GEN_AT(gen_ctl, nports, GEN_CTL_OFF_NPORTS);
GEN_AT(gen_ctl, nsizes, GEN_CTL_OFF_NSIZES);
GEN_AT(gen_ctl, sched_len, GEN_CTL_OFF_SCHED_LEN);
GEN_AT(gen_ctl, nphases, GEN_CTL_OFF_NPHASES);
GEN_AT(gen_ctl, sample_mask, GEN_CTL_OFF_SAMPLE_MASK);
GEN_AT(gen_ctl, catchup_frames, GEN_CTL_OFF_CATCHUP_FRAMES);
GEN_AT(gen_ctl, phase, GEN_CTL_OFF_PHASE);
GEN_AT(gen_ctl, port, GEN_CTL_OFF_PORT);
GEN_AT(gen_ctl, schedule, GEN_CTL_OFF_SCHEDULE);
GEN_AT(gen_ctl, cur_phase, GEN_CTL_OFF_CUR_PHASE);
GEN_AT(gen_ctl, cur_port, GEN_CTL_OFF_CUR_PORT);
GEN_AT(gen_ctl, phase_sent, GEN_CTL_OFF_PHASE_SENT);
GEN_AT(gen_ctl, due_ns, GEN_CTL_OFF_DUE_NS);
GEN_AT(gen_ctl, due_rem_ps, GEN_CTL_OFF_DUE_REM_PS);
GEN_AT(gen_ctl, clock_ns, GEN_CTL_OFF_CLOCK_NS);
GEN_AT(gen_ctl, sent, GEN_CTL_OFF_SENT);
GEN_AT(gen_ctl, early, GEN_CTL_OFF_EARLY);
GEN_AT(gen_ctl, idle, GEN_CTL_OFF_IDLE);
GEN_AT(gen_ctl, errors, GEN_CTL_OFF_ERRORS);
GEN_AT(gen_ctl, max_lag_ns, GEN_CTL_OFF_MAX_LAG_NS);
GEN_AT(gen_ctl, first_ns, GEN_CTL_OFF_FIRST_NS);
GEN_AT(gen_ctl, last_ns, GEN_CTL_OFF_LAST_NS);
GEN_AT(gen_ctl, shift_ns, GEN_CTL_OFF_SHIFT_NS);
GEN_AT(gen_ctl, clock_reads, GEN_CTL_OFF_CLOCK_READS);
GEN_AT(gen_ctl, stall_ns, GEN_CTL_OFF_STALL_NS);
GEN_AT(gen_ctl, stalls, GEN_CTL_OFF_STALLS);
GEN_AT(gen_ctl, max_stall_ns, GEN_CTL_OFF_MAX_STALL_NS);
GEN_AT(gen_ctl, long_stall_ns, GEN_CTL_OFF_LONG_STALL_NS);
GEN_AT(gen_ctl, long_stall_sum_ns, GEN_CTL_OFF_LONG_STALL_SUM_NS);
GEN_AT(gen_ctl, long_stalls, GEN_CTL_OFF_LONG_STALLS);
GEN_AT(gen_ctl, error, GEN_CTL_OFF_ERROR);
GEN_AT(gen_ctl, _pad2, GEN_CTL_OFF__PAD2);

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

_Static_assert(sizeof(struct gen_tmpl) == GEN_TMPL_SIZE, "tester::gen::layout::CTmpl");
GEN_AT(gen_tmpl, len, GEN_TMPL_OFF_LEN);
GEN_AT(gen_tmpl, csum_off, GEN_TMPL_OFF_CSUM_OFF);
GEN_AT(gen_tmpl, seq_off, GEN_TMPL_OFF_SEQ_OFF);
GEN_AT(gen_tmpl, long_form, GEN_TMPL_OFF_LONG_FORM);
GEN_AT(gen_tmpl, ipv6, GEN_TMPL_OFF_IPV6);
GEN_AT(gen_tmpl, data, GEN_TMPL_OFF_DATA);

#endif
