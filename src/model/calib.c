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
 * The raw prediction x^ is the crossing of a fitted curve (kind PRIMARY): for accuracy the
 * ideal-anchored power law (TAIL: y = 1 - b x^-c, fitted on the points past
 * policy.acc_tail_from of the prefix; it reaches any target short of the ideal), for loss
 * scv_curve_fit's (also TAIL). On jobs left out of the calibration, accuracy's TAIL from
 * 0.1 erred 36% (median over prefixes and targets) where the selected power law or
 * exponential erred 48%, and the better of the two by held-out error 43%
 * (bench/calib_eval.c, 2026-11-25). Where it does not reach the target, the TAIL fit of
 * the curve module's policy (kind TAIL); where neither does, x^ = x_c (kind NONE). Where
 * the corpus holds curves of the run's model and dataset, the corpus prior's crossing
 * instead (kind PRIOR; below). Where it holds too few (a network never seen), other
 * networks' curves matched the same way give a second x^ (kind XPRIOR), and the forecast
 * takes whichever of it and the fit has the narrower calibrated band (raw_choose): on each
 * network left out in turn this took the median error from 44% to 37% (accuracy) and 40% to
 * 35% (loss), the median width from x12 to x7.4 and x7.0 to x5.9, coverage 0.79 to 0.77-0.78
 * (bench/calib_eval.c model, 2026-11-29). Examples are binned by metric, kind and the extrapolation
 * length
 *   rho = ln(x^ / x_c)
 * (edges policy.rho_edges); a forecast takes the empirical quantiles of r in its bin (pooled
 * with the nearest bins of its kind, then of any kind, until policy.min_examples):
 *   band    [x^ exp(q_(1-C)/2), x^ exp(q_(1+C)/2)]   C = policy.coverage (nominal 80%)
 *   point   x^ clamped into the band (with policy.shift_median, x^ exp(q_0.5): on jobs left
 *           out of the calibration the shift did not make the point better on the whole,
 *           bench/calib_eval.c; nor did the median only where x^ falls outside its band:
 *           lenet's loss to 0.25 from 0.3 epochs, x^ 13 epochs at the top of a 0.27-13 band,
 *           the median 0.94, truth 6)
 *   p_reach P(x_t <= H) = share of r <= ln(H / x^)   H: the horizon (max epochs' samples)
 * This is split-conformal calibration on log errors: on examples exchangeable with the
 * calibration set the band covers the truth with probability C by construction; how well it
 * holds on new jobs is measured (bench/calib_eval.c leaves jobs out; bench/bench.py decide
 * judges whole runs). When P(reach within H) < 1/2, the target reached at H with
 * probability one half is reported as the nearest reachable one: the fitted curve's value at
 * H exp(-q_0.5).
 * Without examples (no corpus) the forecast is the curve's residual bootstrap (curve.c),
 * flagged uncalibrated.
 */
#include "scv.h"
#include "model.h"
#include "stoprule.h"
#include "../core/util.h"

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
        .target_mults = {1.3, 1.7, 2.2, 3, 4, 6, 9, 14, 20, 30, 50},
        .beyond_share = 0.5,
        .window = 3,
        .max_points = 40,
        .prior = 1,
        .prior_members = 5,
        .prior_min_share = 0.6,
        .prior_log_scale = 2.5,
        .prior_cross = 1,
        .cross_every = 2,
        .shift_median = 0,
        .acc_tail_from = 0.1,
        .fit_examples = 1,
    };
    return p;
}

const char *scv_calib_kind_name(scv_calib_kind k)
{
    static const char *const names[SCV_CALIB_KINDS] = {"fit", "tail", "none", "prior", "xprior"};
    return k >= 0 && k < SCV_CALIB_KINDS ? names[k] : "none";
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
    for (size_t i = 0; i < c->n_ref; i++) free(c->ref[i].u);
    free(c->ref);
    free(c->rerun[0].r), free(c->rerun[1].r);
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

/* ---- the corpus prior: a run's prefix matched to each known curve ----
 * In d = ln(distance to the ideal) (1 - accuracy, or the loss) against u = ln epochs, a
 * known curve k (3-point smoothed) of the run's model and dataset stands for the run when
 * d_run(u) = d_k(u + l): the same shape and plateau, l = ln of how much faster or slower it
 * goes (lambda, the batch and the learning rate's doing). For each k, l on a grid over
 * +-prior_log_scale (step PRIOR_STEP) minimises the squared difference over the prefix's
 * points that fall inside k's range (at least prior_min_share of them, the last one among
 * them). A fitted offset (d_k + delta: a plateau nearer or farther) made the loss's median
 * error 29% where the speed alone made it 24% (bench/calib_eval.c, leave one curve out).
 * The prior_members best matched curves each predict the crossing of d_T = ln(distance of
 * the target): the first u' > u_last + l where d_k <= d_T, epochs exp(u' - l) (+inf: k
 * never gets there); x^ is their median. */
#define PRIOR_STEP 0.05

static double dist_of(scv_metric m, double y)
{
    double d = m == SCV_METRIC_LOSS ? y : 1 - y;
    return log(fmax(d, 1e-6));
}

/* d_k at u by linear interpolation (u inside [u_0, u_n-1]); *at: a search hint. */
static double ref_at(const scv_calib_ref *k, double u, size_t *at)
{
    size_t i = *at;
    while (i + 1 < k->n && k->u[i + 1] < u) i++;
    while (i > 0 && k->u[i] > u) i--;
    *at = i;
    if (i + 1 >= k->n) return k->d[k->n - 1];
    double w = (u - k->u[i]) / (k->u[i + 1] - k->u[i]);
    return k->d[i] + w * (k->d[i + 1] - k->d[i]);
}

const char *scv_calib_key(const char *model, const char *dataset, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s %s", model ? model : "", dataset ? dataset : "");
    return buf;
}

/* The centred 3-point mean of y[0, n) at i (2 points at the ends): the smoothing of the
 * truth's crossings and of the prior's curves. */
static double smooth3_at(const double *y, size_t n, size_t i)
{
    double s = y[i];
    int k = 1;
    if (i > 0) s += y[i - 1], k++;
    if (i + 1 < n) s += y[i + 1], k++;
    return s / k;
}

static int add_ref(scv_calib *cal, scv_metric metric, const char *key, int group, const double *x, const double *y,
                   size_t n, double n_train)
{
    if (n < 6 || !(n_train > 0)) return SCV_OK;
    if (cal->n_ref == cal->ref_cap) {
        size_t cap = cal->ref_cap ? 2 * cal->ref_cap : 32;
        scv_calib_ref *t = realloc(cal->ref, cap * sizeof *t);
        if (!t) return SCV_ENOMEM;
        cal->ref = t, cal->ref_cap = cap;
    }
    scv_calib_ref *k = &cal->ref[cal->n_ref];
    memset(k, 0, sizeof *k);
    if (!(k->u = malloc(2 * n * sizeof(double)))) return SCV_ENOMEM;
    k->d = k->u + n, k->metric = metric_ix(metric), k->group = group;
    snprintf(k->key, sizeof k->key, "%s", key);
    for (size_t i = 0; i < n; i++) {
        if (!(x[i] > 0)) continue;
        double u = log(x[i] / n_train);
        if (k->n && !(u > k->u[k->n - 1])) continue;
        k->u[k->n] = u, k->d[k->n++] = dist_of(metric, smooth3_at(y, n, i));
    }
    cal->n_ref++;
    return SCV_OK;
}

/* The mean square of d - d_k(u + l) over the prefix's points inside k's range (at least
 * prior_min_share of them and 3, the last one among them), +inf where not, or where its
 * sum passes stop (the mean cannot beat stop / n then: mse = sdd / m >= sdd / n). */
static double shift_mse(const scv_calib_ref *k, const scv_calib_policy *pol, const double *u, const double *d, size_t n,
                        double l, double stop)
{
    if (u[n - 1] + l > k->u[k->n - 1] || u[n - 1] + l < k->u[0]) return INFINITY;
    size_t at = 0, m = 0;
    double sdd = 0;
    for (size_t i = 0; i < n && !(sdd >= stop); i++) {
        double v = u[i] + l;
        if (v < k->u[0]) continue;
        double diff = d[i] - ref_at(k, v, &at);
        sdd += diff * diff, m++;
    }
    if (sdd >= stop || (double)m < pol->prior_min_share * (double)n || m < 3) return INFINITY;
    return sdd / m;
}

/* The prior's matches of a prefix (u, d: n points, ln epochs and ln distance) among the refs
 * of metric not in group `exclude` (-1: none) whose key is key (cross 0) or another (cross 1:
 * other networks' curves, matched by shape): the best prior_members, best first. A cross
 * match searches the shift coarsely (PRIOR_COARSE steps), then finely around the best: the
 * other networks' curves are many. */
#define PRIOR_COARSE 4
static size_t prior_match(const scv_calib *cal, const scv_calib_policy *pol, int mi, const char *key, int cross,
                          int exclude, const double *u, const double *d, size_t n, prior_member *out)
{
    size_t nm = 0;
    int cap = pol->prior_members < SCV_CALIB_MEMBERS ? pol->prior_members : SCV_CALIB_MEMBERS;
    const double step = cross ? PRIOR_COARSE * PRIOR_STEP : PRIOR_STEP;
    for (size_t r = 0; cal && r < cal->n_ref; r++) {
        const scv_calib_ref *k = &cal->ref[r];
        if (k->metric != mi || (exclude >= 0 && k->group == exclude) || k->n < 2 || (strcmp(k->key, key) != 0) != cross)
            continue;
        prior_member best = {.k = r, .score = INFINITY};
        /* a shift that cannot beat the best so far, nor the worst member kept when there are
         * cap of them, is left as soon as that shows */
        double bound = nm == (size_t)cap ? out[nm - 1].score : INFINITY;
        for (double l = -pol->prior_log_scale; l <= pol->prior_log_scale + 1e-9; l += step) {
            double mse = shift_mse(k, pol, u, d, n, l, fmin(best.score, bound) * (double)n);
            if (mse < best.score) best.score = mse, best.l = l;
        }
        for (int j = 1 - PRIOR_COARSE; cross && isfinite(best.score) && j < PRIOR_COARSE; j++) {
            double l = best.l + j * PRIOR_STEP,
                   mse = j ? shift_mse(k, pol, u, d, n, l, best.score * (double)n) : INFINITY;
            if (mse < best.score) best.score = mse, best.l = l, j = -PRIOR_COARSE; /* (moved: around it again) */
        }
        if (!isfinite(best.score) || (nm == (size_t)cap && !(best.score < out[nm - 1].score))) continue;
        size_t at = nm < (size_t)cap ? nm++ : nm - 1; /* keep the best cap, sorted */
        while (at > 0 && out[at - 1].score > best.score) out[at] = out[at - 1], at--;
        out[at] = best;
    }
    return nm;
}

/* The prior's x^ [epochs] of a target (ln distance d_t) from its matches, after u_last. */
static double prior_crossing(const scv_calib *cal, const prior_member *mb, size_t nm, double u_last, double d_t)
{
    double e[SCV_CALIB_MEMBERS];
    for (size_t j = 0; j < nm; j++) {
        const scv_calib_ref *k = &cal->ref[mb[j].k];
        e[j] = INFINITY;
        for (size_t i = 0; i < k->n; i++)
            if (k->u[i] > u_last + mb[j].l && k->d[i] <= d_t) {
                e[j] = exp(k->u[i] - mb[j].l);
                break;
            }
    }
    qsort(e, nm, sizeof(double), scv_cmp_double);
    return nm % 2 ? e[nm / 2] : isinf(e[nm / 2]) ? INFINITY : sqrt(e[nm / 2 - 1] * e[nm / 2]);
}

/* The fits behind raw predictions from the points x, y [0, n): scv_curve_fit's, the
 * ideal-anchored power law where the first is not TAIL already (ok flags: fitted), and the
 * prior's matches (with cal's refs of key, none of group exclude; n_train > 0; key NULL: none). */
typedef struct raw_fits {
    scv_curve fit, tail;
    scv_curve_policy fit_pol;   /* the curve policy fit was made with */
    int fit_ok, tail_ok;
    const scv_calib *cal;
    prior_member mb[SCV_CALIB_MEMBERS]; /* the matches of key's curves */
    size_t nm;
    prior_member xmb[SCV_CALIB_MEMBERS]; /* other networks' (where key's are too few) */
    size_t nxm;
    double u_last, n_train;
    int prior;                  /* the policy's prior mode */
} raw_fits;

static void raw_fit(scv_metric metric, const double *x, const double *y, size_t n, const scv_calib *cal,
                    const scv_calib_policy *pol, const char *key, int exclude, int cross_only, double n_train,
                    raw_fits *f)
{
    memset(f, 0, sizeof *f);
    scv_curve_policy cp = scv_curve_policy_default();
    if (metric == SCV_METRIC_ACCURACY && pol->acc_tail_from >= 0) { /* the ideal-anchored power law */
        cp.tail_from = pol->acc_tail_from;
        f->fit_pol = cp;
        f->fit_ok = scv_curve_fit_form(SCV_CURVE_TAIL, metric, x, y, n, &cp, &f->fit, NULL) == SCV_OK && f->fit.b > 0;
    } else {
        f->fit_pol = cp;
        f->fit_ok = scv_curve_fit(metric, x, y, n, &cp, &f->fit, NULL) == SCV_OK;
    }
    if (f->fit_ok && f->fit.form == SCV_CURVE_TAIL) f->tail = f->fit, f->tail_ok = 1;
    else f->tail_ok = scv_curve_fit_form(SCV_CURVE_TAIL, metric, x, y, n, NULL, &f->tail, NULL) == SCV_OK &&
                      f->tail.b > 0;
    f->prior = pol->prior;
    if (!pol->prior || !key || !cal || !cal->n_ref || !(n_train > 0) || !(x[n - 1] > 0)) return;
    double *u = malloc(2 * n * sizeof(double)), *d = u ? u + n : NULL;
    if (!u) return;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (x[i] > 0) u[m] = log(x[i] / n_train), d[m++] = dist_of(metric, y[i]);
    if (m >= 3) {
        f->cal = cal, f->n_train = n_train, f->u_last = u[m - 1];
        if (!cross_only) f->nm = prior_match(cal, pol, metric_ix(metric), key, 0, exclude, u, d, m, f->mb);
        if (pol->prior_cross && f->nm < SCV_CALIB_MIN_MEMBERS)
            f->nxm = prior_match(cal, pol, metric_ix(metric), key, 1, exclude, u, d, m, f->xmb);
    }
    free(u);
}

/* The curve that describes the data best: scv_curve_fit's, else the tail's (the value a
 * curve predicts at a given x: the nearest reachable target). */
static const scv_curve *best_fit(const raw_fits *f)
{
    return f->fit_ok ? &f->fit : &f->tail;
}

/* The raw prediction x^ of target (samples), its kind and the curve behind it; x_last is
 * the prefix's end (kind NONE's x^). Prior mode 1: the prior's crossing where it has one;
 * 2: the geometric mean of the prior's and the fit's where both have one (kind PRIOR).
 * cross: other networks' matches in place of key's (kind XPRIOR, the same modes). */
static scv_calib_kind raw_predict(const raw_fits *f, int cross, scv_metric metric, double target, double x_last,
                                  scv_curve *curve, double *xhat)
{
    double xs = INFINITY, xp = INFINITY;
    scv_calib_kind kind = SCV_CALIB_NONE, pk = cross ? SCV_CALIB_XPRIOR : SCV_CALIB_PRIOR;
    const prior_member *mb = cross ? f->xmb : f->mb;
    size_t nm = cross ? f->nxm : f->nm;
    *curve = *best_fit(f);
    if (f->fit_ok && isfinite(xs = scv_curve_crossing(&f->fit, target))) kind = SCV_CALIB_PRIMARY;
    else if (f->tail_ok && isfinite(xs = scv_curve_crossing(&f->tail, target))) *curve = f->tail, kind = SCV_CALIB_TAIL;
    if (nm >= SCV_CALIB_MIN_MEMBERS)
        xp = f->n_train * prior_crossing(f->cal, mb, nm, f->u_last, dist_of(metric, target));
    if (isfinite(xp) && (f->prior == 1 || kind == SCV_CALIB_NONE)) {
        *xhat = fmax(xp, x_last);
        return pk;
    }
    if (isfinite(xp) && f->prior == 2) {
        *xhat = sqrt(fmax(xp, x_last) * fmax(xs, x_last));
        return pk;
    }
    *xhat = kind == SCV_CALIB_NONE ? x_last : xs;
    return kind;
}

/* The forecast's raw prediction: key's prior or the fit (raw_predict), or where other
 * networks' matches forecast too, whichever of the two has the narrower band in widths
 * (sel: a calibration's, NULL: no choice): the band is what the forecast is worth. */
static scv_calib_kind raw_choose(const raw_fits *f, const scv_calib *sel, const scv_calib_policy *pol,
                                 scv_metric metric, double target, double x_last, scv_curve *curve, double *xhat)
{
    scv_calib_kind k0 = raw_predict(f, 0, metric, target, x_last, curve, xhat);
    if (!sel || f->nxm < SCV_CALIB_MIN_MEMBERS || k0 == SCV_CALIB_PRIOR) return k0;
    scv_curve c1;
    double x1;
    if (raw_predict(f, 1, metric, target, x_last, &c1, &x1) != SCV_CALIB_XPRIOR) return k0;
    int mi = metric_ix(metric), b0 = k0 == SCV_CALIB_NONE ? 0 : bin_of(pol, log(*xhat / x_last));
    if (!(sel->width[mi][SCV_CALIB_XPRIOR][bin_of(pol, log(x1 / x_last))] < sel->width[mi][k0][b0])) return k0;
    *curve = c1, *xhat = x1;
    return SCV_CALIB_XPRIOR;
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

/* The best of the window means m[from..to] in direction s (NaN: none full there). */
static double best_of(const double *m, size_t from, size_t to, double s)
{
    double best = NAN;
    for (size_t i = from; i <= to; i++)
        if (isfinite(m[i]) && !(s * (m[i] - best) <= 0)) best = m[i];
    return best;
}

static int calib_add(scv_calib *cal, scv_metric metric, const double *x, const double *y, size_t n, double n_train,
                     const char *key, int group, const scv_calib_policy *pol, scv_err *err)
{
    scv_calib_policy dp = scv_calib_policy_default();
    if (!pol) pol = &dp;
    scv_curve_policy cp = scv_curve_policy_default();
    if (n < (size_t)cp.min_points + 2 || !(x[n - 1] > 0)) return SCV_OK; /* too short to teach anything */
    double *m = calloc(3 * n, sizeof(double)), *px = m + n, *py = m + 2 * n;
    if (!m) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    scv_stoprule_means(y, n, pol->window, m);
    double s = dir_of(metric), x_end = x[n - 1], best_all = best_of(m, 0, n - 1, s);
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
        double best_cut = best_of(m, 0, c, s);
        if (isnan(best_cut)) continue; /* no full window in the prefix: no target it passed */
        /* the prefix as a run would fit it: at most max_points, evenly thinned, the last kept */
        size_t stride = (c + (size_t)pol->max_points) / (size_t)pol->max_points, np = 0;
        for (size_t i = c % stride; i <= c; i += stride) px[np] = x[i], py[np++] = y[i];
        /* the forecast a run would make (fits: chosen by cal->select's widths where it has
         * them), and for the other cells other networks' prior alone (xfits: as for a network
         * the corpus does not hold) and the fit alone (fits less its members) */
        raw_fits fits, xfits;
        raw_fit(metric, px, py, np, cal, pol, key, group, 0, n_train, &fits);
        int cross_too = pol->fit_examples && pol->prior_cross && key && pol->cross_every > 0 &&
                        p % pol->cross_every == 0;
        if (cross_too && fits.nm < SCV_CALIB_MIN_MEMBERS) xfits = fits; /* (key's too few: matched already) */
        else if (cross_too) raw_fit(metric, px, py, np, cal, pol, key, group, 1, n_train, &xfits);
        for (int t = 0; t <= SCV_CALIB_MULTS && !rc; t++) {
            double target;
            if (t < SCV_CALIB_MULTS) { /* the curve's best by mult * x_c */
                double xt = pol->target_mults[t] * x[c];
                if (!(pol->target_mults[t] > 1) || xt > x_end) continue;
                target = best_cut;
                for (size_t i = c + 1; i < n && x[i] <= xt; i++)
                    if (isfinite(m[i]) && s * (m[i] - target) > 0) target = m[i];
                if (!(s * (target - best_cut) > 1e-12 * fabs(best_cut))) continue;
            } else { /* a target the curve never reached */
                if (!(s * (best_all - best_cut) > 0)) continue;
                target = best_all + s * pol->beyond_share * s * (best_all - best_cut);
                if (metric == SCV_METRIC_LOSS && !(target > 0)) continue;
                if (metric == SCV_METRIC_ACCURACY && !(target < 1)) continue;
            }
            double xt;
            long i = scv_stoprule_reached(x, y, n, (int)s, target, pol->window, &xt);
            if (i >= 0 && (size_t)i <= c) continue; /* (never: the target passes the prefix's best) */
            /* example 0: the forecast's; then (fit_examples) every kind it did not make: the
             * cross prior's (1) and the fit's alone (2) */
            scv_calib_kind made[3];
            for (int v = 0; v < 3 && !rc; v++) {
                if (v > 0 && !pol->fit_examples) break;
                if (v == 1 && !cross_too) continue;
                raw_fits f1 = v == 1 ? xfits : fits;
                if (v == 2) f1.nm = f1.nxm = 0;
                double xhat;
                scv_curve fit;
                made[v] = v == 0   ? raw_choose(&f1, cal->select, pol, metric, target, x[c], &fit, &xhat)
                          : v == 1 ? raw_predict(&f1, 1, metric, target, x[c], &fit, &xhat)
                                   : raw_predict(&f1, 0, metric, target, x[c], &fit, &xhat);
                if ((v == 1 && made[1] != SCV_CALIB_XPRIOR) || (v == 2 && made[2] == made[0])) continue;
                double r;
                if (i >= 0) r = log(xt / xhat);
                else if (x_end >= xhat) r = INFINITY;
                else continue; /* the curve stopped before the prediction: no label */
                int bin = made[v] == SCV_CALIB_NONE ? 0 : bin_of(pol, log(xhat / x[c]));
                rc = push(&cal->cell[mi][made[v]][bin], r);
                if (!rc) cal->n_examples[mi]++;
            }
        }
    }
    free(m);
    if (rc) return scv_err_set(err, rc, "out of memory");
    cal->n_curves[mi]++;
    return SCV_OK;
}

static double *pooled(const scv_calib *cal, const scv_calib_policy *pol, int mi, scv_calib_kind kind, int bin,
                      size_t *n);
static void band_quantiles(const double *r, size_t n, double coverage, double q[3]);

/* cal->width: each (metric, kind, bin)'s pooled band, ln(hi / lo); +inf for a kind with
 * fewer than min_examples of its own (its band would be other kinds'). */
static void calib_widths(scv_calib *cal)
{
    for (int mi = 0; mi < 2; mi++)
        for (int k = 0; k < SCV_CALIB_KINDS; k++) {
            size_t own = 0;
            for (int b = 0; b < SCV_CALIB_BINS; b++) own += cal->cell[mi][k][b].n;
            for (int b = 0; b < SCV_CALIB_BINS; b++) {
                size_t nr = 0;
                double q[3], *r = own < (size_t)cal->pol.min_examples
                                      ? NULL
                                      : pooled(cal, &cal->pol, mi, (scv_calib_kind)k, k == SCV_CALIB_NONE ? 0 : b, &nr);
                cal->width[mi][k][b] = INFINITY;
                if (r && nr >= (size_t)cal->pol.min_examples) {
                    band_quantiles(r, nr, cal->pol.coverage, q);
                    if (isfinite(q[2] - q[0])) cal->width[mi][k][b] = q[2] - q[0];
                }
                free(r);
            }
        }
}

int scv_calib_add(scv_calib *cal, scv_metric metric, const double *x, const double *y, size_t n, double n_train,
                  const char *key, int group, const scv_calib_policy *pol, scv_err *err)
{
    int rc = calib_add(cal, metric, x, y, n, n_train, key, group, pol, err);
    if (!rc) calib_widths(cal);
    return rc;
}

/* One metric's points of a corpus curve (those measured) into x, y; their count. */
static size_t curve_points(const scv_lcurve *c, int mi, double *x, double *y)
{
    const double *v = mi ? c->loss : c->accuracy;
    size_t k = 0;
    for (size_t j = 0; j < c->n; j++)
        if (isfinite(v[j]) && c->samples[j] > 0) x[k] = c->samples[j], y[k++] = v[j];
    return k;
}

/* Two curves of one job, batch and rule that differ by their seed. */
static int rerun_pair(const scv_lcurve *a, const scv_lcurve *b)
{
    return !strcmp(a->job, b->job) && a->batch == b->batch && a->lr_scaling == b->lr_scaling && a->seed != b->seed;
}

size_t scv_lcurve_smoothed(const scv_lcurve *c, int mi, double *x, double *y, double *m)
{
    size_t k = curve_points(c, mi, x, y);
    scv_stoprule_means(y, k, scv_calib_policy_default().window, m);
    return k;
}

/* Rerun examples of a pair: for targets at a's 3-point mean at 10 log-spaced shares of its
 * points (2%-100%), ln(x_b / x_a) of the two means' first crossings, where both reach it. */
static int rerun_examples(scv_calib *cal, const scv_lcurve *a, const scv_lcurve *b, int mi, int W)
{
    double *w = malloc(sizeof(double) * 3 * (a->n + b->n + 1));
    if (!w) return SCV_ENOMEM;
    double *xa = w, *ya = xa + a->n, *ma = ya + a->n, *xb = ma + a->n, *yb = xb + b->n, *mb = yb + b->n;
    int s = mi ? -1 : 1;
    size_t na = scv_lcurve_smoothed(a, mi, xa, ya, ma), nb = scv_lcurve_smoothed(b, mi, xb, yb, mb);
    int rc = SCV_OK;
    for (int t = 0; t < 10 && na >= 8 && !rc; t++) {
        size_t i = (size_t)((double)(na - 1) * 0.02 * pow(50, t / 9.0));
        if (i < 1 || i + 1 >= na || !isfinite(ma[i])) continue;
        double ca, cb;
        long ia = scv_stoprule_reached(xa, ya, na, s, ma[i], W, &ca);
        long ib = scv_stoprule_reached(xb, yb, nb, s, ma[i], W, &cb);
        if (ia >= 0 && ib >= 0 && ca > 0 && cb > 0) rc = push(&cal->rerun[mi], log(cb / ca));
    }
    free(w);
    return rc;
}

int scv_calib_build(const scv_lcurve_set *corpus, const scv_calib_policy *pol, scv_calib *out, scv_err *err)
{
    scv_calib_policy dp = scv_calib_policy_default();
    if (!pol) pol = &dp;
    memset(out, 0, sizeof *out);
    size_t most = 0;
    for (size_t i = 0; corpus && i < corpus->n; i++) most = corpus->c[i].n > most ? corpus->c[i].n : most;
    double *x = malloc(sizeof(double) * (most + 1)), *y = malloc(sizeof(double) * (most + 1));
    int *group = malloc(sizeof(int) * (corpus ? corpus->n + 1 : 1)), rc = SCV_OK;
    out->pol = *pol;
    if (!x || !y || !group) rc = SCV_ENOMEM;
    /* the prior's curves first, each its own group: an example never matches its own curve,
     * and matches only the curves of its model and dataset (as a run would) */
    char key[64];
    for (size_t i = 0; !rc && corpus && i < corpus->n; i++) {
        group[i] = (int)i;
        scv_calib_key(corpus->c[i].model, corpus->c[i].dataset, key, sizeof key);
        for (int mi = 0; mi < 2 && !rc && pol->prior; mi++) {
            size_t k = curve_points(&corpus->c[i], mi, x, y);
            rc = add_ref(out, mi ? SCV_METRIC_LOSS : SCV_METRIC_ACCURACY, key, group[i], x, y, k, corpus->c[i].n_train);
        }
    }
    if (rc) rc = scv_err_set(err, rc, "out of memory");
    for (size_t i = 0; !rc && corpus && i < corpus->n; i++)
        for (int mi = 0; mi < 2 && !rc; mi++) {
            size_t k = curve_points(&corpus->c[i], mi, x, y);
            rc = calib_add(out, mi ? SCV_METRIC_LOSS : SCV_METRIC_ACCURACY, x, y, k, corpus->c[i].n_train,
                           scv_calib_key(corpus->c[i].model, corpus->c[i].dataset, key, sizeof key), group[i], pol,
                           err);
        }
    for (size_t i = 0; !rc && corpus && i < corpus->n; i++)
        for (size_t j = 0; !rc && j < corpus->n; j++)
            if (i != j && rerun_pair(&corpus->c[i], &corpus->c[j]))
                for (int mi = 0; mi < 2 && !rc; mi++) rc = rerun_examples(out, &corpus->c[i], &corpus->c[j], mi, pol->window);
    if (rc) rc = scv_err_set(err, rc, "out of memory");
    if (!rc) calib_widths(out);
    free(x), free(y), free(group);
    if (rc) scv_calib_free(out);
    return rc;
}

/* The band's quantiles of sorted log errors r[0, n): q[0] (1-C)/2, q[1] the median,
 * q[2] (1+C)/2 for coverage C. */
static void band_quantiles(const double *r, size_t n, double coverage, double q[3])
{
    double a = (1 - coverage) / 2;
    q[0] = scv_quantile_sorted(r, n, a), q[1] = scv_quantile_sorted(r, n, 0.5), q[2] = scv_quantile_sorted(r, n, 1 - a);
}

int scv_calib_rerun_band(const scv_calib *cal, scv_metric metric, double e0, double *lo, double *hi, size_t *n)
{
    const scv_calib_cell *c = &cal->rerun[metric_ix(metric)];
    *n = 0;
    *lo = *hi = NAN;
    if (c->n < (size_t)cal->pol.min_examples || !(e0 > 0)) return SCV_ENOTFOUND;
    double *v = malloc(sizeof(double) * c->n);
    if (!v) return SCV_ENOMEM;
    *n = c->n;
    memcpy(v, c->r, sizeof(double) * c->n);
    qsort(v, c->n, sizeof(double), scv_cmp_double);
    double q[3];
    band_quantiles(v, c->n, cal->pol.coverage, q);
    *lo = e0 * exp(q[0]), *hi = e0 * exp(q[2]);
    free(v);
    return SCV_OK;
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
                    if (!c->n) continue;
                    memcpy(v + *n, c->r, c->n * sizeof(double));
                    *n += c->n;
                }
            }
    qsort(v, *n, sizeof(double), scv_cmp_double);
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
    double q[3];
    band_quantiles(r, nr, pol->coverage, q);
    *q_lo = q[0], *q_med = q[1], *q_hi = q[2];
    free(r);
    return SCV_OK;
}

int scv_calib_bin(const scv_calib_policy *pol, double rho)
{
    scv_calib_policy dp = scv_calib_policy_default();
    return bin_of(pol ? pol : &dp, rho);
}

int scv_calib_forecast(const scv_calib *cal, const scv_calib_policy *pol, scv_metric metric, const double *x,
                       const double *y, size_t n, double n_train, const char *key, double target, double horizon,
                       uint64_t seed, scv_forecast *out, scv_err *err)
{
    scv_calib_policy dp = scv_calib_policy_default();
    if (!pol) pol = cal ? &cal->pol : &dp;
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
    raw_fit(metric, x, y, n, cal, pol, key, -1, 0, n_train, &fits);
    out->kind = raw_choose(&fits, cal, pol, metric, target, xc, &fit, &out->x_hat);
    out->n_members = out->kind == SCV_CALIB_PRIOR ? fits.nm : out->kind == SCV_CALIB_XPRIOR ? fits.nxm : 0;
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
        scv_curve_policy dcp = scv_curve_policy_default();
        int rc = scv_curve_predict(&fit, x, y, n, target, seed, out->kind == SCV_CALIB_PRIMARY ? &fits.fit_pol : &dcp,
                                   &pr, err);
        if (rc) return rc;
        out->lo = pr.lo, out->hi = pr.hi, out->x_med = fmin(fmax(xh, pr.lo), pr.hi);
        /* within the horizon: the bootstrap's share that reaches at all, times a log-normal
         * through its band (5-95: +-1.645 sigma) at the horizon */
        double sig = pr.lo > 0 && isfinite(pr.hi) ? log(pr.hi / pr.lo) / (2 * 1.645) : INFINITY;
        double z = !(horizon > 0) ? INFINITY : sig > 0 ? log(horizon / xh) / sig : horizon >= xh ? INFINITY : -INFINITY;
        out->p_reach = pr.p_reach * (isinf(sig) ? 0.5 : 0.5 * erfc(-z / sqrt(2)));
        if (horizon > 0 && !(xh <= horizon)) out->nearest = scv_curve_eval(best_fit(&fits), horizon);
        return SCV_OK;
    }
    out->calibrated = 1, out->n_examples = nr;
    double q[3];
    band_quantiles(r, nr, pol->coverage, q);
    double q_lo = q[0], q_med = q[1], q_hi = q[2];
    /* the point: the raw crossing (or the bin's median when shift_median), inside the band */
    out->lo = xh * exp(q_lo), out->hi = xh * exp(q_hi);
    out->x_med = fmin(fmax(pol->shift_median && isfinite(q_med) ? xh * exp(q_med) : xh, out->lo), out->hi);
    /* the target was not reached by x_c: the truth lies beyond it */
    out->lo = fmax(out->lo, xc), out->x_med = fmax(out->x_med, xc), out->hi = fmax(out->hi, xc);
    size_t k = 0;
    double lim = horizon > 0 ? log(horizon / xh) : INFINITY;
    while (k < nr && r[k] <= lim) k++;
    out->p_reach = (double)k / nr;
    if (horizon > 0 && out->p_reach < 0.5 && (fits.fit_ok || fits.tail_ok))
        out->nearest = scv_curve_eval(best_fit(&fits), isfinite(q_med) ? horizon * exp(-q_med) : horizon);
    free(r);
    return SCV_OK;
}
