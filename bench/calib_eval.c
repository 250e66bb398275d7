/*
 * calib_eval.c - how well the calibrated band (src/model/calib.c) holds on jobs it was not
 * calibrated on: leave one group out. For each group of the corpus (a job, or with "model"
 * every job of one model), the calibration is built from the other groups' curves and
 * judged on the group's own examples (every prefix x target of its curves, made as the
 * calibration makes them): the share of truths inside the 80% band (coverage), and the
 * median error of the crossing in samples, the point (the raw crossing inside the band) and shifted
 * (times exp of the bin's median log error); truths never reached count as misses of the
 * point estimate and as inside the band only when its top is +inf. The point a forecast
 * gives is the raw one clamped into the band (policy.shift_median 0); where a forecast has two
 * raw predictions (the fit and other networks' curves), it takes the kind the training
 * calibration's band makes narrower, as a run would. CALIB_LOG=1 in the
 * environment measures the error as |ln(x_point / x_t)| instead.
 *
 *   cc -std=c11 -O2 -Iinclude -Isrc bench/calib_eval.c build/libscv.a -lcjson -lsqlite3 -lm \
 *      -o build/calib_eval && build/calib_eval data/curves.jsonl [job|model|curve]
 */
#include "scv.h"
#include "model/model.h"
#include "io/io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* P(reach): a forecast's P(x_t <= H) is the share of its bin's calibration residuals r <=
 * ln(H / x^) (calib.c). Judged at horizons H = m x^ for the multiples below: the mean P the
 * calibration states against the share of held-out truths reached by H (a reliability table,
 * CALIB_REACH=1; the bin's own residuals, when it holds policy.min_examples). */
#define REACH_MULTS 7
static const double REACH_M[REACH_MULTS] = {0.5, 0.8, 1, 1.25, 1.6, 2, 4};
static double reach_p[2][REACH_MULTS], reach_hit[2][REACH_MULTS];
static size_t reach_n[2][REACH_MULTS];

typedef struct {
    size_t n, in, reached;
    double *raw, *cal; /* |x^/x_t - 1| and |x_med/x_t - 1| of reached truths */
    double *wid;       /* every example's band width, high / low (n of them) */
} tally;

static void judge(const scv_calib *train, const scv_calib *test, int mi, tally *t)
{
    for (int k = 0; k < SCV_CALIB_KINDS; k++)
        for (int b = 0; b < SCV_CALIB_BINS; b++) {
            const scv_calib_cell *c = &test->cell[mi][k][b];
            double lo, med, hi;
            size_t m;
            if (!c->n) continue;
            if (scv_calib_band(train, &train->pol, mi ? SCV_METRIC_LOSS : SCV_METRIC_ACCURACY, (scv_calib_kind)k, b, &lo,
                               &med, &hi, &m))
                continue;
            if (getenv("CALIB_BINS")) {
                size_t in = 0;
                for (size_t i = 0; i < c->n; i++) in += c->r[i] >= lo && c->r[i] <= hi;
                fprintf(stderr, "%s kind %s bin %d: %zu examples, coverage %.2f, q %.2f %.2f %.2f\n",
                        mi ? "loss" : "acc", scv_calib_kind_name((scv_calib_kind)k), b, c->n, (double)in / c->n, lo,
                        med, hi);
            }
            const scv_calib_cell *tc = &train->cell[mi][k][b];
            for (int j = 0; j < REACH_MULTS && tc->n >= (size_t)train->pol.min_examples; j++) {
                size_t below = 0;
                for (size_t i = 0; i < tc->n; i++) below += tc->r[i] <= log(REACH_M[j]);
                for (size_t i = 0; i < c->n; i++)
                    reach_p[mi][j] += (double)below / tc->n, reach_hit[mi][j] += c->r[i] <= log(REACH_M[j]),
                        reach_n[mi][j]++;
            }
            for (size_t i = 0; i < c->n; i++) {
                double r = c->r[i];
                t->wid = realloc(t->wid, sizeof(double) * (t->n + 1));
                t->wid[t->n] = exp(hi - lo);
                t->n++;
                t->in += r >= lo && r <= hi;
                if (isinf(r)) continue;
                t->raw = realloc(t->raw, sizeof(double) * (t->reached + 1));
                t->cal = realloc(t->cal, sizeof(double) * (t->reached + 1));
                double pt = fmin(fmax(0, lo), hi);              /* the point: x^ clamped into the band */
                if (getenv("CALIB_LOG")) { /* |ln(x_point / x_t)| instead */
                    t->raw[t->reached] = fabs(pt - r);
                    t->cal[t->reached++] = isfinite(med) ? fabs(med - r) : INFINITY;
                    continue;
                }
                t->raw[t->reached] = fabs(exp(pt - r) - 1);     /* x_point / x_t - 1 */
                t->cal[t->reached++] = isfinite(med) ? fabs(exp(med - r) - 1) : INFINITY;
            }
        }
}

static double median(double *v, size_t n)
{
    if (!n) return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4 || (argc >= 3 && strcmp(argv[2], "job") && strcmp(argv[2], "model") &&
                                 strcmp(argv[2], "curve"))) {
        fprintf(stderr, "usage: calib_eval CORPUS.jsonl [job|model|curve [PRIOR]]\n");
        return 2;
    }
    scv_calib_policy pol = scv_calib_policy_default();
    if (argc == 4) pol.prior = atoi(argv[3]);
    /* CALIB_TRAIN_MULTS=N: calibrated on the first N target multiples only, judged on all
     * (what far targets' coverage owes to the multiples the calibration sees) */
    double full_mults[SCV_CALIB_MULTS];
    memcpy(full_mults, pol.target_mults, sizeof full_mults);
    for (int k = getenv("CALIB_TRAIN_MULTS") ? atoi(getenv("CALIB_TRAIN_MULTS")) : SCV_CALIB_MULTS; k < SCV_CALIB_MULTS;
         k++)
        pol.target_mults[k] = 0;
    int by_model = argc >= 3 && !strcmp(argv[2], "model"), by_curve = argc >= 3 && !strcmp(argv[2], "curve");
    char name[128];
    scv_lcurve_set all;
    scv_err e = {0};
    if (scv_lcurves_load(argv[1], &all, &e)) {
        fprintf(stderr, "calib_eval: %s\n", e.msg);
        return 1;
    }
    printf("| left out | metric | examples | 80%% band coverage | median width (high/low) | median error of the point (raw, clamped into the band) | ... with the median shift |\n"
           "|---|---|---|---|---|---|---|\n");
    tally tot[2] = {{0}};
    for (size_t g = 0; g < all.n; g++) {
        const char *key = by_model ? all.c[g].model : all.c[g].job;
        if (by_curve) snprintf(name, sizeof name, "%s B=%d %s seed %d", key, all.c[g].batch,
                               all.c[g].lr_scaling == SCV_LR_SCALE_SQRT ? "sqrt" : all.c[g].lr_scaling ? "linear" : "none",
                               all.c[g].seed), key = name;
        int seen = 0;
        for (size_t h = 0; h < g && !by_curve; h++) seen |= !strcmp(by_model ? all.c[h].model : all.c[h].job, key);
        if (seen) continue;
        scv_lcurve_set in = {calloc(all.n, sizeof(scv_lcurve)), 0}, out = {calloc(all.n, sizeof(scv_lcurve)), 0};
        for (size_t h = 0; h < all.n; h++) {
            int mine = by_curve ? h == g : !strcmp(by_model ? all.c[h].model : all.c[h].job, key);
            (mine ? &out : &in)->c[(mine ? &out : &in)->n++] = all.c[h];
        }
        /* the held-out curves' examples are made as a run's would be: with the prior of the
         * other groups' curves only */
        scv_calib train, test = {0};
        if (scv_calib_build(&in, &pol, &train, &e)) {
            fprintf(stderr, "calib_eval: %s\n", e.msg);
            return 1;
        }
        test.ref = train.ref, test.n_ref = train.n_ref, test.pol = pol;
        test.select = &train; /* its forecasts choose their kind by the widths a run would read */
        scv_calib_policy tpol = pol;
        tpol.fit_examples = 0; /* judged: the forecast a run would get */
        memcpy(tpol.target_mults, full_mults, sizeof full_mults); /* judged on every multiple */
        for (size_t h = 0; h < out.n; h++)
            for (int mi = 0; mi < 2; mi++) {
                const scv_lcurve *c = &out.c[h];
                const double *v = mi ? c->loss : c->accuracy;
                double *x = malloc(sizeof(double) * c->n), *y = malloc(sizeof(double) * c->n);
                size_t k = 0;
                for (size_t j = 0; j < c->n; j++)
                    if (isfinite(v[j]) && c->samples[j] > 0) x[k] = c->samples[j], y[k++] = v[j];
                char key[64];
                scv_calib_add(&test, mi ? SCV_METRIC_LOSS : SCV_METRIC_ACCURACY, x, y, k, c->n_train,
                              scv_calib_key(c->model, c->dataset, key, sizeof key), -1, &tpol, &e);
                free(x), free(y);
            }
        test.ref = NULL, test.n_ref = 0;
        if (getenv("CALIB_DEBUG")) fprintf(stderr, "%s: train %zu/%zu test %zu/%zu\n", key, train.n_examples[0], train.n_examples[1], test.n_examples[0], test.n_examples[1]);
        for (int mi = 0; mi < 2; mi++) {
            tally t = {0};
            double p0[REACH_MULTS], h0[REACH_MULTS];
            size_t n0[REACH_MULTS];
            memcpy(p0, reach_p[mi], sizeof p0), memcpy(h0, reach_hit[mi], sizeof h0),
                memcpy(n0, reach_n[mi], sizeof n0);
            judge(&train, &test, mi, &t);
            if (getenv("CALIB_REACH")) { /* this group's reliability at H = x^ and 2 x^ */
                fprintf(stderr, "%s %s:", key, mi ? "loss" : "accuracy");
                for (int j = 2; j <= 5; j += 3)
                    if (reach_n[mi][j] > n0[j])
                        fprintf(stderr, " H=%.0fx: stated %.2f, reached %.2f;", REACH_M[j],
                                (reach_p[mi][j] - p0[j]) / (double)(reach_n[mi][j] - n0[j]),
                                (reach_hit[mi][j] - h0[j]) / (double)(reach_n[mi][j] - n0[j]));
                fprintf(stderr, "\n");
            }
            if (!t.n) continue;
            tot[mi].wid = realloc(tot[mi].wid, sizeof(double) * (tot[mi].n + t.n));
            memcpy(tot[mi].wid + tot[mi].n, t.wid, sizeof(double) * t.n);
            printf("| %s | %s | %zu (%zu reached) | %.2f | x%.2f | %.1f%% | %.1f%% |\n", key, mi ? "loss" : "accuracy",
                   t.n, t.reached, (double)t.in / t.n, median(t.wid, t.n), 100 * median(t.raw, t.reached),
                   100 * median(t.cal, t.reached));
            tot[mi].n += t.n, tot[mi].in += t.in;
            tot[mi].raw = realloc(tot[mi].raw, sizeof(double) * (tot[mi].reached + t.reached));
            tot[mi].cal = realloc(tot[mi].cal, sizeof(double) * (tot[mi].reached + t.reached));
            memcpy(tot[mi].raw + tot[mi].reached, t.raw, sizeof(double) * t.reached);
            memcpy(tot[mi].cal + tot[mi].reached, t.cal, sizeof(double) * t.reached);
            tot[mi].reached += t.reached;
            free(t.raw), free(t.cal), free(t.wid);
        }
        scv_calib_free(&train), scv_calib_free(&test);
        free(in.c), free(out.c); /* the curves are all's */
    }
    for (int mi = 0; mi < 2; mi++)
        if (tot[mi].n)
            printf("| **all** | %s | %zu (%zu reached) | **%.2f** | x%.2f | %.1f%% | **%.1f%%** |\n",
                   mi ? "loss" : "accuracy", tot[mi].n, tot[mi].reached, (double)tot[mi].in / tot[mi].n,
                   median(tot[mi].wid, tot[mi].n), 100 * median(tot[mi].raw, tot[mi].reached),
                   100 * median(tot[mi].cal, tot[mi].reached));
    if (getenv("CALIB_REACH")) {
        printf("\n| horizon H / forecast x^ | accuracy: stated P(reach by H), share reached | loss: the same |\n"
               "|---|---|---|\n");
        for (int j = 0; j < REACH_MULTS; j++)
            printf("| %.2f | %.2f, %.2f | %.2f, %.2f |\n", REACH_M[j], reach_p[0][j] / reach_n[0][j],
                   reach_hit[0][j] / reach_n[0][j], reach_p[1][j] / reach_n[1][j], reach_hit[1][j] / reach_n[1][j]);
    }
    scv_lcurve_set_free(&all);
    return 0;
}
