/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * The counter's shared memory, mirrored by `softrouter_tester::count`
 * (word indices): change the Rust first, regenerate sr_layout.h, then
 * here (the asserts below fail until both agree).
 */
#ifndef SR_COUNT_H
#define SR_COUNT_H

#include "sr_layout.h"

/* Per-stream statistics: u64 words. */
#define ST_RECEIVED 0
#define ST_DUPLICATES 1
#define ST_REORDERED 2
#define ST_BEYOND 3
#define ST_HIGH1 4	/* highest sequence seen + 1 (0: none yet) */
#define ST_LAST_LAT1 5	/* latency of the previous frame + 1 (0: none) */
#define ST_IPDV_SUM 6	/* sum of |IPDV| (RFC 3393, consecutive frames) */
#define ST_IPDV_COUNT 7
#define ST_IPDV_MAX 8
#define ST_WORDS 16

/* Global words, then the latency histogram. */
#define G_NON_TEST 0
#define G_LEARNING 1
#define G_UNKNOWN 2
#define G_CLOCK_ERR 3
#define G_LAT_COUNT 4
#define G_LAT_SUM 5
#define G_LAT_MIN 6
#define G_LAT_MAX 7
#define G_SAMPLE_MASK 8	/* set by user space: latency of frames whose
			 * sequence has these bits clear (2^k - 1) */
#define G_BUCKETS 16
#define NBUCKETS 2048	/* a power of two: an AND bounds the index */
#define G_WORDS (G_BUCKETS + NBUCKETS)
#define LAT_CAP ((1ULL << 40) - 1)
#define SUB_BITS 5	/* 32 log-linear sub-buckets per power of two */

/* The Rust side's words (tester::count, via sr_layout.h). */
_Static_assert(ST_RECEIVED == COUNT_ST_RECEIVED, "tester::count::ST_RECEIVED");
_Static_assert(ST_DUPLICATES == COUNT_ST_DUPLICATES, "tester::count::ST_DUPLICATES");
_Static_assert(ST_REORDERED == COUNT_ST_REORDERED, "tester::count::ST_REORDERED");
_Static_assert(ST_BEYOND == COUNT_ST_BEYOND, "tester::count::ST_BEYOND");
_Static_assert(ST_HIGH1 == COUNT_ST_HIGH1, "tester::count::ST_HIGH1");
_Static_assert(ST_LAST_LAT1 == COUNT_ST_LAST_LAT1, "tester::count::ST_LAST_LAT1");
_Static_assert(ST_IPDV_SUM == COUNT_ST_IPDV_SUM, "tester::count::ST_IPDV_SUM");
_Static_assert(ST_IPDV_COUNT == COUNT_ST_IPDV_COUNT, "tester::count::ST_IPDV_COUNT");
_Static_assert(ST_IPDV_MAX == COUNT_ST_IPDV_MAX, "tester::count::ST_IPDV_MAX");
_Static_assert(ST_WORDS == COUNT_ST_WORDS, "tester::count::ST_WORDS");
_Static_assert(G_NON_TEST == COUNT_G_NON_TEST, "tester::count::G_NON_TEST");
_Static_assert(G_LEARNING == COUNT_G_LEARNING, "tester::count::G_LEARNING");
_Static_assert(G_UNKNOWN == COUNT_G_UNKNOWN, "tester::count::G_UNKNOWN");
_Static_assert(G_CLOCK_ERR == COUNT_G_CLOCK_ERR, "tester::count::G_CLOCK_ERR");
_Static_assert(G_LAT_COUNT == COUNT_G_LAT_COUNT, "tester::count::G_LAT_COUNT");
_Static_assert(G_LAT_SUM == COUNT_G_LAT_SUM, "tester::count::G_LAT_SUM");
_Static_assert(G_LAT_MIN == COUNT_G_LAT_MIN, "tester::count::G_LAT_MIN");
_Static_assert(G_LAT_MAX == COUNT_G_LAT_MAX, "tester::count::G_LAT_MAX");
_Static_assert(G_SAMPLE_MASK == COUNT_G_SAMPLE_MASK, "tester::count::G_SAMPLE_MASK");
_Static_assert(G_BUCKETS == COUNT_G_BUCKETS, "tester::count::G_BUCKETS");
_Static_assert(NBUCKETS == COUNT_NBUCKETS, "tester::count::NBUCKETS");
_Static_assert(G_WORDS == COUNT_G_WORDS, "tester::count::G_WORDS");
_Static_assert(SUB_BITS == COUNT_SUB_BITS, "tester::count::SUB_BITS");
_Static_assert(LAT_CAP == COUNT_LAT_CAP, "tester::count::LAT_CAP");

#endif
