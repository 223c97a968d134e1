/* Print the TSC frequency in Hz: rdtsc across a CLOCK_MONOTONIC_RAW interval.
 * Takes the median of 5 x 200 ms samples.  x86-64 only (so is l3fwd's SSE path). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void) {
    double hz[5];
    for (int i = 0; i < 5; i++) {
        struct timespec d = {0, 200 * 1000 * 1000};
        double t0 = now();
        unsigned long long c0 = __rdtsc();
        nanosleep(&d, NULL);
        unsigned long long c1 = __rdtsc();
        double t1 = now();
        hz[i] = (double)(c1 - c0) / (t1 - t0);
    }
    qsort(hz, 5, sizeof hz[0], cmp);
    printf("%.0f\n", hz[2]);
    return 0;
}
