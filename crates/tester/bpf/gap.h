/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * The receive-gap meter's shared memory, mirrored by
 * `softrouter_tester::gap` (word indices): change both.
 */
#ifndef SR_GAP_H
#define SR_GAP_H

/* Control words (one mmapable array entry). */
#define GC_EPOCH 0	/* the trial being measured; 0: disarmed (user) */
#define GC_UNTIL 1	/* CLOCK_MONOTONIC ns after which events are ignored (user) */
#define GC_PEND 2	/* per slot: since when frames wait for it, ns; 0: none (program) */
#define MAX_SLOTS 64
#define GC_ARMED (GC_PEND + MAX_SLOTS)	/* CLOCK_MONOTONIC ns the window opened (user) */
#define GC_WORDS (GC_ARMED + 1)

/* `gap_devs` values: the slot, and what the device is to it. */
#define DEV_SLOT_MASK 0xffff
#define DEV_SENDER (1u << 16)	/* the tester end that transmits into the slot's ring */
#define DEV_TRACKED (1u << 17)	/* (receiver) its sender's transmits are seen */
#define DEV_RECEIVER (1u << 18)	/* a DUT end whose polls are measured */

/* Per NAPI instance (hash value), u64 words. */
#define GN_EPOCH 0	/* the epoch the other words belong to */
#define GN_LAST 1	/* when its last poll ended, ns */
#define GN_MAX_GAP 2	/* the longest gap, ns */
#define GN_POLLS 3	/* polls seen in the epoch */
#define GN_MAX_AT 4	/* when the longest gap ended, ns */
#define GN_WORDS 5

#endif
