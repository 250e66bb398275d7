/*
 * straggler.h - Or et al.'s straggler detector (the rule is scv_straggler_rule in scv.h):
 * pure bookkeeping over the per-worker compute times of each iteration. No I/O, no MPI.
 */
#ifndef SCV_STRAGGLER_H
#define SCV_STRAGGLER_H
#include <stdint.h>
#include "scv.h"

typedef struct scv_straggler_state {
    scv_straggler_rule rule;
    int K;
    int64_t seen;                   /* iterations observed */
    double ratio[SCV_MAX_WORKERS];  /* smoothed throughput over the median's (NaN: none yet) */
    double below_s[SCV_MAX_WORKERS]; /* seconds of training its ratio has been below the rule */
    int below_n[SCV_MAX_WORKERS];   /* ... and iterations */
    char found[SCV_MAX_WORKERS];    /* already reported */
} scv_straggler_state;

/* Starts watching K workers (rule.fraction <= 0: never finds one). */
void scv_straggler_init(scv_straggler_state *s, const scv_straggler_rule *rule, int K);
/* One iteration: worker k took t[k] seconds of compute for b[k] samples; the iteration took
 * dt seconds in all. Returns the worker that has just become a straggler (the slowest when
 * several do in the same iteration; each is found once), or -1. Workers with b[k] = 0 or
 * t[k] <= 0 are left out of the median and of the rule for that iteration. */
int scv_straggler_update(scv_straggler_state *s, const double *t, const int64_t *b, double dt);
#endif
