/*
 * carry.c - the batch carry-over learnt from curves of one job at several batches.
 *
 * The loop predicts the samples to its target at a reference batch b0 and carries them to
 * the other batches B of its space with the gradient-noise-scale law (curve.c):
 *   S(B) = S(b0) (B + Bn) / (b0 + Bn)        S [samples], B, b0, Bn [samples per step]
 * That law holds for a learning rate tuned at every batch (McCandlish et al. 2018). Under a
 * fixed rule (the learning rate constant, or scaled by sqrt(B / B_base) or B / B_base) the
 * truth departs from it job by job, and not in one direction per rule: over the shipped
 * corpus (4 jobs, B = 32..512, all three rules) the median ln error of the law with one
 * noise scale per job ranged 0.21-0.62 by job, and a correction per rule learnt on the other
 * jobs made it no better (0.53-0.55). What does carry is the job's own behaviour under its
 * rule. So, where curves of the same job (model and dataset), base learning rate, base
 * batch and rule are known at `policy.min_batches` batches or more (a curve at the base
 * batch counts for every rule: its learning rate is the base one under each), the law's
 * noise scale is fitted to them, Bn_eff:
 *   targets   shares policy.shares of the way from the curves' value at their third
 *             evaluation (the furthest from the ideal) to the least extreme value every curve
 *             reaches (3-point moving averages, as the target rule smooths)
 *   E_b       the seeds' mean of the first crossing at batch b [samples]
 *   Bn_eff    on a log grid (2^(k/2), k = 6..34), the least median over targets and ordered
 *             batch pairs (a, b) of |ln(E_b / (E_a (b + Bn) / (a + Bn)))|
 * Its error at each batch is measured leaving that batch out: Bn fitted on the others, the
 * signed errors ln(E_b / E^_b) of the batch's crossings predicted from each other batch.
 * Their (1-C)/2 and (1+C)/2 quantiles widen a prediction carried to another batch
 * (coverage C); their median absolute value is the law's stated error.
 *
 * A job the corpus does not hold (scv_carry_learn_rule) carries by its rule's exponent,
 * learnt from the corpus's other jobs under the same rule and base batch:
 *   S(B) = S(b0) (B / b0)^gamma
 *   g_j       ln(E_b / E_a) / ln(b / a) over job j's targets and batch pairs a < b
 *   gamma     the median over jobs of each job's median g_j
 *   errors    g_j - gamma_-j, gamma_-j learnt with job j left out; a prediction carried from
 *             b0 to B errs ln(true / carried) = error * ln(B / b0), so the band's quantiles
 *             scale with the distance in ln B (scv_carry_quantiles)
 * The noise-scale law says 0 <= gamma <= 1 (a tuned learning rate); under a fixed rule the
 * corpus's jobs range wider: at sqrt scaling from B = 64 to 256, gamma -0.47..+0.74 (the MLP
 * and logistic regression need fewer samples at the larger batch near their plateaus: its
 * noise floor, lr / B, is lower). The measured noise scale, which the run would otherwise
 * carry by, has no error measured on the corpus (the curves hold no gradient statistics).
 *
 * Once a run has trained at another batch b (a probe segment), its own evaluations tell
 * (scv_carry_shift). Every evaluation is placed at its b0-equivalent samples u(x): the run's
 * segments up to x, each counted at its rate per sample relative to b0 (1 at b0, r at b, the
 * carry in force at any other batch a search measured). Its evaluations at b0, on both sides
 * of the probe, then trace b0's curve f0 (curve.c's selection), and the probe's are read as
 * that curve moved by a level d:
 *   y_i = f0(u(x_i)) + d
 * r is the drift's (the noise-scale law's kind: at sqrt scaling the larger batch takes fewer
 * steps per sample, and b0's curve resumes behind by what the probe did not make), d the
 * noise floor's (lr / B lower at the larger batch: the MLP's loss 0.04 lower from half an
 * epoch on; LeNet's training loss dropped at once at B=256 as well, where its later progress
 * was slower, so a level alone, or a rate alone, misreads it). For each r of a log grid
 * (policy.run_rate_lo..hi, 16 steps an octave) f0 is fitted to b0's evaluations so placed, d
 * is the probe's mean residual, and sse(r) the two fits' squared residuals; r* has the least,
 * and the band is the profile's: the r with sse(r) <= sse(r*) (1 + z^2 / (n - 5)), n the
 * evaluations, z the normal's quantile at the band's coverage. Reaching the target at b is
 * f0 reaching target - d at the rate r; counted from the probe's start u_p, as the loop
 * carries the samples still to go:
 *   S(b) = (f0^-1(target - d) - u_p) / r     gamma = ln(S(b) / (f0^-1(target) - u_p)) / ln(b / b0)
 * gamma at r* is the point; its band spans gamma over the r of the band (r*'s neighbours on
 * the grid at least), each with d moved by -z se and +z se,
 * se^2 = sse_b(r) / (n_b - 2) / n_b + rmse(f0)^2 / n_0 (a crossing past the horizon H counts
 * as 2H). An r* at the grid's edge: the probe does not tell.
 * The read is kept as it was measured too (run_rate r, run_level d, run_cross0 = f0^-1(target)
 * within the horizon): the samples a run trained at b up to the read count at r on b0's curve (not at
 * (b / b0)^gamma, which folds the level in: LeNet's loss runs counted 3.7 epochs at B=64 that
 * way, 2.4 at r, where runs at B=64 from the start take 2.37), an evaluation at b is moved
 * by -d onto it, and a target reached at b, helped by d, stands for f0^-1(target) at b0.
 * A run from its start at b, at r and d all along (gamma_scratch; NaN where either crossing
 * lies past the horizon):
 *   gamma_scratch = ln((f0^-1(target - d) / r) / f0^-1(target)) / ln(b / b0)
 */
#include "scv.h"
#include "model.h"
#include "stoprule.h"
#include "../core/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

scv_carry_policy scv_carry_policy_default(void)
{
    return (scv_carry_policy){.min_batches = 3, .shares = {0.3, 0.5, 0.7, 0.85}, .lr_rel_tol = 1e-6, .min_jobs = 2,
                              .run_min_evals = 3, .run_gamma_lo = -1.5, .run_gamma_hi = 2.5, .run_gamma_step = 0.05,
                              .run_rate_lo = 1.0 / 16, .run_rate_hi = 16};
}

#define GRID_LO 6
#define GRID_HI 34
#define MAX_BATCHES 16

/* The curves' batches and, per target and batch, the seeds' mean crossing [samples]. */
typedef struct carry_table {
    int batch[MAX_BATCHES];
    double bn[MAX_BATCHES]; /* the mean noise scale its curves there measured (NaN: none) */
    size_t nb;
    double e[SCV_CARRY_SHARES][MAX_BATCHES]; /* NaN: not every seed reached it */
} carry_table;

static int curve_matches(const scv_lcurve *c, const char *key, const scv_carry_job *job, const scv_carry_policy *pol)
{
    char k[64];
    scv_calib_key(c->model, c->dataset, k, sizeof k);
    if (strcmp(k, key) || c->base_batch != job->base_batch || !(job->lr > 0)) return 0;
    if (fabs(c->lr - job->lr) > pol->lr_rel_tol * job->lr) return 0;
    /* at the base batch the fixed rules coincide (an AdaScale run there is measured for its
     * noise scale, the same course as "none": it stands for its own rule only) */
    return pol->any_rule || c->lr_scaling == job->lr_scaling ||
           (c->batch == c->base_batch && c->lr_scaling != SCV_LR_SCALE_ADASCALE);
}

/* A matching curve's metric as the calibration reads it: measured points, values and the
 * target rule's window means (scv_lcurve_smoothed, the truths' reading). */
typedef struct smoothed {
    int batch;
    double noise; /* the curve's measured noise scale (NaN: none) */
    size_t n;
    double *x, *y, *m;
} smoothed;

/* Samples where the curve reached y (dir +1: >=, -1: <=) by the run's own rule
 * (scv_stoprule_reached); NaN: never. */
static double crossing(const smoothed *c, double dir, double y)
{
    double x;
    return scv_stoprule_reached(c->x, c->y, c->n, dir > 0 ? 1 : -1, y, scv_calib_policy_default().window, &x) >= 0
               ? x
               : NAN;
}

/* The matching curves of set, smoothed, into *out (one allocation, free((*out)[0].x) and
 * free(*out)); their count; -1 out of memory. */
static long smooth_matches(const scv_lcurve_set *set, const char *key, const scv_carry_job *job, int mi,
                           const scv_carry_policy *pol, smoothed **out)
{
    size_t n = 0, pts = 0;
    *out = NULL;
    for (size_t i = 0; set && i < set->n; i++)
        if (curve_matches(&set->c[i], key, job, pol) && set->c[i].n >= 8) n++, pts += set->c[i].n;
    if (!n) return 0;
    smoothed *v = calloc(n, sizeof *v);
    double *w = malloc(sizeof(double) * (3 * pts + 1));
    if (!v || !w) {
        free(v), free(w);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < set->n; i++) {
        const scv_lcurve *c = &set->c[i];
        if (!curve_matches(c, key, job, pol) || c->n < 8) continue;
        v[k].batch = c->batch, v[k].noise = c->noise_scale > 0 ? c->noise_scale : NAN, v[k].x = w, v[k].y = w + c->n,
        v[k].m = w + 2 * c->n;
        v[k].n = scv_lcurve_smoothed(c, mi, v[k].x, v[k].y, v[k].m);
        w += 3 * c->n, k++;
    }
    *out = v;
    return (long)n;
}

/* 1: t holds the crossings; 0: too few batches or no range; -1: out of memory. */
static int table_of(const scv_lcurve_set *set, const char *key, const scv_carry_job *job, scv_metric metric,
                    const scv_carry_policy *pol, carry_table *t)
{
    int mi = metric == SCV_METRIC_LOSS;
    double dir = mi ? -1 : 1, start = NAN, reach = NAN;
    memset(t, 0, sizeof *t);
    smoothed *v;
    long n = smooth_matches(set, key, job, mi, pol, &v);
    if (n < 0) return -1;
    for (long i = 0; i < n; i++) {
        if (v[i].n < 3) continue;
        double best = NAN;
        for (size_t j = 0; j < v[i].n; j++)
            if (isfinite(v[i].m[j]) && !(dir * (v[i].m[j] - best) <= 0)) best = v[i].m[j];
        double s = v[i].m[2]; /* (the first full window's, W = 3) */
        if (!(dir * (s - start) <= 0)) start = s;     /* the furthest along at the third point */
        if (!(dir * (best - reach) >= 0)) reach = best; /* the least extreme best */
        size_t b = 0;
        while (b < t->nb && t->batch[b] != v[i].batch) b++;
        if (b == t->nb && t->nb < MAX_BATCHES) t->batch[t->nb++] = v[i].batch;
    }
    for (size_t b = 0; b < t->nb; b++) {
        double sum = 0;
        int k = 0;
        for (long i = 0; i < n; i++)
            if (v[i].batch == t->batch[b] && isfinite(v[i].noise)) sum += v[i].noise, k++;
        t->bn[b] = k ? sum / k : NAN;
    }
    int ok = t->nb >= (size_t)pol->min_batches && dir * (reach - start) > 0;
    for (int s = 0; s < SCV_CARRY_SHARES && ok; s++) {
        double y = start + pol->shares[s] * (reach - start);
        for (size_t b = 0; b < t->nb; b++) {
            double sum = 0;
            int k = 0, miss = 0;
            for (long i = 0; i < n; i++) {
                if (v[i].batch != t->batch[b] || v[i].n < 3) continue;
                double x = crossing(&v[i], dir, y);
                if (isfinite(x)) sum += x, k++;
                else miss = 1;
            }
            t->e[s][b] = k && !miss ? sum / k : NAN;
        }
    }
    if (n) free(v[0].x);
    free(v);
    return ok;
}

static double law_err(const carry_table *t, int s, size_t a, size_t b, double bn)
{
    return log(t->e[s][b] / (t->e[s][a] * (t->batch[b] + bn) / (t->batch[a] + bn)));
}

/* The grid's noise scale of least median |error| over the ordered pairs, leaving batch
 * `skip` out (-1: none); NAN when no pair is known. */
static double fit_bn(const carry_table *t, long skip, const scv_carry_policy *pol)
{
    if (pol->fixed_b_noise > 0) return pol->fixed_b_noise;
    double best = NAN, best_e = INFINITY, r[SCV_CARRY_SHARES * MAX_BATCHES * MAX_BATCHES];
    for (int k = GRID_LO; k <= GRID_HI; k++) {
        double bn = pow(2, k / 2.0);
        size_t n = 0;
        for (int s = 0; s < SCV_CARRY_SHARES; s++)
            for (size_t a = 0; a < t->nb; a++)
                for (size_t b = 0; b < t->nb; b++)
                    if (a != b && (long)a != skip && (long)b != skip && isfinite(t->e[s][a]) && isfinite(t->e[s][b]))
                        r[n++] = fabs(law_err(t, s, a, b, bn));
        if (!n) return NAN;
        double m = scv_median(r, n);
        if (m < best_e) best_e = m, best = bn;
    }
    return best;
}

/* No carry: every figure NaN. */
static void carry_none(scv_carry *out)
{
    memset(out, 0, sizeof *out);
    out->b_noise = out->gamma = out->q_lo = out->q_hi = out->med_abs = NAN;
    out->bn_factor = 1;
}

/* The band from n signed errors r (sorted here; abs: scratch of n): their (1-C)/2 and
 * (1+C)/2 quantiles and median absolute value. */
static void set_band(scv_carry *out, double *r, double *abs_r, size_t n, double coverage)
{
    for (size_t i = 0; i < n; i++) abs_r[i] = fabs(r[i]);
    qsort(r, n, sizeof *r, scv_cmp_double);
    out->n_errors = n;
    out->q_lo = scv_quantile_sorted(r, n, (1 - coverage) / 2);
    out->q_hi = scv_quantile_sorted(r, n, (1 + coverage) / 2);
    out->med_abs = scv_median(abs_r, n);
}

int scv_carry_learn(const scv_lcurve_set *set, const char *key, const scv_carry_job *job, scv_metric metric,
                    const scv_carry_policy *pol, double coverage, scv_carry *out)
{
    scv_carry_policy dp = scv_carry_policy_default();
    if (!pol) pol = &dp;
    carry_none(out);
    carry_table t;
    int got = job && key ? table_of(set, key, job, metric, pol, &t) : 0;
    if (got < 0) return SCV_ENOMEM;
    if (!got) return SCV_ENOTFOUND;
    double bn = fit_bn(&t, -1, pol);
    if (!isfinite(bn)) return SCV_ENOTFOUND;
    /* leave-one-batch-out: the held-out batch's crossings predicted from each other batch */
    double r[SCV_CARRY_SHARES * MAX_BATCHES * MAX_BATCHES], a_r[SCV_CARRY_SHARES * MAX_BATCHES * MAX_BATCHES];
    size_t n = 0;
    for (size_t h = 0; h < t.nb; h++) {
        double bh = fit_bn(&t, (long)h, pol);
        if (!isfinite(bh)) continue;
        for (int s = 0; s < SCV_CARRY_SHARES; s++)
            for (size_t a = 0; a < t.nb; a++)
                if (a != h && isfinite(t.e[s][a]) && isfinite(t.e[s][h])) r[n++] = law_err(&t, s, a, h, bh);
    }
    if (n < 4) return SCV_ENOTFOUND;
    out->b_noise = bn;
    out->n_batches = (int)t.nb;
    set_band(out, r, a_r, n, coverage);
    return SCV_OK;
}

/* ---- a rule's exponent, from other jobs ---- */

#define MAX_JOBS 32
#define PAIRS (SCV_CARRY_SHARES * MAX_BATCHES * MAX_BATCHES / 2)

/* One job's exponents g over its targets and batch pairs. */
typedef struct job_gammas {
    double g[PAIRS];
    size_t n;
    double med;
} job_gammas;

static void gammas_of(const carry_table *t, job_gammas *j)
{
    j->n = 0;
    for (int s = 0; s < SCV_CARRY_SHARES; s++)
        for (size_t a = 0; a < t->nb; a++)
            for (size_t b = 0; b < t->nb; b++)
                if (t->batch[a] < t->batch[b] && isfinite(t->e[s][a]) && isfinite(t->e[s][b]) && j->n < PAIRS)
                    j->g[j->n++] = log(t->e[s][b] / t->e[s][a]) / log((double)t->batch[b] / t->batch[a]);
    j->med = j->n ? scv_median(j->g, j->n) : NAN;
}

/* The median of the jobs' medians, job `skip` left out (-1: none). */
static double gamma_of(const job_gammas *jg, size_t nj, long skip)
{
    double m[MAX_JOBS];
    size_t n = 0;
    for (size_t i = 0; i < nj; i++)
        if ((long)i != skip) m[n++] = jg[i].med;
    return n ? scv_median(m, n) : NAN;
}

int scv_carry_learn_rule(const scv_lcurve_set *set, const char *exclude_key, const scv_carry_job *job,
                         scv_metric metric, const scv_carry_policy *pol, double coverage, scv_carry *out)
{
    scv_carry_policy dp = scv_carry_policy_default();
    if (!pol) pol = &dp;
    carry_none(out);
    if (!job || !set) return SCV_ENOTFOUND;
    job_gammas *jg = malloc(sizeof *jg * MAX_JOBS);
    if (!jg) return SCV_ENOMEM;
    size_t nj = 0;
    /* the other jobs: each (key, base learning rate) once, at the run's base batch and rule */
    for (size_t i = 0; i < set->n && nj < MAX_JOBS; i++) {
        const scv_lcurve *c = &set->c[i];
        char key[64];
        scv_calib_key(c->model, c->dataset, key, sizeof key);
        if ((exclude_key && !strcmp(key, exclude_key)) || c->base_batch != job->base_batch || !(c->lr > 0)) continue;
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++) {
            const scv_lcurve *d = &set->c[k];
            char dk[64];
            seen = d->base_batch == c->base_batch && fabs(d->lr - c->lr) <= pol->lr_rel_tol * c->lr &&
                   !strcmp(scv_calib_key(d->model, d->dataset, dk, sizeof dk), key);
        }
        if (seen) continue;
        scv_carry_job oj = {.lr = c->lr, .base_batch = c->base_batch, .lr_scaling = job->lr_scaling};
        carry_table t;
        int got = table_of(set, key, &oj, metric, pol, &t);
        if (got < 0) {
            free(jg);
            return SCV_ENOMEM;
        }
        if (!got) continue;
        gammas_of(&t, &jg[nj]);
        if (jg[nj].n) nj++;
    }
    if (nj < (size_t)pol->min_jobs) {
        free(jg);
        return SCV_ENOTFOUND;
    }
    /* each job left out: its exponents against the others' */
    size_t n = 0;
    double *r = malloc(sizeof(double) * 2 * nj * PAIRS), *a_r;
    if (!r) {
        free(jg);
        return SCV_ENOMEM;
    }
    a_r = r + nj * PAIRS;
    for (size_t j = 0; j < nj; j++) {
        double g = gamma_of(jg, nj, (long)j);
        for (size_t k = 0; k < jg[j].n; k++) r[n++] = jg[j].g[k] - g;
    }
    out->gamma = gamma_of(jg, nj, -1);
    out->n_jobs = (int)nj;
    set_band(out, r, a_r, n, coverage);
    free(r);
    free(jg);
    return SCV_OK;
}

/* ---- the noise-scale law with the run's measured noise scale, from other jobs ---- */

/* One carried crossing of an AdaScale job: e_a at batch a (its run measured bn there) to e_b. */
typedef struct measured_pair {
    int job, a, b;
    double e_a, e_b, bn;
} measured_pair;

/* The pair's error per unit of ln(b / a) with the measured noise scale times f. */
static double measured_err(const measured_pair *p, double f)
{
    double bn = f * p->bn;
    return log(p->e_b / (p->e_a * (p->b + bn) / (p->a + bn))) / log((double)p->b / p->a);
}

/* The factor on the grid 2^(k/4), k = -8..16, of least median |error| over the pairs of the
 * jobs other than `skip` (-1: none); NaN when none. */
static double fit_factor(const measured_pair *p, size_t n, int skip, double *scratch)
{
    double best = NAN, best_e = INFINITY;
    for (int k = -8; k <= 16; k++) {
        double f = pow(2, k / 4.0);
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (p[i].job != skip) scratch[m++] = fabs(measured_err(&p[i], f));
        if (!m) return NAN;
        double e = scv_median(scratch, m);
        if (e < best_e) best_e = e, best = f;
    }
    return best;
}

/* The AdaScale jobs' carried crossings (each other job's curves at its batches, the noise
 * scale each batch's runs measured) into *out (malloc'ed); their count, the jobs in *nj. */
static long measured_pairs(const scv_lcurve_set *set, const char *exclude_key, const scv_carry_job *job,
                           scv_metric metric, const scv_carry_policy *pol, measured_pair **out, int *nj)
{
    size_t n = 0, cap = 0;
    measured_pair *p = NULL;
    *nj = 0;
    for (size_t i = 0; i < set->n; i++) { /* the other jobs: each (key, base learning rate) once */
        const scv_lcurve *c = &set->c[i];
        char key[64];
        scv_calib_key(c->model, c->dataset, key, sizeof key);
        if ((exclude_key && !strcmp(key, exclude_key)) || c->base_batch != job->base_batch || !(c->lr > 0) ||
            c->lr_scaling != job->lr_scaling || !(c->noise_scale > 0))
            continue;
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++) {
            const scv_lcurve *d = &set->c[k];
            char dk[64];
            seen = d->base_batch == c->base_batch && d->lr_scaling == c->lr_scaling && d->noise_scale > 0 &&
                   fabs(d->lr - c->lr) <= pol->lr_rel_tol * c->lr &&
                   !strcmp(scv_calib_key(d->model, d->dataset, dk, sizeof dk), key);
        }
        if (seen) continue;
        scv_carry_job oj = {.lr = c->lr, .base_batch = c->base_batch, .lr_scaling = job->lr_scaling};
        carry_table t;
        int got = table_of(set, key, &oj, metric, pol, &t);
        if (got < 0) return free(p), -1;
        size_t before = n;
        for (int s = 0; got && s < SCV_CARRY_SHARES; s++)
            for (size_t a = 0; a < t.nb; a++)
                for (size_t b = 0; b < t.nb; b++) {
                    if (a == b || !isfinite(t.bn[a]) || !isfinite(t.e[s][a]) || !isfinite(t.e[s][b])) continue;
                    if (n == cap) {
                        measured_pair *g = realloc(p, sizeof *p * (cap = cap ? 2 * cap : 256));
                        if (!g) return free(p), -1;
                        p = g;
                    }
                    p[n++] = (measured_pair){*nj, t.batch[a], t.batch[b], t.e[s][a], t.e[s][b], t.bn[a]};
                }
        *nj += n > before;
    }
    *out = p;
    return (long)n;
}

int scv_carry_learn_measured(const scv_lcurve_set *set, const char *exclude_key, const scv_carry_job *job,
                             scv_metric metric, const scv_carry_policy *pol, double coverage, scv_carry *out)
{
    scv_carry_policy dp = scv_carry_policy_default();
    if (!pol) pol = &dp;
    carry_none(out);
    if (!job || !set) return SCV_ENOTFOUND;
    measured_pair *p = NULL;
    int nj;
    long n = measured_pairs(set, exclude_key, job, metric, pol, &p, &nj);
    if (n < 0) return SCV_ENOMEM;
    if (nj < pol->min_jobs || n < 4) {
        free(p);
        return SCV_ENOTFOUND;
    }
    double *r = malloc(sizeof(double) * 2 * (size_t)n), *a_r = r + n;
    if (!r) return free(p), SCV_ENOMEM;
    /* each job left out: its pairs' errors under the factor the others give */
    size_t m = 0;
    for (int j = 0; j < nj; j++) {
        double f = fit_factor(p, (size_t)n, j, a_r);
        for (long i = 0; i < n && isfinite(f); i++)
            if (p[i].job == j) r[m++] = measured_err(&p[i], f);
    }
    out->bn_factor = fit_factor(p, (size_t)n, -1, a_r);
    out->n_jobs = nj, out->per_log = 1;
    set_band(out, r, a_r, m, coverage);
    free(r), free(p);
    return m >= 4 && isfinite(out->bn_factor) ? SCV_OK : SCV_ENOTFOUND;
}

void scv_carry_quantiles(const scv_carry *c, double b0, double b, double *q_lo, double *q_hi)
{
    scv_carry_err e = scv_carry_err_of(c); /* (the estimate's rule: estimate.c) */
    scv_carry_err_at(&e, b0, b, q_lo, q_hi);
}

double scv_carry_samples(scv_carry_law law, double samples_b0, double b0, double b)
{
    if (!isfinite(law.gamma)) return scv_samples_at_batch(samples_b0, b0, b, law.b_noise);
    if (!(b0 > 0) || !(b > 0) || isnan(samples_b0)) return NAN;
    return samples_b0 * pow(b / b0, law.gamma);
}

double scv_carry_law_noise(const scv_carry *c, double measured)
{
    return c && c->bn_factor > 0 ? measured * c->bn_factor : measured;
}

int scv_lr_scaling_carries(scv_lr_scaling r) { return r == SCV_LR_SCALE_ADASCALE; }

int scv_carry_law_known(scv_carry_law law)
{
    return isfinite(law.gamma) || law.b_noise > 0;
}

int scv_carry_law_same(scv_carry_law a, scv_carry_law b)
{
#define SAME(x, y) ((x) == (y) || (isnan(x) && isnan(y)))
    return SAME(a.b_noise, b.b_noise) && SAME(a.gamma, b.gamma) && SAME(a.run_b0, b.run_b0) && SAME(a.run_b, b.run_b) &&
           SAME(a.run_rate, b.run_rate) && SAME(a.run_level, b.run_level) &&
           SAME(a.run_cross0, b.run_cross0) && SAME(a.run_until, b.run_until);
#undef SAME
}

/* ---- the run's own carry ---- */

/* The standard normal's p quantile (bisection on erfc). */
static double normal_q(double p)
{
    double lo = -10, hi = 10;
    for (int i = 0; i < 80; i++) {
        double m = (lo + hi) / 2;
        if (0.5 * erfc(-m / sqrt(2)) < p) lo = m;
        else hi = m;
    }
    return (lo + hi) / 2;
}

/* f0's first crossing of the target value v [samples], 2 H past the horizon H or never. */
static double crossing_capped(const scv_curve *f0, double v, double horizon)
{
    double x = scv_curve_crossing(f0, v);
    return isfinite(x) && x > 0 && x <= horizon ? x : 2 * horizon;
}

/* The b0-equivalent samples of x: the segments up to x at their rates (the probe's: rate). */
static double equiv_samples(const scv_carry_run *r, double x, double rate)
{
    double u = 0;
    for (size_t k = 0; k < r->nseg; k++) {
        double end = fmin(x, r->seg_s1[k]);
        if (end > r->seg_s0[k]) u += (end - r->seg_s0[k]) * (isfinite(r->seg_rate[k]) ? r->seg_rate[k] : rate);
    }
    return r->nseg ? u : x;
}

/* The reading at rate `rate`: f0 fitted to b0's evaluations placed for it (u0: scratch), the
 * probe's level d and the squared residuals of the probe (sse_b) and of both (sse). Non-zero
 * where f0 cannot be fitted. */
static int rate_fit(const scv_carry_run *r, double rate, double *u0, scv_curve *f0, double *d, double *sse_b,
                    double *sse)
{
    for (size_t i = 0; i < r->n0; i++) u0[i] = equiv_samples(r, r->x0[i], rate);
    if (scv_curve_fit(r->metric, u0, r->y0, r->n0, NULL, f0, NULL) != SCV_OK) return -1;
    double sum = 0, sq = 0, n = (double)r->nb;
    for (size_t i = 0; i < r->nb; i++) {
        double e = r->yb[i] - scv_curve_eval(f0, equiv_samples(r, r->xb[i], rate));
        sum += e, sq += e * e;
    }
    *d = sum / n, *sse_b = fmax(0, sq - n * (*d) * (*d));
    *sse = *sse_b + f0->rmse * f0->rmse * (double)r->n0;
    return isfinite(*sse) ? 0 : -1;
}

int scv_carry_shift(const scv_carry_run *r, const scv_carry_policy *pol, double coverage, scv_carry *out)
{
    memset(out, 0, sizeof *out);
    out->b_noise = out->gamma = out->q_lo = out->q_hi = out->med_abs = out->gamma_scratch = NAN;
    if (r->n0 < (size_t)pol->run_min_evals + 2 || r->nb < (size_t)pol->run_min_evals ||
        !(r->b > 0 && r->b0 > 0 && r->b != r->b0) || !(r->horizon > 0) || !(r->start >= 0) ||
        !(pol->run_rate_hi > pol->run_rate_lo && pol->run_rate_lo > 0))
        return SCV_ENOTFOUND;
    for (size_t i = 0; i < r->nb; i++)
        if (!(r->xb[i] > r->start) || !isfinite(r->yb[i])) return SCV_ENOTFOUND;
    enum { PER_OCTAVE = 16, MAX_GRID = 161 };
    int ng = (int)(PER_OCTAVE * log2(pol->run_rate_hi / pol->run_rate_lo)) + 1;
    if (ng > MAX_GRID) ng = MAX_GRID;
    double rate[MAX_GRID], d[MAX_GRID], sse_b[MAX_GRID], sse[MAX_GRID];
    scv_curve *f0 = malloc(sizeof *f0 * (size_t)ng);
    double *u0 = malloc(sizeof(double) * r->n0);
    int best = -1, rc = SCV_ENOTFOUND;
    if (!f0 || !u0) goto out;
    for (int k = 0; k < ng; k++) {
        rate[k] = pol->run_rate_lo * pow(2, (double)k / PER_OCTAVE);
        if (rate_fit(r, rate[k], u0, &f0[k], &d[k], &sse_b[k], &sse[k])) sse[k] = NAN;
        else if (best < 0 || sse[k] < sse[best]) best = k;
    }
    if (best <= 0 || best == ng - 1) goto out; /* the grid's edge: the probe does not tell */
    double n = (double)(r->n0 + r->nb), nb = (double)r->nb, z = normal_q((1 + coverage) / 2);
    double cut = sse[best] * (1 + z * z / fmax(1, n - 5)), lb = log(r->b / r->b0), lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < ng; k++) {
        if (!isfinite(sse[k]) || (!(sse[k] <= cut) && abs(k - best) > 1))
            continue; /* (r*'s neighbours, fitted: the grid's resolution) */
        double up = equiv_samples(r, r->start, rate[k]), s0 = crossing_capped(&f0[k], r->target, r->horizon) - up;
        double se = sqrt(sse_b[k] / fmax(1, nb - 2) / nb + f0[k].rmse * f0[k].rmse / (double)r->n0);
        for (int m = -1; m <= 1; m++) {
            double sx = crossing_capped(&f0[k], r->target - (d[k] + m * z * se), r->horizon);
            double sb = fmax(sx - up, 1) / rate[k];
            double g = s0 > 0 ? fmin(pol->run_gamma_hi, fmax(pol->run_gamma_lo, log(sb / s0) / lb)) : NAN;
            if (!isfinite(g)) continue;
            if (k == best && m == 0) out->gamma = g;
            lo = fmin(lo, g), hi = fmax(hi, g);
        }
    }
    if (!isfinite(out->gamma) || (crossing_capped(&f0[best], r->target, r->horizon) > r->horizon && lo == 0 && hi == 0))
        goto out; /* f0 reached the target before the probe, or neither reaches: nothing told */
    out->q_lo = fmin(lo - out->gamma, -pol->run_gamma_step);
    out->q_hi = fmax(hi - out->gamma, pol->run_gamma_step);
    out->run_b0 = r->b0, out->run_b = r->b, out->run_rate = rate[best], out->run_level = d[best];
    double c0 = scv_curve_crossing(&f0[best], r->target);
    out->run_cross0 = c0 > 0 && c0 <= r->horizon ? c0 : NAN;
    /* from the start: b at the read's rate and level all along against b0's curve (none
     * where either crossing lies past the horizon: the caps would make it -ln r / ln(b/b0)) */
    double cd = scv_curve_crossing(&f0[best], r->target - d[best]);
    if (isfinite(out->run_cross0) && cd > 0 && cd <= r->horizon)
        out->gamma_scratch =
            fmin(pol->run_gamma_hi, fmax(pol->run_gamma_lo, log(cd / rate[best] / out->run_cross0) / lb));
    out->n_errors = r->nb;
    rc = SCV_OK;
out:
    if (rc) out->gamma = NAN;
    free(f0);
    free(u0);
    return rc;
}

int scv_carry_for_job(const scv_lcurve_set *set, const scv_job_info *job, scv_metric metric, double coverage,
                      scv_carry *out)
{
    char key[64];
    scv_carry_job cj = {.lr = job->lr, .base_batch = job->base_batch, .lr_scaling = job->lr_scaling};
    out->b_noise = out->gamma = out->q_lo = out->q_hi = NAN;
    if (!(job->lr > 0)) return 0;
    scv_calib_key(job->model, job->dataset, key, sizeof key);
    if (scv_carry_learn(set, key, &cj, metric, NULL, coverage, out) == SCV_OK) return 1;
    if (scv_lr_scaling_carries(job->lr_scaling))
        return scv_carry_learn_measured(set, key, &cj, metric, NULL, coverage, out) == SCV_OK ? 3 : 0;
    return scv_carry_learn_rule(set, key, &cj, metric, NULL, coverage, out) == SCV_OK ? 2 : 0;
}

scv_carry_err scv_carry_err_of(const scv_carry *c)
{
    return (scv_carry_err){c->q_lo, c->q_hi, isfinite(c->gamma) || c->per_log};
}
