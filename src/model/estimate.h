/*
 * estimate.h - one value type for a prediction and its band, and the few operations on it
 * (src/model/estimate.c; pure: libc and libm).
 *
 * A prediction is a point with a band. The band is kept in one convention, log ratios to
 * the point, so that scaling the point (epochs to iterations to seconds to dollars) keeps
 * it as it is:
 *
 *     lo = ln(low / point) <= 0 <= hi = ln(high / point)
 *
 * and its open ends are values of the type, not comments:
 *     lo = -INFINITY   "up to": no lower end (the work may be done already);
 *     hi = +INFINITY   "never": its top never reaches the target;
 *     lo, hi NaN       none: nothing is known of the spread (scv_band_none).
 *
 * The target's estimate (scv_estimate) is the epochs to the target at one batch, where it
 * came from (scv_target_source), its band there, the probability of reaching the target
 * within the run's epoch bound, and what carrying it to another batch adds to the band
 * (scv_carry_err, or a stored run's samples by batch, each carried from where it trained).
 * Its band at any batch is scv_estimate_band_at: the planner prices every point with it.
 */
#ifndef SCV_MODEL_ESTIMATE_H
#define SCV_MODEL_ESTIMATE_H

#include "scv.h"

typedef struct scv_band {
    double lo, hi;              /* ln(end / point); see above */
} scv_band;

/* No band: nothing known of the spread. */
scv_band scv_band_none(void);
/* 1 when b holds a band (both ends not NaN). */
int scv_band_known(scv_band b);
/* The band of point from its absolute ends: lo <= 0 is "up to", hi +inf "never", a NaN end
 * (or a point that is not > 0) none. */
scv_band scv_band_of(double point, double lo, double hi);
/* The absolute ends of b about point: *lo 0 for "up to", *hi +inf for "never", NaN for none. */
void scv_band_ends(scv_band b, double point, double *lo, double *hi);
/* b widened by an independent error whose own band is (q_lo, q_hi) in ln(true / carried):
 * each side's log width added in quadrature with the error's part on that side,
 *     lo' = -sqrt(lo^2 + min(q_lo, 0)^2),  hi' = sqrt(hi^2 + max(q_hi, 0)^2);
 * b unchanged when the error is not known (a NaN end); none stays none; open ends stay open. */
scv_band scv_band_widen(scv_band b, double q_lo, double q_hi);
/* The band of what is left of a whole when `rest` of its `total` is still to go, the
 * whole's band being b: the whole's absolute spread, all of it on the rest,
 *     low = rest - (1 - e^lo) total,  high = rest + (e^hi - 1) total,
 * as a band of rest (low <= 0: "up to"). None when b is none or rest is not > 0. */
scv_band scv_band_less_done(scv_band b, double total, double rest);
/* The span of two bands (the smallest band holding both): none when either is none. */
scv_band scv_band_union(scv_band a, scv_band b);
/* A band with no width (both ends 0) is none: "nothing known", not "exact". */
scv_band scv_band_nonzero(scv_band b);

/* The error that carrying a prediction from its batch b0 to another batch B adds, as
 * quantiles of ln(true / carried) (scv_carry_quantiles states them): per unit of ln(B / b0)
 * when per_log (a learning-rate rule's exponent), else the same at any batch but b0; 0 at
 * b0; NaN: not known. */
typedef struct scv_carry_err {
    double q_lo, q_hi;
    int per_log;
} scv_carry_err;
/* The error's quantiles from b0 to B into *q_lo <= *q_hi (0, 0 at B = b0; NaN: not known). */
void scv_carry_err_at(const scv_carry_err *e, double b0, double B, double *q_lo, double *q_hi);

/* The samples a stored run trained up to the target's crossing, by batch: an estimate read
 * off that run counts those at other batches than the one asked through the carry, whose
 * error they take on in proportion (scv_estimate_band_at). */
#define SCV_ESTIMATE_MIX_MAX 8
typedef struct scv_estimate_mix {
    int n;                      /* 0: not known */
    int batch[SCV_ESTIMATE_MIX_MAX];
    double samples[SCV_ESTIMATE_MIX_MAX];
} scv_estimate_mix;
/* The share of m's samples at batches other than B (0..1). */
double scv_estimate_mix_carried(const scv_estimate_mix *m, int B);
/* The error carrying m's samples to B adds, as (q_lo, q_hi) in ln(true / carried): with a
 * share w_s at batch b_s, ln sum_s w_s exp(q_s) at each side's quantile q_s of the carry from
 * b_s to B (0 at B itself), each side kept on its side of 0. 0: m or a quantile not known. */
int scv_estimate_mix_err(const scv_estimate_mix *m, const scv_carry_err *e, int B, double *q_lo, double *q_hi);

/* A prediction of the target: epochs at `batch` with their band, and how it carries. */
typedef struct scv_estimate {
    scv_target_source source;
    double epochs;              /* to the target's crossing at `batch` (> 0; NaN: none) */
    int batch;
    scv_band band;              /* of epochs at batch: the whole band (without mix) or, with a
                                   mix, the band before its carry (a stored run's reruns' spread;
                                   0-wide when that is not known) */
    double lag_epochs;          /* the run's smoothed rule trails the crossing by this (added to
                                   the epochs at every batch by the statistical model) */
    scv_carry_err carry;        /* carrying epochs to another batch */
    scv_estimate_mix mix;       /* a stored run's samples by batch (n 0: none) */
    double p_reach;             /* P(reached within the epoch bound) (NaN: not known) */
    double nearest;             /* likely out of reach: the value reached by the bound (NaN) */
    size_t n_calib;             /* the band was calibrated on this many examples (0: not) */
    long long from_run;         /* the stored run it was read off (0: none) */
    char curve[64];             /* the learning curve's form and fit ("": not from a curve) */
} scv_estimate;

/* An estimate of nothing: source NOMINAL, epochs NaN, no band, nothing known. */
scv_estimate scv_estimate_none(void);
/* The estimate's band at batch B: its band widened by the error of carrying to B (the mix's
 * when it has one and it is known, else the carry's from its batch), a zero-wide result none.
 *     band_at(B) = nonzero(widen(band, err(b0 -> B)))
 * Time and cost at B are proportional to the epochs there, so this is their band too. */
scv_band scv_estimate_band_at(const scv_estimate *e, int B);

/* A stored run's epochs taken as a new run's, as a rerun's are (LEARNT, CARRIED, and
 * `plan --target-run`): e's band becomes the corpus's reruns' spread at its epochs (cal,
 * metric: scv_calib_rerun_band), 0-wide where that is not known but e has a mix (its carry
 * then makes the band), else none. Returns the reruns it counted (0: none). */
struct scv_calib;
size_t scv_estimate_rerun_band(scv_estimate *e, const struct scv_calib *cal, scv_metric metric);

/* The band of a plan point's time and cost from the estimate's band at its batch (time and
 * cost are proportional to the epochs there): time_lo_s, time_hi_s, cost_lo, cost_hi; 0 where
 * there is none (and a top of never +inf). */
void scv_estimate_price(const scv_estimate *e, scv_plan_point *pt);

#endif
