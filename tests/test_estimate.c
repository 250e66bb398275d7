/*
 * test_estimate.c - the prediction's value type and its operations (src/model/estimate.c):
 * the band's convention (log ratios; "up to", "never" and none as values), widening in
 * quadrature, the rest less the work done, the union, the carry's error from one batch to
 * another, a stored run's mixture of batches, and an estimate's band at any batch, each
 * against numbers worked by hand.
 */
#include "scv.h"
#include "scv_test.h"
#include "../src/model/model.h"

static void band_of_and_ends(void)
{
    scv_band b = scv_band_of(10, 5, 20);
    CHECK_NEAR(b.lo, log(0.5), 1e-12, 0);
    CHECK_NEAR(b.hi, log(2.0), 1e-12, 0);
    double lo, hi;
    scv_band_ends(b, 4, &lo, &hi); /* a band scales with its point */
    CHECK_NEAR(lo, 2, 1e-12, 0);
    CHECK_NEAR(hi, 8, 1e-12, 0);
    /* "up to" and "never" are values */
    b = scv_band_of(10, 0, INFINITY);
    CHECK(b.lo == -INFINITY && b.hi == INFINITY && scv_band_known(b));
    scv_band_ends(b, 10, &lo, &hi);
    CHECK(lo == 0 && hi == INFINITY);
    b = scv_band_of(10, -3, 12); /* a low end below zero: up to */
    CHECK(b.lo == -INFINITY);
    /* none */
    CHECK(!scv_band_known(scv_band_of(10, NAN, 12)));
    CHECK(!scv_band_known(scv_band_of(0, 1, 2)));
    scv_band_ends(scv_band_none(), 10, &lo, &hi);
    CHECK(isnan(lo) && isnan(hi));
    /* ends on the wrong side of the point are clamped to it */
    b = scv_band_of(10, 11, 9);
    CHECK(b.lo == 0 && b.hi == 0);
}

static void widen_quadrature(void)
{
    scv_band b = {-0.3, 0.4};
    scv_band w = scv_band_widen(b, -0.4, 0.3);
    CHECK_NEAR(w.lo, -0.5, 1e-12, 0);
    CHECK_NEAR(w.hi, 0.5, 1e-12, 0);
    /* an error all on one side widens that side only */
    w = scv_band_widen(b, 0.1, 0.3);
    CHECK_NEAR(w.lo, -0.3, 1e-12, 0);
    CHECK_NEAR(w.hi, 0.5, 1e-12, 0);
    /* not known: unchanged; none stays none; open ends stay open */
    w = scv_band_widen(b, NAN, 0.3);
    CHECK(w.lo == b.lo && w.hi == b.hi);
    CHECK(!scv_band_known(scv_band_widen(scv_band_none(), -1, 1)));
    w = scv_band_widen((scv_band){-INFINITY, INFINITY}, -1, 1);
    CHECK(w.lo == -INFINITY && w.hi == INFINITY);
    /* a zero band widened is the error's */
    w = scv_band_widen((scv_band){0, 0}, -0.2, 0.7);
    CHECK_NEAR(w.lo, -0.2, 1e-12, 0);
    CHECK_NEAR(w.hi, 0.7, 1e-12, 0);
    CHECK(!scv_band_known(scv_band_nonzero((scv_band){0, 0})));
    CHECK(scv_band_known(scv_band_nonzero((scv_band){0, 0.1})));
}

static void less_done(void)
{
    /* whole 100 (band 80..150), 40 to go: 20..90 */
    scv_band b = scv_band_of(100, 80, 150), r = scv_band_less_done(b, 100, 40);
    double lo, hi;
    scv_band_ends(r, 40, &lo, &hi);
    CHECK_NEAR(lo, 20, 1e-9, 0);
    CHECK_NEAR(hi, 90, 1e-9, 0);
    /* 10 to go: its low end is passed, up to 60 */
    r = scv_band_less_done(b, 100, 10);
    scv_band_ends(r, 10, &lo, &hi);
    CHECK(r.lo == -INFINITY && lo == 0);
    CHECK_NEAR(hi, 60, 1e-9, 0);
    /* never stays never; nothing left or no band: none */
    r = scv_band_less_done(scv_band_of(100, 80, INFINITY), 100, 40);
    CHECK(r.hi == INFINITY);
    CHECK(!scv_band_known(scv_band_less_done(b, 100, 0)));
    CHECK(!scv_band_known(scv_band_less_done(scv_band_none(), 100, 40)));
    /* the whole at the start: the band itself */
    r = scv_band_less_done(b, 100, 100);
    CHECK_NEAR(r.lo, b.lo, 1e-12, 0);
    CHECK_NEAR(r.hi, b.hi, 1e-12, 0);
}

static void band_union(void)
{
    scv_band u = scv_band_union((scv_band){-0.1, 0.5}, (scv_band){-0.3, 0.2});
    CHECK(u.lo == -0.3 && u.hi == 0.5);
    CHECK(!scv_band_known(scv_band_union((scv_band){-0.1, 0.5}, scv_band_none())));
}

static void carry_err(void)
{
    double ql, qh;
    scv_carry_err flat = {-0.2, 0.3, 0}, per = {-0.1, 0.2, 1};
    scv_carry_err_at(&flat, 64, 64, &ql, &qh);
    CHECK(ql == 0 && qh == 0);
    scv_carry_err_at(&flat, 64, 256, &ql, &qh);
    CHECK(ql == -0.2 && qh == 0.3);
    scv_carry_err_at(&per, 64, 256, &ql, &qh); /* x ln 4 */
    CHECK_NEAR(ql, -0.1 * log(4), 1e-12, 0);
    CHECK_NEAR(qh, 0.2 * log(4), 1e-12, 0);
    scv_carry_err_at(&per, 256, 64, &ql, &qh); /* ln(1/4) < 0 swaps the sides */
    CHECK_NEAR(ql, -0.2 * log(4), 1e-12, 0);
    CHECK_NEAR(qh, 0.1 * log(4), 1e-12, 0);
    scv_carry_err unknown = {NAN, NAN, 0};
    scv_carry_err_at(&unknown, 64, 256, &ql, &qh);
    CHECK(isnan(ql) && isnan(qh));
    /* the same as the carry's own quantiles (model/carry.c) */
    scv_carry c = {.gamma = 0.5, .q_lo = -0.1, .q_hi = 0.2};
    double cl, ch;
    scv_carry_quantiles(&c, 64, 256, &cl, &ch);
    scv_carry_err_at(&per, 64, 256, &ql, &qh);
    CHECK_NEAR(ql, cl, 1e-12, 0);
    CHECK_NEAR(qh, ch, 1e-12, 0);
}

static void mix(void)
{
    /* 3/4 of the samples at B=64, 1/4 at 256; a flat carry error -0.2..+0.3 */
    scv_estimate_mix m = {.n = 2, .batch = {64, 256}, .samples = {300, 100}};
    scv_carry_err e = {-0.2, 0.3, 0};
    double ql, qh;
    CHECK_NEAR(scv_estimate_mix_carried(&m, 64), 0.25, 1e-12, 0);
    CHECK_NEAR(scv_estimate_mix_carried(&m, 128), 1.0, 1e-12, 0);
    CHECK(scv_estimate_mix_err(&m, &e, 64, &ql, &qh));
    CHECK_NEAR(ql, log(0.75 + 0.25 * exp(-0.2)), 1e-12, 0);
    CHECK_NEAR(qh, log(0.75 + 0.25 * exp(0.3)), 1e-12, 0);
    CHECK(scv_estimate_mix_err(&m, &e, 128, &ql, &qh)); /* every sample carried */
    CHECK_NEAR(ql, -0.2, 1e-12, 0);
    CHECK_NEAR(qh, 0.3, 1e-12, 0);
    scv_carry_err unknown = {NAN, NAN, 0};
    CHECK(!scv_estimate_mix_err(&m, &unknown, 128, &ql, &qh));
    scv_estimate_mix empty = {0};
    CHECK(!scv_estimate_mix_err(&empty, &e, 128, &ql, &qh));
}

static void band_at(void)
{
    /* a curve's estimate: its band at its batch, widened by the carry elsewhere */
    scv_estimate e = scv_estimate_none();
    e.source = SCV_TARGET_CURVE, e.epochs = 2, e.batch = 64, e.band = (scv_band){-0.3, 0.4};
    e.carry = (scv_carry_err){-0.4, 0.3, 0};
    scv_band b = scv_estimate_band_at(&e, 64);
    CHECK(b.lo == -0.3 && b.hi == 0.4);
    b = scv_estimate_band_at(&e, 256);
    CHECK_NEAR(b.lo, -0.5, 1e-12, 0);
    CHECK_NEAR(b.hi, 0.5, 1e-12, 0);
    /* a stored run's: its reruns' spread widened by its samples' carry (the mix) */
    e.source = SCV_TARGET_LEARNT, e.band = (scv_band){-0.1, 0.1};
    e.mix = (scv_estimate_mix){.n = 2, .batch = {64, 256}, .samples = {300, 100}};
    b = scv_estimate_band_at(&e, 64);
    double ml = log(0.75 + 0.25 * exp(-0.4)), mh = log(0.75 + 0.25 * exp(0.3));
    CHECK_NEAR(b.lo, -sqrt(0.01 + ml * ml), 1e-12, 0);
    CHECK_NEAR(b.hi, sqrt(0.01 + mh * mh), 1e-12, 0);
    /* ... no reruns' spread known (0-wide) and nothing carried at its own batch: none */
    e.band = (scv_band){0, 0}, e.mix = (scv_estimate_mix){.n = 1, .batch = {64}, .samples = {400}};
    CHECK(!scv_band_known(scv_estimate_band_at(&e, 64)));
    b = scv_estimate_band_at(&e, 256);
    CHECK_NEAR(b.lo, -0.4, 1e-12, 0);
    CHECK_NEAR(b.hi, 0.3, 1e-12, 0);
    /* no band: none at every batch */
    e = scv_estimate_none();
    e.epochs = 3, e.batch = 64, e.carry = (scv_carry_err){-0.4, 0.3, 0};
    CHECK(!scv_band_known(scv_estimate_band_at(&e, 256)));
}

static const scv_test tests[] = {
    {"band_of_and_ends", band_of_and_ends}, {"widen_quadrature", widen_quadrature}, {"less_done", less_done},
    {"band_union", band_union},             {"carry_err", carry_err},               {"mix", mix},
    {"band_at", band_at},
};
SCV_TEST_MAIN(tests)
