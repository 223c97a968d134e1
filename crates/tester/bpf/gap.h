/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * The receive-gap meter's shared memory, mirrored by
 * `softrouter_tester::gap` (word indices): change the Rust first,
 * regenerate sr_layout.h, then here (the asserts below fail until both
 * agree).
 */
#ifndef SR_GAP_H
#define SR_GAP_H

#include "sr_layout.h"

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

/* The Rust side's words and flags (tester::gap, via sr_layout.h). */
_Static_assert(GC_EPOCH == GAP_GC_EPOCH, "tester::gap::GC_EPOCH");
_Static_assert(GC_UNTIL == GAP_GC_UNTIL, "tester::gap::GC_UNTIL");
_Static_assert(GC_PEND == GAP_GC_PEND, "tester::gap::GC_PEND");
_Static_assert(MAX_SLOTS == GAP_MAX_SLOTS, "tester::gap::MAX_SLOTS");
_Static_assert(GC_ARMED == GAP_GC_ARMED, "tester::gap::GC_ARMED");
_Static_assert(GC_WORDS == GAP_GC_WORDS, "tester::gap::GC_WORDS");
_Static_assert(GN_EPOCH == GAP_GN_EPOCH, "tester::gap::GN_EPOCH");
_Static_assert(GN_LAST == GAP_GN_LAST, "tester::gap::GN_LAST");
_Static_assert(GN_MAX_GAP == GAP_GN_MAX_GAP, "tester::gap::GN_MAX_GAP");
_Static_assert(GN_POLLS == GAP_GN_POLLS, "tester::gap::GN_POLLS");
_Static_assert(GN_MAX_AT == GAP_GN_MAX_AT, "tester::gap::GN_MAX_AT");
_Static_assert(GN_WORDS == GAP_GN_WORDS, "tester::gap::GN_WORDS");
_Static_assert(DEV_SENDER == GAP_DEV_SENDER, "tester::gap::DEV_SENDER");
_Static_assert(DEV_TRACKED == GAP_DEV_TRACKED, "tester::gap::DEV_TRACKED");
_Static_assert(DEV_RECEIVER == GAP_DEV_RECEIVER, "tester::gap::DEV_RECEIVER");

#endif
