/*
 * stat.c - statistical efficiency: how many iterations reach the target at global batch B.
 *
 * GNS (McCandlish et al. 2018, the default): with |g_b|^2 the mean squared norm of the local
 * gradients (b = B/K samples each) and |g_B|^2 that of the averaged gradient,
 *   |G|^2  ~ (B |g_B|^2 - b |g_b|^2) / (B - b)
 *   tr(S)  ~ (|g_b|^2 - |g_B|^2) / (1/b - 1/B)
 *   B_simple = sum tr(S) / sum |G|^2        (ratio of averages over iterations and configs)
 *   S(B) = S_min (1 + B_crit/B), B_crit = B_simple; S_min from the target E0 epochs at B0:
 *   S_min = (E0 N / B0) / (1 + B_crit / B0).
 * Scavenger (Tyagi & Sharma 2023): gamma = |g_b|^2 / |g_B|^2, normalised gamma/K;
 *   gamma/K = a + s / sqrt(B) (least squares over configurations, K > 1);
 *   epochs e(B) = e* + theta gamma/K; one reference pins e* = 0: theta = E0 / (gamma/K)(B0).
 * Both need measurements with K >= 2 (with K = 1 the two norms coincide).
 * A run that has read its own batch carry-over (carry.c, scv_carry_shift) sets by_exponent:
 *   iterations(B) = E0 N (B / B0)^exponent / B
 */
#include "scv.h"
#include "model.h"
#include "linfit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

double scv_gns_trace(int K, int B, double g_local, double g_global)
{
    if (K < 2 || !(g_local > 0) || !(g_global > 0)) return NAN;
    double b = (double)B / K;
    return (g_local - g_global) / (1 / b - 1.0 / B);
}

double scv_gns_b_simple(int K, int B, double g_local, double g_global)
{
    if (K < 2 || !(g_local > 0) || !(g_global > 0)) return NAN;
    double b = (double)B / K, g2 = (B * g_global - b * g_local) / (B - b);
    return g2 > 0 ? scv_gns_trace(K, B, g_local, g_global) / g2 : NAN;
}

static double gamma_norm(const scv_stat_model *m, double B)
{
    return m->gamma_a + m->gamma_s / sqrt(B);
}

double scv_stat_iterations(const scv_stat_model *m, double B)
{
    double lag = m->lag_epochs > 0 ? m->lag_epochs * m->n_train / B : 0;
    if (m->by_exponent) return m->target_epochs * m->n_train * pow(B / m->target_batch, m->exponent) / B + lag;
    if (m->kind == SCV_STAT_GNS) return m->s_min * (1 + m->b_simple / B) + lag;
    double e = m->e_star + m->theta * gamma_norm(m, B);
    return e * m->n_train / B + lag;
}

int scv_stat_fit(scv_stat_kind kind, const scv_config_stats *s, size_t n, double n_train,
                 double target_epochs, int target_batch, scv_stat_model *out, scv_err *err)
{
    memset(out, 0, sizeof *out);
    out->kind = kind;
    out->n_train = n_train;
    out->target_epochs = target_epochs;
    out->target_batch = target_batch;
    if (!(n_train > 0)) return scv_err_set(err, SCV_EINVAL, "statistical model: training-set size unknown");
    if (!(target_epochs > 0) || target_batch < 1)
        return scv_err_set(err, SCV_EINVAL,
                           "statistical model: the target needs epochs > 0 at a batch >= 1 "
                           "(--target-epochs E --base-batch B0, or --target-run)");
    double sum_tr = 0, sum_g2 = 0, x[64 * 2], y[64], w[64];
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const scv_config_stats *c = &s[i];
        if (c->workers < 2 || !(c->g_local > 0) || !(c->g_global > 0)) continue;
        double b = (double)c->batch / c->workers, B = c->batch;
        double wt = c->n_iters > 0 ? c->n_iters : 1;
        sum_g2 += wt * (B * c->g_global - b * c->g_local) / (B - b);
        sum_tr += wt * scv_gns_trace(c->workers, c->batch, c->g_local, c->g_global);
        if (m < 64) {
            x[2 * m] = 1;
            x[2 * m + 1] = 1 / sqrt(B);
            y[m] = (c->g_local / c->g_global) / c->workers;
            w[m] = wt;
            m++;
        }
    }
    out->n_points = (int)m;
    if (m == 0)
        return scv_err_set(err, SCV_EINVAL,
                           "statistical model: no configuration with K >= 2 and gradient norms "
                           "(the noise estimate needs local and averaged gradients to differ)");
    if (kind == SCV_STAT_GNS) {
        if (!(sum_g2 > 0) || !(sum_tr >= 0))
            return scv_err_set(err, SCV_ENOCONV,
                               "statistical model: the gradient signal |G|^2 is not resolved "
                               "(noise dominates); profile longer or with larger batches");
        out->b_simple = sum_tr / sum_g2;
        out->s_min = target_epochs * n_train / target_batch / (1 + out->b_simple / target_batch);
        snprintf(out->note, sizeof out->note, "B_simple = %.1f from %zu configuration(s)",
                 out->b_simple, m);
        return SCV_OK;
    }
    double c[2] = {0, 0};
    int distinct = 0;
    for (size_t i = 1; i < m; i++) distinct |= fabs(x[2 * i + 1] - x[1]) > 1e-12;
    if (distinct) {
        /* a and s of either sign: fit s >= 0 and, failing that, the mirrored s */
        if (scv_nnls(x, y, w, m, 2, 0, c) != 0) return scv_err_set(err, SCV_ENOCONV, "noise fit failed");
    } else {
        c[1] = 0;
        scv_nnls(x, y, w, m, 2, 2u, c);
        snprintf(out->note, sizeof out->note, "one batch size measured: noise taken as constant in B");
    }
    out->gamma_a = c[0];
    out->gamma_s = c[1];
    double g0 = gamma_norm(out, target_batch);
    if (!(g0 > 0)) return scv_err_set(err, SCV_ENOCONV, "statistical model: predicted noise at B0 is not positive");
    out->e_star = 0;
    out->theta = target_epochs / g0;
    return SCV_OK;
}
