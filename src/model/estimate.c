/*
 * estimate.c - the operations on a prediction's band (estimate.h states the convention:
 * log ratios to the point, "up to" and "never" as -inf and +inf, none as NaN). Every rule
 * that combines bands is here, once: widening by an independent error (in quadrature), the
 * rest of a whole less the work done, a union, the mixture of a stored run's samples carried
 * from their batches, and an estimate's band at another batch.
 */
#include "model.h"

#include <math.h>

scv_band scv_band_none(void)
{
    return (scv_band){NAN, NAN};
}

int scv_band_known(scv_band b)
{
    return !isnan(b.lo) && !isnan(b.hi);
}

scv_band scv_band_of(double point, double lo, double hi)
{
    if (!(point > 0) || isnan(lo) || isnan(hi)) return scv_band_none();
    scv_band b = {lo > 0 ? log(lo / point) : -INFINITY, isfinite(hi) ? log(fmax(hi, 0) / point) : INFINITY};
    b.lo = fmin(b.lo, 0), b.hi = fmax(b.hi, 0);
    return b;
}

void scv_band_ends(scv_band b, double point, double *lo, double *hi)
{
    if (!scv_band_known(b)) {
        *lo = *hi = NAN;
        return;
    }
    *lo = point * exp(b.lo); /* exp(-inf) = 0: "up to" */
    *hi = isfinite(b.hi) ? point * exp(b.hi) : INFINITY;
}

scv_band scv_band_widen(scv_band b, double q_lo, double q_hi)
{
    if (!scv_band_known(b) || isnan(q_lo) || isnan(q_hi)) return b;
    double ql = fmin(q_lo, 0), qh = fmax(q_hi, 0);
    return (scv_band){-sqrt(b.lo * b.lo + ql * ql), sqrt(b.hi * b.hi + qh * qh)};
}

scv_band scv_band_less_done(scv_band b, double total, double rest)
{
    if (!scv_band_known(b) || !(rest > 0) || !(total > 0)) return scv_band_none();
    double low = rest - (1 - exp(b.lo)) * total, high = isfinite(b.hi) ? rest + (exp(b.hi) - 1) * total : INFINITY;
    return scv_band_of(rest, low > 0 ? low : 0, high);
}

scv_band scv_band_union(scv_band a, scv_band b)
{
    if (!scv_band_known(a) || !scv_band_known(b)) return scv_band_none();
    return (scv_band){fmin(a.lo, b.lo), fmax(a.hi, b.hi)};
}

scv_band scv_band_nonzero(scv_band b)
{
    return b.lo == 0 && b.hi == 0 ? scv_band_none() : b;
}

void scv_carry_err_at(const scv_carry_err *e, double b0, double B, double *q_lo, double *q_hi)
{
    *q_lo = *q_hi = NAN;
    if (!(b0 > 0) || !(B > 0)) return;
    if (B == b0) {
        *q_lo = *q_hi = 0;
        return;
    }
    if (!e->per_log) {
        *q_lo = e->q_lo, *q_hi = e->q_hi;
        return;
    }
    double L = log(B / b0);
    *q_lo = fmin(e->q_lo * L, e->q_hi * L), *q_hi = fmax(e->q_lo * L, e->q_hi * L);
}

double scv_estimate_mix_carried(const scv_estimate_mix *m, int B)
{
    double all = 0, at = 0;
    for (int k = 0; k < m->n; k++) all += m->samples[k], at += m->batch[k] == B ? m->samples[k] : 0;
    return all > 0 ? 1 - at / all : 0;
}

int scv_estimate_mix_err(const scv_estimate_mix *m, const scv_carry_err *e, int B, double *q_lo, double *q_hi)
{
    double all = 0, lo = 0, hi = 0;
    *q_lo = *q_hi = 0;
    for (int k = 0; k < m->n; k++) all += m->samples[k];
    if (!(all > 0)) return 0;
    for (int k = 0; k < m->n; k++) {
        double ql, qh, w = m->samples[k] / all;
        scv_carry_err_at(e, m->batch[k], B, &ql, &qh);
        if (!isfinite(ql) || !isfinite(qh)) return 0;
        lo += w * exp(ql), hi += w * exp(qh);
    }
    *q_lo = fmin(0, log(lo)), *q_hi = fmax(0, log(hi));
    return 1;
}

scv_estimate scv_estimate_none(void)
{
    return (scv_estimate){.source = SCV_TARGET_NOMINAL, .epochs = NAN, .band = scv_band_none(),
                          .carry = {NAN, NAN, 0}, .p_reach = NAN, .nearest = NAN};
}

scv_band scv_estimate_band_at(const scv_estimate *e, int B)
{
    double ql, qh;
    if (!(e->mix.n && scv_estimate_mix_err(&e->mix, &e->carry, B, &ql, &qh)))
        scv_carry_err_at(&e->carry, e->batch, B, &ql, &qh);
    return scv_band_nonzero(scv_band_widen(e->band, ql, qh));
}

void scv_estimate_price(const scv_estimate *e, scv_plan_point *pt)
{
    scv_band b = e && e->source != SCV_TARGET_NOMINAL ? scv_estimate_band_at(e, pt->batch) : scv_band_none();
    pt->time_lo_s = pt->time_hi_s = pt->cost_lo = pt->cost_hi = 0;
    if (!scv_band_known(b)) return;
    scv_band_ends(b, pt->time_s, &pt->time_lo_s, &pt->time_hi_s);
    scv_band_ends(b, pt->cost, &pt->cost_lo, &pt->cost_hi);
}

size_t scv_estimate_rerun_band(scv_estimate *e, const scv_calib *cal, scv_metric metric)
{
    double lo, hi;
    size_t n = 0;
    e->band = e->mix.n ? (scv_band){0, 0} : scv_band_none();
    e->n_calib = 0;
    if (cal && scv_calib_rerun_band(cal, metric, e->epochs, &lo, &hi, &n) == SCV_OK && n)
        e->band = scv_band_of(e->epochs, lo, hi), e->n_calib = n;
    return e->n_calib;
}
