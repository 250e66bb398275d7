/*
 * floor_eval.c - the noise floor's batch carry-over (src/model/floor.c) against truths: pairs
 * of the trainer's metrics files of one job, one at the reference batch b0 and one at b, each
 * trained from the start at K >= 2 (the trace needs two workers). For each metric (test
 * accuracy, period-mean training loss) and targets at shares 0.3 0.5 0.7 0.85 of the way from
 * b0's smoothed value at its third evaluation to the least extreme best of the two curves, the
 * truth's exponent ln(E_b / E_b0) / ln(b / b0) (E: each curve's first crossing of the mean of 3
 * evaluations) beside what the run would carry by:
 *   floor   scv_carry_floor on b0's whole curve (its crossings read on the evaluations: the law's
 *           own error, not the forecast's) with tr(Sigma) from b0's first `--trace-epochs`
 *           epochs (as a run measures it in its warm-up and search), its 80% band
 *   law     the noise-scale law with the B_simple measured there, (b + Bn) / (b0 + Bn)
 *   rule    the rule's exponent learnt from the corpus's other jobs (scv_carry_learn_rule)
 * and the summary: median |error| of the exponent, the share of the sign right where the truth's
 * |exponent| > 0.1, the floor band's coverage.
 * --prefix-epochs P: the read a run has at its first plan instead: b0's evaluations of its first
 * P epochs (and tr(Sigma) over them), its crossings beyond them by the run's calibrated forecast
 * (scv_calib_forecast on the corpus less the job's model and data, as a run of a job the corpus
 * does not hold has it; its crossing is printed beside b0's truth).
 * The last line: every target as a run carries (the floor where it tells, else the rule), and
 * with the floor only where it read no crossing ahead of the evaluations.
 * Diagnoses in the environment (not what a run has): FLOOR_EVAL_SLOPE_N=N (the accuracy's
 * slope over the last N evaluations, not all), FLOOR_EVAL_SLOPE_EPOCHS=E (... and all of the last E
 * epochs'), FLOOR_EVAL_SLOPE_ALL=1 (over the whole curve's), FLOOR_EVAL_TRACE_FROM=E
 * (tr(Sigma) from epoch E on), FLOOR_EVAL_RAW=1 (the forecast's raw crossing, not clamped
 * into its band), FLOOR_EVAL_DEBUG=1 (each forecast on stderr), FLOOR_EVAL_RATE_EPOCHS=P (the
 * floor's rate per sample measured on b's first P epochs from its start against b0's, in place
 * of the rule's: what a short run at b from the initial weights would measure; each pair's
 * rate is printed last), FLOOR_EVAL_PHASE=full|1 (whole curves: the "law" column replaced by the floor's exponent with
 * b0's crossings read as the target rule reads them, the mean of 3 evaluations, at the floor's
 * rate and level; 1: the level phased in by where the target lies between b0's first smoothed
 * value and its best).
 *
 *   cc -std=c11 -O2 -Iinclude -Isrc bench/floor_eval.c build/libscv.a -lcjson -lsqlite3 -lm -o build/floor_eval
 *   build/floor_eval --lr 0.05 --rule sqrt --base-batch 64 [--momentum 0.9] [--corpus data/curves.jsonl] \
 *       [--trace-epochs 0.5] [--prefix-epochs P] NAME B0.jsonl B.jsonl [NAME B0.jsonl B.jsonl ...]
 */
#include "scv.h"
#include "model/model.h"
#include "io/io.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_EV = 4096, W = 3 };

typedef struct run {
    char model[64], dataset[256];
    int batch, workers;
    double n_train, trace, b_simple;
    size_t n;
    double x[MAX_EV], acc[MAX_EV], loss[MAX_EV];
} run;

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* A metrics file: its job line, periodic evaluations (x: samples seen), and tr(Sigma), B_simple
 * over the iterations of its first trace_epochs epochs. */
static int load(const char *path, double trace_epochs, run *r)
{
    FILE *f = fopen(path, "r");
    if (!f) return fprintf(stderr, "floor_eval: %s: cannot open\n", path), -1;
    static char line[1 << 16];
    double gl = 0, gg = 0, ni = 0, seen = 0;
    memset(r, 0, sizeof *r);
    while (fgets(line, sizeof line, f)) {
        cJSON *o = cJSON_Parse(line);
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "type");
        if (cJSON_IsString(t) && !strcmp(t->valuestring, "job")) {
            const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "model"),
                        *d = cJSON_GetObjectItemCaseSensitive(o, "dataset");
            snprintf(r->model, sizeof r->model, "%s", cJSON_IsString(m) ? m->valuestring : "?");
            snprintf(r->dataset, sizeof r->dataset, "%s", cJSON_IsString(d) ? d->valuestring : "?");
            r->batch = (int)num(o, "batch"), r->workers = (int)num(o, "workers"), r->n_train = num(o, "n_train");
        } else if (cJSON_IsString(t) && !strcmp(t->valuestring, "iter")) {
            seen = num(o, "samples_seen");
            double a = num(o, "grad_sqnorm_local_mean"), b = num(o, "grad_sqnorm_global");
            /* (FLOOR_EVAL_TRACE_FROM=E: over [E, E + trace_epochs] instead, a diagnosis of the
             * trace's fall: not what a run's warm-up has) */
            double from = getenv("FLOOR_EVAL_TRACE_FROM") ? atof(getenv("FLOOR_EVAL_TRACE_FROM")) * r->n_train : 0;
            if (num(o, "batch") == r->batch && seen > from && seen <= from + trace_epochs * r->n_train && a > 0 &&
                b > 0)
                gl += a, gg += b, ni++;
        } else if (cJSON_IsString(t) && !strcmp(t->valuestring, "eval") && r->n < MAX_EV) {
            const cJSON *role = cJSON_GetObjectItemCaseSensitive(o, "role");
            if (cJSON_IsString(role) && !strcmp(role->valuestring, "periodic"))
                r->x[r->n] = seen, r->acc[r->n] = num(o, "test_accuracy"), r->loss[r->n++] = num(o, "train_loss");
        }
        cJSON_Delete(o);
    }
    fclose(f);
    if (!(ni > 0) || r->workers < 2 || r->n < 6)
        return fprintf(stderr, "floor_eval: %s: needs K >= 2 with gradient statistics and 6 evaluations\n", path), -1;
    r->trace = scv_gns_trace(r->workers, r->batch, gl / ni, gg / ni);
    r->b_simple = scv_gns_b_simple(r->workers, r->batch, gl / ni, gg / ni);
    return 0;
}

/* The first crossing of v by the mean of W evaluations (sg +1: falling to it), NaN: none. */
static double cross(const double *x, const double *y, size_t n, double v, double sg)
{
    for (size_t i = W - 1; i < n; i++)
        if (sg * ((y[i] + y[i - 1] + y[i - 2]) / W - v) <= 0) return x[i];
    return NAN;
}

/* The best mean of W of a series (least for sg +1). */
static double best(const double *y, size_t n, double sg)
{
    double b = NAN;
    for (size_t i = W - 1; i < n; i++) {
        double m = (y[i] + y[i - 1] + y[i - 2]) / W;
        if (!(sg * (m - b) >= 0)) b = m;
    }
    return b;
}

/* The forecast's crossing of v from b0's prefix, as the loop's floor_cross: 2 horizon where
 * not reachable within the horizon. */
typedef struct fc_ctx {
    const scv_calib *cal;
    scv_metric metric;
    const double *x, *y;
    size_t n;
    double n_train, horizon;
    const char *key;
} fc_ctx;

static double forecast_cross(void *ctx, double v)
{
    const fc_ctx *c = ctx;
    scv_forecast f;
    scv_err e = {0};
    if (scv_calib_forecast(c->cal, NULL, c->metric, c->x, c->y, c->n, c->n_train, c->key, v, c->horizon, 1, &f, &e))
        return 2 * c->horizon;
    if (getenv("FLOOR_EVAL_RAW")) /* the raw crossing, not clamped into the band (a lab variant) */
        return f.x_hat <= c->horizon && f.x_hat > 0 ? fmax(f.x_hat, c->x[c->n - 1]) : 2 * c->horizon;
    double x = fmax(f.x_med, c->x[c->n - 1]);
    if (getenv("FLOOR_EVAL_DEBUG"))
        fprintf(stderr, "  forecast %.4g: kind %s x_hat %.2f med %.2f band %.2f-%.2f p %.2f (epochs; %zu evaluations)\n", v,
                scv_calib_kind_name(f.kind), f.x_hat / c->n_train, f.x_med / c->n_train, f.lo / c->n_train,
                f.hi / c->n_train, f.p_reach, c->n);
    int reach = f.calibrated ? f.p_reach >= 0.5 : x <= c->horizon;
    return reach && x <= c->horizon ? x : 2 * c->horizon;
}

/* The corpus less the curves of key (the job left out). */
static int calib_without(const scv_lcurve_set *set, const char *key, scv_calib *cal, scv_err *err)
{
    scv_lcurve_set in = {.c = malloc(sizeof *in.c * (set->n + 1))};
    if (!in.c) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    char k[64];
    for (size_t i = 0; i < set->n; i++)
        if (strcmp(scv_calib_key(set->c[i].model, set->c[i].dataset, k, sizeof k), key)) in.c[in.n++] = set->c[i];
    scv_calib_policy pol = scv_calib_policy_default();
    pol.prior_cross = 1;
    int rc = scv_calib_build(&in, &pol, cal, err);
    free(in.c);
    return rc;
}

static double median(double *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1], v[j - 1] = t;
        }
    return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : NAN;
}

/* (FLOOR_EVAL_RATE_EPOCHS=P, a lab variant: what a short run at b from its start would
 * measure) b's progress per sample against b0's over b's first P epochs: for each of b's
 * evaluations of the training loss there, the samples b0 took to the same loss (linearly
 * between its evaluations) over b's; their median. 0: none. */
static double rate_from_start(const run *r0, const run *rb, double P)
{
    double s[MAX_EV];
    size_t k = 0;
    for (size_t i = 0; i < rb->n && rb->x[i] <= P * rb->n_train; i++) {
        double v = rb->loss[i];
        for (size_t j = 1; j < r0->n; j++)
            if (r0->loss[j] <= v && r0->loss[j - 1] > v) {
                double u0 = r0->x[j - 1] +
                            (r0->x[j] - r0->x[j - 1]) * (r0->loss[j - 1] - v) / (r0->loss[j - 1] - r0->loss[j]);
                if (rb->x[i] > 0) s[k++] = u0 / rb->x[i];
                break;
            }
    }
    return k ? median(s, k) : 0;
}

/* (FLOOR_EVAL_PHASE, a lab variant on whole curves) the floor's exponent with b0's crossings
 * of A and A - d phi read as the target rule reads them (cross: the mean of W evaluations), at
 * the floor's rate s and level d; phi 1 (full), or the share of the way from b0's first
 * smoothed value to its best that A lies (0 far above the plateau, 1 at it). */
static double phased_exponent(const run *r0, const double *y0, double v, double d, double s, double lb, double sg)
{
    double first = (y0[0] + y0[1] + y0[2]) / W, bst = best(y0, r0->n, sg);
    double phi = !strcmp(getenv("FLOOR_EVAL_PHASE"), "full") ? 1 : fmin(1, fmax(0, (first - v) / (first - bst)));
    double u0 = cross(r0->x, y0, r0->n, v, sg), ud = cross(r0->x, y0, r0->n, v - d * phi, sg);
    return u0 > 0 && ud > 0 ? log(ud / s / u0) / lb : NAN;
}

int main(int argc, char **argv)
{
    double lr = NAN, mu = 0.9, trace_epochs = NAN, base = NAN, prefix = 0;
    const char *corpus = "data/curves.jsonl";
    scv_lr_scaling rule = SCV_LR_SCALE_SQRT;
    int a = 1;
    for (; a + 1 < argc && !strncmp(argv[a], "--", 2); a += 2) {
        if (!strcmp(argv[a], "--lr")) lr = atof(argv[a + 1]);
        else if (!strcmp(argv[a], "--momentum")) mu = atof(argv[a + 1]);
        else if (!strcmp(argv[a], "--base-batch")) base = atof(argv[a + 1]);
        else if (!strcmp(argv[a], "--trace-epochs")) trace_epochs = atof(argv[a + 1]);
        else if (!strcmp(argv[a], "--prefix-epochs")) prefix = atof(argv[a + 1]);
        else if (!strcmp(argv[a], "--corpus")) corpus = argv[a + 1];
        else if (!strcmp(argv[a], "--rule")) {
            if (scv_lr_scaling_from_name(argv[a + 1], &rule, NULL))
                return fprintf(stderr, "floor_eval: --rule %s?\n", argv[a + 1]), 2;
        } else return fprintf(stderr, "floor_eval: unknown option %s\n", argv[a]), 2;
    }
    if (!(lr > 0) || !(base > 0) || a >= argc || (argc - a) % 3)
        return fprintf(stderr, "usage: floor_eval --lr X --rule R --base-batch B0 [--momentum M] [--corpus F] "
                               "[--trace-epochs E] NAME B0.jsonl B.jsonl ...\n"),
               2;
    if (!(trace_epochs > 0)) trace_epochs = prefix > 0 ? prefix : 0.5;
    scv_lcurve_set set;
    scv_err err = {0};
    scv_calib cal = {0};
    char cal_key[64] = "";
    if (scv_lcurves_load(corpus, &set, &err)) return fprintf(stderr, "floor_eval: %s\n", err.msg), 1;
    static run r0, rb;
    enum { MAXR = 512 };
    double e_floor[MAXR], e_law[MAXR], e_rule[MAXR], e_run[MAXR], e_wait[MAXR];
    int sign[3] = {0, 0, 0}, signed_n = 0, covered = 0, n = 0;
    /* every target, as a run carries: the floor where it tells, else the rule; and the floor
     * only where its crossings lie on the evaluations (none read ahead), else the rule */
    int all = 0, all_signed = 0, sign_run = 0, sign_wait = 0, ahead = 0;
    printf("| job | metric | target | E_b0 | E_b | truth | floor (80%% band) | law (Bn) | rule | b0's forecast |\n"
           "|---|---|---|---|---|---|---|---|---|---|\n");
    const char *rate_env = getenv("FLOOR_EVAL_RATE_EPOCHS");
    char rates[2048] = ""; /* the measured rate of each pair, printed after the summary */
    for (; a + 2 < argc + 0 && a < argc; a += 3) {
        if (load(argv[a + 1], trace_epochs, &r0) || load(argv[a + 2], trace_epochs, &rb)) return 1;
        double rate = rate_env ? rate_from_start(&r0, &rb, atof(rate_env)) : 0;
        if (rate_env)
            snprintf(rates + strlen(rates), sizeof rates - strlen(rates), "%s%s %.2f", rates[0] ? ", " : "", argv[a],
                     rate);
        char key[64];
        scv_calib_key(r0.model, r0.dataset, key, sizeof key);
        size_t n0 = r0.n; /* b0's evaluations read */
        if (prefix > 0) {
            for (n0 = 0; n0 < r0.n && r0.x[n0] <= prefix * r0.n_train;) n0++;
            if (strcmp(cal_key, key)) {
                scv_calib_free(&cal);
                if (calib_without(&set, key, &cal, &err)) return fprintf(stderr, "floor_eval: %s\n", err.msg), 1;
                snprintf(cal_key, sizeof cal_key, "%s", key);
            }
        }
        for (int m = 0; m < 2; m++) {
            scv_metric metric = m ? SCV_METRIC_LOSS : SCV_METRIC_ACCURACY;
            const double *y0 = m ? r0.loss : r0.acc, *yb = m ? rb.loss : rb.acc, sg = m ? 1 : -1;
            scv_carry rc;
            scv_carry_job cj = {.lr = lr, .base_batch = (int)base, .lr_scaling = rule};
            double g_rule = scv_carry_learn_rule(&set, key, &cj, metric, NULL, 0.8, &rc) == SCV_OK ? rc.gamma : NAN;
            /* an accuracy's change per unit of loss over b0's evaluations (as the loop) */
            double sx = 0, sy = 0, sxx = 0, sxy = 0, k = 0;
            /* (FLOOR_EVAL_SLOPE_ALL: over the whole curve's, a diagnosis of the prefix's
             * slope against the late one: not what a run has) */
            double want = getenv("FLOOR_EVAL_SLOPE_N") ? atof(getenv("FLOOR_EVAL_SLOPE_N")) : INFINITY;
            double span = getenv("FLOOR_EVAL_SLOPE_EPOCHS") ? atof(getenv("FLOOR_EVAL_SLOPE_EPOCHS")) * r0.n_train : 0;
            size_t end = getenv("FLOOR_EVAL_SLOPE_ALL") ? r0.n : n0;
            for (size_t i = end; i-- > 0 && (k < want || (span > 0 && r0.x[i] >= r0.x[end - 1] - span));)
                if (isfinite(r0.loss[i]) && isfinite(r0.acc[i]))
                    sx += r0.loss[i], sy += r0.acc[i], sxx += r0.loss[i] * r0.loss[i], sxy += r0.loss[i] * r0.acc[i],
                        k++;
            double per_loss = (sxy - sx * sy / k) / (sxx - sx * sx / k);
            double from = (y0[0] + y0[1] + y0[2]) / W, to = best(y0, r0.n, sg), tb = best(yb, rb.n, sg);
            to = sg > 0 ? fmax(to, tb) : fmin(to, tb);
            static const double shares[4] = {0.3, 0.5, 0.7, 0.85};
            for (int s = 0; s < 4; s++) {
                double v = from + shares[s] * (to - from), e0 = cross(r0.x, y0, r0.n, v, sg),
                       eb = cross(rb.x, yb, rb.n, v, sg);
                if (!(e0 > 0 && eb > 0)) continue;
                double lb = log((double)rb.batch / r0.batch), truth = log(eb / e0) / lb;
                fc_ctx fc = {&cal, metric, r0.x, y0, n0, r0.n_train, 5 * r0.n_train, key};
                scv_floor_in in = {.metric = metric,
                                   .x = r0.x,
                                   .y = y0,
                                   .n = n0,
                                   .per_loss = per_loss,
                                   .trace = r0.trace,
                                   .lr = lr,
                                   .momentum = mu,
                                   .base_batch = base,
                                   .b0 = r0.batch,
                                   .b = rb.batch,
                                   .lr_scaling = rule,
                                   .target = v,
                                   .horizon = prefix > 0 ? fc.horizon : 4 * r0.x[r0.n - 1],
                                   .cross = prefix > 0 ? forecast_cross : NULL,
                                   .ctx = &fc,
                                   .rate = rate};
                scv_carry f;
                double g_floor = scv_carry_floor(&in, NULL, &f) == SCV_OK ? f.gamma : NAN;
                double g_law = log((rb.batch + r0.b_simple) / (r0.batch + r0.b_simple)) / lb;
                if (getenv("FLOOR_EVAL_PHASE") && f.run_rate > 0 && isfinite(f.run_level))
                    g_law = phased_exponent(&r0, y0, v, f.run_level, f.run_rate, lb, sg);
                double fx = prefix > 0 ? forecast_cross(&fc, v) : NAN;
                printf("| %s | %s | %.4g | %.2f | %.2f | %+.2f | %+.2f (%+.2f..%+.2f) | %+.2f (%.0f) | %+.2f | %.2f |\n",
                       argv[a], m ? "loss" : "accuracy", v, e0 / r0.n_train, eb / rb.n_train, truth, g_floor,
                       g_floor + f.q_lo, g_floor + f.q_hi, g_law, r0.b_simple, g_rule, fx / r0.n_train);
                if (all < MAXR) {
                    double g_run = isfinite(g_floor) ? g_floor : g_rule,
                           g_wait = isfinite(g_floor) && !f.read_ahead ? g_floor : g_rule;
                    e_run[all] = fabs(g_run - truth), e_wait[all] = fabs(g_wait - truth);
                    ahead += isfinite(g_floor) && f.read_ahead;
                    if (fabs(truth) > 0.1) all_signed++, sign_run += g_run * truth > 0, sign_wait += g_wait * truth > 0;
                    all++;
                }
                if (n < MAXR && isfinite(g_floor)) {
                    e_floor[n] = fabs(g_floor - truth), e_law[n] = fabs(g_law - truth);
                    e_rule[n] = isfinite(g_rule) ? fabs(g_rule - truth) : NAN;
                    covered += g_floor + f.q_lo <= truth && truth <= g_floor + f.q_hi;
                    if (fabs(truth) > 0.1) {
                        signed_n++;
                        sign[0] += g_floor * truth > 0, sign[1] += g_law * truth > 0, sign[2] += g_rule * truth > 0;
                    }
                    n++;
                }
            }
        }
    }
    if (n) {
        printf("\n%d targets: median |exponent error| floor %.2f, law %.2f, rule %.2f; the sign right (|truth| > 0.1, "
               "%d): floor %d, law %d, rule %d; the floor's 80%% band covers %d of %d\n",
               n, median(e_floor, (size_t)n), median(e_law, (size_t)n), median(e_rule, (size_t)n), signed_n, sign[0],
               sign[1], sign[2], covered, n);
        printf("all %d targets, as a run carries (the floor where it tells, %d of them, %d read ahead of the "
               "evaluations; else the rule): median |exponent error| %.2f, the sign right %d of %d; the floor only "
               "where it reads no crossing ahead: %.2f, %d of %d\n",
               all, n, ahead, median(e_run, (size_t)all), sign_run, all_signed, median(e_wait, (size_t)all), sign_wait,
               all_signed);
    }
    if (rate_env)
        printf("progress per sample at b against b0's, from the start over b's first %s epochs: %s\n", rate_env, rates);
    scv_calib_free(&cal);
    scv_lcurve_set_free(&set);
    return 0;
}
