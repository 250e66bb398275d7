/*
 * straggler.c - finds a worker that stays slow (Or et al., section 2 of the peer-systems
 * summary): per iteration, x_k = (b_k / t_k) / median_j (b_j / t_j) (throughput relative to
 * the median worker's, unitless), r_k <- (1 - alpha) r_k + alpha x_k (r_k = x_k at first);
 * worker k is a straggler once r_k < fraction has held for window_s seconds of training
 * (the sum of the iterations' durations) and min_iterations iterations in a row. Relative
 * throughput, not time, so uneven shares of the batch (a slow worker given fewer samples on
 * purpose) do not count against a worker.
 */
#include "straggler.h"
#include "../core/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

scv_straggler_rule scv_straggler_rule_default(void)
{
    return (scv_straggler_rule){.fraction = 0.8, .alpha = 0.1, .window_s = 5, .min_iterations = 10};
}

void scv_straggler_init(scv_straggler_state *s, const scv_straggler_rule *rule, int K)
{
    memset(s, 0, sizeof *s);
    s->rule = *rule;
    s->K = K < 0 ? 0 : K > SCV_MAX_WORKERS ? SCV_MAX_WORKERS : K;
    for (int k = 0; k < s->K; k++) s->ratio[k] = NAN;
}

int scv_straggler_update(scv_straggler_state *s, const double *t, const int64_t *b, double dt)
{
    if (!(s->rule.fraction > 0) || s->K < 2) return -1;
    double tp[SCV_MAX_WORKERS], sorted[SCV_MAX_WORKERS];
    int n = 0;
    for (int k = 0; k < s->K; k++) {
        tp[k] = b[k] > 0 && t[k] > 0 ? (double)b[k] / t[k] : NAN;
        if (isfinite(tp[k])) sorted[n++] = tp[k];
    }
    if (n < 2) return -1;
    double med = scv_median(sorted, (size_t)n);
    s->seen++;
    int found = -1;
    for (int k = 0; k < s->K; k++) {
        if (!isfinite(tp[k]) || !(med > 0)) continue;
        double x = tp[k] / med;
        s->ratio[k] = isnan(s->ratio[k]) ? x : (1 - s->rule.alpha) * s->ratio[k] + s->rule.alpha * x;
        if (s->ratio[k] < s->rule.fraction) {
            s->below_s[k] += dt > 0 ? dt : 0;
            s->below_n[k]++;
        } else {
            s->below_s[k] = 0, s->below_n[k] = 0;
        }
        if (!s->found[k] && s->below_n[k] >= s->rule.min_iterations && s->below_s[k] >= s->rule.window_s - 1e-6 &&
            (found < 0 || s->ratio[k] < s->ratio[found]))
            found = k;
    }
    if (found >= 0) s->found[found] = 1;
    return found;
}
