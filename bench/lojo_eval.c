/*
 * lojo_eval.c - the target's estimators, each job of the corpus left out in turn (issue 37
 * item 4): for every estimator whose band the corpus calibrates, the share of held-out truths
 * inside its 80% band (coverage), the band's median width (high / low) and the median error
 * of its point, |x_point / x_true - 1|. The job left out is a job the tool has never seen: its
 * bands come from the other jobs' curves only.
 *
 *   rerun      a run's crossing from another seed's of the same job, batch and rule (what the
 *              learnt, carried and corpus estimators take a stored or corpus run's crossing
 *              as): the point is that crossing, the band the other jobs' reruns' spread
 *              (scv_calib_rerun_band)
 *   carry      a crossing at batch a carried to batch b under the same rule by the rule's
 *              exponent learnt from the other jobs (scv_carry_learn_rule): the point
 *              x_a (b / a)^gamma, the band its quantiles (scv_carry_quantiles)
 *   rerun+carry  the two together, as the planner prices a stored run's estimate at another
 *              batch: the rerun band widened by the carry's (scv_band_widen)
 *   AdaScale   under --lr-scaling adascale, a crossing at a carried to b by the noise-scale
 *              law with the noise scale the run at a measured (the curve's noise_scale), the
 *              band the law's error on the other jobs' AdaScale curves (scv_carry_learn_measured)
 *
 * Targets, as the corpus's reruns are made (calib.c): the held-out curve's own 3-point means
 * at 10 log-spaced shares of its points (2%-100%), each crossing read by the target rule
 * (scv_stoprule_reached, window 3). A truth the other curve never reaches is a miss of the
 * point and inside the band only when its top is +inf. The curve estimator's own table is
 * calib_eval's (its forecasts from prefixes of the curve): `build/calib_eval CURVES job`.
 *
 *   cc -std=c11 -O2 -Iinclude -Isrc bench/lojo_eval.c build/libscv.a -L/usr/lib/x86_64-linux-gnu/openmpi/lib \
 *      -lmpi -ldnnl -lcjson -lsqlite3 -lz -lm -fopenmp -o build/lojo_eval && build/lojo_eval data/curves.jsonl
 */
#include "scv.h"
#include "model/model.h"
#include "model/estimate.h"
#include "model/stoprule.h"
#include "io/io.h"
#include "core/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { E_RERUN, E_CARRY, E_BOTH, E_MEASURED, E_COUNT };
static const char *const NAMES[E_COUNT] = {"rerun (learnt, carried, corpus)", "carry (the rule's exponent)",
                                           "rerun + carry (a stored run at another batch)",
                                           "carry under AdaScale (the measured noise scale's law)"};

typedef struct {
    size_t n, in;
    size_t m;          /* reached truths, widths */
    double *err, *wid; /* |point / truth - 1| of reached truths; high / low of every band */
    size_t nw;
} tally;

static void push(double **v, size_t *n, double x)
{
    *v = realloc(*v, sizeof(double) * (*n + 1));
    (*v)[(*n)++] = x;
}

/* One prediction: point x and band (ln ends about it) against truth t (NaN: never reached). */
static void judge(tally *t, double x, scv_band b, double truth)
{
    double lo, hi;
    if (!(x > 0) || !scv_band_known(b)) return;
    scv_band_ends(b, x, &lo, &hi);
    t->n++;
    t->in += isnan(truth) ? isinf(hi) : truth >= lo && truth <= hi;
    push(&t->wid, &t->nw, lo > 0 ? hi / lo : INFINITY);
    if (!isnan(truth)) push(&t->err, &t->m, fabs(x / truth - 1));
}

static double median(double *v, size_t n)
{
    if (!n) return NAN;
    qsort(v, n, sizeof *v, scv_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Curve c's points of metric mi with its 3-point means: the count. */
static size_t points(const scv_lcurve *c, int mi, double *x, double *y, double *m)
{
    return scv_lcurve_smoothed(c, mi, x, y, m);
}

/* The crossing of target by curve (x, y: n) under the rule (NaN: never). */
static double crossing(const double *x, const double *y, size_t n, int mi, double target)
{
    double cross;
    long i = scv_stoprule_reached(x, y, n, mi ? -1 : 1, target, scv_calib_policy_default().window, &cross);
    return i >= 0 && cross > 0 ? cross : NAN;
}

/* Judges the predictions from curve a of the held-out job to curve b (another seed at a's
 * batch, or another batch under a's rule) for metric mi. */
static void judge_pair(const scv_lcurve *a, const scv_lcurve *b, int mi, const scv_calib *cal, const scv_carry *carry,
                       tally *t)
{
    size_t na_max = a->n + 1, nb_max = b->n + 1;
    double *w = malloc(sizeof(double) * 3 * (na_max + nb_max));
    double *xa = w, *ya = xa + na_max, *ma = ya + na_max, *xb = ma + na_max, *yb = xb + nb_max, *mb = yb + nb_max;
    size_t na = points(a, mi, xa, ya, ma), nb = points(b, mi, xb, yb, mb);
    scv_metric metric = mi ? SCV_METRIC_LOSS : SCV_METRIC_ACCURACY;
    for (int k = 0; k < 10 && na >= 8; k++) {
        size_t i = (size_t)((double)(na - 1) * 0.02 * pow(50, k / 9.0));
        if (i < 1 || i + 1 >= na || !isfinite(ma[i])) continue;
        double ca = crossing(xa, ya, na, mi, ma[i]), cb = crossing(xb, yb, nb, mi, ma[i]);
        if (isnan(ca)) continue;
        double lo, hi, ql, qh;
        size_t nr;
        scv_band rerun = scv_band_none();
        if (!scv_calib_rerun_band(cal, metric, ca, &lo, &hi, &nr)) rerun = scv_band_of(ca, lo, hi);
        if (a->batch == b->batch) {
            judge(&t[E_RERUN], ca, rerun, cb);
            continue;
        }
        if (!carry) continue;
        scv_carry_quantiles(carry, a->batch, b->batch, &ql, &qh);
        if (!isfinite(carry->gamma)) { /* the measured law (AdaScale) */
            double bn = scv_carry_law_noise(carry, a->noise_scale), x = ca * (b->batch + bn) / (a->batch + bn);
            if (a->noise_scale > 0) judge(&t[E_MEASURED], x, scv_band_of(x, x * exp(ql), x * exp(qh)), cb);
            continue;
        }
        double x = ca * pow((double)b->batch / a->batch, carry->gamma);
        judge(&t[E_CARRY], x, scv_band_of(x, x * exp(ql), x * exp(qh)), cb);
        scv_band both = scv_band_widen(rerun, ql, qh);
        judge(&t[E_BOTH], x, both, cb);
    }
    free(w);
}

static void row(const char *who, const char *metric, const char *est, const tally *t)
{
    tally c = *t;
    printf("| %s | %s | %s | %zu (%zu reached) | %.2f | x%.2f | %.1f%% |\n", who, metric, est, c.n, c.m,
           c.n ? (double)c.in / c.n : NAN, median(c.wid, c.nw), 100 * median(c.err, c.m));
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: lojo_eval CURVES.jsonl\n");
        return 2;
    }
    scv_lcurve_set all;
    scv_err e = {0};
    if (scv_lcurves_load(argv[1], &all, &e)) {
        fprintf(stderr, "lojo_eval: %s\n", e.msg);
        return 1;
    }
    scv_calib_policy pol = scv_calib_policy_default();
    printf("| left out | metric | estimator | predictions | 80%% band coverage | median width (high/low) | median "
           "error of the point |\n|---|---|---|---|---|---|---|\n");
    tally tot[2][E_COUNT] = {{{0}}};
    for (size_t g = 0; g < all.n; g++) {
        const char *job = all.c[g].job;
        int seen = 0;
        for (size_t h = 0; h < g; h++) seen |= !strcmp(all.c[h].job, job);
        if (seen) continue;
        scv_lcurve_set in = {calloc(all.n, sizeof(scv_lcurve)), 0};
        for (size_t h = 0; h < all.n; h++)
            if (strcmp(all.c[h].job, job)) in.c[in.n++] = all.c[h];
        scv_calib cal;
        if (scv_calib_build(&in, &pol, &cal, &e)) {
            fprintf(stderr, "lojo_eval: %s\n", e.msg);
            return 1;
        }
        char key[64];
        scv_calib_key(all.c[g].model, all.c[g].dataset, key, sizeof key);
        for (int mi = 0; mi < 2; mi++) {
            tally t[E_COUNT] = {{0}};
            scv_carry carry[4];
            int known[4];
            for (int r = 0; r < 4; r++) {
                scv_carry_job cj = {.lr = all.c[g].lr, .base_batch = all.c[g].base_batch, .lr_scaling = (scv_lr_scaling)r};
                scv_metric m = mi ? SCV_METRIC_LOSS : SCV_METRIC_ACCURACY;
                known[r] = scv_lr_scaling_carries(cj.lr_scaling)
                               ? !scv_carry_learn_measured(&all, key, &cj, m, NULL, pol.coverage, &carry[r])
                               : !scv_carry_learn_rule(&all, key, &cj, m, NULL, pol.coverage, &carry[r]);
            }
            for (size_t a = 0; a < all.n; a++)
                for (size_t b = 0; b < all.n; b++) {
                    const scv_lcurve *ca = &all.c[a], *cb = &all.c[b];
                    if (a == b || strcmp(ca->job, job) || strcmp(cb->job, job)) continue;
                    int rerun = ca->batch == cb->batch && ca->lr_scaling == cb->lr_scaling && ca->seed != cb->seed;
                    /* another batch under the same rule (a curve at the base batch is every rule's) */
                    int r = ca->batch == ca->base_batch ? (int)cb->lr_scaling : (int)ca->lr_scaling;
                    int ada = (ca->lr_scaling == SCV_LR_SCALE_ADASCALE) + (cb->lr_scaling == SCV_LR_SCALE_ADASCALE);
                    int carried = ca->batch != cb->batch && ca->seed == cb->seed && ada != 1 &&
                                  (ca->lr_scaling == cb->lr_scaling || ca->batch == ca->base_batch ||
                                   cb->batch == cb->base_batch);
                    if (rerun || carried) judge_pair(ca, cb, mi, &cal, carried && known[r] ? &carry[r] : NULL, t);
                }
            for (int k = 0; k < E_COUNT; k++) {
                if (!t[k].n) continue;
                row(job, mi ? "loss" : "accuracy", NAMES[k], &t[k]);
                tally *s = &tot[mi][k];
                s->n += t[k].n, s->in += t[k].in;
                for (size_t i = 0; i < t[k].m; i++) push(&s->err, &s->m, t[k].err[i]);
                for (size_t i = 0; i < t[k].nw; i++) push(&s->wid, &s->nw, t[k].wid[i]);
                free(t[k].err), free(t[k].wid);
            }
        }
        scv_calib_free(&cal);
        free(in.c);
    }
    for (int mi = 0; mi < 2; mi++)
        for (int k = 0; k < E_COUNT; k++)
            if (tot[mi][k].n) row("**all**", mi ? "loss" : "accuracy", NAMES[k], &tot[mi][k]);
    scv_lcurve_set_free(&all);
    return 0;
}
