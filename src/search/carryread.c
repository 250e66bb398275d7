/*
 * carryread.c - the inputs of the target's estimate that do not come from the run's own curve:
 * the band's calibration (the corpus's curves and the store's finished runs), the universal
 * prior over other jobs' models, and the batch carry-over, as one strategy with one order:
 * under a fixed rule the noise floor's (floor.c: this run's curve or a stored run's, where it
 * tells), else the run's own read from a probe (or a stored run's probe), else the corpus's
 * curves of the job, else the measured noise scale, else the learning-rate rule's exponent
 * from other jobs.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The stored runs whose curves calibrate the band: the newest finished ones. */
#define SCV_CALIB_STORED_RUNS 64

/* The batch carry-over of this job under its learning-rate rule, learnt from the corpus's
 * curves of it at several batches (carry.c), stated in a note; none: the measured noise
 * scale carries (carry_scale). */
static void learn_carry(loop *l, const scv_lcurve_set *set)
{
    int how = scv_carry_for_job(set, &l->job, loop_metric_of(l->p), l->pol->band_coverage, &l->in.carry);
    if (how == 2)
        loop_note(l, SCV_EV_NOTE, SCV_NOTE_CARRY_RULE, "batch carry-over: the corpus holds no curves of this job at several batches; "
             "samples to the target carry by the measured noise scale (until one is measured, as (B/b0)^%.2f, its "
             "learning-rate rule's exponent learnt from %d other jobs' curves); the band of the carry is that "
             "exponent's spread over the jobs, each left out: %.0f%% band %+.2f..%+.2f, x%.2f-x%.2f at 4x the "
             "batch", l->in.carry.gamma, l->in.carry.n_jobs, 100 * l->pol->band_coverage, l->in.carry.q_lo, l->in.carry.q_hi,
             pow(4, l->in.carry.q_lo), pow(4, l->in.carry.q_hi));
    else if (how == 3)
        loop_note(
            l, SCV_EV_NOTE, SCV_NOTE_CARRY_MEASURED,
            "batch carry-over: under AdaScale the samples to the target carry "
            "by the noise-scale law, (B + Bn) / (b0 + Bn), with the noise scale Bn the run measures; its error, learnt "
            "from %d other jobs' AdaScale curves each carried by the noise scale its own run measured: %.0f%% band "
            "x%.2f-x%.2f at 4x the batch",
            l->in.carry.n_jobs, 100 * l->pol->band_coverage, pow(4, l->in.carry.q_lo), pow(4, l->in.carry.q_hi));
    else if (how == 1)
        loop_note(l, SCV_EV_NOTE, SCV_NOTE_CARRY_CORPUS, "batch carry-over learnt from the corpus's curves of this job at %d batches under its "
             "learning-rate rule: noise scale %.0f; carried to another batch it erred %.0f%% (median, each batch left "
             "out), %.0f%% band x%.2f-x%.2f", l->in.carry.n_batches, l->in.carry.b_noise, 100 * (exp(l->in.carry.med_abs) - 1),
             100 * l->pol->band_coverage, exp(l->in.carry.q_lo), exp(l->in.carry.q_hi));
}

/* The band's calibration: the corpus's curves (p->curve_corpus, default the shipped
 * data/curves.jsonl, "none": none) and the finished runs of the store, each a labelled
 * example of prediction against outcome (scv_calib_add). A corpus that cannot be read is
 * an error: the run would otherwise state bands calibrated on nothing. */
int loop_load_calib(loop *l, scv_err *err)
{
    const scv_run_params *p = l->p;
    char buf[4096];
    const char *path = p->curve_corpus ? p->curve_corpus : scv_data_file("curves.jsonl", buf, sizeof buf);
    scv_calib_policy cp = scv_calib_policy_default();
    cp.coverage = l->pol->band_coverage;
    cp.window = l->pol->target_window; /* "reached" as this run's rule says it */
    int rc;
    l->in.calib.pol = cp; /* (the build sets it too) */
    l->in.carry.b_noise = l->in.carry.gamma = l->in.carry.q_lo = l->in.carry.q_hi = NAN;
    if (strcmp(path, "none")) {
        scv_lcurve_set set = {0};
        if ((rc = scv_lcurves_load(path, &set, err))) return rc;
        /* other networks' examples (kind XPRIOR) only for a network the corpus has too few
         * curves of: a run of any other never reads them, and they double the build */
        size_t own = 0;
        for (size_t i = 0; i < set.n; i++)
            own += !strcmp(set.c[i].model, l->job.model) && !strcmp(set.c[i].dataset, l->job.dataset);
        cp.prior_cross = own < SCV_CALIB_MIN_MEMBERS;
        rc = scv_calib_build(&set, &cp, &l->in.calib, err);
        if (!rc) learn_carry(l, &set), loop_corpus_seeds(l, &set);
        scv_lcurve_set_free(&set);
        if (rc) return rc;
    }
    size_t corpus[2] = {l->in.calib.n_curves[0], l->in.calib.n_curves[1]}, n_runs = 0;
    scv_run_summary *runs;
    size_t n;
    long long total;
    scv_err se = {0};
    if ((rc = scv_store_runs_page(p->store, NULL, "done", SCV_CALIB_STORED_RUNS, 0, &runs, &n, &total, &se)) &&
        rc != SCV_ENOTFOUND)
        return scv_err_set(err, rc, "%s", se.msg);
    if (!rc) {
        for (size_t i = 0; i < n; i++) {
            scv_run_step *steps;
            size_t n_steps, n_ev;
            scv_eval_sample *ev = NULL;
            progress g = {0};
            if (runs[i].id == l->r->run_id) continue;
            if ((rc = scv_store_load_steps(p->store, runs[i].id, &steps, &n_steps, &se))) {
                if (rc == SCV_ENOTFOUND) continue;
                free(runs);
                return scv_err_set(err, rc, "%s", se.msg);
            }
            if (loop_stored_curve(l, runs[i].id, steps, n_steps, &g, &ev, &n_ev, NULL) == SCV_OK && g.nev) {
                double *x = malloc(sizeof(double) * g.nev), *y = malloc(sizeof(double) * g.nev);
                if (x && y) {
                    for (size_t k = 0; k < g.nev; k++) x[k] = g.ev[k].samples, y[k] = g.ev[k].y;
                    size_t before = l->in.calib.n_examples[loop_metric_of(p) == SCV_METRIC_LOSS];
                    scv_calib_add(&l->in.calib, loop_metric_of(p), x, y, g.nev, l->job.n_train, NULL, -1, &cp, NULL);
                    n_runs += l->in.calib.n_examples[loop_metric_of(p) == SCV_METRIC_LOSS] > before;
                }
                free(x), free(y);
            }
            free(ev), free(steps);
            progress_free(&g);
        }
        free(runs);
    }
    int m = loop_metric_of(p) == SCV_METRIC_LOSS;
    loop_note(l, SCV_EV_NOTE, SCV_NOTE_CALIBRATION, "the target's band is calibrated on %zu examples: %zu curves of %s and %zu finished runs of "
         "the store", l->in.calib.n_examples[m], corpus[m], strcmp(path, "none") ? path : "no corpus", n_runs);
    return SCV_OK;
}

/* The universal prior: the median of each parallel-model parameter over the stored runs of
 * other jobs on this VM type (none stored: n_prior = 0). */
int loop_load_prior(loop *l, scv_err *err)
{
    scv_perf_model *m = NULL;
    size_t n = 0;
    l->in.n_prior = 0;
    int rc = scv_store_perf_models(l->p->store, l->p->vm_type, l->p->job_key, &m, &n, err);
    if (rc) return rc == SCV_ENOTFOUND ? SCV_OK : rc;
    if (!n) {
        free(m);
        return SCV_OK;
    }
    double *v = malloc(sizeof(double) * n);
    if (!v) {
        free(m);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    double *fields[] = {&l->in.prior.c0, &l->in.prior.c1, &l->in.prior.alpha, &l->in.prior.beta};
    for (int f = 0; f < 4; f++) {
        for (size_t i = 0; i < n; i++) v[i] = f == 0 ? m[i].c0 : f == 1 ? m[i].c1 : f == 2 ? m[i].alpha : m[i].beta;
        *fields[f] = scv_median(v, n);
    }
    l->in.prior.topology = l->p->topology;
    l->in.n_prior = (int)n;
    free(v);
    free(m);
    return SCV_OK;
}

int loop_store_read(loop *l, int rc, const scv_err *e)
{
    if (rc && rc != SCV_ENOTFOUND && !l->store_err.code)
        scv_err_set(&l->store_err, rc, "%s", e && e->msg[0] ? e->msg : scv_strerror(rc));
    return rc == SCV_OK;
}

/* The gradient noise scale of the measurements so far as the carry's law takes it
 * (scv_carry_law_noise: times the factor learnt for a rule that carries by it; NaN without one). */
static double noise_scale(const loop *l)
{
    scv_stat_model sm;
    if (scv_stat_fit(SCV_STAT_GNS, l->cs, l->ncs, l->job.n_train, 1, l->p->batches[0], &sm, NULL)) return NAN;
    return sm.b_simple > 0 ? scv_carry_law_noise(&l->in.carry, sm.b_simple) : NAN;
}

/* Where a curve reaches a value v of the target's metric, as the run forecasts its target
 * (progress_predict: the calibrated median, 2 horizons where it is out of reach): the noise
 * floor's crossings beyond the evaluations. */
typedef struct floor_ctx {
    const loop *l;
    const progress *g;
    scv_carry_law law;
} floor_ctx;

static double floor_cross(void *ctx, double v)
{
    const floor_ctx *c = ctx;
    const loop *l = c->l;
    char key[64];
    progress_pred pr;
    double h = loop_horizon(l);
    progress_predict(c->g, loop_metric_of(l->p), v, l->p->batches[0], c->law, l->pol->seed, &l->in.calib,
                     l->job.n_train, scv_calib_key(l->job.model, l->job.dataset, key, sizeof key), h, &pr);
    return pr.ok && pr.reachable && pr.x_star <= h ? pr.x_star : 2 * h;
}

/* The accuracy's change per unit of training loss over every evaluation at b0 (least squares;
 * NaN: fewer than min_evals, or no fall). Over the last 8 only, a curve at its plateau spans
 * too little loss for its accuracy's noise: the MLP's stored first run of bench decide read
 * +0.017 there (no floor then), -0.133 over its 25. On bench floor's dense curves read from
 * their first 1, 2 and 3 epochs (bench/floor_eval.c, 3 jobs x 16 targets each), the floor
 * told for 142 of 144 targets (112 over the last 8), the exponent's median error by job
 * 0.25-0.32 (0.28-0.54), its sign right for 98 of 111 (100). */
static double accuracy_per_loss(const progress *g, int b0, size_t want)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0, n = 0;
    for (size_t i = g->nev; i-- > 0;)
        if (progress_batch_at(g, g->ev[i].samples) == b0 && isfinite(g->ev[i].loss) && isfinite(g->ev[i].y)) {
            double x = g->ev[i].loss, y = g->ev[i].y;
            sx += x, sy += y, sxx += x * x, sxy += x * y, n++;
        }
    if (n < want) return NAN;
    double var = sxx - sx * sx / n;
    return var > 0 ? (sxy - sx * sy / n) / var : NAN;
}

/* The carry from the noise floor (floor.c) of a curve g (this run's, or a stored run's of the
 * job) and the measurements cs (n) that came with it, where the job runs under a fixed rule
 * with a constant schedule and the corpus holds no curves of it at several batches: g's
 * evaluations at the reference batch b0 and at b, the batch of the space farthest from b0
 * (each at its reference samples under the floor's own law, b's moved onto b0's curve by its
 * level), an accuracy's change per unit of loss at b0, and tr(Sigma) from the latest of the
 * measurements with K >= 2 (stored: g is a stored run's). */
static int floor_of(const loop *l, const progress *g, const scv_config_stats *cs, size_t ncs, int stored,
                    scv_carry *out)
{
    const scv_run_params *p = l->p;
    const scv_floor_policy fp = scv_floor_policy_default();
    out->gamma = NAN;
    if (isnan(l->in.floor_momentum) || isfinite(l->in.carry.b_noise) || p->n_batches < 2 || !g->nev)
        return SCV_ENOTFOUND;
    /* the trace of the latest measurement that has one (it falls as training goes on: LeNet's
     * from 87 over its first third of an epoch to 57 over its fourth and fifth) */
    double tr = NAN, at = -INFINITY, b0 = p->batches[0], b = b0;
    for (size_t i = 0; i < ncs; i++) {
        double t = scv_gns_trace(cs[i].workers, cs[i].batch, cs[i].g_local, cs[i].g_global);
        if (t > 0 && cs[i].epoch_progress >= at) tr = t, at = cs[i].epoch_progress;
    }
    for (size_t i = 1; i < p->n_batches; i++)
        if (fabs(log(p->batches[i] / b0)) > fabs(log(b / b0))) b = p->batches[i];
    if (!(tr > 0) || b == b0) return SCV_ENOTFOUND;
    double *x = malloc(sizeof(double) * 2 * g->nev), *y = x ? x + g->nev : NULL;
    if (!x) return SCV_ENOMEM;
    scv_floor_in in = {.metric = loop_metric_of(p),
                       .x = x,
                       .y = y,
                       .trace = tr,
                       .lr = l->job.lr,
                       .momentum = l->in.floor_momentum,
                       .base_batch = l->job.base_batch,
                       .b0 = b0,
                       .b = b,
                       .lr_scaling = l->job.lr_scaling,
                       .target = loop_target_value(p),
                       .horizon = loop_horizon(l),
                       .cross = floor_cross};
    in.per_loss = in.metric == SCV_METRIC_LOSS ? 1 : accuracy_per_loss(g, (int)b0, (size_t)fp.min_evals);
    /* the curve placed by the floor's own law, no other carry (they would place b0's
     * evaluations): a sample at another batch B counts as s(B) = (B / b0)^-(1 - e) of b0's (e
     * the rule's exponent of lr in B), and an evaluation at b sits d per_loss off b0's curve */
    double e = log(scv_lr_scale_factor(l->job.lr_scaling, 2 * b0, b0)) / log(2);
    scv_carry_law law = {.b_noise = NAN,
                         .gamma = 1 - e,
                         .run_b0 = b0,
                         .run_b = b,
                         .run_rate = pow(b / b0, e - 1),
                         .run_level = (scv_floor_level(&in, b) - scv_floor_level(&in, b0)) * in.per_loss,
                         .run_cross0 = NAN,
                         .run_until = INFINITY};
    floor_ctx fc = {l, g, law};
    size_t n = 0; /* (the evaluations at b too, moved onto b0's curve by the law) */
    for (size_t i = 0; i < g->nev; i++) {
        int at = progress_batch_at(g, g->ev[i].samples);
        if (at == (int)b0 || at == (int)b)
            x[n] = progress_ref_samples(g, g->ev[i].samples, (int)b0, law),
            y[n++] = g->ev[i].y - (at == (int)b ? law.run_level : 0);
    }
    in.n = n, in.ctx = &fc;
    int rc = isfinite(law.run_level) ? scv_carry_floor(&in, &fp, out) : SCV_ENOTFOUND;
    /* read ahead of the evaluations (the forecast's crossings: a first plan's, after a third
     * of an epoch) or on a stored run's curve (whose run left b0 after its warm-up, as a
     * second run reads it), its band spans the carry the run holds otherwise too (bench
     * decide: the floor's band alone held 23-30 of 72 second-run truths, the rule's 49) */
    const scv_carry *pr = &l->in.carry;
    if (!rc && (out->read_ahead || stored) && isfinite(pr->gamma) && isfinite(pr->q_lo) && isfinite(pr->q_hi)) {
        out->q_lo = fmin(out->q_lo, pr->gamma + pr->q_lo - out->gamma);
        out->q_hi = fmax(out->q_hi, pr->gamma + pr->q_hi - out->gamma);
    }
    free(x);
    return rc;
}

void loop_floor_init(loop *l)
{
    char recipe[512];
    const char *m = NULL, *decay = NULL;
    l->in.floor.gamma = l->in.floor_stored.gamma = l->in.floor_momentum = NAN;
    if (scv_job_recipe(l->p->job_json, recipe, sizeof recipe) == SCV_OK)
        m = strstr(recipe, "momentum="), decay = strstr(recipe, "lr-decay=");
    if (m && decay && !strncmp(decay + strlen("lr-decay="), "none", 4))
        l->in.floor_momentum = strtod(m + strlen("momentum="), NULL);
}

/* The noise floor's carry in force: read on this run's own curve or on the newest stored run's
 * of the job (loop_learn_stored_carry), whichever holds more evaluations (a second run's first
 * plans read the first run's whole curve, not their own first evaluations); refreshed before
 * each prediction of the target and each plan (gamma NaN: none). */
void loop_refresh_floor(loop *l)
{
    const scv_carry *st = &l->in.floor_stored;
    if (floor_of(l, &l->curve.prog, l->cs, l->ncs, 0, &l->in.floor) != SCV_OK ||
        (isfinite(st->gamma) && st->n_evals > l->in.floor.n_evals))
        l->in.floor = *st;
}

/* The carry whose band the estimate takes: the noise floor's where it tells, else the run's
 * read or the corpus's (l->in.carry). */
const scv_carry *loop_carry_in_force(const loop *l)
{
    return isfinite(l->in.floor.gamma) ? &l->in.floor : &l->in.carry;
}

scv_carry_law loop_carry_law(const loop *l)
{
    const scv_carry *c = &l->in.carry;
    const scv_carry *f = &l->in.floor;
    if (isfinite(f->gamma)) /* every sample at b at the rate s, each evaluation there d off b0's curve */
        return (scv_carry_law){.b_noise = NAN,
                               .gamma = f->gamma,
                               .run_b0 = f->run_b0,
                               .run_b = f->run_b,
                               .run_rate = f->run_rate,
                               .run_level = f->run_level,
                               .run_cross0 = NAN,
                               .run_until = INFINITY};
    if (l->probe.carry_run) return loop_read_law(l, l->probe.carry_from ? 0 : l->probe.carry_until);
    if (isfinite(c->b_noise)) return (scv_carry_law){.b_noise = c->b_noise, .gamma = NAN};
    double bn = noise_scale(l);
    return isfinite(bn) ? (scv_carry_law){.b_noise = bn, .gamma = NAN}
                        : (scv_carry_law){.b_noise = NAN, .gamma = c->gamma};
}

/* The law a stored run's samples carry by: loop_carry_law's order, where a probe's read
 * counts the samples of the run that made it as measured, and the stored run's own noise
 * scale comes before this run's; none: samples count the same at any batch. */
scv_carry_law loop_stored_carry_law(loop *l, long long run)
{
    scv_carry_law law = isfinite(l->in.floor.gamma) ? loop_carry_law(l)
                        : !l->probe.carry_run       ? (scv_carry_law){.b_noise = l->in.carry.b_noise, .gamma = NAN}
                                                    : loop_read_law(l, l->probe.carry_from == run ? INFINITY : 0);
    if (!scv_carry_law_known(law)) law.b_noise = loop_stored_noise_scale(l, run);
    if (!scv_carry_law_known(law)) law = loop_carry_law(l);
    if (!scv_carry_law_known(law)) law.b_noise = INFINITY;
    return law;
}

/* The run's own read as a law: the exponent, and the read as measured for the samples the
 * read's run trained up to `until` (0: none; a stored run's read carries this run by its
 * exponent alone, and counts that stored run's own samples, until INFINITY). */
scv_carry_law loop_read_law(const loop *l, double until)
{
    const scv_carry *c = &l->in.carry;
    scv_carry_law law = {.b_noise = NAN, .gamma = c->gamma};
    if (until > 0)
        law.run_b0 = c->run_b0, law.run_b = c->run_b, law.run_rate = c->run_rate, law.run_level = c->run_level,
        law.run_cross0 = c->run_cross0, law.run_until = until;
    return law;
}

/* Reference samples of the run's epoch bound: the horizon of the target's forecast. */
double loop_horizon(const loop *l)
{
    return l->p->max_epochs * l->job.n_train;
}

/* The carry read from a curve g (this run's, or a stored run's of the job) at batch b (a
 * probe's) against the curve of its evaluations at the batch it holds most of, b0
 * (scv_carry_shift), once that batch's curve has policy.run_min_evals evaluations after the
 * probe as well: the probe sits between them (compared with an extrapolation of the
 * warm-up's curve alone, the MLP's B=256 looked 0.07 worse in loss, where it is 0.04
 * better). 1: read into *c (*b0, *n0, *nb: the batch and the evaluations read); 0: not yet;
 * -1: the curve does not tell. */
static int carry_from_curve(const loop *l, const progress *g, int b, scv_carry *c, int *b0_out, size_t *n0_out,
                            size_t *nb_out)
{
    const scv_carry_policy cp = scv_carry_policy_default();
    /* each evaluation's batch; the curve compared against: the batch other than b with most */
    int *eb = calloc(g->nev + 1, sizeof *eb), b0 = 0, learnt = -1;
    size_t *count = calloc(g->nev + 1, sizeof *count);
    double *x0 = malloc(sizeof(double) * (4 * (g->nev + 1) + 3 * (g->nseg + 1)));
    if (!eb || !count || !x0) goto out;
    size_t best = 0;
    for (size_t i = 0; i < g->nev; i++) {
        size_t j = 0;
        eb[i] = progress_batch_at(g, g->ev[i].samples);
        while (j < i && eb[j] != eb[i]) j++; /* count[j]: the evaluations at eb[j], its first */
        if (eb[i] && eb[i] != b && ++count[j] > best) best = count[j], b0 = eb[i];
    }
    double *y0 = x0 + g->nev + 1, *xb = y0 + g->nev + 1, *yb = xb + g->nev + 1;
    size_t n0 = 0, nb = 0, after = 0;
    /* the probe: the last segment at b with policy.run_min_evals evaluations at b0 after it (a
     * search's before it is not read, nor a later stretch at b after a switch); the segments'
     * rates relative to b0: at b the one read, at another batch the carry in force */
    double start = NAN, end = NAN, *s0 = yb + g->nev + 1, *s1 = s0 + g->nseg + 1, *rate = s1 + g->nseg + 1;
    scv_carry_law law = loop_carry_law(l);
    for (size_t k = 0; k < g->nseg; k++) {
        int sb = g->seg[k].batch;
        size_t later = 0;
        for (size_t i = 0; sb == b && i < g->nev; i++) later += eb[i] == b0 && g->ev[i].samples > g->seg[k].s1;
        if (sb == b && later >= (size_t)cp.run_min_evals) start = g->seg[k].s0, end = g->seg[k].s1, after = later;
        s0[k] = g->seg[k].s0, s1[k] = g->seg[k].s1;
        double f = sb == b0 ? 1 : 1 / scv_carry_samples(law, 1, b0, sb);
        rate[k] = sb == b ? NAN : isfinite(f) && f > 0 ? f : 1;
    }
    for (size_t i = 0; i < g->nev; i++) {
        if (eb[i] == b0) x0[n0] = g->ev[i].samples, y0[n0++] = g->ev[i].y;
        else if (g->ev[i].samples > start && g->ev[i].samples <= end) xb[nb] = g->ev[i].samples, yb[nb++] = g->ev[i].y;
    }
    if (!b0 || !isfinite(start) || after < (size_t)cp.run_min_evals) {
        learnt = 0;
        goto out;
    }
    scv_carry_run run = {.metric = loop_metric_of(l->p), .x0 = x0, .y0 = y0, .n0 = n0, .xb = xb, .yb = yb, .nb = nb,
                         .seg_s0 = s0, .seg_s1 = s1, .seg_rate = rate, .nseg = g->nseg, .b0 = b0, .b = b,
                         .start = start, .target = loop_target_value(l->p), .horizon = loop_horizon(l)};
    if (scv_carry_shift(&run, &cp, l->pol->band_coverage, c) == SCV_OK) learnt = 1, *b0_out = b0, *n0_out = n0, *nb_out = nb;
out:
    free(eb);
    free(count);
    free(x0);
    return learnt;
}

/* Takes the carry read from a curve (carry_from_curve) for the rest of the run, in place of
 * the corpus's (and its band), and says so; `from`: whose curve. */
static void take_run_carry(loop *l, const scv_carry *c, int b, int b0, size_t n0, size_t nb, long long run,
                           const char *from)
{
    l->in.carry = *c, l->probe.carry_run = 1, l->probe.carry_from = run, l->probe.carry_until = l->samples;
    loop_note(l, SCV_EV_NOTE, SCV_NOTE_CARRY_READ, "batch carry-over learnt from %s (%zu evaluations at B=%d read against the curve of %zu at "
         "B=%d: its progress at %.2fx the rate per sample, %+.4g from it): samples to the target carry as (B/b0)^%.2f, "
         "%.0f%% band of the exponent %+.2f..%+.2f (x%.2f-x%.2f at 4x the batch)", from, nb, b, n0, b0, c->run_rate,
         c->run_level, c->gamma, 100 * l->pol->band_coverage, c->q_lo, c->q_hi, pow(4, c->q_lo), pow(4, c->q_hi));
}

/* After a probe, the carry learnt from this run's own curve (carry_from_curve) once it tells:
 * tried at each evaluation and segment's end, whichever reads it first (the live forecast
 * waits for it); that it does not tell is said at a segment's end (`final`: the segment's
 * evaluations all in); a read calls for a re-plan at the segment's end (carry_replan). */
void loop_try_run_carry(loop *l, int final)
{
    if (!l->probe.probed_b) return;
    scv_carry c;
    int b0 = 0, b = l->probe.probed_b;
    size_t n0 = 0, nb = 0;
    int learnt = carry_from_curve(l, &l->curve.prog, b, &c, &b0, &n0, &nb);
    if (!learnt || (learnt < 0 && !final)) return;
    if (learnt > 0) take_run_carry(l, &c, b, b0, n0, nb, 0, "this run's own curve");
    else loop_note(l, SCV_EV_NOTE, SCV_NOTE_CARRY_UNREAD, "the run's curve at B=%d and around it does not tell the batch carry-over: it stays as "
              "it was", b);
    l->probe.probed_b = 0, l->probe.carry_replan = learnt > 0;
}

/* The gradient noise scale of a stored run's measurements (the latest of each
 * configuration, as noise_scale fits this run's and the law takes it; NaN without one). */
double loop_stored_noise_scale(loop *l, long long run)
{
    scv_config_stats *cs;
    size_t n, m = 0;
    scv_err se = {0};
    if (!loop_store_read(l, scv_store_run_measurements(l->p->store, run, &cs, &n, &se), &se)) return NAN;
    for (size_t i = 0; i < n; i++) { /* rows oldest first: a later one replaces an earlier */
        size_t j = 0;
        while (j < m && !(cs[j].workers == cs[i].workers && cs[j].batch == cs[i].batch)) j++;
        cs[j] = cs[i];
        if (j == m) m++;
    }
    scv_stat_model sm;
    int rc = m ? scv_stat_fit(SCV_STAT_GNS, cs, m, l->job.n_train, 1, l->p->batches[0], &sm, NULL) : SCV_EINVAL;
    free(cs);
    return !rc && sm.b_simple > 0 ? scv_carry_law_noise(&l->in.carry, sm.b_simple) : NAN;
}

/* A stored run's read, for a run that trains from its start: the exponent from the start
 * (gamma_scratch) in place of the probe's from its own point, its band widened to span the
 * probe's and, where the corpus's rule exponent is known (prior), the corpus's band too: a
 * probe reads the larger batch mid-run, and from the start its early progress differs
 * (bench decide: LeNet's loss read -0.46 from the probe, -0.33 from the start, where the
 * runs from the start measure +0.28). */
static void from_start(scv_carry *c, const scv_carry *prior)
{
    if (!isfinite(c->gamma_scratch)) return;
    double lo = fmin(c->gamma + c->q_lo, c->gamma_scratch), hi = fmax(c->gamma + c->q_hi, c->gamma_scratch);
    if (isfinite(prior->gamma) && isfinite(prior->q_lo) && isfinite(prior->q_hi))
        lo = fmin(lo, prior->gamma + prior->q_lo), hi = fmax(hi, prior->gamma + prior->q_hi);
    const double step = scv_carry_policy_default().run_gamma_step; /* the read's least half-width */
    c->gamma = c->gamma_scratch, c->q_lo = fmin(lo - c->gamma, -step), c->q_hi = fmax(hi - c->gamma, step);
}

/* The carry read from the newest stored run of the job (t: n, newest first) whose curve holds
 * a probe, a batch other than its warm-up's between two stretches at that one
 * (carry_from_curve, at this run's target): a second run plans with what the first measured
 * from its first plan on, and does not probe again. */
void loop_learn_stored_carry(loop *l, const scv_stored_target *t, size_t n)
{
    for (size_t i = 0; i < n && !l->probe.carry_run; i++) {
        scv_run_step *steps;
        size_t n_steps, n_ev;
        scv_eval_sample *ev = NULL;
        progress g = {0};
        scv_err se = {0};
        if (!loop_store_read(l, scv_store_load_steps(l->p->store, t[i].run, &steps, &n_steps, &se), &se)) continue;
        int rc = loop_stored_curve(l, t[i].run, steps, n_steps, &g, &ev, &n_ev, NULL);
        free(steps);
        scv_config_stats *cs;
        size_t ncs;
        if (!rc && !isfinite(l->in.floor_stored.gamma) &&
            loop_store_read(l, scv_store_run_measurements(l->p->store, t[i].run, &cs, &ncs, &se), &se)) {
            floor_of(l, &g, cs, ncs, 1, &l->in.floor_stored);
            free(cs);
        }
        for (size_t k = 1; !rc && k < g.nseg && !l->probe.carry_run; k++) {
            int b = g.seg[k].batch, seen = b == g.seg[0].batch;
            for (size_t j = 1; j < k; j++) seen |= g.seg[j].batch == b;
            scv_carry c;
            int b0 = 0;
            size_t n0 = 0, nb = 0;
            char from[64];
            snprintf(from, sizeof from, "stored run %lld's probe", t[i].run);
            if (!seen && carry_from_curve(l, &g, b, &c, &b0, &n0, &nb) > 0) {
                from_start(&c, &l->in.carry);
                take_run_carry(l, &c, b, b0, n0, nb, t[i].run, from);
            }
        }
        free(ev);
        progress_free(&g);
    }
}
