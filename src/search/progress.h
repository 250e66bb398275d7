/*
 * progress.h - the loop's online progress model (internal to src/search/): how far the job
 * is statistically from its target, from the evaluations seen so far.
 *
 * Segments train at different batches, and a sample at batch B moves the job less than one
 * at a smaller batch: with E(B) = E_min (1 + B / B_noise) samples needed at batch B (the
 * gradient-noise-scale law), a sample at B is worth E(B_ref) / E(B) samples at B_ref. The
 * model keeps the samples of every segment with its batch, converts each evaluation's
 * position to reference samples x_ref, fits the learning curve y(x_ref) of the target's
 * metric (test accuracy, or the period-mean training loss)
 * (once the run has read its own carry from a probe at batch b, scv_carry_shift: up to the
 * read, a sample at b is worth the read's rate r, and an evaluation at b is moved by its
 * level -d onto the reference batch's curve)
 * (scv_curve_fit: power law or saturating exponential, chosen by held-out error) and
 * forecasts the reference samples x* at which it crosses the target, with a band
 * calibrated on curves whose course is known (scv_calib_forecast, src/model/calib.c).
 */
#ifndef SCV_SEARCH_PROGRESS_H
#define SCV_SEARCH_PROGRESS_H
#include "scv.h"
#include "../model/model.h"

typedef struct progress_seg {
    double s0, s1;              /* samples seen (in all) at its start and end */
    int batch;
} progress_seg;

typedef struct progress_eval {
    double samples;             /* samples seen (in all) when evaluated */
    double y;                   /* the target's metric there */
    double loss_x, loss;        /* the period-mean training loss and where it stands (its
                                   period's middle; NaN: not measured) */
} progress_eval;

typedef struct progress {
    progress_seg *seg;
    size_t nseg, seg_cap;
    progress_eval *ev;
    size_t nev, ev_cap;
} progress;

typedef struct progress_pred {
    int ok;                     /* a prediction was made (else why[] says why not) */
    int reachable;              /* P(reach within the horizon) >= 1/2 (uncalibrated: x_star
                                   within the horizon) */
    int b_ref;                  /* the reference batch of x_* */
    scv_carry_law law;          /* how samples were carried across batches */
    double x_now;               /* reference samples done so far */
    double x_star, lo, hi;      /* reference samples to the target (the calibrated median)
                                   and the band (hi +inf: its top never reaches it) */
    double p_reach;             /* P(reached within the horizon) */
    double horizon;             /* reference samples of the run's epoch bound */
    double nearest;             /* median past the horizon: the target value reached there
                                   with probability 1/2 (NaN otherwise) */
    int calibrated;             /* the band is calibrated (else the curve's bootstrap) */
    size_t n_examples;          /* ... on this many labelled examples */
    int n_evals;
    char curve[64];             /* "pow" / "exp" / "tail" and its rmse, the raw kind */
    char why[160];
} progress_pred;

void progress_free(progress *p);
/* A segment at batch B starts at `samples` in all (the previous one ends there). */
int progress_segment(progress *p, double samples, int batch);
/* The current segment has reached `samples`. */
void progress_advance(progress *p, double samples);
int progress_eval_add(progress *p, double samples, double y, double loss_x, double loss);
/* Back to `samples` in all (a failed segment is redone from the last checkpoint): later
 * evaluations and segment parts are dropped. */
void progress_rewind(progress *p, double samples);
/* The batch trained at `samples` (the segment holding it; 0: none). */
int progress_batch_at(const progress *p, double samples);
/* Reference samples at batch b_ref equivalent to `samples` in all (law.run_b's segments at
 * its read rate). */
double progress_ref_samples(const progress *p, double samples, int b_ref, scv_carry_law law);
/* The reference samples a crossing of the target at `samples` stands for: its position;
 * reached at the batch of the run's own read, helped by its level, where the reference
 * batch's curve crosses it (law.run_cross0) when that is later. */
double progress_crossing_samples(const progress *p, double samples, int b_ref, scv_carry_law law);
/* 1: a crossing at `samples` lies at the batch of the law's read off b_ref's curve (law.run_b,
 * within law.run_until), which its level helped, and b_ref's own crossing is not known
 * (law.run_cross0 NaN): it stands for no crossing at b_ref, only for one at law.run_b. */
int progress_level_helped(const progress *p, double samples, int b_ref, scv_carry_law law);
/* Fits and forecasts (cal: the band's calibration and the corpus prior, NULL: none; n_train:
 * samples an epoch; key: the job's "model dataset" for the prior, NULL: none; horizon:
 * reference samples of the epoch bound); never fails (out->ok = 0 with a reason when it
 * cannot predict). */
void progress_predict(const progress *p, scv_metric metric, double target, int b_ref, scv_carry_law law,
                      uint64_t seed, const scv_calib *cal, double n_train, const char *key, double horizon,
                      progress_pred *out);
#endif
