/*
 * stoprule.c - a segment's stopping rules (stoprule.h states them): the target window, the
 * noise-stability rule, the profiling rule and the iteration cap, evaluated on the numbers
 * of each iteration and evaluation. The one copy: the built-in trainer, the exec driver and
 * the loop's test fake feed it, so they stop at the same iterations. Pure: libc and libm.
 */
#include "scv.h"
#include "stoprule.h"

#include <math.h>
#include <string.h>

/* One value into the window (sliding out the oldest once it holds W). */
static void window_push(scv_stoprule *r, double v, int from_hist)
{
    if (r->len == r->W) {
        memmove(r->win, r->win + 1, sizeof(double) * (size_t)(r->W - 1));
        memmove(r->from_hist, r->from_hist + 1, (size_t)(r->W - 1));
        r->len--;
    }
    r->win[r->len] = v, r->from_hist[r->len++] = (char)from_hist;
}

void scv_stoprule_init(scv_stoprule *r, const scv_stoprule_spec *spec)
{
    memset(r, 0, sizeof *r);
    r->spec = *spec;
    r->spec.history = NULL, r->spec.n_history = 0;
    r->W = spec->window < 1 ? 1 : spec->window > SCV_TARGET_WINDOW_MAX ? SCV_TARGET_WINDOW_MAX : spec->window;
    r->prev_bs = r->b_simple = r->mean = NAN;
    for (int i = 0; spec->history && i < spec->n_history; i++) window_push(r, spec->history[i], 1);
}

int scv_stoprule_capped(const scv_stoprule *r, int64_t iteration)
{
    return r->spec.until_iterations > 0 && iteration >= r->spec.until_iterations;
}

/* The noise rule: B_simple over windows of noise_window iterations; stable when two
 * consecutive windows agree within noise_tol relative. */
static int noise_update(scv_stoprule *r, int64_t batch, double g_local, double g_global)
{
    const scv_stoprule_spec *s = &r->spec;
    if (!(s->noise_window > 0 && s->workers > 1 && isfinite(g_local) && isfinite(g_global))) return 0;
    r->nl += g_local, r->ng += g_global;
    if (++r->nn < s->noise_window) return 0;
    double bs = scv_gns_b_simple(s->workers, (int)batch, r->nl / r->nn, r->ng / r->nn);
    int stable = isfinite(bs) && isfinite(r->prev_bs) && fabs(bs - r->prev_bs) <= s->noise_tol * fmax(fabs(r->prev_bs), 1e-12);
    r->b_simple = r->prev_bs = bs;
    r->nl = r->ng = 0, r->nn = 0;
    return stable;
}

/* The profiling rule: Welford's running mean and variance of t_iter after the first
 * SCV_STOPRULE_TIME_SKIP iterations; known well enough when the mean's standard error is at
 * most time_rse of it. */
static int time_update(scv_stoprule *r, double t_iter)
{
    const scv_stoprule_spec *s = &r->spec;
    if (!(s->time_rse > 0 && r->seen > SCV_STOPRULE_TIME_SKIP && isfinite(t_iter))) return 0;
    double d = t_iter - r->t_mean;
    r->t_n++;
    r->t_mean += d / (double)r->t_n;
    r->t_m2 += d * (t_iter - r->t_mean);
    int min = s->time_min_iters > SCV_STOPRULE_TIME_MIN ? s->time_min_iters : SCV_STOPRULE_TIME_MIN;
    return r->t_n >= min && sqrt(r->t_m2 / (double)(r->t_n - 1) / (double)r->t_n) <= s->time_rse * r->t_mean;
}

scv_stop_verdict scv_stoprule_on_iteration(scv_stoprule *r, int64_t batch, double g_local, double g_global,
                                           double t_iter)
{
    r->seen++;
    if (noise_update(r, batch, g_local, g_global)) return SCV_STOP_NOISE;
    return time_update(r, t_iter) ? SCV_STOP_TIME : SCV_STOP_NONE;
}

scv_stop_verdict scv_stoprule_on_evaluation(scv_stoprule *r, double value)
{
    const scv_stoprule_spec *s = &r->spec;
    const int by_loss = s->target_loss > 0;
    if (!(s->target_accuracy > 0 || by_loss) || !isfinite(value)) return SCV_STOP_NONE;
    window_push(r, value, 0);
    double sum = 0;
    int n_hist = 0;
    for (int i = 0; i < r->len; i++) sum += r->win[i], n_hist += r->from_hist[i];
    r->mean = sum / (double)r->W;
    r->n_from_history = n_hist;
    if (r->len < r->W) return SCV_STOP_NONE;
    return (by_loss ? r->mean <= s->target_loss : r->mean >= s->target_accuracy) ? SCV_STOP_TARGET : SCV_STOP_NONE;
}

int scv_stoprule_window(const scv_stoprule *r, double *out, int cap)
{
    int n = r->len < cap ? r->len : cap;
    memcpy(out, r->win + (r->len - n), sizeof(double) * (size_t)n);
    return n;
}

double scv_stoprule_crossing(const double *place, int n, int W)
{
    if (W < 1 || n < W) return NAN;
    double now = 0, before = 0;
    for (int j = 0; j < W; j++) now += place[j] / W;
    if (n > W)
        for (int j = 1; j <= W; j++) before += place[j] / W;
    else
        before = W > 1 ? now - (place[0] - place[W - 1]) / (W - 1) : 0;
    return 0.5 * (before + now);
}

long scv_stoprule_reached(const double *x, const double *y, size_t n, int dir, double target, int W, double *cross)
{
    scv_stoprule r;
    scv_stoprule_spec spec = {.window = W};
    if (dir < 0) spec.target_loss = target;
    else spec.target_accuracy = target;
    *cross = NAN;
    if (dir < 0 && !(target > 0)) return -1; /* (a loss target the rule does not hold) */
    scv_stoprule_init(&r, &spec);
    for (size_t i = 0; i < n; i++) {
        if (scv_stoprule_on_evaluation(&r, y[i]) != SCV_STOP_TARGET) continue;
        double place[SCV_TARGET_WINDOW_MAX + 1];
        int k = 0;
        for (size_t j = i + 1; j-- > 0 && k <= r.W;)
            if (isfinite(y[j])) place[k++] = x[j];
        *cross = fmin(scv_stoprule_crossing(place, k, r.W), x[i]);
        return (long)i;
    }
    return -1;
}

void scv_stoprule_means(const double *y, size_t n, int W, double *m)
{
    scv_stoprule r;
    scv_stoprule_spec spec = {.window = W, .target_accuracy = INFINITY};
    scv_stoprule_init(&r, &spec);
    for (size_t i = 0; i < n; i++) {
        scv_stoprule_on_evaluation(&r, y[i]);
        m[i] = r.len >= r.W ? r.mean : NAN;
    }
}

const char *scv_stop_verdict_name(scv_stop_verdict v)
{
    static const char *const names[] = {"none", "iterations", "target", "noise_stable", "time_stable"};
    return (unsigned)v < sizeof names / sizeof names[0] ? names[v] : "?";
}
