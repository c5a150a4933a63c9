/* Force-included (-include) into every RECIPE source the cross-check builds: the flush,
 * fence and non-temporal store instructions of the indexes are rewritten to these calls,
 * which count them and still execute the instruction (DRAM stands in for PM).
 * Part of hmsim's validation/ (see validation/README.md); not RECIPE code. */
#ifndef HMSIM_RECIPE_COUNTERS_H
#define HMSIM_RECIPE_COUNTERS_H

#include <stdint.h>
#include <stdio.h>
#include <immintrin.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One set of counters for the process: the cross-check runs the load with one thread. */
extern uint64_t hmsim_recipe_flushes, hmsim_recipe_fences, hmsim_recipe_ntstores;

static inline void recipe_flush(const volatile void *p) {
    hmsim_recipe_flushes++;
    _mm_clwb((void *)p);
}

static inline void recipe_fence(void) {
    hmsim_recipe_fences++;
    _mm_sfence();
}

static inline void recipe_ntstore64(long long *dest, long long v) {
    hmsim_recipe_ntstores++;
    _mm_stream_si64(dest, v);
}

static inline void recipe_reset(void) {
    hmsim_recipe_flushes = hmsim_recipe_fences = hmsim_recipe_ntstores = 0;
}

/* One machine-readable line per load phase: the counts over the inserts. */
static inline void recipe_report(uint64_t inserts) {
    printf("HMSIM_COUNTS inserts=%llu flushes=%llu fences=%llu ntstores=%llu\n",
           (unsigned long long)inserts, (unsigned long long)hmsim_recipe_flushes,
           (unsigned long long)hmsim_recipe_fences, (unsigned long long)hmsim_recipe_ntstores);
    fflush(stdout);
}

#ifdef __cplusplus
}
#endif

#endif
