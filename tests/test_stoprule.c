/*
 * test_stoprule.c - the segment's stopping rules (src/model/stoprule.c) and the parity of
 * the two drivers that apply them: one synthetic metrics stream (iterations with their
 * gradient statistics and seconds, periodic evaluations) goes through the built-in
 * trainer's path (src/runtime/train_rules.c, fed the numbers train_segment holds) and the
 * exec driver's (src/drivers/exec_rules.h, fed the samples its metrics lines deliver: a
 * statistic the trainer writes as null is NaN); both must give the same verdicts at the same
 * iterations, with the same B_simple and window means. Also: the rules themselves on
 * hand-computed streams, and the one window limit where the options are read.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "scv_test.h"
#include "../src/model/stoprule.h"
#include "../src/runtime/train_rules.h"
#include "../src/drivers/exec_rules.h"

#include <string.h>

/* ---- a synthetic stream ---- */
typedef struct {
    uint64_t s;
} lcg;
static double unif(lcg *g) /* [0, 1) */
{
    g->s = g->s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(g->s >> 11) / 9007199254740992.0;
}

typedef struct {
    int64_t iteration, batch;
    double local_mean, gsq, t_iter;
    int exact;
    int eval;             /* an evaluation after this iteration */
    double acc, ploss;    /* its accuracy and period-mean training loss (NaN: none) */
} point;

#define NPTS 1200

/* K workers at batch B; noise scale ~ bn; t_iter settles; evaluations every `every`
 * iterations, accuracy rising to acc_max, loss falling; every 7th step inexact (compressed)
 * when `sparse`, every 5th evaluation without a training period. */
static void make_stream(point *pt, int K, int64_t B, double bn, int every, int sparse, double acc_max, uint64_t seed)
{
    lcg g = {seed};
    const double G2 = 100, S = G2 * bn;
    for (int i = 0; i < NPTS; i++) {
        point *x = &pt[i];
        x->iteration = 1000 + i + 1, x->batch = B + (i / 300) * K; /* the batch changes now and then */
        double jl = 1 + 0.4 * (unif(&g) - 0.5), jg = 1 + 0.4 * (unif(&g) - 0.5);
        x->local_mean = (G2 + S / ((double)x->batch / K)) * jl;
        x->gsq = (G2 + S / (double)x->batch) * jg;
        x->exact = !(sparse && i % 7 == 3);
        x->t_iter = 0.05 * (1 + (i < 10 ? 2.0 : 0.0) + 0.3 * (unif(&g) - 0.5) / (1 + i / 50.0));
        x->eval = (i + 1) % every == 0;
        double prog = (double)(i + 1) / NPTS;
        x->acc = acc_max - 0.5 * exp(-6 * prog) + 0.02 * (unif(&g) - 0.5);
        x->ploss = (x->eval && (i / every) % 5 == 4) ? NAN : 2.0 * exp(-3 * prog) + 0.05 * (unif(&g) - 0.5);
    }
}

/* The rules of one segment, as the trainer's parameters and as the loop's segment spec. */
typedef struct {
    int K;
    int64_t until;
    double target_accuracy, target_loss;
    int window;
    const double *history;
    int n_history;
    int noise_window;
    double noise_tol, time_rse;
    int time_min;
    int no_grad_stats;
} rules_case;

static scv_train_params case_params(const rules_case *c)
{
    scv_train_params p = scv_train_params_default();
    p.workers = c->K, p.iterations = c->until, p.target_accuracy = c->target_accuracy, p.target_loss = c->target_loss;
    p.target_window = c->window, p.target_history = c->history, p.n_target_history = c->n_history;
    p.stop_noise_window = c->noise_window, p.stop_noise_tol = c->noise_tol, p.stop_time_rse = c->time_rse;
    p.stop_time_min = c->time_min, p.no_grad_stats = c->no_grad_stats;
    return p;
}

static scv_segment_spec case_spec(const rules_case *c)
{
    return (scv_segment_spec){.phase = "test", .until_iterations = c->until, .target_accuracy = c->target_accuracy,
                              .target_loss = c->target_loss, .target_window = c->window, .history = c->history,
                              .n_history = c->n_history, .noise_window = c->noise_window, .noise_tol = c->noise_tol,
                              .time_rse = c->time_rse, .time_min_iters = c->time_min};
}

/* The verdicts of one iteration: the cap, the iteration's rules, its evaluation's. */
typedef struct {
    scv_stop_verdict cap, iter, eval;
    double b_simple, mean;
} step_verdict;

/* Runs the stream through both paths until the first verdict (the segment stops there);
 * checks every iteration's verdicts agree; returns the stopping index (-1: none) and what
 * stopped it in *why. */
static int run_parity(const rules_case *c, const point *pt, scv_stop_verdict *why)
{
    const scv_train_params p = case_params(c);
    const scv_segment_spec spec = case_spec(c);
    scv_stoprule tr;
    scv_exec_rules xr;
    scv_train_rules_init(&tr, &p, c->K);
    scv_exec_rules_init(&xr, &spec, c->K);
    *why = SCV_STOP_NONE;
    for (int i = 0; i < NPTS; i++) {
        const point *x = &pt[i];
        /* the trainer: the cap before the next step, the target at the evaluation, the
         * noise and profiling rules after the step (train_segment's numbers) */
        step_verdict a = {SCV_STOP_NONE, SCV_STOP_NONE, SCV_STOP_NONE, NAN, NAN};
        a.cap = scv_stoprule_capped(&tr, x->iteration) ? SCV_STOP_ITERATIONS : SCV_STOP_NONE;
        if (x->eval) a.eval = scv_train_rules_eval(&tr, &p, x->acc, x->ploss);
        a.iter = scv_train_rules_iter(&tr, &p, x->batch, x->local_mean, x->gsq, x->exact, x->t_iter);
        a.b_simple = tr.b_simple, a.mean = tr.mean;
        /* the exec driver: the metrics line's iteration sample (null statistics: NaN), then
         * the evaluation's */
        scv_iter_sample s = {.iteration = x->iteration, .workers = c->K, .batch = (int)x->batch,
                             .t_iter = x->t_iter, .g_local = c->no_grad_stats ? NAN : x->local_mean,
                             .g_global = c->no_grad_stats || !x->exact ? NAN : x->gsq};
        step_verdict b = {SCV_STOP_NONE, SCV_STOP_NONE, SCV_STOP_NONE, NAN, NAN};
        scv_stop_verdict v = scv_exec_rules_iter(&xr, &s);
        if (v == SCV_STOP_ITERATIONS) b.cap = v;
        else b.iter = v;
        if (x->eval) {
            scv_eval_sample e = {.iteration = x->iteration, .accuracy = x->acc, .loss = 0.3, .train_loss = x->ploss};
            b.eval = scv_exec_rules_eval(&xr, &e);
        }
        b.b_simple = xr.r.b_simple, b.mean = xr.r.mean;
        /* the cap fires alone in both (the trainer stops before the step; the driver stops
         * the trainer and feeds nothing more) */
        if (a.cap) a.iter = a.eval = SCV_STOP_NONE, b.eval = SCV_STOP_NONE;
        CHECK_MSG(a.cap == b.cap && a.iter == b.iter && a.eval == b.eval,
                  "iteration %lld: trainer cap/iter/eval %s/%s/%s, exec %s/%s/%s", (long long)x->iteration,
                  scv_stop_verdict_name(a.cap), scv_stop_verdict_name(a.iter), scv_stop_verdict_name(a.eval),
                  scv_stop_verdict_name(b.cap), scv_stop_verdict_name(b.iter), scv_stop_verdict_name(b.eval));
        CHECK_MSG((isnan(a.b_simple) && isnan(b.b_simple)) || a.b_simple == b.b_simple,
                  "iteration %lld: B_simple %.17g vs %.17g", (long long)x->iteration, a.b_simple, b.b_simple);
        CHECK_MSG((isnan(a.mean) && isnan(b.mean)) || a.mean == b.mean, "iteration %lld: window mean %.17g vs %.17g",
                  (long long)x->iteration, a.mean, b.mean);
        if (a.cap || a.iter || a.eval) {
            *why = a.cap ? a.cap : a.eval ? a.eval : a.iter; /* the trainer checks the target first */
            CHECK(xr.fired != NULL);
            return i;
        }
        CHECK(xr.fired == NULL);
    }
    return -1;
}

static void t_parity(void)
{
    static point pt[NPTS];
    const double hist[] = {0.2, 0.95, 0.96, 0.97};
    const double lhist[] = {0.5, 0.4};
    struct {
        const char *name;
        rules_case c;
        int sparse;
        scv_stop_verdict want; /* what stops the stream (NONE: nothing) */
    } cases[] = {
        {"noise", {.K = 4, .noise_window = 20, .noise_tol = 0.25}, 1, SCV_STOP_NOISE},
        {"noise, tight", {.K = 8, .noise_window = 25, .noise_tol = 0.02}, 0, SCV_STOP_NOISE},
        {"noise, no statistics", {.K = 4, .noise_window = 20, .noise_tol = 0.25, .no_grad_stats = 1}, 0, SCV_STOP_NONE},
        {"noise, one worker", {.K = 1, .noise_window = 20, .noise_tol = 0.25}, 0, SCV_STOP_NONE},
        {"time", {.K = 2, .time_rse = 0.01, .time_min = 30}, 0, SCV_STOP_TIME},
        {"time, early minimum", {.K = 2, .time_rse = 0.05, .time_min = 0}, 0, SCV_STOP_TIME},
        {"accuracy target", {.K = 4, .target_accuracy = 0.9, .window = 3}, 0, SCV_STOP_TARGET},
        {"accuracy target, history", {.K = 4, .target_accuracy = 0.9, .window = 3, .history = hist, .n_history = 4}, 0,
         SCV_STOP_TARGET},
        {"loss target, gaps", {.K = 4, .target_loss = 0.4, .window = 5, .history = lhist, .n_history = 2}, 0,
         SCV_STOP_TARGET},
        {"cap", {.K = 4, .until = 1150, .target_accuracy = 0.99, .window = 2}, 0, SCV_STOP_ITERATIONS},
        {"everything", {.K = 4, .until = 2100, .target_accuracy = 0.9, .window = 4, .noise_window = 30,
                        .noise_tol = 0.05, .time_rse = 0.002, .time_min = 30}, 1, SCV_STOP_NONE /* any */},
        {"unreachable", {.K = 4, .target_accuracy = 0.999, .window = 64}, 1, SCV_STOP_NONE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        make_stream(pt, cases[i].c.K, 256, 300, 10, cases[i].sparse, 0.93, 7 + i);
        scv_stop_verdict why;
        int at = run_parity(&cases[i].c, pt, &why);
        if (!strcmp(cases[i].name, "everything")) {
            CHECK_MSG(at > 0, "%s: nothing stopped it", cases[i].name);
            continue;
        }
        CHECK_MSG(why == cases[i].want && (why == SCV_STOP_NONE) == (at < 0), "%s: stopped by %s at %d, expected %s",
                  cases[i].name, scv_stop_verdict_name(why), at, scv_stop_verdict_name(cases[i].want));
        if (!strcmp(cases[i].name, "cap")) CHECK_EQ_INT(at, 149); /* iteration 1150 */
        if (!strcmp(cases[i].name, "time")) CHECK_MSG(at >= 3 + 30 - 1, "time rule at %d", at);
    }
}

/* ---- the rules on hand-computed streams ---- */
static void t_target_window(void)
{
    scv_stoprule r;
    const double h[] = {0.1, 0.92, 0.88}; /* more history than W - 1: the oldest slides out */
    scv_stoprule_init(&r, &(scv_stoprule_spec){.target_accuracy = 0.9, .window = 3, .history = h, .n_history = 3});
    CHECK_EQ_INT(r.len, 3);
    CHECK_EQ_INT(scv_stoprule_on_evaluation(&r, 0.89), SCV_STOP_NONE); /* (0.92 + 0.88 + 0.89) / 3 = 0.8967 */
    CHECK_EQ_INT(r.n_from_history, 2);
    CHECK_EQ_INT(scv_stoprule_on_evaluation(&r, NAN), SCV_STOP_NONE); /* left out */
    CHECK_EQ_INT(r.len, 3);
    CHECK_EQ_INT(scv_stoprule_on_evaluation(&r, 0.95), SCV_STOP_TARGET); /* 0.9067 */
    CHECK_EQ_INT(r.n_from_history, 1);
    CHECK_NEAR(r.mean, (0.88 + 0.89 + 0.95) / 3, 1e-15, 0);
    double w[SCV_TARGET_WINDOW_MAX];
    CHECK_EQ_INT(scv_stoprule_window(&r, w, SCV_TARGET_WINDOW_MAX), 3);
    CHECK(w[0] == 0.88 && w[2] == 0.95);
    CHECK_EQ_INT(scv_stoprule_window(&r, w, 1), 1);
    CHECK(w[0] == 0.95);
    /* a window not yet full never counts; a loss target counts downwards */
    scv_stoprule_init(&r, &(scv_stoprule_spec){.target_loss = 0.5, .window = 2});
    CHECK_EQ_INT(scv_stoprule_on_evaluation(&r, 0.1), SCV_STOP_NONE);
    CHECK_EQ_INT(scv_stoprule_on_evaluation(&r, 0.9), SCV_STOP_TARGET); /* 0.5 <= 0.5 */
    /* no target: nothing enters */
    scv_stoprule_init(&r, &(scv_stoprule_spec){.window = 2});
    CHECK_EQ_INT(scv_stoprule_on_evaluation(&r, 1), SCV_STOP_NONE);
    CHECK_EQ_INT(r.len, 0);
    /* the window is at most the limit */
    scv_stoprule_init(&r, &(scv_stoprule_spec){.target_accuracy = 0.5, .window = 100000});
    CHECK_EQ_INT(r.W, SCV_TARGET_WINDOW_MAX);
    CHECK_EQ_INT(scv_stop_verdict_name(SCV_STOP_NOISE)[0], 'n');
}

/* Where the curve crossed, read off a rule that fired (scv_stoprule_crossing): at a fixed
 * period D the newest evaluation less W D / 2; across a change of period (a run's dense
 * search evaluations, then its training's) between the mean places of the window that
 * fired and the one before, on a straight curve whose value is its place. */
static void t_crossing(void)
{
    const double fixed[] = {2.0, 1.75, 1.5, 1.25}; /* newest first, D = 0.25 */
    CHECK_NEAR(scv_stoprule_crossing(fixed, 4, 3), 2.0 - 3 * 0.25 / 2, 1e-12, 0);
    CHECK_NEAR(scv_stoprule_crossing(fixed, 3, 3), 2.0 - 3 * 0.25 / 2, 1e-12, 0); /* the first window */
    CHECK_NEAR(scv_stoprule_crossing(fixed, 2, 1), 2.0 - 0.25 / 2, 1e-12, 0);
    CHECK_NEAR(scv_stoprule_crossing(fixed, 1, 1), 1.0, 1e-12, 0); /* from 0 */
    CHECK(isnan(scv_stoprule_crossing(fixed, 2, 3)));               /* not a full window */
    /* places 0.80, 0.85, 0.90 (every 0.05), then 1.15; the value is the place; target 0.92 */
    const double at[] = {0.80, 0.85, 0.90, 1.15};
    scv_stoprule r;
    scv_stoprule_init(&r, &(scv_stoprule_spec){.target_accuracy = 0.92, .window = 3});
    int fired = -1;
    for (int i = 0; i < 4 && fired < 0; i++)
        if (scv_stoprule_on_evaluation(&r, at[i]) == SCV_STOP_TARGET) fired = i;
    CHECK_EQ_INT(fired, 3);
    const double place[] = {1.15, 0.90, 0.85, 0.80};
    double before = (0.90 + 0.85 + 0.80) / 3, now = (1.15 + 0.90 + 0.85) / 3, x = scv_stoprule_crossing(place, 4, 3);
    CHECK(before < 0.92 && 0.92 <= now);
    CHECK_NEAR(x, 0.5 * (before + now), 1e-12, 0);
    /* (the newest place less its window's lag at the last period, 1.15 - (1.15 - now) - 0.25 / 2,
     * falls where the rule had not fired) */
    CHECK(now - 0.125 < before);
}

static void t_noise_and_time(void)
{
    scv_stoprule r;
    /* K = 2, B = 64: B_simple = (g_local - g_global) / (g_global / (B) - g_local / (B/K)) * ...;
     * equal windows agree exactly, the second window fires */
    scv_stoprule_init(&r, &(scv_stoprule_spec){.workers = 2, .noise_window = 3, .noise_tol = 0.01});
    for (int i = 0; i < 5; i++) CHECK_EQ_INT(scv_stoprule_on_iteration(&r, 64, 3.0, 2.0, 0.1), SCV_STOP_NONE);
    CHECK_NEAR(r.b_simple, scv_gns_b_simple(2, 64, 3.0, 2.0), 1e-15, 0);
    CHECK_EQ_INT(scv_stoprule_on_iteration(&r, 64, 3.0, 2.0, 0.1), SCV_STOP_NOISE);
    /* unknown statistics are skipped, not counted */
    scv_stoprule_init(&r, &(scv_stoprule_spec){.workers = 2, .noise_window = 2, .noise_tol = 0.01});
    for (int i = 0; i < 10; i++) CHECK_EQ_INT(scv_stoprule_on_iteration(&r, 64, 3.0, NAN, 0.1), SCV_STOP_NONE);
    CHECK_EQ_INT(r.nn, 0);
    /* the profiling rule: the first 3 iterations left out, then at least max(min, 2) */
    scv_stoprule_init(&r, &(scv_stoprule_spec){.time_rse = 0.5, .time_min_iters = 4});
    for (int i = 0; i < 3; i++) CHECK_EQ_INT(scv_stoprule_on_iteration(&r, 64, NAN, NAN, 99.0), SCV_STOP_NONE);
    for (int i = 0; i < 3; i++) CHECK_EQ_INT(scv_stoprule_on_iteration(&r, 64, NAN, NAN, 1.0), SCV_STOP_NONE);
    CHECK_EQ_INT(scv_stoprule_on_iteration(&r, 64, NAN, NAN, 1.0), SCV_STOP_TIME);
    CHECK_NEAR(r.t_mean, 1.0, 1e-15, 0);
    /* the cap */
    scv_stoprule_init(&r, &(scv_stoprule_spec){.until_iterations = 10});
    CHECK(!scv_stoprule_capped(&r, 9) && scv_stoprule_capped(&r, 10));
    scv_stoprule_init(&r, &(scv_stoprule_spec){0});
    CHECK(!scv_stoprule_capped(&r, 1000000));
}

/* ---- one window limit where the options are read ---- */
static void t_window_limit(void)
{
    scv_err err = {0};
    scv_train_params p = scv_train_params_default();
    p.iterations = 10;
    p.target_window = SCV_TARGET_WINDOW_MAX;
    CHECK_EQ_INT(scv_train_params_check(&p, &err), SCV_OK);
    p.target_window = SCV_TARGET_WINDOW_MAX + 1;
    CHECK_EQ_INT(scv_train_params_check(&p, &err), SCV_EINVAL);
    CHECK_MSG(strstr(err.msg, "--target-window") != NULL, "%s", err.msg);
    scv_run_params r = scv_run_params_default();
    CHECK_EQ_INT(scv_run_params_set(&r, "target-window", "64", &err), SCV_OK);
    CHECK_EQ_INT(r.policy.target_window, 64);
    CHECK_EQ_INT(scv_run_params_set(&r, "target-window", "65", &err), SCV_EINVAL);
    CHECK_MSG(strstr(err.msg, "target-window") != NULL, "%s", err.msg);
}

/* The one "reached" over a series (scv_stoprule_reached): the first evaluation at which the
 * rule of window W fires fed the values in order (a non-finite one left out), and the curve's
 * crossing there by scv_stoprule_crossing on the places of the window and the value before;
 * the window means before a full window are NaN. Hand-worked at W = 3. */
static void t_reached_series(void)
{
    double x[] = {100, 200, 300, 400, 500, 600, 700}, y[] = {0.5, 0.6, NAN, 0.7, 0.8, 0.9, 0.95}, m[7], cross;
    /* means: -, -, -, (0.5+0.6+0.7)/3 = 0.6, 0.7, 0.8, 0.883 */
    scv_stoprule_means(y, 7, 3, m);
    CHECK(isnan(m[0]) && isnan(m[1]) && isnan(m[2]));
    CHECK_NEAR(m[3], 0.6, 1e-12, 0);
    CHECK_NEAR(m[5], 0.8, 1e-12, 0);
    long i = scv_stoprule_reached(x, y, 7, 1, 0.75, 3, &cross);
    CHECK_EQ_INT(i, 5); /* 0.8 >= 0.75 at x = 600 */
    /* the window (600, 500, 400: mean 500) and the one before (500, 400, 200: mean 366.7) */
    CHECK_NEAR(cross, 0.5 * (500 + (500 + 400 + 200) / 3.0), 1e-9, 0);
    CHECK_EQ_INT(scv_stoprule_reached(x, y, 7, 1, 0.99, 3, &cross), -1);
    CHECK(isnan(cross));
    /* a loss: the mean <= target */
    double l[] = {2.0, 1.5, 1.0, 0.8, 0.6};
    i = scv_stoprule_reached(x, l, 5, -1, 1.2, 3, &cross);
    CHECK_EQ_INT(i, 3); /* (1.5 + 1.0 + 0.8) / 3 = 1.1 */
    /* the same verdict as the rule fed the values one by one */
    scv_stoprule r;
    scv_stoprule_spec sp = {.window = 3, .target_loss = 1.2};
    scv_stoprule_init(&r, &sp);
    long first = -1;
    for (long k = 0; k < 5 && first < 0; k++)
        if (scv_stoprule_on_evaluation(&r, l[k]) == SCV_STOP_TARGET) first = k;
    CHECK_EQ_INT(first, i);
}


static const scv_test tests[] = {
    {"parity", t_parity},
    {"target_window", t_target_window},
    {"crossing", t_crossing},
    {"noise_and_time", t_noise_and_time},
    {"window_limit", t_window_limit},
    {"reached_series", t_reached_series},
};
SCV_TEST_MAIN(tests)
