/*
 * curve.c - learning curves: the target metric y against samples processed x [samples],
 * and when it will cross a target.
 *
 * Metric direction s = +1 for test accuracy (higher is better), s = -1 for training loss
 * (lower is better). Forms (a = asymptote in y's units, b > 0 in y's units):
 *   SCV_CURVE_POW  inverse power law    y = a - s b (x + x0)^(-c)   c > 0 [1], x0 >= 0 [samples]
 *   SCV_CURVE_EXP  saturating exponential y = a - s b exp(-x / tau) tau > 0 [samples]
 * For loss the power law reads y = a + b (x + x0)^(-c).
 *   SCV_CURVE_TAIL power law to the ideal  y = a - s b x^(-c)  with a fixed at the metric's
 *                  ideal (loss 0, accuracy 1), fitted by least squares on ln(s (a - y)) =
 *                  ln b - c ln x over the tail of the data, x >= tail_from * max x (the
 *                  early transient left out). The asymptote forms above put a plateau at
 *                  the last values seen and, fitted on the first epoch of a real training
 *                  loss, never reach targets that the run reaches at 2-7 epochs; the tail
 *                  power law predicted those crossings within about 20% (bench/curve_prefix.c,
 *                  docs/BENCHMARKS.md). scv_curve_fit uses it for loss (policy.loss_tail).
 *
 * Fit: least squares on y. For fixed non-linear parameters (c, x0) or tau the model is
 * linear in (a, beta = -s b): solved in closed form (profile least squares), with b >= 0
 * enforced (b = 0, a = mean y when the unconstrained slope has the wrong sign). The
 * non-linear parameters are found by a grid over log c x ln(x0/max x + 1e-3) (or log tau),
 * then Levenberg-Marquardt on the profiled residuals (variable projection, forward-difference
 * Jacobian, steps projected into the policy's bounds) and a short compass polish; the
 * objective is always finite, so parameters are never NaN. x is scaled by max x inside.
 * x0 is fitted only with at least policy.x0_min_points points; otherwise x0 = 0, or the
 * first positive x when the series starts at x = 0.
 *
 * Form selection: each form is fitted on the first (1 - holdout_share) of the points and
 * scored by its RMSE on the rest; the smaller wins (ties go to EXP); the winner is refitted
 * on all points.
 *
 * Crossing of a target T: x* = g^-1(s (a - T) / b) with g = (x + x0)^-c or exp(-x/tau):
 *   POW, TAIL x* = (s (a - T) / b)^(-1/c) - x0       EXP x* = -tau ln(s (a - T) / b)
 * clamped at 0; not reachable when s (a - T) <= 0 (the asymptote falls short of T).
 *
 * Band: residual bootstrap. With fitted values f_i and residuals r_i inflated by
 * sqrt(n / (n - p)) (p fitted parameters), each of n_boot resamples is y*_i = f_i + r_j
 * (j uniform, from a splitmix64 PRNG seeded by the caller: no global state); the curve is
 * refitted (form re-selected on held-out points when the fit came from selection, so the
 * band carries the form's uncertainty; searches start from the data's fits) and its
 * crossing taken (+inf when not reachable). The band is the [band_lo, band_hi] percentiles
 * of these crossings (default 5-95, nominal 90%; hi = +inf when more than 1 - band_hi of
 * the resamples never reach T); p_reach is the share that reaches it. The percentile
 * bootstrap under-covers: on synthetic curves predicted 1.25x beyond the data, 10-90
 * covered ~76% of true crossings and 5-95 ~85% (tests/test_curve.c).
 *
 * Smoothed target: reached after evaluation i when the mean of evaluations i-W+1..i is at
 * or beyond T (>= for accuracy, <= for loss); needs W evaluations.
 *
 * Batch carry-over (gradient noise scale; McCandlish et al. 2018, Pollux/AdaptDL): samples
 * to target at batch B relative to B0, with B_noise the noise scale [samples]:
 *   E(B) = E(B0) (1 + B / B_noise) / (1 + B0 / B_noise).
 */
#include "scv.h"
#include "model.h"
#include "stoprule.h"
#include "../core/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

scv_curve_policy scv_curve_policy_default(void)
{
    scv_curve_policy p = {
        .min_points = 4,
        .holdout_share = 0.25,
        .x0_min_points = 6,
        .c_min = 0.05,
        .c_max = 3.0,
        .x0_max_rel = 10.0,
        .tau_min_rel = 0.01,
        .tau_max_rel = 10.0,
        .n_boot = 200,
        .band_lo = 0.05,
        .band_hi = 0.95,
        .smooth_window = 3,
        .loss_tail = 1,
        .tail_from = 0.5,
    };
    return p;
}

const char *scv_curve_form_name(scv_curve_form f)
{
    return f == SCV_CURVE_POW ? "pow" : f == SCV_CURVE_EXP ? "exp" : f == SCV_CURVE_TAIL ? "tail" : NULL;
}

static double dir_of(scv_metric m) { return m == SCV_METRIC_LOSS ? -1.0 : 1.0; }

double scv_curve_eval(const scv_curve *c, double x)
{
    double s = dir_of(c->metric);
    if (c->form == SCV_CURVE_EXP) return c->a - s * c->b * exp(-x / c->tau);
    return c->a - s * c->b * pow(x + c->x0, -c->c); /* POW, TAIL (x0 = 0) */
}

double scv_curve_crossing(const scv_curve *c, double target)
{
    double s = dir_of(c->metric), gap = s * (c->a - target);
    if (!(gap > 0)) return INFINITY;
    if (!(c->b > 0)) return 0; /* flat at a, already beyond the target */
    double r = gap / c->b, x;
    if (c->form == SCV_CURVE_EXP) x = -c->tau * log(r);
    else x = pow(r, -1 / c->c) - c->x0;
    if (isnan(x)) return INFINITY;
    return x > 0 ? x : 0;
}

/* ---- the fit ---- */
typedef struct {
    scv_curve_form form;
    double s;             /* metric direction */
    const double *u, *y;  /* u = x / xs */
    size_t n;
    double lo[2], hi[2];  /* bounds of the search coordinates q */
    int dim;              /* 2: POW with free x0; 1 otherwise */
    double v_fixed;       /* POW's x0 / xs when not fitted */
    double *g;            /* scratch: the basis at each point (n) */
} fit_ctx;

#define V_EPS 1e-3 /* POW's x0 coordinate is q1 = ln(x0/xs + V_EPS): x0 = 0 is reachable */

/* The basis g at u for search coordinates q: POW c = e^q0, v = e^q1 - V_EPS; EXP tau = e^q0. */
static double basis(const fit_ctx *d, const double *q, double u)
{
    if (d->form == SCV_CURVE_EXP) return exp(-u / exp(q[0]));
    double v = d->dim == 2 ? fmax(exp(q[1]) - V_EPS, 0) : d->v_fixed;
    return pow(u + v, -exp(q[0]));
}

/* Profile least squares: for fixed q, y = a + beta g with s beta <= 0; returns the SSE
 * (+inf when not finite) and a, b = -s beta >= 0. */
static double profile(const fit_ctx *d, const double *q, double *a, double *b)
{
    double gs = 0, ys = 0, *gv = d->g;
    for (size_t i = 0; i < d->n; i++) gv[i] = basis(d, q, d->u[i]), gs += gv[i], ys += d->y[i];
    double gm = gs / d->n, ym = ys / d->n, sgg = 0, sgy = 0;
    for (size_t i = 0; i < d->n; i++) {
        double g = gv[i] - gm;
        sgg += g * g;
        sgy += g * (d->y[i] - ym);
    }
    double beta = sgg > 0 ? sgy / sgg : 0;
    if (!(d->s * beta < 0)) beta = 0;
    double aa = ym - beta * gm, sse = 0;
    for (size_t i = 0; i < d->n; i++) {
        double r = d->y[i] - (aa + beta * gv[i]);
        sse += r * r;
    }
    if (a) *a = aa;
    if (b) *b = -d->s * beta;
    return isfinite(sse) ? sse : INFINITY;
}

/* Residuals r_i = y_i - a - beta g(u_i; q) at the profiled (a, beta); returns the SSE. */
static double resid(const fit_ctx *d, const double *q, double *r)
{
    double a, b;
    double sse = profile(d, q, &a, &b);
    double beta = -d->s * b;
    for (size_t i = 0; i < d->n; i++) r[i] = d->y[i] - (a + beta * d->g[i]);
    return sse;
}

static void clamp_q(const fit_ctx *d, double *q)
{
    for (int j = 0; j < d->dim; j++) q[j] = fmin(fmax(q[j], d->lo[j]), d->hi[j]);
}

/* Levenberg-Marquardt on the profiled problem (variable projection): the residual vector
 * as a function of the non-linear coordinates q only, a forward-difference Jacobian, steps
 * projected into [lo, hi]. scratch holds 3 n doubles. Returns the SSE. */
static double lm(const fit_ctx *d, double *q, double *scratch)
{
    size_t n = d->n;
    double *r = scratch, *J = scratch + n; /* J: dim columns of n */
    double sse = resid(d, q, r), lambda = 1e-3;
    for (int it = 0; it < 100; it++) {
        for (int j = 0; j < d->dim; j++) {
            double t[2] = {q[0], q[1]}, h = 1e-6;
            if (t[j] + h > d->hi[j]) h = -h;
            t[j] += h;
            resid(d, t, J + (size_t)j * n);
            for (size_t i = 0; i < n; i++) J[(size_t)j * n + i] = (J[(size_t)j * n + i] - r[i]) / h;
        }
        /* normal equations: (J'J + lambda diag(J'J)) delta = -J'r */
        double A[2][2] = {{0, 0}, {0, 0}}, g[2] = {0, 0};
        for (int j = 0; j < d->dim; j++) {
            for (size_t i = 0; i < n; i++) g[j] += J[(size_t)j * n + i] * r[i];
            for (int k = 0; k < d->dim; k++)
                for (size_t i = 0; i < n; i++) A[j][k] += J[(size_t)j * n + i] * J[(size_t)k * n + i];
        }
        /* a coordinate at a bound whose descent direction leaves the box is held there */
        int freeze[2] = {0, 0};
        for (int j = 0; j < d->dim; j++)
            freeze[j] = (q[j] <= d->lo[j] && g[j] > 0) || (q[j] >= d->hi[j] && g[j] < 0);
        int accepted = 0;
        while (lambda < 1e8) {
            double M[2][2] = {{A[0][0] * (1 + lambda) + 1e-300, A[0][1]}, {A[1][0], A[1][1] * (1 + lambda) + 1e-300}};
            double delta[2] = {0, 0};
            if (d->dim == 1 || freeze[1]) {
                if (!freeze[0]) delta[0] = -g[0] / M[0][0];
            } else if (freeze[0]) {
                delta[1] = -g[1] / M[1][1];
            } else {
                double det = M[0][0] * M[1][1] - M[0][1] * M[1][0];
                if (!(fabs(det) > 0)) {
                    lambda *= 10;
                    continue;
                }
                delta[0] = -(M[1][1] * g[0] - M[0][1] * g[1]) / det;
                delta[1] = -(M[0][0] * g[1] - M[1][0] * g[0]) / det;
            }
            double t[2] = {q[0] + delta[0], q[1] + delta[1]};
            if (!isfinite(t[0]) || !isfinite(t[1])) {
                lambda *= 10;
                continue;
            }
            clamp_q(d, t);
            if (fabs(t[0] - q[0]) + fabs(t[1] - q[1]) < 1e-9) return sse; /* converged or pinned at a bound */
            double f = profile(d, t, NULL, NULL);
            if (f < sse) {
                double gain = sse - f, moved = fabs(t[0] - q[0]) + fabs(t[1] - q[1]);
                q[0] = t[0], q[1] = t[1];
                sse = resid(d, q, r);
                lambda = fmax(lambda / 5, 1e-9);
                accepted = 1;
                if (gain <= 1e-12 * f || moved < 1e-9) return sse;
                break;
            }
            lambda *= 4;
        }
        if (!accepted) break;
    }
    return sse;
}

/* Compass search from q (log coordinates, inside [lo, hi]) with a halving step: a short,
 * derivative-free polish after LM (at bounds or kinks). */
static double compass(const fit_ctx *d, double *q, double step, int max_it)
{
    double best = profile(d, q, NULL, NULL);
    for (int it = 0; it < max_it && step > 1e-7; it++) {
        int improved = 0;
        for (int j = 0; j < d->dim; j++)
            for (int sgn = -1; sgn <= 1; sgn += 2) {
                double t[2] = {q[0], q[1]};
                t[j] = fmin(fmax(q[j] + sgn * step, d->lo[j]), d->hi[j]);
                if (t[j] == q[j]) continue;
                double f = profile(d, t, NULL, NULL);
                if (f < best) {
                    best = f, q[0] = t[0], q[1] = t[1];
                    improved = 1;
                }
            }
        if (!improved) step *= 0.5;
    }
    return best;
}

static void ctx_init(fit_ctx *d, scv_curve_form form, scv_metric metric, const double *u,
                     const double *y, size_t n, const scv_curve_policy *pol)
{
    memset(d, 0, sizeof *d);
    d->form = form;
    d->s = dir_of(metric);
    d->u = u, d->y = y, d->n = n;
    if (form == SCV_CURVE_EXP) {
        d->dim = 1;
        d->lo[0] = log(pol->tau_min_rel), d->hi[0] = log(pol->tau_max_rel);
        return;
    }
    d->lo[0] = log(pol->c_min), d->hi[0] = log(pol->c_max);
    double umin_pos = 0;
    int starts_at_zero = 0;
    for (size_t i = 0; i < n; i++) {
        if (u[i] > 0 && (umin_pos == 0 || u[i] < umin_pos)) umin_pos = u[i];
        if (u[i] <= 0) starts_at_zero = 1;
    }
    if ((int)n >= pol->x0_min_points) {
        d->dim = 2;
        d->lo[1] = log((starts_at_zero ? fmax(umin_pos * 1e-2, 1e-6) : 0) + V_EPS);
        d->hi[1] = log(pol->x0_max_rel + V_EPS);
    } else {
        d->dim = 1;
        d->v_fixed = starts_at_zero ? umin_pos : 0;
    }
}

/* Grid, LM and a short compass polish; or LM alone from the given start (q coordinates).
 * scratch: 3 n doubles. Returns the SSE. */
static double fit_q(const fit_ctx *d, double *q, const double *start, double *scratch)
{
    enum { G0 = 32, G1 = 17 };
    double step;
    if (start) {
        q[0] = start[0], q[1] = d->dim == 2 ? start[1] : 0;
        clamp_q(d, q);
        step = 0.05;
    } else {
        double best = INFINITY, bq[2] = {d->lo[0], d->dim == 2 ? d->lo[1] : 0};
        int n1 = d->dim == 2 ? G1 : 1;
        for (int i = 0; i < G0; i++)
            for (int j = 0; j < n1; j++) {
                double t[2] = {d->lo[0] + (d->hi[0] - d->lo[0]) * i / (G0 - 1),
                               d->dim == 2 ? d->lo[1] + (d->hi[1] - d->lo[1]) * j / (G1 - 1) : 0};
                double f = profile(d, t, NULL, NULL);
                if (f < best) best = f, bq[0] = t[0], bq[1] = t[1];
            }
        q[0] = bq[0], q[1] = bq[1];
        step = (d->hi[0] - d->lo[0]) / (G0 - 1) / 2;
    }
    double sse = lm(d, q, scratch);
    return start ? sse : compass(d, q, step, 60);
}

/* Fills c's parameters in x's units from q (xs: the x scale). */
static void to_curve(const fit_ctx *d, const double *q, double xs, scv_curve *c)
{
    double a, b;
    profile(d, q, &a, &b);
    c->a = a;
    if (d->form == SCV_CURVE_EXP) {
        c->tau = exp(q[0]) * xs;
        c->b = b;
        c->c = 0, c->x0 = 0;
    } else {
        c->c = exp(q[0]);
        double v = d->dim == 2 ? fmax(exp(q[1]) - V_EPS, 0) : d->v_fixed;
        c->x0 = v * xs;
        c->b = b * pow(xs, c->c); /* b_u (u + v)^-c = b_u xs^c (x + x0)^-c */
        c->tau = 0;
    }
    if (!isfinite(c->b)) c->b = 0;
}

static void from_curve(const fit_ctx *d, const scv_curve *c, double xs, double *q)
{
    if (d->form == SCV_CURVE_EXP) {
        q[0] = log(c->tau / xs), q[1] = 0;
    } else {
        q[0] = log(c->c);
        q[1] = log(c->x0 / xs + V_EPS);
    }
}

static int check_data(const double *x, const double *y, size_t n, const scv_curve_policy *pol,
                      scv_err *err)
{
    if (n < (size_t)(pol->min_points > 3 ? pol->min_points : 3))
        return scv_err_set(err, SCV_EINVAL, "learning curve: %zu evaluation(s), at least %d are needed",
                           n, pol->min_points > 3 ? pol->min_points : 3);
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || x[i] < 0 || !isfinite(y[i]))
            return scv_err_set(err, SCV_EINVAL, "learning curve: point %zu (x %g, y %g) is not valid",
                               i, x[i], y[i]);
        if (i && x[i] < x[i - 1])
            return scv_err_set(err, SCV_EINVAL, "learning curve: samples must not decrease (point %zu)", i);
    }
    if (!(x[n - 1] > x[0]))
        return scv_err_set(err, SCV_EINVAL, "learning curve: all points at the same sample count");
    return SCV_OK;
}

/* s (mean of the last third - mean of the first third) > 0 */
static int improves(scv_metric metric, const double *y, size_t n)
{
    size_t k = n / 3 ? n / 3 : 1;
    double first = 0, last = 0;
    for (size_t i = 0; i < k; i++) first += y[i], last += y[n - 1 - i];
    return dir_of(metric) * (last - first) > 0;
}

/* What both fits need of the data: valid points (check_data) and a metric that improves. */
static int check_input(scv_metric metric, const double *x, const double *y, size_t n, const scv_curve_policy *pol,
                       scv_err *err)
{
    int rc = check_data(x, y, n, pol, err);
    if (rc) return rc;
    if (!improves(metric, y, n))
        return scv_err_set(err, SCV_ENOCONV, "learning curve: the %s does not %s",
                           metric == SCV_METRIC_LOSS ? "loss" : "accuracy",
                           metric == SCV_METRIC_LOSS ? "fall" : "rise");
    return SCV_OK;
}

static int n_params(const fit_ctx *d) { return d->form == SCV_CURVE_POW && d->dim == 2 ? 4 : 3; }

/* The metric's ideal value: TAIL's fixed asymptote. */
static double ideal_of(scv_metric m) { return m == SCV_METRIC_LOSS ? 0.0 : 1.0; }

/* First index of TAIL's points: x >= tail_from * max x (at least 3 points, and x > 0). */
static size_t tail_start(const double *x, size_t n, const scv_curve_policy *pol)
{
    size_t i = 0;
    while (i < n && (x[i] <= 0 || x[i] < pol->tail_from * x[n - 1])) i++;
    while (i > 0 && n - i < 3 && x[i - 1] > 0) i--;
    return i;
}

/* TAIL: ordinary least squares of ln(s (a - y)) on ln x over the tail points (those whose
 * y is on the right side of the ideal). b = 0 (no curve) when fewer than 3 points qualify
 * or the fitted exponent does not improve (c <= 0). */
static void fit_tail(scv_metric metric, const double *x, const double *y, size_t n, const scv_curve_policy *pol,
                     scv_curve *out)
{
    double s = dir_of(metric), a = ideal_of(metric);
    size_t i0 = tail_start(x, n, pol), m = 0;
    double su = 0, sv = 0, suu = 0, suv = 0;
    for (size_t i = i0; i < n; i++) {
        double gap = s * (a - y[i]);
        if (!(gap > 0) || !(x[i] > 0)) continue;
        double u = log(x[i]), v = log(gap);
        su += u, sv += v, suu += u * u, suv += u * v, m++;
    }
    out->form = SCV_CURVE_TAIL;
    out->metric = metric;
    out->a = a, out->x0 = 0, out->tau = 0, out->b = 0, out->c = 0;
    out->n_params = 2;
    out->n_points = (int)n;
    double den = (double)m * suu - su * su;
    if (m >= 3 && den > 0) {
        double slope = ((double)m * suv - su * sv) / den, icpt = (sv - slope * su) / (double)m;
        if (slope < 0 && isfinite(icpt)) out->c = -slope, out->b = exp(icpt);
        if (!isfinite(out->b)) out->b = 0, out->c = 0;
    }
    double ss = 0;
    size_t k = 0;
    for (size_t i = i0; i < n; i++, k++) {
        double r = y[i] - scv_curve_eval(out, x[i]);
        ss += r * r;
    }
    out->rmse = k && isfinite(ss) ? sqrt(ss / (double)k) : INFINITY;
}

/* Fits one form on (x, y)[0, n) into out; u is scratch for 5 n values. start: a curve whose
 * parameters seed a local search (NULL = grid). */
static void fit_one(scv_curve_form form, scv_metric metric, const double *x, const double *y,
                    size_t n, const scv_curve_policy *pol, double *u, const scv_curve *start,
                    scv_curve *out)
{
    if (form == SCV_CURVE_TAIL) {
        fit_tail(metric, x, y, n, pol, out);
        return;
    }
    double xs = x[n - 1];
    for (size_t i = 0; i < n; i++) u[i] = x[i] / xs;
    fit_ctx d;
    ctx_init(&d, form, metric, u, y, n, pol);
    d.g = u + 4 * n;
    double q[2] = {0, 0}, q0[2];
    if (start) from_curve(&d, start, xs, q0);
    double sse = fit_q(&d, q, start ? q0 : NULL, u + n);
    out->form = form;
    out->metric = metric;
    to_curve(&d, q, xs, out);
    out->rmse = sqrt(sse / n);
    out->n_points = (int)n;
    out->n_params = n_params(&d);
}

int scv_curve_fit_form(scv_curve_form form, scv_metric metric, const double *x, const double *y,
                       size_t n, const scv_curve_policy *pol, scv_curve *out, scv_err *err)
{
    scv_curve_policy dp = scv_curve_policy_default();
    if (!pol) pol = &dp;
    memset(out, 0, sizeof *out);
    out->form = form;
    out->metric = metric;
    out->holdout_rmse[0] = out->holdout_rmse[1] = INFINITY;
    if (form != SCV_CURVE_POW && form != SCV_CURVE_EXP && form != SCV_CURVE_TAIL)
        return scv_err_set(err, SCV_EINVAL, "learning curve: unknown form %d", (int)form);
    int rc = check_input(metric, x, y, n, pol, err);
    if (rc) return rc;
    double *u = malloc(sizeof(double) * 5 * n);
    if (!u) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    fit_one(form, metric, x, y, n, pol, u, NULL, out);
    out->holdout_rmse[0] = out->holdout_rmse[1] = INFINITY;
    out->n_fit = (int)n;
    free(u);
    if (!(out->b > 0))
        return scv_err_set(err, SCV_ENOCONV, "learning curve: no %s curve %s with the data",
                           scv_curve_form_name(form), metric == SCV_METRIC_LOSS ? "falls" : "rises");
    return SCV_OK;
}

/* Held-out selection: both forms fitted on the first m points (warm-started from
 * warm_hold[f] when given), scored by RMSE on the rest; the winner (ties: EXP) refitted on
 * all (warm-started from warm_full[f]). hold_fits: the held-out fits, when wanted. */
static void select_fit(scv_metric metric, const double *x, const double *y, size_t n,
                       const scv_curve_policy *pol, double *u, const scv_curve *warm_hold,
                       const scv_curve *warm_full, scv_curve *out, scv_curve *hold_fits)
{
    size_t m = (size_t)lround((1 - pol->holdout_share) * (double)n);
    if (m < 3) m = 3;
    if (m > n - 1) m = n - 1;
    double hold[2];
    for (int f = 0; f < 2; f++) {
        scv_curve c;
        memset(&c, 0, sizeof c);
        hold[f] = INFINITY;
        if (x[m - 1] > x[0]) {
            fit_one((scv_curve_form)f, metric, x, y, m, pol, u, warm_hold ? &warm_hold[f] : NULL, &c);
            if (c.b > 0) {
                double ss = 0;
                for (size_t i = m; i < n; i++) {
                    double r = y[i] - scv_curve_eval(&c, x[i]);
                    ss += r * r;
                }
                hold[f] = isfinite(ss) ? sqrt(ss / (double)(n - m)) : INFINITY;
            }
        }
        if (hold_fits) hold_fits[f] = c;
    }
    double ymin = y[0], ymax = y[0];
    for (size_t i = 1; i < n; i++) ymin = fmin(ymin, y[i]), ymax = fmax(ymax, y[i]);
    double tie = 1e-9 * (ymax - ymin);
    scv_curve_form form = hold[SCV_CURVE_POW] < hold[SCV_CURVE_EXP] - tie ? SCV_CURVE_POW : SCV_CURVE_EXP;
    fit_one(form, metric, x, y, n, pol, u, warm_full ? &warm_full[form] : NULL, out);
    out->holdout_rmse[0] = hold[0], out->holdout_rmse[1] = hold[1];
    out->n_fit = (int)m;
}

int scv_curve_fit(scv_metric metric, const double *x, const double *y, size_t n,
                  const scv_curve_policy *pol, scv_curve *out, scv_err *err)
{
    scv_curve_policy dp = scv_curve_policy_default();
    if (!pol) pol = &dp;
    memset(out, 0, sizeof *out);
    out->metric = metric;
    int rc = check_input(metric, x, y, n, pol, err);
    if (rc) return rc;
    if (metric == SCV_METRIC_LOSS && pol->loss_tail) {
        fit_tail(metric, x, y, n, pol, out);
        out->holdout_rmse[0] = out->holdout_rmse[1] = INFINITY;
        out->n_fit = (int)n;
    } else {
        double *u = malloc(sizeof(double) * 5 * n);
        if (!u) return scv_err_set(err, SCV_ENOMEM, "out of memory");
        select_fit(metric, x, y, n, pol, u, NULL, NULL, out, NULL);
        free(u);
    }
    if (!(out->b > 0))
        return scv_err_set(err, SCV_ENOCONV, "learning curve: no curve %s with the data",
                           metric == SCV_METRIC_LOSS ? "falls" : "rises");
    return SCV_OK;
}

/* splitmix64: the bootstrap's PRNG, seeded per call */
static uint64_t mix_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int scv_curve_predict(const scv_curve *fit, const double *x, const double *y, size_t n,
                      double target, uint64_t seed, const scv_curve_policy *pol,
                      scv_curve_prediction *out, scv_err *err)
{
    scv_curve_policy dp = scv_curve_policy_default();
    if (!pol) pol = &dp;
    memset(out, 0, sizeof *out);
    out->x_star = out->lo = out->hi = INFINITY;
    if (!isfinite(target)) return scv_err_set(err, SCV_EINVAL, "learning curve: the target is not finite");
    int rc = check_data(x, y, n, pol, err);
    if (rc) return rc;
    if (pol->n_boot < 1 || !(pol->band_lo >= 0 && pol->band_lo < pol->band_hi && pol->band_hi <= 1))
        return scv_err_set(err, SCV_EINVAL, "learning curve: bootstrap needs n_boot >= 1 and 0 <= lo < hi <= 1");
    out->x_star = scv_curve_crossing(fit, target);
    out->reachable = isfinite(out->x_star);
    if (fit->form == SCV_CURVE_TAIL) { /* its residuals are those of the tail it was fitted on */
        size_t i0 = tail_start(x, n, pol);
        x += i0, y += i0, n -= i0;
    }
    size_t nb = (size_t)pol->n_boot;
    double *fv = malloc(sizeof(double) * n), *r = malloc(sizeof(double) * n),
           *yb = malloc(sizeof(double) * n), *u = malloc(sizeof(double) * 5 * n),
           *xs = malloc(sizeof(double) * nb);
    if (!fv || !r || !yb || !u || !xs) {
        free(fv), free(r), free(yb), free(u), free(xs);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    int p = fit->n_params > 0 ? fit->n_params : 3;
    double infl = (int)n > p ? sqrt((double)n / (double)(n - (size_t)p)) : 1;
    for (size_t i = 0; i < n; i++) {
        fv[i] = scv_curve_eval(fit, x[i]);
        r[i] = (y[i] - fv[i]) * infl;
    }
    /* a fit made by selection (n_fit < n) is re-selected in every resample, so the band
     * carries the uncertainty of the form too; the searches start from the fits of each
     * form on the data */
    int reselect = fit->n_fit > 0 && fit->n_fit < fit->n_points && (size_t)fit->n_points == n;
    scv_curve hold[2], full[2];
    if (reselect) {
        scv_curve tmp;
        select_fit(fit->metric, x, y, n, pol, u, NULL, NULL, &tmp, hold);
        for (int f = 0; f < 2; f++) {
            if (f == (int)fit->form) full[f] = *fit;
            else fit_one((scv_curve_form)f, fit->metric, x, y, n, pol, u, NULL, &full[f]);
        }
    }
    uint64_t st = seed;
    size_t reach = 0;
    for (size_t k = 0; k < nb; k++) {
        for (size_t i = 0; i < n; i++) yb[i] = fv[i] + r[mix_next(&st) % n];
        scv_curve c;
        memset(&c, 0, sizeof c);
        if (reselect) select_fit(fit->metric, x, yb, n, pol, u, hold, full, &c, NULL);
        else fit_one(fit->form, fit->metric, x, yb, n, pol, u, fit, &c);
        xs[k] = c.b > 0 ? scv_curve_crossing(&c, target) : INFINITY;
        if (isfinite(xs[k])) reach++;
    }
    qsort(xs, nb, sizeof(double), scv_cmp_double);
    out->lo = scv_quantile_sorted(xs, nb, pol->band_lo);
    out->hi = scv_quantile_sorted(xs, nb, pol->band_hi);
    out->p_reach = (double)reach / (double)nb;
    out->n_boot = (int)nb;
    free(fv), free(r), free(yb), free(u), free(xs);
    return SCV_OK;
}

/* ---- the smoothed target rule: the drivers' own (stoprule.c), over a series ---- */
/* y[0..n) fed to the target window as evaluations (not finite: left out; a window above
 * SCV_TARGET_WINDOW_MAX is that limit); the verdict of the last one. */
static int target_feed(scv_metric metric, const double *y, size_t n, double target, int window, long *first)
{
    scv_stoprule r;
    scv_stoprule_spec s = {.window = window};
    if (metric == SCV_METRIC_LOSS) s.target_loss = target;
    else s.target_accuracy = target;
    scv_stoprule_init(&r, &s);
    int reached = 0;
    for (size_t i = 0; i < n; i++) {
        reached = scv_stoprule_on_evaluation(&r, y[i]) == SCV_STOP_TARGET;
        if (reached && first) {
            *first = (long)i;
            return 1;
        }
    }
    return reached;
}

int scv_target_reached(scv_metric metric, const double *y, size_t n, double target, int window)
{
    return target_feed(metric, y, n, target, window, NULL);
}

long scv_target_first_reached(scv_metric metric, const double *y, size_t n, double target, int window)
{
    long first = -1;
    target_feed(metric, y, n, target, window, &first);
    return first;
}

/* ---- batch carry-over ---- */
double scv_samples_at_batch(double samples_b0, double b0, double b, double b_noise)
{
    if (!(b0 > 0) || !(b > 0) || !(b_noise > 0) || isnan(samples_b0)) return NAN;
    if (isinf(b_noise)) return samples_b0;
    return samples_b0 * (1 + b / b_noise) / (1 + b0 / b_noise);
}
