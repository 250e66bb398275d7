/*
 * corpus_fixtures.h - corpus lines of the fake driver's family for the loop's tests
 * (test_target.c, test_carry.c): power-law curves with the fields a corpus line carries.
 */
#ifndef SCV_TEST_CORPUS_FIXTURES_H
#define SCV_TEST_CORPUS_FIXTURES_H
#include "loop_fake.h"

/* One corpus line of the fake's family: accuracy 1 - 0.1414 (x / tau)^-0.5 (crossing 0.9 at
 * 2 tau samples) at x = 500, 1000, ... 80,000 samples (n_train 10,000: 8 epochs), plus
 * N(0, 0.002) per point when noise is given; the line's other fields as set (dataset NULL:
 * synthetic:10000; extra: more fields, "\"arch\":\"fake:784-10\",", or NULL). */
typedef struct {
    const char *job, *dataset, *rule, *extra;
    int batch, base_batch, seed;
    double lr, tau;
    scv_rng *noise;
} fake_curve;

static inline void write_curve(FILE *f, const fake_curve *c)
{
    fprintf(f,
            "{\"job\":\"%s\",\"model\":\"exec\",\"dataset\":\"%s\",\"batch\":%d,\"base_batch\":%d,"
            "\"lr_scaling\":\"%s\",\"lr\":%g,\"workers\":1,\"seed\":%d,\"n_train\":10000,\"epochs\":8,"
            "\"command\":\"test\",\"date\":\"2026-11-29\",\"machine\":\"test\",%s\"points\":[",
            c->job, c->dataset ? c->dataset : "synthetic:10000", c->batch, c->base_batch, c->rule, c->lr, c->seed,
            c->extra ? c->extra : "");
    for (int k = 1; k <= 160; k++) {
        double x = 500.0 * k, acc = fmax(0, 1 - 0.1414 * pow(x / c->tau, -0.5));
        if (c->noise) acc += 0.002 * scv_rng_normal(c->noise);
        fprintf(f, "%s[%g,%.5f,null]", k > 1 ? "," : "", x, acc);
    }
    fprintf(f, "]}\n");
}
#endif
