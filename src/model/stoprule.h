/*
 * stoprule.h - a segment's stopping rules as one pure state machine (src/model/stoprule.c),
 * the one copy the built-in trainer (src/runtime/train_rules.c), the exec driver
 * (src/drivers/exec_rules.h) and the loop's test fake use:
 *   the target window: the mean of the last W evaluations (accuracies, or period-mean
 *     training losses for a loss target), prefilled from the history of earlier segments,
 *     reached once the window is full and its mean is >= the accuracy target (<= the loss);
 *   the noise-stability rule: B_simple (scv_gns_b_simple) of two consecutive windows of
 *     noise_window iterations agree within noise_tol relative (K > 1, exact statistics);
 *   the profiling rule: Welford's mean of t_iter after the first 3 iterations; fires when
 *     its relative standard error is <= time_rse after at least max(time_min_iters, 2);
 *   the iteration cap.
 * Internal to libscv (not in scv.h). libc and libm only.
 */
#ifndef SCV_STOPRULE_H
#define SCV_STOPRULE_H

#include <stddef.h>
#include <stdint.h>

/* The longest target window (evaluations), one limit for every driver: the option
 * (`train --target-window`, run's target-window, the elastic command's "target_window")
 * refuses more, and the loop's carried history and the elastic job's carried window hold
 * this many. 64: a window of W evaluations lags the learning curve by about W/2 evaluation
 * periods (search/loop.c rule_lag), so a longer one only delays the stop; and the window
 * crosses processes as text (an elastic command of CMD_BYTES, an argv's --target-history). */
#define SCV_TARGET_WINDOW_MAX 64

/* The default tolerance of the confirmation on the whole test set when the periodic
 * evaluations are on a subset: reached only if the whole set's accuracy >= target - this
 * (`train --target-confirm-tol`); a run's headline names it when it let an accuracy under
 * the target count as reached (src/search/report.c scv_run_headline). */
#define SCV_TARGET_CONFIRM_TOL 0.005
#define SCV_TARGET_CONFIRM_TOL_TEXT "0.005" /* the same, for messages */

/* Iterations at a segment's start the profiling rule leaves out (warm caches, first
 * allocations), and the fewest samples its standard error is taken over. */
#define SCV_STOPRULE_TIME_SKIP 3
#define SCV_STOPRULE_TIME_MIN 2

/* What a rule said after an iteration or an evaluation. */
typedef enum {
    SCV_STOP_NONE = 0,
    SCV_STOP_ITERATIONS, /* the iteration cap */
    SCV_STOP_TARGET,     /* the target window's mean crossed the target */
    SCV_STOP_NOISE,      /* B_simple stable */
    SCV_STOP_TIME,       /* t_iter known well enough */
} scv_stop_verdict;

/* The rules of one segment (0 / NULL: that rule off). */
typedef struct scv_stoprule_spec {
    int64_t until_iterations;  /* stop once the iteration count reaches it */
    double target_accuracy;    /* the accuracy target, or */
    double target_loss;        /*   the training-loss target */
    int window;                /* W, 1..SCV_TARGET_WINDOW_MAX (< 1: 1; more: the limit) */
    const double *history;     /* earlier segments' values, oldest first */
    int n_history;
    int workers;               /* K (the noise rule needs K > 1) */
    int noise_window;          /* iterations per B_simple window */
    double noise_tol;          /* relative agreement of two windows */
    double time_rse;           /* the profiling rule's relative standard error */
    int time_min_iters;        /* its fewest samples */
} scv_stoprule_spec;

typedef struct scv_stoprule {
    scv_stoprule_spec spec;    /* history: not kept (copied into the window) */
    /* target window: the last W values, oldest first; from_hist marks the prefilled ones */
    double win[SCV_TARGET_WINDOW_MAX];
    char from_hist[SCV_TARGET_WINDOW_MAX];
    int len, W;
    double mean;               /* the window's mean after the last evaluation (sum / W) */
    int n_from_history;        /* ... of which this many came from the history */
    /* noise rule */
    double nl, ng, prev_bs, b_simple; /* b_simple: the latest window's (NaN: none yet) */
    int nn;
    /* profiling rule */
    double t_mean, t_m2;
    int64_t t_n, seen;         /* seen: iterations of this segment */
} scv_stoprule;

/* The rules of a segment, the target window prefilled from spec->history. */
void scv_stoprule_init(scv_stoprule *r, const scv_stoprule_spec *spec);

/* 1 when the iteration cap is reached at this iteration count. */
int scv_stoprule_capped(const scv_stoprule *r, int64_t iteration);

/* After an iteration: its global batch, the squared-norm statistics (g_local: mean over
 * workers of |g_k|^2; g_global: |g|^2; NaN where unknown: the noise rule skips it) and its
 * seconds (NaN: skipped by the profiling rule). Updates the noise and profiling rules;
 * returns SCV_STOP_NOISE, SCV_STOP_TIME (the noise rule first) or SCV_STOP_NONE. The cap is
 * scv_stoprule_capped's. */
scv_stop_verdict scv_stoprule_on_iteration(scv_stoprule *r, int64_t batch, double g_local, double g_global,
                                           double t_iter);

/* After an evaluation: its value (the accuracy, or the period-mean training loss for a
 * loss target; not finite: left out) enters the window; SCV_STOP_TARGET when the window is
 * full and its mean (r->mean, r->n_from_history) crosses the target. No target: NONE. */
scv_stop_verdict scv_stoprule_on_evaluation(scv_stoprule *r, double value);

/* The window's values, oldest first (at most cap, the newest ones); returns the count. */
int scv_stoprule_window(const scv_stoprule *r, double *out, int cap);

/* Where the learning curve crossed the target, for a rule that fired on a window of W
 * values: place[0..W-1] are where the window's values stand on the curve (samples; an
 * accuracy where it was evaluated, a period-mean loss at its period's middle), newest
 * first, and place[W], when n > W, the value's before them. A window's mean value stands at
 * the mean of its places (locally linear), so the curve crossed between the mean place of
 * the window before (the rule had not fired) and this one's: their middle. With no value
 * before the window, the one before is taken a mean spacing earlier (W = 1: at 0). At a
 * fixed period D this trails the newest evaluation by W D / 2 (accuracy) or (W + 1) D / 2
 * (period-mean loss), and it holds across a change of period (a run's dense search
 * evaluations beside its training's). */
double scv_stoprule_crossing(const double *place, int n, int W);

/* The one definition of "reached" over a series, the run's: the target window of W fed a
 * learning curve's values y[0..n) in order (not finite: left out), placed at x (samples);
 * the first index at which it fires on target (dir +1: the mean >= target, an accuracy; -1:
 * <=, a loss), -1 never; *cross, where the curve crossed (scv_stoprule_crossing on the
 * places of the values the window held; NaN never). The calibration's truths, the corpus's
 * carry-over and the run's stored crossings all read a curve through it. */
long scv_stoprule_reached(const double *x, const double *y, size_t n, int dir, double target, int W, double *cross);
/* The window's mean after each value, m[i] (NaN until W values are in: the rule cannot fire
 * there), over y[0..n) as scv_stoprule_reached feeds them. */
void scv_stoprule_means(const double *y, size_t n, int W, double *m);

const char *scv_stop_verdict_name(scv_stop_verdict v);

#endif
