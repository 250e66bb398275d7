/*
 * calib.c - calibrated forecasts of when a learning curve reaches its target.
 *
 * A fitted curve's crossing (curve.c) is a point; how far to trust it is learnt from
 * labelled examples: curves whose whole course is known (the shipped corpus,
 * data/curves.jsonl, and the store's finished runs). Each example is a prefix of such a
 * curve (the evaluations up to x_c, as a run would have them), a target the curve had not
 * reached by x_c, the raw prediction x^ from that prefix, and the truth x_t, the samples at
 * which the curve's 3-point moving average first reached the target:
 *   r = ln(x_t / x^)                       (+inf: the curve ran past x^ and never reached it)
 * The raw prediction x^ is the crossing of scv_curve_fit's curve (kind PRIMARY); where that
 * does not reach the target, the crossing of the ideal-anchored power law (TAIL: y = ideal
 * - s b x^-c, which reaches any target short of the ideal; kind TAIL); where neither does,
 * x^ = x_c (kind NONE). Examples are binned by metric, kind and the extrapolation length
 *   rho = ln(x^ / x_c)
 * (edges policy.rho_edges); a forecast takes the empirical quantiles of r in its bin (pooled
 * with the nearest bins of its kind, then of any kind, until policy.min_examples):
 *   median  x^ exp(q_0.5)
 *   band    [x^ exp(q_(1-C)/2), x^ exp(q_(1+C)/2)]   C = policy.coverage (nominal 80%)
 *   p_reach P(x_t <= H) = share of r <= ln(H / x^)   H: the horizon (max epochs' samples)
 * This is split-conformal calibration on log errors: on examples exchangeable with the
 * calibration set the band covers the truth with probability C by construction; how well it
 * holds on new jobs is measured (bench/bench.py decide). When the median is beyond H, the
 * target reached at H with probability one half is reported as the nearest reachable one:
 * the raw curve's value at H exp(-q_0.5).
 * Without examples (no corpus) the forecast is the curve's residual bootstrap (curve.c),
 * flagged uncalibrated.
 */
#include "scv.h"
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

scv_calib_policy scv_calib_policy_default(void)
{
    scv_calib_policy p = {
        .coverage = 0.8,
        .min_examples = 30,
        .prefixes = 10,
        .first_prefix_share = 0.02,
        .last_prefix_share = 0.7,
        .rho_edges = {0.25, 0.6, 1.0, 1.6, 2.4},
        .target_mults = {1.3, 1.7, 2.2, 3, 4, 6, 9, 14},
        .beyond_share = 0.5,
        .max_points = 40,
    };
    return p;
}

const char *scv_calib_kind_name(scv_calib_kind k)
{
    return k == SCV_CALIB_PRIMARY ? "fit" : k == SCV_CALIB_TAIL ? "tail" : "none";
}

void scv_lcurve_set_free(scv_lcurve_set *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->c[i].samples);
        free(s->c[i].accuracy);
        free(s->c[i].loss);
    }
    free(s->c);
    memset(s, 0, sizeof *s);
}

void scv_calib_free(scv_calib *c)
{
    if (!c) return;
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < SCV_CALIB_KINDS; k++)
            for (int b = 0; b < SCV_CALIB_BINS; b++) free(c->cell[m][k][b].r);
    memset(c, 0, sizeof *c);
}

static int metric_ix(scv_metric m) { return m == SCV_METRIC_LOSS; }
static double dir_of(scv_metric m) { return m == SCV_METRIC_LOSS ? -1.0 : 1.0; }

static int bin_of(const scv_calib_policy *pol, double rho)
{
    int b = 0;
    while (b < SCV_CALIB_BINS - 1 && rho >= pol->rho_edges[b]) b++;
    return b;
}

/* The fits behind raw predictions from the points x, y [0, n): scv_curve_fit's, and the
 * ideal-anchored power law where the first is not TAIL already (ok flags: fitted). */
typedef struct raw_fits {
    scv_curve fit, tail;
    int fit_ok, tail_ok;
} raw_fits;

static void raw_fit(scv_metric metric, const double *x, const double *y, size_t n, raw_fits *f)
{
    memset(f, 0, sizeof *f);
    f->fit_ok = scv_curve_fit(metric, x, y, n, NULL, &f->fit, NULL) == SCV_OK;
    if (f->fit_ok && f->fit.form == SCV_CURVE_TAIL) f->tail = f->fit, f->tail_ok = 1;
    else f->tail_ok = scv_curve_fit_form(SCV_CURVE_TAIL, metric, x, y, n, NULL, &f->tail, NULL) == SCV_OK &&
                      f->tail.b > 0;
}

/* The curve that describes the data best: scv_curve_fit's, else the tail's (the value a
 * curve predicts at a given x: the nearest reachable target). */
static const scv_curve *best_fit(const raw_fits *f)
{
    return f->fit_ok ? &f->fit : &f->tail;
}

/* The raw prediction x^ of target (samples), its kind and the curve behind it; x_last is
 * the prefix's end (kind NONE's x^). */
static scv_calib_kind raw_predict(const raw_fits *f, double target, double x_last, scv_curve *curve, double *xhat)
{
    double xs;
    if (f->fit_ok && isfinite(xs = scv_curve_crossing(&f->fit, target))) {
        *curve = f->fit, *xhat = xs;
        return SCV_CALIB_PRIMARY;
    }
    if (f->tail_ok && isfinite(xs = scv_curve_crossing(&f->tail, target))) {
        *curve = f->tail, *xhat = xs;
        return SCV_CALIB_TAIL;
    }
    *curve = f->fit_ok ? f->fit : f->tail, *xhat = x_last;
    return SCV_CALIB_NONE;
}

static int push(scv_calib_cell *c, double r)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        double *t = realloc(c->r, cap * sizeof *t);
        if (!t) return SCV_ENOMEM;
        c->r = t, c->cap = cap;
    }
    c->r[c->n++] = r;
    return SCV_OK;
}

/* First index > from whose moving average (3 points, centred) reaches target; -1 if none. */
static long first_crossing(const double *m, size_t n, size_t from, double s, double target)
{
    for (size_t i = from + 1; i < n; i++)
        if (s * (m[i] - target) >= 0) return (long)i;
    return -1;
}

int scv_calib_add(scv_calib *cal, scv_metric metric, const double *x, const double *y, size_t n,
                  const scv_calib_policy *pol, scv_err *err)
{
    scv_calib_policy dp = scv_calib_policy_default();
    if (!pol) pol = &dp;
    scv_curve_policy cp = scv_curve_policy_default();
    if (n < (size_t)cp.min_points + 2 || !(x[n - 1] > 0)) return SCV_OK; /* too short to teach anything */
    double *m = calloc(3 * n, sizeof(double)), *px = m + n, *py = m + 2 * n;
    if (!m) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        double s = y[i];
        int k = 1;
        if (i > 0) s += y[i - 1], k++;
        if (i + 1 < n) s += y[i + 1], k++;
        m[i] = s / k;
    }
    double s = dir_of(metric), x_end = x[n - 1], best_all = m[0];
    for (size_t i = 1; i < n; i++)
        if (s * (m[i] - best_all) > 0) best_all = m[i];
    int rc = SCV_OK, mi = metric_ix(metric);
    size_t last_cut = 0;
    for (int p = 0; p < pol->prefixes && !rc; p++) {
        /* prefix ends log-spaced between first_ and last_prefix_share of the curve */
        double f = pol->prefixes > 1 ? (double)p / (pol->prefixes - 1) : 0;
        double xc = x_end * pol->first_prefix_share * pow(pol->last_prefix_share / pol->first_prefix_share, f);
        size_t c = 0;
        while (c + 1 < n && x[c + 1] <= xc) c++;
        if (c + 1 < (size_t)cp.min_points || (p > 0 && c == last_cut) || !(x[c] > 0)) continue;
        last_cut = c;
        double best_cut = m[0];
        for (size_t i = 1; i <= c; i++)
            if (s * (m[i] - best_cut) > 0) best_cut = m[i];
        /* the prefix as a run would fit it: at most max_points, evenly thinned, the last kept */
        size_t stride = (c + (size_t)pol->max_points) / (size_t)pol->max_points, np = 0;
        for (size_t i = c % stride; i <= c; i += stride) px[np] = x[i], py[np++] = y[i];
        raw_fits fits;
        raw_fit(metric, px, py, np, &fits);
        scv_curve fit;
        for (int t = 0; t <= SCV_CALIB_MULTS && !rc; t++) {
            double target;
            if (t < SCV_CALIB_MULTS) { /* the curve's best by mult * x_c */
                double xt = pol->target_mults[t] * x[c];
                if (!(pol->target_mults[t] > 1) || xt > x_end) continue;
                target = best_cut;
                for (size_t i = c + 1; i < n && x[i] <= xt; i++)
                    if (s * (m[i] - target) > 0) target = m[i];
                if (!(s * (target - best_cut) > 1e-12 * fabs(best_cut))) continue;
            } else { /* a target the curve never reached */
                if (!(s * (best_all - best_cut) > 0)) continue;
                target = best_all + s * pol->beyond_share * s * (best_all - best_cut);
                if (metric == SCV_METRIC_LOSS && !(target > 0)) continue;
                if (metric == SCV_METRIC_ACCURACY && !(target < 1)) continue;
            }
            long i = first_crossing(m, n, c, s, target);
            double xhat;
            scv_calib_kind kind = raw_predict(&fits, target, x[c], &fit, &xhat);
            double r;
            if (i >= 0) r = log(x[i] / xhat);
            else if (x_end >= xhat) r = INFINITY;
            else continue; /* the curve stopped before the prediction: no label */
            int bin = kind == SCV_CALIB_NONE ? 0 : bin_of(pol, log(xhat / x[c]));
            rc = push(&cal->cell[mi][kind][bin], r);
            if (!rc) cal->n_examples[mi]++;
        }
    }
    free(m);
    if (rc) return scv_err_set(err, rc, "out of memory");
    cal->n_curves[mi]++;
    return SCV_OK;
}

int scv_calib_build(const scv_lcurve_set *corpus, const scv_calib_policy *pol, scv_calib *out, scv_err *err)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; corpus && i < corpus->n; i++) {
        const scv_lcurve *c = &corpus->c[i];
        double *x = malloc(sizeof(double) * (c->n + 1)), *y = malloc(sizeof(double) * (c->n + 1));
        if (!x || !y) {
            free(x), free(y);
            scv_calib_free(out);
            return scv_err_set(err, SCV_ENOMEM, "out of memory");
        }
        int rc = SCV_OK;
        for (int mi = 0; mi < 2 && !rc; mi++) {
            const double *v = mi ? c->loss : c->accuracy;
            size_t k = 0;
            for (size_t j = 0; j < c->n; j++)
                if (isfinite(v[j]) && c->samples[j] > 0) x[k] = c->samples[j], y[k++] = v[j];
            rc = scv_calib_add(out, mi ? SCV_METRIC_LOSS : SCV_METRIC_ACCURACY, x, y, k, pol, err);
        }
        free(x), free(y);
        if (rc) {
            scv_calib_free(out);
            return rc;
        }
    }
    return SCV_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* q-quantile of sorted v[0, n), linear between order statistics; +inf when it touches one. */
static double quantile(const double *v, size_t n, double q)
{
    double h = q * (double)(n - 1);
    size_t i = (size_t)floor(h);
    if (i + 1 >= n) return v[n - 1];
    if (isinf(v[i + 1])) return h == (double)i ? v[i] : INFINITY;
    return v[i] + (h - (double)i) * (v[i + 1] - v[i]);
}

/* The residuals for (metric, kind, bin), pooled outward until min_examples: sorted copy. */
static double *pooled(const scv_calib *cal, const scv_calib_policy *pol, int mi, scv_calib_kind kind, int bin,
                      size_t *n)
{
    size_t total = 0;
    for (int k = 0; k < SCV_CALIB_KINDS; k++)
        for (int b = 0; b < SCV_CALIB_BINS; b++) total += cal->cell[mi][k][b].n;
    *n = 0;
    if (!total) return NULL;
    double *v = malloc(sizeof(double) * total);
    if (!v) return NULL;
    /* rings: the bin, then its kind's bins by distance, then the other kinds' by distance */
    int used[SCV_CALIB_KINDS][SCV_CALIB_BINS] = {{0}};
    for (int pass = 0; pass < 2 && *n < (size_t)pol->min_examples; pass++)
        for (int d = 0; d < SCV_CALIB_BINS && *n < (size_t)pol->min_examples; d++)
            for (int k = 0; k < SCV_CALIB_KINDS; k++) {
                if ((pass == 0) != (k == (int)kind)) continue;
                for (int sg = -1; sg <= 1; sg += 2) {
                    int b = bin + sg * d;
                    if (b < 0 || b >= SCV_CALIB_BINS || used[k][b]) continue;
                    used[k][b] = 1;
                    const scv_calib_cell *c = &cal->cell[mi][k][b];
                    memcpy(v + *n, c->r, c->n * sizeof(double));
                    *n += c->n;
                }
            }
    qsort(v, *n, sizeof(double), cmp_double);
    return v;
}

int scv_calib_band(const scv_calib *cal, const scv_calib_policy *pol, scv_metric metric, scv_calib_kind kind,
                   int bin, double *q_lo, double *q_med, double *q_hi, size_t *n)
{
    scv_calib_policy dp = scv_calib_policy_default();
    if (!pol) pol = &dp;
    size_t nr = 0;
    double *r = cal ? pooled(cal, pol, metric_ix(metric), kind, kind == SCV_CALIB_NONE ? 0 : bin, &nr) : NULL;
    *n = nr;
    if (!r || nr < (size_t)pol->min_examples) {
        free(r);
        *q_lo = *q_med = *q_hi = NAN;
        return SCV_ENOTFOUND;
    }
    double a = (1 - pol->coverage) / 2;
    *q_lo = quantile(r, nr, a), *q_med = quantile(r, nr, 0.5), *q_hi = quantile(r, nr, 1 - a);
    free(r);
    return SCV_OK;
}

int scv_calib_bin(const scv_calib_policy *pol, double rho)
{
    scv_calib_policy dp = scv_calib_policy_default();
    return bin_of(pol ? pol : &dp, rho);
}

int scv_calib_forecast(const scv_calib *cal, const scv_calib_policy *pol, scv_metric metric, const double *x,
                       const double *y, size_t n, double target, double horizon, uint64_t seed,
                       scv_forecast *out, scv_err *err)
{
    scv_calib_policy dp = scv_calib_policy_default();
    if (!pol) pol = &dp;
    memset(out, 0, sizeof *out);
    out->x_med = out->lo = out->hi = out->x_hat = INFINITY;
    out->nearest = NAN;
    out->horizon = horizon;
    scv_curve_policy cp = scv_curve_policy_default();
    if (n < (size_t)cp.min_points)
        return scv_err_set(err, SCV_EINVAL, "learning curve: %zu evaluations, at least %d needed", n, cp.min_points);
    double xc = x[n - 1];
    if (!(xc > 0)) return scv_err_set(err, SCV_EINVAL, "learning curve: no samples trained yet");
    scv_curve fit;
    raw_fits fits;
    raw_fit(metric, x, y, n, &fits);
    out->kind = raw_predict(&fits, target, xc, &fit, &out->x_hat);
    out->fit = fit;
    double xh = out->x_hat;
    out->rho = out->kind == SCV_CALIB_NONE ? 0 : log(xh / xc);
    size_t nr;
    double *r = cal ? pooled(cal, pol, metric_ix(metric), out->kind, out->kind == SCV_CALIB_NONE ? 0 : bin_of(pol, out->rho),
                             &nr)
                    : NULL;
    if (!r || nr < (size_t)pol->min_examples) { /* uncalibrated: the curve's own bootstrap */
        free(r);
        out->calibrated = 0;
        if (out->kind == SCV_CALIB_NONE) {
            out->p_reach = 0;
            return SCV_OK;
        }
        scv_curve_prediction pr;
        int rc = scv_curve_predict(&fit, x, y, n, target, seed, NULL, &pr, err);
        if (rc) return rc;
        out->x_med = xh, out->lo = pr.lo, out->hi = pr.hi;
        /* within the horizon: the bootstrap's share that reaches at all, times a log-normal
         * through its band (5-95: +-1.645 sigma) at the horizon */
        double sig = pr.lo > 0 && isfinite(pr.hi) ? log(pr.hi / pr.lo) / (2 * 1.645) : INFINITY;
        double z = !(horizon > 0) ? INFINITY : sig > 0 ? log(horizon / xh) / sig : horizon >= xh ? INFINITY : -INFINITY;
        out->p_reach = pr.p_reach * (isinf(sig) ? 0.5 : 0.5 * erfc(-z / sqrt(2)));
        if (horizon > 0 && !(xh <= horizon)) out->nearest = scv_curve_eval(best_fit(&fits), horizon);
        return SCV_OK;
    }
    out->calibrated = 1, out->n_examples = nr;
    double a = (1 - pol->coverage) / 2;
    double q_lo = quantile(r, nr, a), q_med = quantile(r, nr, 0.5), q_hi = quantile(r, nr, 1 - a);
    out->x_med = xh * exp(q_med), out->lo = xh * exp(q_lo), out->hi = xh * exp(q_hi);
    /* the target was not reached by x_c: the truth lies beyond it */
    out->lo = fmax(out->lo, xc), out->x_med = fmax(out->x_med, xc), out->hi = fmax(out->hi, xc);
    size_t k = 0;
    double lim = horizon > 0 ? log(horizon / xh) : INFINITY;
    while (k < nr && r[k] <= lim) k++;
    out->p_reach = (double)k / nr;
    if (horizon > 0 && !(out->x_med <= horizon) && (fits.fit_ok || fits.tail_ok))
        out->nearest = scv_curve_eval(best_fit(&fits), isfinite(q_med) ? horizon * exp(-q_med) : horizon);
    free(r);
    return SCV_OK;
}
