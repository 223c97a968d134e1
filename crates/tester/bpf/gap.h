/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * The receive-gap meter's shared memory, mirrored by
 * `softrouter_tester::gap` (word indices): change both.
 */
#ifndef SR_GAP_H
#define SR_GAP_H

/* Control words (one mmapable array entry), written by user space. */
#define GC_EPOCH 0	/* the trial being measured; 0: disarmed */
#define GC_UNTIL 1	/* CLOCK_MONOTONIC ns after which polls are ignored */
#define GC_WORDS 2

/* Per NAPI instance (hash value), u64 words. */
#define GN_EPOCH 0	/* the epoch the other words belong to */
#define GN_LAST 1	/* when its last poll ended, ns */
#define GN_MAX_GAP 2	/* the longest gap ended by a poll that did work, ns */
#define GN_POLLS 3	/* polls seen in the epoch */
#define GN_WORDS 4

#endif
