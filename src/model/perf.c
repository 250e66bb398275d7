/*
 * perf.c - the parallel performance model: iteration time of K workers at global batch B.
 *
 *   t_compute(b) = c0 + c1 b                 [s], b = B/K samples per worker; fitted on the
 *                                            measured non-communication time t_iter - t_comm
 *                                            (forward, backward, batch gather, optimiser)
 *   ring allreduce:   t_comm(K) = 2(K-1) alpha + 2((K-1)/K) M beta   [alpha s, beta s/byte]
 *   parameter server: t_comm(K) = alpha + beta K (K > 1)             [alpha s, beta s/worker]
 *   t_iter = t_compute + t_comm - overlap min(t_compute, t_comm)
 * A slower link than the measured one multiplies the bandwidth term (the one with beta) by
 * a factor (scv_perf_comm_scaled; the planner's mixed clusters).
 *
 * Sparse collectives (the trainer's exchange and the planner's compression options), a Top-k
 * of density c (k = c n) of a gradient of M bytes over N workers, alpha s per message and
 * beta s per byte (AR-Topk paper, Table I and Eq. 4):
 *   Allgather Top-k (values and indices):  alpha log2 N + 2 M c beta (N - 1)
 *   AR-Topk, ring allreduce of the values: alpha (2(N-1) + log2 N) + M c beta (2(N-1)/N + log2 N)
 *   AR-Topk, tree allreduce:               3 alpha log2 N + 3 M c beta log2 N
 * (the log2 N terms of AR-Topk are the broadcast of the chosen worker's indices).
 * A planner's communication option (scv_perf_comm_option), with g the bandwidth factor:
 *   dense    t_comm(K) with beta g
 *   topk     the collective's cost above at c = 1/cf with beta g (auto: the cheapest of the
 *            three; artopk: the cheaper of its ring and tree forms); ring models only: the
 *            parameter-server form has no per-byte beta to price k values and indices with
 *   selsync  (1 - LSSR) t_comm(K) with beta 2g  (the synchronisation averages the parameters
 *                                               and the momenta: 2M bytes; LSSR 0: beta g,
 *                                               every step is synchronous SGD)
 *            + ceil(log2 K) alpha_msg           (every step's allreduce of the flags: its
 *                                               latency; t_comm(K) with beta 0 when unprobed)
 * The sparse costs and the flags take alpha_msg, a small message's latency, when the trainer's
 * probes measured it: t_latency(K) = ceil(log2 K) alpha_msg (recursive doubling), averaged over
 * the probed K. The dense fit's alpha is what a 1 MB allreduce costs beyond its bytes per
 * message (pipelining, the token bucket's bursts, waiting for the last worker): 10 ms against
 * 0.1-1 ms probed on the emulated 78 Mbit/s links, and Top-k was predicted 2x too slow with it.
 *
 * Each part is fitted by weighted least squares on relative error (w = 1/y^2) with
 * non-negative coefficients (compute's weights 1/t_iter^2: it is t_iter - t_comm, and errs as
 * t_iter does). Coefficients the data cannot identify are pinned and named: one per-worker
 * batch among the points whose compute is at least a quarter of t_iter -> c0 = 0 (compute
 * proportional to b); no K > 1 -> no communication;
 * one K > 1 (ring) -> alpha = 0, one K > 1 (ps) -> beta = 0. The trainer does not overlap
 * communication with compute, so overlap is an input (default 0), not fitted.
 */
#include "scv.h"
#include "model.h"
#include "linfit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double scv_perf_compute(const scv_perf_model *m, double b) { return m->c0 + m->c1 * b; }

double scv_perf_sample_floor(const scv_config_stats *s, size_t n)
{
    double f = NAN;
    for (size_t i = 0; s && i < n; i++) {
        double b = s[i].workers > 0 ? (double)s[i].batch / s[i].workers : 0, v = s[i].t_compute / b;
        if (b > 0 && v > 0 && isfinite(v) && !(v >= f)) f = v;
    }
    return f;
}

double scv_perf_comm(const scv_perf_model *m, int K) { return scv_perf_comm_scaled(m, K, 1); }

/* The bandwidth term (the one with beta) times f; the latency term (alpha) as fitted. */
double scv_perf_comm_scaled(const scv_perf_model *m, int K, double f)
{
    if (K <= 1) return 0;
    if (m->topology == SCV_TOPO_PS) return m->alpha + m->beta * K * f;
    return 2.0 * (K - 1) * m->alpha + 2.0 * ((double)(K - 1) / K) * m->model_bytes * m->beta * f;
}

double scv_perf_iter(const scv_perf_model *m, int K, double B)
{
    double tc = scv_perf_compute(m, B / K), tm = scv_perf_comm(m, K);
    return tc + tm - m->overlap * fmin(tc, tm);
}

double scv_sparse_cost(scv_sparse_coll how, double alpha, double beta, double M, double c, int N)
{
    if (N < 2) return 0;
    const double lg = log2((double)N), Mc = M * c;
    switch (how) {
    case SCV_SPARSE_ALLGATHER: return alpha * lg + 2 * Mc * beta * (N - 1);
    case SCV_SPARSE_AR_RING: return alpha * (2.0 * (N - 1) + lg) + Mc * beta * (2.0 * (N - 1) / N + lg);
    case SCV_SPARSE_AR_TREE: return 3 * alpha * lg + 3 * Mc * beta * lg;
    }
    return INFINITY;
}

scv_sparse_coll scv_sparse_choose(double alpha, double beta, double M, double c, int N)
{
    scv_sparse_coll best = SCV_SPARSE_ALLGATHER;
    for (int h = SCV_SPARSE_AR_RING; h <= SCV_SPARSE_AR_TREE; h++)
        if (scv_sparse_cost((scv_sparse_coll)h, alpha, beta, M, c, N) < scv_sparse_cost(best, alpha, beta, M, c, N))
            best = (scv_sparse_coll)h;
    return best;
}

const char *scv_sparse_name(scv_sparse_coll how)
{
    return how == SCV_SPARSE_ALLGATHER ? "allgather" : how == SCV_SPARSE_AR_RING ? "artopk-ring" : "artopk-tree";
}

double scv_perf_comm_option(const scv_perf_model *m, int K, const scv_plan_comm *o, double g, scv_sparse_coll *coll)
{
    if (coll) *coll = SCV_SPARSE_ALLGATHER;
    if (!o || o->kind == SCV_PLAN_DENSE) return scv_perf_comm_scaled(m, K, g);
    const double a = m->alpha_msg > 0 ? m->alpha_msg : m->alpha; /* per small message */
    if (o->kind == SCV_PLAN_SELSYNC) /* the flags every step; a synchronisation's bytes */
        return (1 - o->lssr) * scv_perf_comm_scaled(m, K, (o->lssr > 0 ? 2 : 1) * g) +
               (m->alpha_msg > 0 ? a * ceil(log2((double)K)) : scv_perf_comm_scaled(m, K, 0));
    if (m->topology == SCV_TOPO_PS || !(o->cf > 1)) return NAN;
    const double c = 1 / o->cf, b = m->beta * g;
    scv_sparse_coll h;
    if (o->collective == SCV_COLL_ALLGATHER) h = SCV_SPARSE_ALLGATHER;
    else if (o->collective == SCV_COLL_ARTOPK)
        h = scv_sparse_cost(SCV_SPARSE_AR_RING, a, b, m->model_bytes, c, K) <=
                    scv_sparse_cost(SCV_SPARSE_AR_TREE, a, b, m->model_bytes, c, K)
                ? SCV_SPARSE_AR_RING
                : SCV_SPARSE_AR_TREE;
    else h = scv_sparse_choose(a, b, m->model_bytes, c, K);
    if (coll) *coll = h;
    return scv_sparse_cost(h, a, b, m->model_bytes, c, K);
}

static void comm_features(scv_topology kind, int K, double M, double *f)
{
    if (kind == SCV_TOPO_PS) {
        f[0] = 1;
        f[1] = K;
    } else {
        f[0] = 2.0 * (K - 1);
        f[1] = 2.0 * ((double)(K - 1) / K) * M;
    }
}

static void note_add(scv_perf_model *m, const char *s)
{
    size_t len = strlen(m->note);
    snprintf(m->note + len, sizeof m->note - len, "%s%s", len ? "; " : "", s);
}

int scv_perf_fit(const scv_config_stats *s, size_t n, scv_topology topology, double model_bytes,
                 scv_perf_model *out, scv_err *err)
{
    double overlap = out->overlap; /* an input: keep what the caller set */
    memset(out, 0, sizeof *out);
    out->topology = topology;
    out->model_bytes = model_bytes;
    out->overlap = overlap >= 0 && overlap <= 1 ? overlap : 0;
    out->pinned = SCV_PIN_OVERLAP;
    if (n == 0) return scv_err_set(err, SCV_EINVAL, "performance model: no measured configuration");
    if (topology == SCV_TOPO_RING && !(model_bytes > 0))
        return scv_err_set(err, SCV_EINVAL, "performance model: the model size must be positive");
    for (size_t i = 0; i < n; i++) {
        const scv_config_stats *c = &s[i];
        if (c->workers < 1 || c->batch < c->workers || !(c->t_iter > 0) || !(c->t_comm >= 0) ||
            !(c->t_iter - c->t_comm > 0) || !isfinite(c->t_iter))
            return scv_err_set(err, SCV_EINVAL,
                               "performance model: configuration K=%d B=%d has invalid times "
                               "(t_iter %g s, t_comm %g s)", c->workers, c->batch, c->t_iter, c->t_comm);
    }
    double *x = malloc(sizeof(double) * 2 * n), *y = malloc(sizeof(double) * n),
           *w = malloc(sizeof(double) * n);
    if (!x || !y || !w) {
        free(x), free(y), free(w);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    /* compute part: t_iter - t_comm errs as t_iter does (w = 1 / t_iter^2), and a point where
     * compute is under SCV_PERF_FIRM_SHARE of t_iter does not identify the intercept (at K = 2 on
     * slow links, compute is the small difference of two large times) */
    double b0 = NAN;
    int distinct_b = 0;
    for (size_t i = 0; i < n; i++) {
        double b = (double)s[i].batch / s[i].workers;
        x[2 * i] = 1;
        x[2 * i + 1] = b;
        y[i] = s[i].t_iter - s[i].t_comm;
        w[i] = 1 / (s[i].t_iter * s[i].t_iter);
        if (y[i] < SCV_PERF_FIRM_SHARE * s[i].t_iter) continue;
        if (isnan(b0)) b0 = b;
        else if (fabs(b - b0) > 1e-9 * b0) distinct_b = 1;
    }
    double c[2] = {0, 0};
    unsigned fixed = 0;
    if (!distinct_b) {
        fixed = 1; /* c0 = 0 */
        out->pinned |= SCV_PIN_C0;
        note_add(out, "one per-worker batch measured where compute is a firm share of the iteration: compute taken "
                      "as proportional to b (c0 = 0)");
    }
    scv_nnls(x, y, w, n, 2, fixed, c);
    out->c0 = c[0];
    out->c1 = c[1];
    /* communication part, from K > 1 */
    size_t m = 0;
    int k0 = 0, distinct_k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i].workers < 2) continue;
        if (!k0) k0 = s[i].workers;
        if (s[i].workers != k0) distinct_k = 1;
        comm_features(topology, s[i].workers, model_bytes, x + 2 * m);
        y[m] = s[i].t_comm;
        w[m] = 1 / fmax(y[m] * y[m], 1e-12);
        m++;
    }
    if (m == 0) {
        out->pinned |= SCV_PIN_ALPHA | SCV_PIN_BETA;
        note_add(out, "no K > 1 measured: communication not identified (taken as 0)");
    } else {
        double d[2] = {0, 0};
        fixed = 0;
        if (!distinct_k) {
            fixed = topology == SCV_TOPO_PS ? 2u : 1u;
            out->pinned |= topology == SCV_TOPO_PS ? SCV_PIN_BETA : SCV_PIN_ALPHA;
            note_add(out, topology == SCV_TOPO_PS
                              ? "one K > 1 measured: communication taken as constant in K (beta = 0)"
                              : "one K > 1 measured: latency term pinned (alpha = 0)");
        }
        scv_nnls(x, y, w, m, 2, fixed, d);
        out->alpha = d[0];
        out->beta = d[1];
    }
    free(x);
    free(y);
    free(w);
    /* a small message's latency, from the probes: t_latency(K) = ceil(log2 K) alpha_msg */
    double lat = 0;
    int n_lat = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i].workers > 1 && s[i].t_latency > 0 && isfinite(s[i].t_latency))
            lat += s[i].t_latency / ceil(log2((double)s[i].workers)), n_lat++;
    out->alpha_msg = n_lat ? lat / n_lat : 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        double pred = scv_perf_iter(out, s[i].workers, s[i].batch);
        sum += fabs(pred - s[i].t_iter) / s[i].t_iter;
    }
    out->mare = sum / (double)n;
    out->n_points = (int)n;
    return SCV_OK;
}

/*
 * Amdahl's law for the compute time of one worker on n threads:
 *   t(n) = t1 ((1 - f) + f / n)  =  a + b / n,   a = t1 (1 - f) [s], b = t1 f [s]
 * linear in (1, 1/n): weighted least squares on relative error (w = 1/t^2) with a, b >= 0,
 * then t1 = a + b and f = b / (a + b) (so f lies in [0, 1]). Needs two distinct n.
 */
int scv_amdahl_fit(const int *threads, const double *t, size_t n, double *f, double *t1,
                   scv_err *err)
{
    *f = 0, *t1 = 0;
    int distinct = 0;
    for (size_t i = 0; i < n; i++) {
        if (threads[i] < 1 || !(t[i] > 0) || !isfinite(t[i]))
            return scv_err_set(err, SCV_EINVAL, "Amdahl fit: invalid measurement %zu (%d thread(s), %g s)",
                               i, threads[i], t[i]);
        distinct |= threads[i] != threads[0];
    }
    if (!distinct)
        return scv_err_set(err, SCV_EINVAL,
                           "Amdahl fit: compute times at two or more thread counts are needed");
    double *x = malloc(sizeof(double) * 2 * n), *w = malloc(sizeof(double) * n);
    if (!x || !w) {
        free(x), free(w);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        x[2 * i] = 1;
        x[2 * i + 1] = 1.0 / threads[i];
        w[i] = 1 / (t[i] * t[i]);
    }
    double c[2] = {0, 0};
    int rc = scv_nnls(x, t, w, n, 2, 0, c);
    free(x), free(w);
    if (rc != 0 || !(c[0] + c[1] > 0))
        return scv_err_set(err, SCV_ENOCONV, "Amdahl fit: no solution");
    *t1 = c[0] + c[1];
    *f = c[1] / *t1;
    return SCV_OK;
}

/* The universal prior (the paper's no-search model): where the measurements could not
 * identify a parameter, take the shape learnt from other jobs on the same VM type and
 * calibrate its level to what this job measured.
 *   c0 pinned (one per-worker batch b1 measured, compute t_c1):
 *       c0 = min(prior c0, t_c1 / 2),  c1 = (t_c1 - c0) / b1
 *   alpha and beta pinned (no K > 1): alpha, beta = the prior's (ring: per step and per
 *       byte, so they carry across model sizes; ps: per iteration and per worker)
 *   one of them pinned (one K > 1, K1, measured comm t_m1):
 *       (alpha, beta) = s (prior alpha, prior beta), s = t_m1 / t_comm_prior(K1)
 * Returns the number of parameters it set (0: nothing was pinned or the prior has none). */
int scv_perf_apply_prior(scv_perf_model *m, const scv_perf_model *prior, const scv_config_stats *s, size_t n)
{
    if (!prior || prior->topology != m->topology) return 0;
    int set = 0;
    if ((m->pinned & SCV_PIN_C0) && prior->c0 > 0 && n) {
        double b = (double)s[0].batch / s[0].workers, tc = s[0].t_iter - s[0].t_comm;
        if (tc > 0 && b > 0) {
            m->c0 = fmin(prior->c0, tc / 2);
            m->c1 = (tc - m->c0) / b;
            m->pinned &= ~SCV_PIN_C0;
            set++;
        }
    }
    unsigned both = SCV_PIN_ALPHA | SCV_PIN_BETA;
    if ((m->pinned & both) && (prior->alpha > 0 || prior->beta > 0)) {
        double scale = 1;
        if ((m->pinned & both) != both) { /* one K > 1 measured: keep its level */
            int k1 = 0;
            double t1 = 0;
            for (size_t i = 0; i < n && !k1; i++)
                if (s[i].workers > 1) k1 = s[i].workers, t1 = s[i].t_comm;
            double f[2];
            comm_features(m->topology, k1, m->model_bytes, f);
            double tp = prior->alpha * f[0] + prior->beta * f[1];
            scale = tp > 0 && t1 > 0 ? t1 / tp : 1;
        }
        m->alpha = scale * prior->alpha;
        m->beta = scale * prior->beta;
        m->pinned &= ~both;
        set += 2;
    }
    if (set) {
        note_add(m, "unidentified parameters from the universal prior (other jobs on this VM type)");
        double sum = 0;
        for (size_t i = 0; i < n; i++) sum += fabs(scv_perf_iter(m, s[i].workers, s[i].batch) - s[i].t_iter) / s[i].t_iter;
        m->mare = n ? sum / (double)n : m->mare;
    }
    return set;
}
