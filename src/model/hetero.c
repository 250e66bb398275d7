/*
 * hetero.c - a slow worker: absorbed, dropped or replaced, whichever the performance model
 * predicts finishes the work left sooner (issue 25, item 5). Pure (libc/libm).
 *
 * One worker of K computes at r times the speed of the others (r in (0, 1]: its throughput
 * over a normal worker's); the job has n iterations left at global batch B. With the
 * parallel-performance model (perf.c: t_compute(b) = c0 + c1 b [s], b samples per worker;
 * t_comm(K) [s]; overlap o), per iteration [s]:
 *
 *   absorb, balanced shares (dynamic batching): every worker finishes together at T,
 *     a normal worker b = (T - c0) / c1, the slow one b_s = (r T - c0) / c1, sum B:
 *       T = (c1 B + K c0) / (K - 1 + r)
 *     unless b_s falls under the controller's floor f B (scv_dynbatch_policy.min_share),
 *     then T = max((c0 + c1 f B) / r, c0 + c1 (1 - f) B / (K - 1));
 *   absorb, even shares (dynamic batching off): T = (c0 + c1 B / K) / r;
 *     c0 (the optimiser's step, the batch's fixed costs) runs at the slow worker's speed in
 *     both: no share shrinks it;
 *   the slow worker's drag on the allreduce: the ring waits for its slowest member, whose
 *     part of the collective (the reduction's and the copies' CPU work) runs at r:
 *       t_comm' = t_comm(K) (1 + d (1/r - 1)),   d = comm_drag, the share of the
 *     allreduce's time that is its members' CPU work (the rest, the link, is not slowed);
 *   t_absorb = T + t_comm' - o min(T, t_comm')
 *   drop:    t_iter(K - 1, B)   (the same B over one worker less; its share goes to the others)
 *   replace: t_iter(K, B)       (K normal workers)
 * and to finish [s]:
 *   absorb  n t_absorb                  (no idle: the shares move between iterations)
 *   drop    I_drop + n t_iter(K - 1, B)   (I_drop: the shrink's idle)
 *   replace I_rep + n t_iter(K, B)        (I_rep: the replacement's idle; only with a spare VM)
 * The choice is the smallest (ties: absorb, then drop: the least disruptive).
 *
 * comm_drag d = 0.4 is fitted on docs/BENCHMARKS.md "Dynamic batching on a heterogeneous
 * cluster" (K = 3, B = 192, one VM at H = 4, r = 0.25): the even split took 2.95x the H = 1
 * time and dynamic batching 1.82x (1.62x between them); the H = 1 iteration is 42% compute
 * (c1 B / K) and 58% allreduce and step, and only d ~ 0.4 gives both ratios (tests/test_plan.c
 * checks the model's 1.62x within 5%).
 *
 * Thresholds for the job (which knows r only when it finds the worker): the absorbing time
 * falls as r rises, the others do not depend on r, so
 *   drop_below    = the r at which absorb and drop take as long (drop under it; 1: drop
 *                   beats absorbing even a worker at full speed; 0: K = 1)
 *   replace_below = the r at which absorb and replace take as long, when replacing beats
 *                   dropping (else 0: never replace: under drop_below dropping is faster,
 *                   above it absorbing is)
 * so a worker found at r is replaced when a spare exists and r < replace_below, else dropped
 * when r < drop_below, else absorbed (kept), which is scv_hetero_predict's choice at r.
 *
 * A straggler rule's ratio is over the median worker's throughput; with K = 2 the median is
 * the mean of the two, so a worker at speed x shows 2x / (1 + x): scv_hetero_speed_of_ratio
 * turns the rule's ratio into r.
 */
#include "scv.h"
#include "model.h"

#include <math.h>
#include <string.h>

scv_hetero_policy scv_hetero_policy_default(void)
{
    return (scv_hetero_policy){
        .comm_drag = 0.4,       /* fitted on BENCHMARKS' 1.62x at H = 4 (above) */
        .floor_share = 0.02,    /* scv_dynbatch_policy_default().min_share */
        .drop_idle_s = 0.05,    /* a shrink in place: 32 ms measured (issue 25's figure) */
        .replace_idle_s = 1.0,  /* a straggler's replacement: 0.53-0.68 s measured (BENCHMARKS
                                   "bench straggler"), rounded up for a spawn on another VM */
    };
}

const char *scv_hetero_choice_name(scv_hetero_choice c)
{
    switch (c) {
    case SCV_HETERO_ABSORB: return "absorb";
    case SCV_HETERO_DROP: return "drop";
    case SCV_HETERO_REPLACE: return "replace";
    }
    return "?";
}

double scv_hetero_speed_of_ratio(double ratio, int K)
{
    if (!(ratio > 0)) return 0;
    if (K == 2) return ratio < 2 ? ratio / (2 - ratio) : INFINITY;
    return ratio;
}

double scv_hetero_ratio_of_speed(double r, int K)
{
    if (!(r > 0)) return 0;
    return K == 2 ? 2 * r / (1 + r) : r;
}

/* The compute part T of an iteration with the slow worker (above). */
static double slow_compute(const scv_perf_model *m, int K, double B, double r, int balanced, double floor_share)
{
    const double c0 = m->c0, c1 = m->c1;
    if (!balanced || K < 2 || c1 <= 0) return (c0 + c1 * B / K) / r;
    double T = (c1 * B + K * c0) / (K - 1 + r);
    if ((r * T - c0) / c1 >= floor_share * B) return T;
    double slow = (c0 + c1 * floor_share * B) / r, fast = c0 + c1 * (1 - floor_share) * B / (K - 1);
    return slow > fast ? slow : fast;
}

double scv_hetero_t_absorb(const scv_perf_model *m, int K, double B, double r, int balanced,
                           const scv_hetero_policy *pol)
{
    if (!(r > 0)) return INFINITY;
    if (r > 1) r = 1;
    double T = slow_compute(m, K, B, r, balanced, pol->floor_share);
    double tm = scv_perf_comm(m, K) * (1 + pol->comm_drag * (1 / r - 1));
    return T + tm - m->overlap * fmin(T, tm);
}

static double idle_or(double measured, double dflt) { return isfinite(measured) && measured >= 0 ? measured : dflt; }

int scv_hetero_predict(const scv_hetero_case *c, const scv_hetero_policy *pol, scv_hetero_pred *out, scv_err *err)
{
    memset(out, 0, sizeof *out);
    if (!c->perf || c->K < 2 || !(c->B >= c->K) || !(c->r > 0) || !(c->iters_left >= 0) || !isfinite(c->iters_left))
        return scv_err_set(err, SCV_EINVAL,
                           "hetero model: K = %d (>= 2), B = %g (>= K), r = %g (> 0) and the iterations left %g "
                           "(finite, >= 0) expected",
                           c->K, c->B, c->r, c->iters_left);
    const double n = c->iters_left;
    out->t_iter_absorb = scv_hetero_t_absorb(c->perf, c->K, c->B, c->r, c->balanced, pol);
    out->t_iter_drop = scv_perf_iter(c->perf, c->K - 1, c->B);
    out->t_iter_replace = scv_perf_iter(c->perf, c->K, c->B);
    out->drop_idle_s = idle_or(c->drop_idle_s, pol->drop_idle_s);
    out->replace_idle_s = idle_or(c->replace_idle_s, pol->replace_idle_s);
    out->absorb_s = n * out->t_iter_absorb;
    out->drop_s = c->no_drop ? INFINITY : out->drop_idle_s + n * out->t_iter_drop;
    out->replace_s = c->spare ? out->replace_idle_s + n * out->t_iter_replace : INFINITY;
    out->choice = SCV_HETERO_ABSORB;
    double best = out->absorb_s;
    if (out->drop_s < best) best = out->drop_s, out->choice = SCV_HETERO_DROP;
    if (out->replace_s < best) out->choice = SCV_HETERO_REPLACE;
    return SCV_OK;
}

/* The r in (0, 1] at which absorbing takes `other` seconds (absorbing falls as r rises;
 * a tie keeps the worker, as scv_hetero_predict does): 1 when absorbing at full speed is
 * slower, 0 when it is no slower down to the smallest r (nothing left to do, say). */
static double crossing(const scv_hetero_case *c, const scv_hetero_policy *pol, double other)
{
    const double n = c->iters_left;
    if (!(n * scv_hetero_t_absorb(c->perf, c->K, c->B, 1, c->balanced, pol) <= other)) return 1;
    double lo = 1e-6, hi = 1;
    if (n * scv_hetero_t_absorb(c->perf, c->K, c->B, lo, c->balanced, pol) <= other) return 0;
    for (int i = 0; i < 60; i++) {
        double mid = 0.5 * (lo + hi);
        if (n * scv_hetero_t_absorb(c->perf, c->K, c->B, mid, c->balanced, pol) <= other) hi = mid;
        else lo = mid;
    }
    return hi;
}

int scv_hetero_thresholds(const scv_hetero_case *c, const scv_hetero_policy *pol, double *drop_below,
                          double *replace_below, scv_err *err)
{
    scv_hetero_case at1 = *c;
    at1.r = 1;
    scv_hetero_pred p;
    int rc = scv_hetero_predict(&at1, pol, &p, err);
    if (rc) return rc;
    *drop_below = crossing(c, pol, p.drop_s);
    *replace_below = c->spare && p.replace_s < p.drop_s ? crossing(c, pol, p.replace_s) : 0;
    return SCV_OK;
}
