/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * The counter's shared memory, mirrored by `softrouter_tester::count`
 * (word indices): change both.
 */
#ifndef SR_COUNT_H
#define SR_COUNT_H

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

#endif
