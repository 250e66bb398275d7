/*
 * test_curve.c - learning curves on synthetic truth: each form's fit recovers its
 * parameters and crossing on clean data, held-out selection picks the true form, the
 * bootstrap band covers the true crossing in at least 80 of 100 noisy cases, too few points
 * and flat data are errors, an unreachable target is reported as such, the smoothed target
 * rule, and the gradient-noise-scale batch carry-over.
 */
#include "scv.h"
#include "model/model.h"
#include "scv_test.h"
#include "core/util.h"

#define NPTS 20

/* truth curves: 20 evaluations every quarter epoch of 60000 samples */
static void sample(const scv_curve *truth, double *x, double *y, int n, double noise, scv_rng *r)
{
    for (int i = 0; i < n; i++) {
        x[i] = 15000.0 * (i + 1);
        y[i] = scv_curve_eval(truth, x[i]) + (r ? noise * scv_rng_normal(r) : 0);
    }
}

static const scv_curve TRUTHS[] = {
    {.form = SCV_CURVE_POW, .metric = SCV_METRIC_ACCURACY, .a = 0.92, .b = 28.7, .c = 0.5, .x0 = 20000},
    {.form = SCV_CURVE_EXP, .metric = SCV_METRIC_ACCURACY, .a = 0.90, .b = 0.40, .tau = 60000},
    {.form = SCV_CURVE_POW, .metric = SCV_METRIC_LOSS, .a = 0.25, .b = 40, .c = 0.4, .x0 = 0},
    {.form = SCV_CURVE_EXP, .metric = SCV_METRIC_LOSS, .a = 0.30, .b = 1.5, .tau = 80000},
    {.form = SCV_CURVE_TAIL, .metric = SCV_METRIC_LOSS, .a = 0, .b = 20, .c = 0.4},
};
/* targets: reached beyond the data (accuracy, TAIL) or inside it (loss) */
static const double TARGETS[] = {0.89, 0.88, 0.40, 0.35, 0.25};

/* The policy that selects between POW and EXP for a loss too (the asymptote truths). */
static scv_curve_policy policy_for(const scv_curve *t)
{
    scv_curve_policy p = scv_curve_policy_default();
    p.loss_tail = t->form == SCV_CURVE_TAIL;
    return p;
}

static void t_fit_recovers_each_form(void)
{
    double x[NPTS], y[NPTS];
    for (size_t k = 0; k < sizeof TRUTHS / sizeof TRUTHS[0]; k++) {
        const scv_curve *t = &TRUTHS[k];
        sample(t, x, y, NPTS, 0, NULL);
        scv_curve c;
        scv_err err = {0};
        CHECK_MSG(scv_curve_fit_form(t->form, t->metric, x, y, NPTS, NULL, &c, &err) == SCV_OK, "%s", err.msg);
        /* clean data: parameters within 1%, the crossing within 1% */
        CHECK_NEAR(c.a, t->a, 1e-3, 0);
        CHECK_NEAR(c.b, t->b, 0.01, 0);
        if (t->form == SCV_CURVE_TAIL) {
            CHECK_NEAR(c.c, t->c, 1e-6, 0);
            CHECK(c.x0 == 0 && c.n_params == 2);
        } else if (t->form == SCV_CURVE_POW) {
            CHECK_NEAR(c.c, t->c, 0.01, 0);
            CHECK_NEAR(c.x0, t->x0, 0.01, 200);
        } else {
            CHECK_NEAR(c.tau, t->tau, 0.01, 0);
        }
        CHECK(c.rmse < 1e-5);
        double xt = scv_curve_crossing(t, TARGETS[k]), xc = scv_curve_crossing(&c, TARGETS[k]);
        CHECK(isfinite(xt) && xt > 0);
        CHECK_NEAR(xc, xt, 0.01, 0);
        CHECK_NEAR(scv_curve_eval(&c, xc), TARGETS[k], 1e-9, 1e-9);
        /* the model selection picks the true form on clean data (a loss: TAIL by default) */
        scv_curve_policy pol = policy_for(t);
        CHECK_MSG(scv_curve_fit(t->metric, x, y, NPTS, &pol, &c, &err) == SCV_OK, "%s", err.msg);
        CHECK_MSG(c.form == t->form, "truth %s, picked %s (held-out rmse pow %g exp %g)",
                  scv_curve_form_name(t->form), scv_curve_form_name(c.form), c.holdout_rmse[0],
                  c.holdout_rmse[1]);
        CHECK_EQ_INT(c.n_fit, t->form == SCV_CURVE_TAIL ? NPTS : 15);
        CHECK_NEAR(scv_curve_crossing(&c, TARGETS[k]), xt, 0.01, 0);
    }
}

/* 100 noisy cases (5 forms x 20, accuracy noise sd 0.004, loss noise sd 0.01), targets the
 * truth reaches at 1.25x the last evaluation: the default 5-95% band (nominal 90%) must cover
 * the true crossing in at least 80 of them. */
static void t_band_covers_truth(void)
{
    scv_rng r;
    scv_rng_seed(&r, 11);
    double x[NPTS], y[NPTS];
    int covered = 0, fitted = 0, by_form[5] = {0};
    double width = 0;
    for (int i = 0; i < 100; i++) {
        scv_curve t = TRUTHS[i % 5];
        scv_curve_policy pol = policy_for(&t);
        /* jitter the truth so the cases differ */
        t.b *= 0.8 + 0.4 * scv_rng_uniform(&r);
        if (t.form != SCV_CURVE_EXP) t.c *= 0.8 + 0.4 * scv_rng_uniform(&r);
        else t.tau *= 0.8 + 0.4 * scv_rng_uniform(&r);
        double noise = t.metric == SCV_METRIC_ACCURACY ? 0.004 : 0.01;
        sample(&t, x, y, NPTS, noise, &r);
        double x_true = 1.25 * x[NPTS - 1], target = scv_curve_eval(&t, x_true);
        scv_curve c;
        scv_curve_prediction p;
        scv_err err = {0};
        if (scv_curve_fit(t.metric, x, y, NPTS, &pol, &c, &err) != SCV_OK ||
            scv_curve_predict(&c, x, y, NPTS, target, 1000 + (uint64_t)i, &pol, &p, &err) != SCV_OK) {
            CHECK_MSG(0, "case %d: %s", i, err.msg);
            continue;
        }
        fitted++;
        CHECK(p.n_boot == 200 && p.lo <= p.hi && !isnan(p.lo) && !isnan(p.hi));
        CHECK(p.p_reach >= 0 && p.p_reach <= 1);
        if (p.lo <= x_true && x_true <= p.hi) covered++, by_form[i % 5]++;
        if (isfinite(p.hi)) width += (p.hi - p.lo) / x_true;
    }
    printf("#   band coverage %d/100 (%d fitted; per truth %d %d %d %d %d of 20), mean relative width %.2f\n", covered,
           fitted, by_form[0], by_form[1], by_form[2], by_form[3], by_form[4], width / fitted);
    CHECK_MSG(covered >= 80, "the band covered the true crossing in %d of 100 cases", covered);
    /* the same seed gives the same band */
    sample(&TRUTHS[0], x, y, NPTS, 0.004, &r);
    scv_curve c;
    scv_curve_prediction p1, p2;
    CHECK(scv_curve_fit(SCV_METRIC_ACCURACY, x, y, NPTS, NULL, &c, NULL) == SCV_OK);
    CHECK(scv_curve_predict(&c, x, y, NPTS, 0.89, 5, NULL, &p1, NULL) == SCV_OK);
    CHECK(scv_curve_predict(&c, x, y, NPTS, 0.89, 5, NULL, &p2, NULL) == SCV_OK);
    CHECK(p1.lo == p2.lo && p1.hi == p2.hi && p1.p_reach == p2.p_reach);
}

static void t_errors_and_unreachable(void)
{
    double x[NPTS], y[NPTS];
    sample(&TRUTHS[0], x, y, NPTS, 0, NULL);
    scv_curve c;
    scv_err err = {0};
    /* too few points */
    CHECK(scv_curve_fit(SCV_METRIC_ACCURACY, x, y, 3, NULL, &c, &err) == SCV_EINVAL);
    CHECK_MSG(strstr(err.msg, "at least 4") != NULL, "%s", err.msg);
    CHECK(scv_curve_fit(SCV_METRIC_ACCURACY, x, y, 4, NULL, &c, &err) == SCV_OK);
    CHECK(isfinite(c.a) && isfinite(c.b) && isfinite(c.c) && isfinite(c.x0) && isfinite(c.tau));
    /* accuracy read as a loss: it does not fall */
    CHECK(scv_curve_fit(SCV_METRIC_LOSS, x, y, NPTS, NULL, &c, &err) == SCV_ENOCONV);
    CHECK_MSG(strstr(err.msg, "does not fall") != NULL, "%s", err.msg);
    /* flat data */
    double flat[NPTS];
    for (int i = 0; i < NPTS; i++) flat[i] = 0.5;
    CHECK(scv_curve_fit(SCV_METRIC_ACCURACY, x, flat, NPTS, NULL, &c, &err) == SCV_ENOCONV);
    /* bad values */
    y[3] = NAN;
    CHECK(scv_curve_fit(SCV_METRIC_ACCURACY, x, y, NPTS, NULL, &c, &err) == SCV_EINVAL);
    sample(&TRUTHS[0], x, y, NPTS, 0, NULL);
    x[5] = x[4] - 1;
    CHECK(scv_curve_fit(SCV_METRIC_ACCURACY, x, y, NPTS, NULL, &c, &err) == SCV_EINVAL);
    /* a target above the asymptote (0.92): not reachable, and few resamples reach it */
    scv_rng r;
    scv_rng_seed(&r, 4);
    sample(&TRUTHS[0], x, y, NPTS, 0.002, &r);
    CHECK(scv_curve_fit(SCV_METRIC_ACCURACY, x, y, NPTS, NULL, &c, &err) == SCV_OK);
    scv_curve_prediction p;
    CHECK(scv_curve_predict(&c, x, y, NPTS, 0.97, 1, NULL, &p, &err) == SCV_OK);
    CHECK(!p.reachable && isinf(p.x_star) && isinf(p.hi));
    CHECK_MSG(p.p_reach < 0.1, "p_reach %g", p.p_reach);
    CHECK(isinf(scv_curve_crossing(&TRUTHS[0], 0.92))); /* the asymptote itself */
    /* a reachable one: the fit reaches it, and so do most resamples */
    CHECK(scv_curve_predict(&c, x, y, NPTS, 0.86, 1, NULL, &p, &err) == SCV_OK);
    CHECK_MSG(p.reachable && isfinite(p.x_star) && p.p_reach > 0.9 && p.lo <= p.x_star && p.x_star <= p.hi,
              "reachable %d x* %g [%g, %g] p_reach %g", p.reachable, p.x_star, p.lo, p.hi, p.p_reach);
    /* already at the target at the start: x* = 0 */
    CHECK(scv_curve_crossing(&c, 0.1) == 0);
}

static void t_smoothed_target(void)
{
    double acc[] = {0.85, 0.90, 0.88, 0.91, 0.90, 0.92};
    CHECK_EQ_INT(scv_target_first_reached(SCV_METRIC_ACCURACY, acc, 6, 0.90, 3), 5);
    CHECK_EQ_INT(scv_target_first_reached(SCV_METRIC_ACCURACY, acc, 6, 0.90, 1), 1);
    CHECK_EQ_INT(scv_target_first_reached(SCV_METRIC_ACCURACY, acc, 6, 0.95, 3), -1);
    CHECK(!scv_target_reached(SCV_METRIC_ACCURACY, acc, 2, 0.5, 3)); /* fewer than W */
    CHECK(scv_target_reached(SCV_METRIC_ACCURACY, acc, 3, 0.5, 3));
    CHECK(!scv_target_reached(SCV_METRIC_ACCURACY, acc, 4, 0.90, 3)); /* 0.8967 */
    double loss[] = {0.9, 0.5, 0.45, 0.41, 0.39, 0.38};
    CHECK_EQ_INT(scv_target_first_reached(SCV_METRIC_LOSS, loss, 6, 0.42, 3), 4); /* 0.4167 */
    CHECK_EQ_INT(scv_curve_policy_default().smooth_window, 3);
}

static void t_batch_carry_over(void)
{
    /* E(B) = E(B0) (1 + B/Bn) / (1 + B0/Bn) */
    CHECK_NEAR(scv_samples_at_batch(1e6, 64, 1024, 256), 1e6 * (1 + 4.0) / (1 + 0.25), 1e-12, 0);
    CHECK_NEAR(scv_samples_at_batch(1e6, 64, 64, 256), 1e6, 1e-12, 0);
    CHECK(scv_samples_at_batch(1e6, 64, 1024, INFINITY) == 1e6);
    CHECK(scv_samples_at_batch(1e6, 64, 32, 256) < 1e6);
    CHECK(isnan(scv_samples_at_batch(1e6, 64, 1024, 0)));
    CHECK(isnan(scv_samples_at_batch(1e6, 0, 1024, 256)));
    /* the same law as the GNS statistical model: samples S(B) B = S_min (B + B_crit) */
    scv_stat_model m = {.kind = SCV_STAT_GNS, .b_simple = 300, .s_min = 1000, .n_train = 60000};
    double e64 = scv_stat_iterations(&m, 64) * 64, e512 = scv_stat_iterations(&m, 512) * 512;
    CHECK_NEAR(scv_samples_at_batch(e64, 64, 512, 300), e512, 1e-12, 0);
}


/* Synthetic accuracy curves of one family, as a corpus: y = a - b (x + x0)^-c + noise, or a
 * saturating exponential, over 10 epochs of 60000 samples, 200 evaluations. */
static void synth_corpus(scv_lcurve_set *set, size_t n, uint64_t seed)
{
    scv_rng r;
    scv_rng_seed(&r, seed);
    set->n = n;
    set->c = calloc(n, sizeof *set->c);
    for (size_t i = 0; i < n; i++) {
        scv_lcurve *c = &set->c[i];
        c->n = 200, c->n_train = 60000, c->batch = 64;
        c->samples = malloc(sizeof(double) * c->n), c->accuracy = malloc(sizeof(double) * c->n);
        c->loss = malloc(sizeof(double) * c->n);
        scv_curve t = {.metric = SCV_METRIC_ACCURACY, .a = 0.85 + 0.1 * scv_rng_uniform(&r),
                       .b = 0.5 + 0.3 * scv_rng_uniform(&r)};
        if (i % 3 == 2) t.form = SCV_CURVE_EXP, t.tau = 60000 * (0.3 + 1.5 * scv_rng_uniform(&r));
        else t.form = SCV_CURVE_POW, t.c = 0.3 + 0.9 * scv_rng_uniform(&r), t.x0 = 3000 * scv_rng_uniform(&r);
        if (t.form == SCV_CURVE_POW) t.b *= pow(60000, t.c) * 0.2; /* comparable gaps at one epoch */
        for (size_t k = 0; k < c->n; k++) {
            c->samples[k] = 60000 * 0.05 * (double)(k + 1);
            c->accuracy[k] = fmin(1, scv_curve_eval(&t, c->samples[k]) + 0.003 * scv_rng_normal(&r));
            c->loss[k] = NAN;
        }
    }
}

/* The reruns' band stands on min_examples pairs at least: fewer give none, and say they rest
 * on none (n 0: before, n was the count it refused, which a caller read as a band). */
static void t_calib_rerun_band(void)
{
    scv_calib c = {0};
    c.pol = scv_calib_policy_default();
    double r[40];
    for (int i = 0; i < 40; i++) r[i] = 0.02 * (i - 20); /* ln ratios -0.40..+0.38 */
    c.rerun[0].r = r;
    double lo, hi;
    size_t n = 99;
    c.rerun[0].n = (size_t)c.pol.min_examples - 1;
    CHECK_EQ_INT(scv_calib_rerun_band(&c, SCV_METRIC_ACCURACY, 2.0, &lo, &hi, &n), SCV_ENOTFOUND);
    CHECK(n == 0 && isnan(lo) && isnan(hi));
    c.rerun[0].n = 40;
    CHECK_EQ_INT(scv_calib_rerun_band(&c, SCV_METRIC_ACCURACY, 2.0, &lo, &hi, &n), SCV_OK);
    CHECK_MSG(n == 40 && lo < 2.0 && 2.0 < hi && lo > 2.0 * exp(-0.4) && hi < 2.0 * exp(0.38), "n %zu, %g-%g", n, lo, hi);
}

/* The band is split-conformal: on curves of the family it was calibrated on, the 80% band
 * covers 70-90% of the held-out examples (prefixes x targets), and a forecast is ordered. */
static void t_calib_coverage(void)
{
    scv_lcurve_set a = {0}, b = {0};
    synth_corpus(&a, 30, 21);
    synth_corpus(&b, 30, 22);
    scv_calib ca, cb;
    scv_err e = {0};
    CHECK_EQ_INT(scv_calib_build(&a, NULL, &ca, &e), SCV_OK);
    CHECK_EQ_INT(scv_calib_build(&b, NULL, &cb, &e), SCV_OK);
    CHECK(ca.n_examples[0] > 300 && ca.n_examples[1] == 0);
    size_t n = 0, in = 0, inf_truths = 0;
    for (int k = 0; k < SCV_CALIB_KINDS; k++)
        for (int bin = 0; bin < SCV_CALIB_BINS; bin++) {
            const scv_calib_cell *c = &cb.cell[0][k][bin];
            double lo, med, hi;
            size_t m;
            if (!c->n || scv_calib_band(&ca, NULL, SCV_METRIC_ACCURACY, (scv_calib_kind)k, bin, &lo, &med, &hi, &m))
                continue;
            CHECK(lo <= med && med <= hi);
            for (size_t i = 0; i < c->n; i++, n++) {
                in += c->r[i] >= lo && c->r[i] <= hi;
                inf_truths += isinf(c->r[i]);
            }
        }
    CHECK(n > 300);
    CHECK(inf_truths > 0); /* targets beyond a curve's best are among the examples */
    CHECK_MSG((double)in / n >= 0.7 && (double)in / n <= 0.9, "coverage %.3f over %zu", (double)in / n, n);
    printf("# calibrated 80%% band: coverage %.3f over %zu held-out examples\n", (double)in / n, n);
    /* a forecast from one held-out curve's first 1.5 epochs to a target it reaches at ~6 */
    const scv_lcurve *h = &b.c[0];
    double target = h->accuracy[120];
    scv_forecast f;
    CHECK_EQ_INT(scv_calib_forecast(&ca, NULL, SCV_METRIC_ACCURACY, h->samples, h->accuracy, 30, 60000, NULL, target,
                                    30 * 60000.0, 1, &f, &e), SCV_OK);
    CHECK(f.calibrated && f.n_examples >= 30);
    CHECK(f.lo >= h->samples[29] && f.lo <= f.x_med && f.x_med <= f.hi);
    CHECK(f.p_reach >= 0 && f.p_reach <= 1);
    /* uncalibrated: the curve's bootstrap */
    CHECK_EQ_INT(scv_calib_forecast(NULL, NULL, SCV_METRIC_ACCURACY, h->samples, h->accuracy, 30, 60000, NULL, target,
                                    30 * 60000.0, 1, &f, &e), SCV_OK);
    CHECK(!f.calibrated);
    /* a target past the ideal: never reached, said so */
    CHECK_EQ_INT(scv_calib_forecast(&ca, NULL, SCV_METRIC_ACCURACY, h->samples, h->accuracy, 30, 60000, NULL, 0.9999,
                                    30 * 60000.0, 1, &f, &e), SCV_OK);
    CHECK(f.p_reach < 0.5 && !(f.x_med <= 30 * 60000.0));
    CHECK(isfinite(f.nearest) && f.nearest < 0.9999 && f.nearest > h->accuracy[29] - 0.05);
    CHECK_EQ_INT(scv_calib_forecast(&ca, NULL, SCV_METRIC_ACCURACY, h->samples, h->accuracy, 2, 60000, NULL, target,
                                    30 * 60000.0, 1, &f, &e), SCV_EINVAL);
    scv_calib_free(&ca), scv_calib_free(&cb);
    scv_lcurve_set_free(&a), scv_lcurve_set_free(&b);
}

/* A stretched exponential of network `model` (one shape, its speed tau [epochs] apart):
 * accuracy 0.9 - 0.6 exp(-(x / tau)^0.6), 200 evaluations over 10 epochs, noise 0.002. */
static void shape_curve(scv_lcurve *c, const char *model, double tau, scv_rng *r)
{
    c->n = 200, c->n_train = 60000, c->batch = 64;
    snprintf(c->model, sizeof c->model, "%s", model);
    snprintf(c->dataset, sizeof c->dataset, "fashion-mnist");
    snprintf(c->job, sizeof c->job, "%s-job", model);
    c->samples = malloc(sizeof(double) * c->n), c->accuracy = malloc(sizeof(double) * c->n);
    c->loss = malloc(sizeof(double) * c->n);
    for (size_t k = 0; k < c->n; k++) {
        c->samples[k] = 60000 * 0.05 * (double)(k + 1);
        c->accuracy[k] = 0.9 - 0.6 * exp(-pow(0.05 * (double)(k + 1) / tau, 0.6)) + 0.002 * scv_rng_normal(r);
        c->loss[k] = NAN;
    }
}

/* The cross prior (issue 37): a network the corpus does not hold is forecast by other
 * networks' curves matched by shape where their calibrated band (each network left out) is
 * narrower than the fit's; a network it holds, by its own curves. */
static void t_calib_cross_prior(void)
{
    scv_rng r;
    scv_rng_seed(&r, 7);
    scv_lcurve_set set = {calloc(40, sizeof(scv_lcurve)), 40};
    for (size_t i = 0; i < 40; i++) shape_curve(&set.c[i], i % 2 ? "netb" : "neta", 0.4 + 0.1 * (double)(i / 2), &r);
    scv_calib cal;
    scv_err e = {0};
    CHECK_EQ_INT(scv_calib_build(&set, NULL, &cal, &e), SCV_OK);
    size_t nx = 0;
    for (int b = 0; b < SCV_CALIB_BINS; b++) nx += cal.cell[0][SCV_CALIB_XPRIOR][b].n;
    CHECK_MSG(nx > 300, "%zu cross-prior examples", nx); /* each curve's network left out */
    /* an unseen network's curve of the same shape: 1 epoch seen, the target crossed at ~5 */
    scv_lcurve h = {0};
    shape_curve(&h, "netc", 1.0, &r);
    double target = 0.9 - 0.6 * exp(-pow(5.0, 0.6)), truth = 5.0 * 60000;
    scv_forecast f;
    CHECK_EQ_INT(scv_calib_forecast(&cal, NULL, SCV_METRIC_ACCURACY, h.samples, h.accuracy, 20, 60000,
                                    "netc fashion-mnist", target, 10 * 60000.0, 1, &f, &e),
                 SCV_OK);
    CHECK_MSG(f.kind == SCV_CALIB_XPRIOR && f.n_members >= SCV_CALIB_MIN_MEMBERS, "kind %s, %zu members",
              scv_calib_kind_name(f.kind), f.n_members);
    CHECK_MSG(f.lo <= truth && truth <= f.hi && fabs(f.x_med / truth - 1) < 0.15, "%.3g in %.3g-%.3g (truth %.3g)",
              f.x_med, f.lo, f.hi, truth);
    /* its band is the narrower one: the fit's own (prior_cross 0) is wider */
    scv_calib_policy off = cal.pol;
    off.prior_cross = 0;
    scv_forecast g;
    CHECK_EQ_INT(scv_calib_forecast(&cal, &off, SCV_METRIC_ACCURACY, h.samples, h.accuracy, 20, 60000,
                                    "netc fashion-mnist", target, 10 * 60000.0, 1, &g, &e),
                 SCV_OK);
    CHECK_MSG(g.kind != SCV_CALIB_XPRIOR && g.hi / g.lo > f.hi / f.lo, "fit %s x%.2f against x%.2f",
              scv_calib_kind_name(g.kind), g.hi / g.lo, f.hi / f.lo);
    /* a network the corpus holds: its own curves */
    CHECK_EQ_INT(scv_calib_forecast(&cal, NULL, SCV_METRIC_ACCURACY, h.samples, h.accuracy, 20, 60000,
                                    "neta fashion-mnist", target, 10 * 60000.0, 1, &g, &e),
                 SCV_OK);
    CHECK_MSG(g.kind == SCV_CALIB_PRIOR, "kind %s", scv_calib_kind_name(g.kind));
    free(h.samples), free(h.accuracy), free(h.loss);
    scv_calib_free(&cal);
    scv_lcurve_set_free(&set);
}

/* One synthetic corpus curve: accuracy 0.9 - 0.6 exp(-x / tau), tau at batch b carried from
 * 60000 samples at 64 by the GNS law with noise scale bn, or (gamma finite) as (b / 64)^gamma;
 * 100 evaluations over 10 epochs. */
static void carry_curve_g(scv_lcurve *c, const char *model, int b, scv_lr_scaling rule, double lr, double bn,
                          double gamma)
{
    memset(c, 0, sizeof *c);
    snprintf(c->job, sizeof c->job, "%s-job", model);
    snprintf(c->model, sizeof c->model, "%s", model);
    snprintf(c->dataset, sizeof c->dataset, "fashion-mnist");
    c->batch = b, c->base_batch = 64, c->lr_scaling = rule, c->lr = lr, c->workers = 1, c->seed = 1;
    c->n_train = 60000, c->n = 100;
    c->samples = malloc(sizeof(double) * c->n), c->accuracy = malloc(sizeof(double) * c->n);
    c->loss = malloc(sizeof(double) * c->n);
    double tau = isfinite(gamma) ? 60000 * pow(b / 64.0, gamma) : 60000 * (b + bn) / (64 + bn);
    for (size_t i = 0; i < c->n; i++) {
        c->samples[i] = 6000.0 * (double)(i + 1);
        c->accuracy[i] = 0.9 - 0.6 * exp(-c->samples[i] / tau);
        c->loss[i] = NAN;
    }
}

static void carry_curve(scv_lcurve *c, const char *model, int b, scv_lr_scaling rule, double lr, double bn)
{
    carry_curve_g(c, model, b, rule, lr, bn, NAN);
}

static void t_carry_learnt(void)
{
    /* curves at 4 batches under sqrt (B=64 counts for any rule), one at 512 under another rule
     * whose times follow a very different noise scale, one of another model */
    scv_lcurve cs[6];
    carry_curve(&cs[0], "lenet", 32, SCV_LR_SCALE_SQRT, 0.05, 300);
    carry_curve(&cs[1], "lenet", 64, SCV_LR_SCALE_NONE, 0.05, 300);
    carry_curve(&cs[2], "lenet", 128, SCV_LR_SCALE_SQRT, 0.05, 300);
    carry_curve(&cs[3], "lenet", 256, SCV_LR_SCALE_SQRT, 0.05, 300);
    carry_curve(&cs[4], "lenet", 512, SCV_LR_SCALE_LINEAR, 0.05, 8);
    carry_curve(&cs[5], "mlp", 512, SCV_LR_SCALE_SQRT, 0.05, 8);
    scv_lcurve_set set = {.c = cs, .n = 6};
    scv_carry c;
    scv_carry_job job = {.lr = 0.05, .base_batch = 64, .lr_scaling = SCV_LR_SCALE_SQRT};
    CHECK(scv_carry_learn(&set, "lenet fashion-mnist", &job, SCV_METRIC_ACCURACY, NULL, 0.8, &c) == SCV_OK);
    CHECK_MSG(c.b_noise >= 300 / sqrt(2) && c.b_noise <= 300 * sqrt(2), "Bn_eff %g, truth 300", c.b_noise);
    CHECK(c.n_batches == 4);
    CHECK_MSG(c.med_abs < 0.05 && c.q_lo <= 0 + 0.05 && c.q_hi >= -0.05 && c.q_hi < 0.1, "err %g band %g %g",
              c.med_abs, c.q_lo, c.q_hi);
    /* the linear rule's curves: B=64 and 512 only, too few batches */
    job.lr_scaling = SCV_LR_SCALE_LINEAR;
    CHECK(scv_carry_learn(&set, "lenet fashion-mnist", &job, SCV_METRIC_ACCURACY, NULL, 0.8, &c) == SCV_ENOTFOUND);
    CHECK(isnan(c.b_noise) && isnan(c.q_lo));
    /* another base learning rate, another job, a metric not measured: none */
    job.lr_scaling = SCV_LR_SCALE_SQRT, job.lr = 0.1;
    CHECK(scv_carry_learn(&set, "lenet fashion-mnist", &job, SCV_METRIC_ACCURACY, NULL, 0.8, &c) == SCV_ENOTFOUND);
    job.lr = 0.05;
    CHECK(scv_carry_learn(&set, "mlp fashion-mnist", &job, SCV_METRIC_ACCURACY, NULL, 0.8, &c) == SCV_ENOTFOUND);
    CHECK(scv_carry_learn(&set, "lenet fashion-mnist", &job, SCV_METRIC_LOSS, NULL, 0.8, &c) == SCV_ENOTFOUND);
    /* a batch whose curve departs from the law (2x slower at 256): the error left out shows it */
    for (size_t i = 0; i < cs[3].n; i++) cs[3].samples[i] *= 2;
    CHECK(scv_carry_learn(&set, "lenet fashion-mnist", &job, SCV_METRIC_ACCURACY, NULL, 0.8, &c) == SCV_OK);
    CHECK_MSG(c.q_hi > 0.3, "band hi %g: the 2x outlier's error", c.q_hi);
    for (int i = 0; i < 6; i++) free(cs[i].samples), free(cs[i].accuracy), free(cs[i].loss);
}

static void t_carry_rule(void)
{
    /* three other jobs under sqrt at 4 batches, with exponents 0.1, 0.4 and 0.7, and the run's
     * own job (excluded) at 0 plus a job under another rule at -1: the rule's exponent is the
     * median of the other jobs' under sqrt, its band their spread, each job left out */
    const char *models[] = {"a", "b", "c", "own"};
    const double gammas[] = {0.1, 0.4, 0.7, 0.0};
    const int batches[] = {32, 64, 128, 256};
    scv_lcurve cs[20];
    size_t n = 0;
    for (int j = 0; j < 4; j++)
        for (int k = 0; k < 4; k++) carry_curve_g(&cs[n++], models[j], batches[k], SCV_LR_SCALE_SQRT, 0.05, 0, gammas[j]);
    for (int k = 0; k < 4; k++) carry_curve_g(&cs[n++], "d", batches[k], SCV_LR_SCALE_LINEAR, 0.05, 0, -1);
    scv_lcurve_set set = {.c = cs, .n = n};
    scv_carry c;
    scv_carry_job job = {.lr = 0.05, .base_batch = 64, .lr_scaling = SCV_LR_SCALE_SQRT};
    CHECK(scv_carry_learn_rule(&set, "own fashion-mnist", &job, SCV_METRIC_ACCURACY, NULL, 0.8, &c) == SCV_OK);
    CHECK_MSG(fabs(c.gamma - 0.4) < 0.05 && c.n_jobs == 3, "gamma %g from %d jobs", c.gamma, c.n_jobs);
    CHECK(isnan(c.b_noise));
    /* left out: a's 0.1 against the others' median 0.55, c's 0.7 against 0.25 */
    CHECK_MSG(c.q_lo < -0.3 && c.q_hi > 0.3 && c.q_lo > -0.6 && c.q_hi < 0.6, "band %g %g", c.q_lo, c.q_hi);
    /* the band scales with ln(B / b0), both ways */
    double lo, hi, lo2, hi2, lo3, hi3;
    scv_carry_quantiles(&c, 64, 64, &lo, &hi);
    CHECK(lo == 0 && hi == 0);
    scv_carry_quantiles(&c, 64, 256, &lo, &hi);
    scv_carry_quantiles(&c, 64, 128, &lo2, &hi2);
    scv_carry_quantiles(&c, 256, 64, &lo3, &hi3);
    CHECK(fabs(lo - 2 * lo2) < 1e-9 && fabs(hi - 2 * hi2) < 1e-9 && fabs(lo3 + hi) < 1e-9 && fabs(hi3 + lo) < 1e-9);
    scv_carry_law law = {.b_noise = NAN, .gamma = c.gamma};
    CHECK_NEAR(scv_carry_samples(law, 1e6, 64, 256), 1e6 * pow(4, c.gamma), 1e-9, 0);
    /* the run's own job is not learnt from: including it moves the median */
    CHECK(scv_carry_learn_rule(&set, "none fashion-mnist", &job, SCV_METRIC_ACCURACY, NULL, 0.8, &c) == SCV_OK);
    CHECK_MSG(c.n_jobs == 4 && c.gamma < 0.4, "gamma %g from %d jobs", c.gamma, c.n_jobs);
    /* the linear rule: one job only, too few */
    job.lr_scaling = SCV_LR_SCALE_LINEAR;
    CHECK(scv_carry_learn_rule(&set, "own fashion-mnist", &job, SCV_METRIC_ACCURACY, NULL, 0.8, &c) == SCV_ENOTFOUND);
    CHECK(isnan(c.gamma));
    for (size_t i = 0; i < n; i++) free(cs[i].samples), free(cs[i].accuracy), free(cs[i].loss);
}

/* The run's own carry from its curve at two batches (scv_carry_shift), on two synthetic
 * kinds of departure from the b0 = 64 curve, a loss 0.9 (x / 1e4)^-0.3 (the form the curve
 * module fits a loss with) evaluated to s_p = 60000 samples, then b = 256 evaluated to 90000;
 * the target 0.33, b0's crossing s0 = 1e4 (0.9 / 0.33)^(1 / 0.3):
 *   floor  b's loss 0.04 lower from s_p on: b0's crossing of 0.37
 *   scale  b makes b0's progress at half the rate: 2 (s0 - s_p) samples from s_p, gamma = +0.5
 * (the exponent carries the samples from s_p, as the loop carries those still to go)
 * The band (the level and scale readings, the noise's error added) covers each truth; the
 * point's sign is the truth's. */
static void t_carry_shift(void)
{
    const scv_carry_policy cp = scv_carry_policy_default();
    const double sp = 60000, target = 0.33, s0 = 1e4 * pow(0.9 / target, 1 / 0.3);
    double x0[12], y0[12], xb[10], yb[10];
    for (int kind = 0; kind < 2; kind++) {
        for (int i = 0; i < 12; i++) {
            x0[i] = sp * (i + 1) / 12;
            y0[i] = 0.9 * pow(x0[i] / 1e4, -0.3) + 0.002 * ((i % 3) - 1);
        }
        for (int i = 0; i < 10; i++) {
            xb[i] = sp + 30000.0 * (i + 1) / 10;
            double u = kind == 0 ? xb[i] : sp + (xb[i] - sp) / 2;
            yb[i] = 0.9 * pow(u / 1e4, -0.3) - (kind == 0 ? 0.04 : 0) + 0.002 * ((i % 3) - 1);
        }
        double truth = kind == 0 ? log((1e4 * pow(0.9 / (target + 0.04), 1 / 0.3) - sp) / (s0 - sp)) / log(4) : 0.5;
        const double seg_s0[] = {0, sp}, seg_s1[] = {sp, xb[9]}, seg_rate[] = {1, NAN};
        scv_carry_run run = {.metric = SCV_METRIC_LOSS, .x0 = x0, .y0 = y0, .n0 = 12, .xb = xb, .yb = yb, .nb = 10,
                             .seg_s0 = seg_s0, .seg_s1 = seg_s1, .seg_rate = seg_rate, .nseg = 2, .b0 = 64,
                             .b = 256, .start = sp, .target = target, .horizon = 1e7};
        scv_carry c;
        CHECK_EQ_INT(scv_carry_shift(&run, &cp, 0.8, &c), SCV_OK);
        CHECK_MSG(c.gamma + c.q_lo <= truth && truth <= c.gamma + c.q_hi, "kind %d: gamma %g band %+g..%+g, truth %g",
                  kind, c.gamma, c.q_lo, c.q_hi, truth);
        CHECK_MSG(kind == 0 ? c.gamma < -0.1 : c.gamma > 0.1, "kind %d: gamma %g", kind, c.gamma);
        /* the read itself: b's rate and level on b0's curve, that curve's crossing, and the
         * exponent of a run at b from its start (at 0.04 lower all along, or at half the rate) */
        double scratch = kind == 0 ? log(1e4 * pow(0.9 / (target + 0.04), 1 / 0.3) / s0) / log(4) : 0.5;
        CHECK_MSG(c.run_b0 == 64 && c.run_b == 256 && fabs(c.run_rate / (kind == 0 ? 1 : 0.5) - 1) < 0.1 &&
                  fabs(c.run_level - (kind == 0 ? -0.04 : 0)) < 0.01 && fabs(c.run_cross0 / s0 - 1) < 0.1 &&
                  fabs(c.gamma_scratch - scratch) < 0.1,
                  "kind %d: rate %g level %g crossing %g (%g) from the start %g (%g)", kind, c.run_rate, c.run_level,
                  c.run_cross0, s0, c.gamma_scratch, scratch);
        run.nb = (size_t)cp.run_min_evals - 1; /* too few at b */
        CHECK_EQ_INT(scv_carry_shift(&run, &cp, 0.8, &c), SCV_ENOTFOUND);
    }
}

static void t_carry_measured(void)
{
    /* AdaScale: three other jobs whose curves follow the noise-scale law with Bn 100, 300 and
     * 1000, each curve naming the noise scale its run measured (the truth), and the run's own
     * job (excluded): the law with the measured Bn carries them exactly, so the error band is
     * tight; a job whose runs measured a quarter of its Bn widens it; curves without a
     * measured noise scale, or of another rule, do not count */
    const char *models[] = {"a", "b", "c", "own"};
    const double bns[] = {100, 300, 1000, 50};
    const int batches[] = {64, 128, 256, 512};
    scv_lcurve cs[24];
    size_t n = 0;
    for (int j = 0; j < 4; j++)
        for (int k = 0; k < 4; k++) {
            carry_curve(&cs[n], models[j], batches[k], SCV_LR_SCALE_ADASCALE, 0.05, bns[j]);
            cs[n++].noise_scale = bns[j];
        }
    for (int k = 0; k < 4; k++)
        carry_curve(&cs[n++], "d", batches[k], SCV_LR_SCALE_ADASCALE, 0.05, 30); /* none named */
    scv_lcurve_set set = {.c = cs, .n = n};
    scv_carry c;
    scv_carry_job job = {.lr = 0.05, .base_batch = 64, .lr_scaling = SCV_LR_SCALE_ADASCALE};
    CHECK(scv_lr_scaling_carries(SCV_LR_SCALE_ADASCALE) && !scv_lr_scaling_carries(SCV_LR_SCALE_SQRT));
    CHECK(scv_carry_learn_measured(&set, "own fashion-mnist", &job, SCV_METRIC_ACCURACY, NULL, 0.8, &c) == SCV_OK);
    CHECK_MSG(c.n_jobs == 3 && isnan(c.b_noise) && isnan(c.gamma) && c.per_log, "%d jobs, Bn %g, gamma %g", c.n_jobs,
              c.b_noise, c.gamma);
    CHECK_MSG(fabs(c.q_lo) < 0.05 && fabs(c.q_hi) < 0.05, "band %g %g", c.q_lo, c.q_hi);
    scv_carry_err e = scv_carry_err_of(&c);
    CHECK(e.per_log);
    /* b's runs measured 75 where its curves follow 300: carried too high to a larger batch (nearer
     * a linear law), so ln(true / carried) reaches below 0 */
    for (size_t i = 4; i < 8; i++) cs[i].noise_scale = 75;
    CHECK(scv_carry_learn_measured(&set, "own fashion-mnist", &job, SCV_METRIC_ACCURACY, NULL, 0.8, &c) == SCV_OK);
    CHECK_MSG(c.q_lo < -0.1, "band %g %g: b's error", c.q_lo, c.q_hi);
    /* another rule: no curve of it names a noise scale */
    job.lr_scaling = SCV_LR_SCALE_SQRT;
    CHECK(scv_carry_learn_measured(&set, "own fashion-mnist", &job, SCV_METRIC_ACCURACY, NULL, 0.8, &c) ==
          SCV_ENOTFOUND);
    /* the one order: a job the corpus holds no curves of, under AdaScale, carries by the measured law */
    scv_job_info ji = {.lr = 0.05, .base_batch = 64, .lr_scaling = SCV_LR_SCALE_ADASCALE};
    snprintf(ji.model, sizeof ji.model, "new"), snprintf(ji.dataset, sizeof ji.dataset, "fashion-mnist");
    CHECK_EQ_INT(scv_carry_for_job(&set, &ji, SCV_METRIC_ACCURACY, 0.8, &c), 3);
    for (size_t i = 0; i < n; i++) free(cs[i].samples), free(cs[i].accuracy), free(cs[i].loss);
}

/* The seeds' crossings read at the run's evaluation spacing (issue 37: the README job's run,
 * evaluating every 0.25 epoch, reached 0.88 at 5.24 epochs where the corpus's seeds, read at
 * their 0.05-epoch evaluations, said 2.1-3.4): a plateau curve (evaluations every 500 samples)
 * whose accuracy alternates around the target, three of every four at 0.885 and every fourth
 * at 0.86 until 30,000 samples, then all at 0.885: a dense window of 3 crosses 0.88 within
 * the first 2,000 samples; read one point every 2,000 samples (the last of each: 0.86 until
 * then) its window crosses after 30,000, as the same rule over a curve of those points alone;
 * the losses, read the same way, are each spacing's mean. */
static void t_seed_spacing(void)
{
    scv_lcurve c[2];
    memset(c, 0, sizeof c);
    for (int k = 0; k < 2; k++) {
        c[k].batch = 64, c[k].base_batch = 64, c[k].lr = 0.05, c[k].workers = 1, c[k].seed = 1, c[k].n_train = 8000;
        c[k].n = k ? 40 : 160;
        c[k].samples = malloc(sizeof(double) * c[k].n), c[k].accuracy = malloc(sizeof(double) * c[k].n);
        c[k].loss = malloc(sizeof(double) * c[k].n);
    }
    for (size_t i = 0; i < 160; i++) {
        double x = 500.0 * (double)(i + 1);
        c[0].samples[i] = x, c[0].accuracy[i] = x <= 30000 && (i + 1) % 4 == 0 ? 0.86 : 0.885;
        c[0].loss[i] = (i + 1) % 4 == 0 ? 0.5 : 0.1; /* a spacing's mean: 0.2 */
        if ((i + 1) % 4 == 0) {                      /* the points a spacing of 2,000 samples reads */
            c[1].samples[i / 4] = x, c[1].accuracy[i / 4] = c[0].accuracy[i], c[1].loss[i / 4] = 0.2;
        }
    }
    const scv_lcurve *dense = &c[0], *coarse = &c[1];
    scv_seed_crossings a, b, d;
    CHECK_EQ_INT(scv_seed_crossings_of(&dense, 1, SCV_METRIC_ACCURACY, 0.88, 3, 64, 0, &d), SCV_OK);
    CHECK_EQ_INT(scv_seed_crossings_of(&dense, 1, SCV_METRIC_ACCURACY, 0.88, 3, 64, 2000, &a), SCV_OK);
    CHECK_EQ_INT(scv_seed_crossings_of(&coarse, 1, SCV_METRIC_ACCURACY, 0.88, 3, 64, 0, &b), SCV_OK);
    CHECK_MSG(d.x[0] < 2000 && a.x[0] > 30000 && b.x[0] == a.x[0], "dense %g, at 2000 %g, the coarse curve's %g",
              d.x[0], a.x[0], b.x[0]);
    /* a loss target between the dense values' window means and the spacing's means: 0.25 */
    CHECK_EQ_INT(scv_seed_crossings_of(&dense, 1, SCV_METRIC_LOSS, 0.25, 3, 64, 2000, &a), SCV_OK);
    CHECK_EQ_INT(scv_seed_crossings_of(&coarse, 1, SCV_METRIC_LOSS, 0.25, 3, 64, 0, &b), SCV_OK);
    CHECK_MSG(a.x[0] == b.x[0] && isfinite(a.x[0]), "loss at 2000 %g, the coarse curve's %g", a.x[0], b.x[0]);
    for (int k = 0; k < 2; k++) free(c[k].samples), free(c[k].accuracy), free(c[k].loss);
}

static const scv_test tests[] = {
    {"fit_recovers_each_form", t_fit_recovers_each_form},
    {"band_covers_truth", t_band_covers_truth},
    {"errors_and_unreachable", t_errors_and_unreachable},
    {"smoothed_target", t_smoothed_target},
    {"batch_carry_over", t_batch_carry_over},
    {"calib_coverage", t_calib_coverage},
    {"calib_cross_prior", t_calib_cross_prior},
    {"calib_rerun_band", t_calib_rerun_band},
    {"carry_learnt", t_carry_learnt},
    {"carry_rule", t_carry_rule},
    {"carry_measured", t_carry_measured},
    {"carry_shift", t_carry_shift},
    {"seed_spacing", t_seed_spacing},
};
SCV_TEST_MAIN(tests)
