/*
 * plan.c - the planner: enumerate (VM type, K, B) and (mixed cluster, B) under constraints,
 * predict each one's iteration time (perf model), iterations to target (statistical model),
 * wall time T = iterations * t_iter [s] and cost C = K * T / 3600 * price [$], compute the
 * Pareto front of (T, C), and pick the configuration the objective asks for.
 *
 * The front and the choice on it, and what a point costs the run from where it stands: choose.c.
 *
 * VM types without measurements (scv_extrap): compute time t_c [s] (c0 + c1 b of the perf
 * model) is carried to type v as follows; communication is kept as measured.
 *   - GPU types are never predicted from CPU measurements (nor CPU types from GPU ones):
 *     left out and counted, unless the request states an assumed GPU speed-up g > 0, in
 *     which case t_c(v) = t_c / g (SCV_EXTRAP_GPU_ASSUMED).
 *   - another GPU type from GPU measurements: t_c as measured (SCV_EXTRAP_GPU_AS_MEASURED).
 *   - CPU types: a worker on v uses n_v threads (its vCPUs, capped by worker_threads when
 *     set); the measurements used n_m threads. Same n: t_c as measured
 *     (SCV_EXTRAP_SAME_THREADS, or SCV_EXTRAP_NONE on the measured type itself). Different n
 *     with a measured parallel fraction f, Amdahl: t(n) = t(1) ((1 - f) + f / n), so
 *         t_c(v) = t_c ((1 - f) + f / n_v) / ((1 - f) + f / n_m)      (SCV_EXTRAP_AMDAHL);
 *     without f: t_c as measured, marked SCV_EXTRAP_NO_SCALING (no vCPU-proportional gain).
 *
 * Mixed clusters (req->mixes; docs/MODEL.md "Mixed clusters"): count_t workers of each type t,
 * K = sum_t count_t, every B of req->batches (B >= K, the per-worker bounds on B/K).
 *   compute: s_t is type t's scale above (a type left out leaves the mix out, counted); a
 *     worker of type t with per-worker batch b takes s_t (c0 + c1 b). Dynamic batching (the
 *     trainer's --dynamic-batching) gives each type the batch at which all finish together:
 *         s_t (c0 + c1 b_t) = T_c for every t,  sum_t count_t b_t = B
 *         T_c = (c1 B + c0 K) / sum_t (count_t / s_t),   b_t = (T_c / s_t - c0) / c1
 *     A type whose b_t < 1 (too slow to keep up) is held at b_t = 1 and the others solved
 *     again for the rest of B; T_c is then the largest of their finish times. c1 = 0: the
 *     even split b_t = B/K and T_c = max_t s_t c0.
 *   communication: the ring runs at the mix's slowest link; with the catalog's net_gbps
 *     known for the measured type m and for the types, the bandwidth term is multiplied by
 *         g = max(1, net(m) / min_t net(t))          (scv_perf_comm_scaled)
 *     (never below 1: homogeneous points keep communication as measured, so a mix of faster
 *     links than m's must not beat the same types unmixed); unknown net: g = 1.
 *   t_iter = T_c + t_comm - overlap min(T_c, t_comm); memory: each type's b_t must fit its
 *     VM (else the point is left out, counted in n_excluded_memory); cost =
 *     sum_t count_t p_t T / 3600, price_hr = sum_t count_t p_t / K (the mean per worker);
 *     extrap: the least certain of its types' (order in extrap_rank()).
 *
 * Communication options (req->comms; docs/MODEL.md "Compression in the plan"): every
 * configuration above is planned dense (exactly as without options) and once under each
 * option that is not dense:
 *   t_comm  scv_perf_comm_option (perf.c): Top-k at density 1/cf over the option's
 *           collective (auto: the cheapest by the model), or SelSync's
 *           (1 - LSSR) x allreduce of 2M bytes + LSSR x the flags' latency, with a mix's
 *           bandwidth factor g on beta
 *   t_iter  t_c + t_comm - overlap min(t_c, t_comm), + t_compress per Top-k step when the
 *           request has a measured one; measured iteration times replace dense points only
 *   iterations = the statistical model's x iter_factor: the user's assumption (1: as
 *           dense), NOT a model of what compression or local steps do to convergence;
 *           res->comm_note says so.
 * The result also holds the dense points' own front and the objective's choice among them
 * (front_dense, chosen_dense): the plan without compression, beside the plan with it.
 *
 * Spot with the risk (req->spot_risk with SCV_PRICE_SPOT; model/spot.c): each point's time
 * becomes T0 / (1 - rho), rho = Lam (L + R c) / 3600 the share of wall time its workers'
 * preemptions cost (c = 1 - thr(K-1)/thr(K) at the same B, by this file's models:
 * scv_plan_thr_less), and its cost (K p T - N u p) / 3600 with N = Lam T / 3600 (u: the
 * seconds a preempted worker goes unbilled, scv_spot_unbilled_s); rho >= 1
 * leaves the point out. The front and the choice are then made on the expected figures.
 */
#include "scv.h"
#include "model.h"
#include "plan_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

scv_plan_policy scv_plan_policy_default(void)
{
    scv_plan_policy p = {
        .knee_max_cost_per_time = 1.0, .mix_min_share = 0.02, .degenerate_c1_share = 0.01, .sustained_s = 0.5};
    return p;
}

void scv_plan_result_free(scv_plan_result *r)
{
    if (!r) return;
    free(r->points);
    free(r->front);
    free(r->front_dense);
    free(r);
}

/* ---- VM-type extrapolation ---- */
static int worker_threads_on(const scv_plan_request *req, const scv_vm_type *v)
{
    int n = v->vcpus > 0 ? v->vcpus : 1;
    return req->worker_threads > 0 && req->worker_threads < n ? req->worker_threads : n;
}

/* Amdahl time factor relative to one thread: (1 - f) + f / n */
static double amdahl(double f, int n) { return (1 - f) + f / n; }

/* How compute measured on m carries to v: returns 0 (and the scale, how) or -1 to leave
 * v out (another kind of processor and no stated assumption). */
static int compute_rule(const scv_plan_request *req, const scv_vm_type *v, const scv_vm_type *m,
                        double *scale, scv_extrap *how)
{
    *scale = 1;
    *how = SCV_EXTRAP_NONE;
    if (m->gpus == 0 && v->gpus > 0) {
        if (!(req->gpu_speedup > 0) || !isfinite(req->gpu_speedup)) return -1;
        *scale = 1 / req->gpu_speedup;
        *how = SCV_EXTRAP_GPU_ASSUMED;
        return 0;
    }
    if (m->gpus > 0 && v->gpus == 0) return -1;
    if (m->gpus > 0) {
        if (v != m) *how = SCV_EXTRAP_GPU_AS_MEASURED;
        return 0;
    }
    int nv = worker_threads_on(req, v);
    int nm = req->measured_threads > 0 ? req->measured_threads : worker_threads_on(req, m);
    if (nv == nm) {
        if (v != m) *how = SCV_EXTRAP_SAME_THREADS;
        return 0;
    }
    double f = req->parallel_fraction;
    if (req->measured_threads > 0 && f >= 0 && f <= 1) {
        *scale = amdahl(f, nv) / amdahl(f, nm);
        *how = SCV_EXTRAP_AMDAHL;
    } else {
        *how = SCV_EXTRAP_NO_SCALING;
    }
    return 0;
}

/* ---- mixed clusters ---- */

/* How uncertain an extrapolation is, for a mix's worst: measured, same threads, Amdahl
 * (a measured law), no scaling (known to miss the vCPUs), another GPU as measured, a GPU
 * speed-up the user assumed. */
static int extrap_rank(scv_extrap e)
{
    switch (e) {
    case SCV_EXTRAP_NONE: return 0;
    case SCV_EXTRAP_SAME_THREADS: return 1;
    case SCV_EXTRAP_AMDAHL: return 2;
    case SCV_EXTRAP_NO_SCALING: return 3;
    case SCV_EXTRAP_GPU_AS_MEASURED: return 4;
    case SCV_EXTRAP_GPU_ASSUMED: return 5;
    }
    return 5;
}

/* Dynamic batching over the n types of a mix (count[i] workers of compute scale s[i] > 0):
 * per-worker batches b[i] >= lo with sum count[i] b[i] = B, every worker not held at lo
 * finishing together. Returns the compute time T_c (the last worker's); *held counts the
 * types held at lo. Equations in the header comment. */
static double mix_split(double c0, double c1, const double *s, const int *count, int n, double B, double lo,
                        double *b, int *held)
{
    int K = 0, fixed[SCV_MIX_MAX_TYPES] = {0};
    for (int i = 0; i < n; i++) K += count[i];
    *held = 0;
    if (!(c1 > 0)) { /* compute does not depend on b: the even split, the slowest sets T_c */
        double T = 0;
        for (int i = 0; i < n; i++) b[i] = B / K, T = fmax(T, s[i] * (c0 + c1 * b[i]));
        return T;
    }
    double T = 0;
    for (int round = 0; round <= n; round++) { /* each round holds at least one more type */
        double rest = B, k = 0, S = 0;
        for (int i = 0; i < n; i++)
            if (fixed[i]) rest -= count[i] * lo;
            else k += count[i], S += count[i] / s[i];
        if (!(S > 0)) break; /* every type held (B = K lo): T_c from the held ones below */
        T = (c1 * rest + c0 * k) / S;
        int moved = 0;
        for (int i = 0; i < n; i++) {
            if (fixed[i]) continue;
            b[i] = (T / s[i] - c0) / c1;
            if (b[i] < lo * (1 - 1e-12)) fixed[i] = 1, moved = 1;
        }
        if (!moved) break;
    }
    double Tc = T;
    for (int i = 0; i < n; i++)
        if (fixed[i]) {
            b[i] = lo;
            (*held)++;
            Tc = fmax(Tc, s[i] * (c0 + c1 * lo));
        }
    return Tc;
}

/* The bandwidth factor of a mix (header comment) and, in *slow, its type with the slowest
 * known link (the first type when none is known). */
static double mix_link(const scv_catalog *cat, const scv_vm_mix *mx, const scv_vm_type *mv, int *slow)
{
    double net_min = INFINITY;
    *slow = mx->vm[0];
    for (int i = 0; i < mx->n; i++) {
        double net = cat->vms[mx->vm[i]].net_gbps;
        if (net > 0 && isfinite(net) && net < net_min) net_min = net, *slow = mx->vm[i];
    }
    double ref = mv->net_gbps;
    if (!(ref > 0) || !isfinite(ref) || !isfinite(net_min)) return 1;
    return fmax(1, ref / net_min);
}

/* The compute model at per-worker batch b; where the fit put (next to) nothing on the sample
 * (c1 under policy.degenerate_c1_share of floor, the measured per-sample least:
 * scv_perf_sample_floor; NaN: none), never under b x floor. */
static double compute_at(const scv_perf_model *m, const scv_plan_policy *pol, double floor, double b)
{
    double t = scv_perf_compute(m, b);
    return isfinite(floor) && m->c1 < pol->degenerate_c1_share * floor && t < floor * b ? floor * b : t;
}

/* A measurement's compute (t_iter - t_comm) over the fit's at its per-worker batch; NaN where
 * that compute is not a firm share of its iteration (SCV_PERF_FIRM_SHARE: on slow links it is
 * the small difference of two large times). */
static double measured_ratio(const scv_plan_request *req, const scv_plan_policy *pol, double floor,
                             const scv_config_stats *m)
{
    double y = m->t_iter - m->t_comm, mod = compute_at(req->perf, pol, floor, (double)m->batch / m->workers);
    return y >= SCV_PERF_FIRM_SHARE * m->t_iter && mod > 0 && isfinite(y / mod) ? y / mod : NAN;
}

/* A measurement long enough to hold a CPU quota's throttling (policy.sustained_s). */
static int sustained(const scv_plan_policy *pol, const scv_config_stats *m)
{
    return m->n_iters * m->t_iter >= pol->sustained_s;
}

/* Whether K has a sustained measurement: then its bursts do not price anything. */
static int k_sustained(const scv_plan_request *req, const scv_plan_policy *pol, int K)
{
    for (size_t i = 0; req->measured && i < req->n_measured; i++)
        if (req->measured[i].workers == K && sustained(pol, &req->measured[i])) return 1;
    return 0;
}

/* A burst beside a sustained measurement at its K: priced as unmeasured. */
static int burst(const scv_plan_request *req, const scv_plan_policy *pol, const scv_config_stats *m)
{
    return !sustained(pol, m) && k_sustained(req, pol, m->workers);
}

/* The compute model at K workers, per-worker batch b: compute_at times the measured-to-
 * modelled ratio of K's measured batch nearest b in ln b (1 where K has no measurement whose
 * compute, t_iter - t_comm, is a firm share of its iteration: SCV_PERF_FIRM_SHARE). A worker's
 * compute rate depends on how busy it is: under a CPU quota one that waits on communication
 * computes in bursts at full speed and one that never waits is throttled to its quota. The
 * fit pools every K, so bench decide's MLP, fitted on K = 2 and 4, priced K = 1 at half its
 * time at both batches; once K = 1, B = 256 was measured (2.54 ms against 1.27), the
 * unmeasured K = 1, B = 64 looked twice as cheap as it was (0.33 ms against 0.75), and the
 * run switched there and never reached its target. Where K has a sustained measurement
 * (policy.sustained_s), only those set the ratio. */
static double compute_k(const scv_plan_request *req, const scv_plan_policy *pol, double floor, int K, double b)
{
    double best = INFINITY, ratio = 1;
    for (size_t i = 0; req->measured && i < req->n_measured; i++) {
        const scv_config_stats *m = &req->measured[i];
        double r = m->workers == K && !burst(req, pol, m) ? measured_ratio(req, pol, floor, m) : NAN;
        double d = fabs(log(m->batch / (K * b)));
        if (isfinite(r) && d < best) best = d, ratio = r;
    }
    return compute_at(req->perf, pol, floor, b) * ratio;
}

/* A configuration's measured mean iteration time where the request has one, else t_model;
 * t_model too for a burst at a K with a sustained measurement (policy.sustained_s). */
static double measured_t_iter(const scv_plan_request *req, const scv_plan_policy *pol, int K, int B, double t_model)
{
    for (size_t i = 0; req->measured && i < req->n_measured; i++) {
        const scv_config_stats *m = &req->measured[i];
        if (m->workers == K && m->batch == B && m->t_iter > 0) return burst(req, pol, m) ? t_model : m->t_iter;
    }
    return t_model;
}

/* ---- communication options ---- */

/* The variants every configuration is planned under, into var: dense first (the request's
 * first dense option, or -1), then each option that is not dense. Returns their count. */
static size_t comm_variants(const scv_plan_request *req, int *var)
{
    size_t n = 1;
    var[0] = -1;
    for (size_t i = 0; req->comms && i < req->n_comms; i++) {
        if (req->comms[i].kind != SCV_PLAN_DENSE) var[n++] = (int)i;
        else if (var[0] < 0) var[0] = (int)i;
    }
    return n;
}

/* The trainer's floor on a mix's per-worker batch: min_share of B, capped at 0.9 of an even
 * share (dynbatch.c), one sample at least. */
static double mix_floor(const scv_plan_policy *pol, int K, double B)
{
    return fmax(1, fmin(pol->mix_min_share, 0.9 / K) * B);
}

/* The compression kernels' measured seconds a step on the measured type (0: none). */
static double kernel_s(const scv_plan_request *req)
{
    return req->t_compress > 0 && isfinite(req->t_compress) ? req->t_compress : 0;
}

/* A point's step: compute tc and communication tm (overlapped), the compression kernels
 * t_kernels on a Top-k step (compute, on the point's type), times the option's measured
 * correction (t_iter_scale) where a run set one. */
static double step_time(const scv_plan_request *req, const scv_plan_point *p, double tc, double tm, double t_kernels)
{
    double t = tc + tm - req->perf->overlap * fmin(tc, tm);
    if (p->comm_opt.kind == SCV_PLAN_TOPK) t += t_kernels;
    return p->comm_opt.t_iter_scale > 0 ? t * p->comm_opt.t_iter_scale : t;
}

/* Fills p's communication fields for variant v at K workers and bandwidth factor g; returns
 * the step's communication seconds. */
static double set_comm(const scv_plan_request *req, int v, int K, double g, scv_plan_point *p)
{
    const scv_plan_comm *o = v >= 0 ? &req->comms[v] : NULL;
    int dense = !o || o->kind == SCV_PLAN_DENSE;
    p->comm = v;
    memset(&p->comm_opt, 0, sizeof p->comm_opt);
    if (!dense) p->comm_opt = *o;
    p->comm_opt.iter_factor = !dense && o->iter_factor > 0 ? o->iter_factor : 1;
    p->t_comm = scv_perf_comm_option(req->perf, K, o, g, &p->comm_coll);
    return p->t_comm;
}

/* Each option checked: SCV_EINVAL naming it. */
static int check_comms(const scv_plan_request *req, scv_err *err)
{
    for (size_t i = 0; req->comms && i < req->n_comms; i++) {
        const scv_plan_comm *o = &req->comms[i];
        char name[64];
        if (o->kind != SCV_PLAN_DENSE && o->kind != SCV_PLAN_TOPK && o->kind != SCV_PLAN_SELSYNC)
            return scv_err_set(err, SCV_EINVAL, "plan: communication option %zu: unknown kind %d", i, (int)o->kind);
        if (o->kind == SCV_PLAN_DENSE) continue;
        scv_plan_comm_format(o, name, sizeof name);
        if (!(o->iter_factor >= 0) || !isfinite(o->iter_factor))
            return scv_err_set(err, SCV_EINVAL, "plan: communication option %zu (%s): iterations relative to dense "
                               "%g: expected a factor > 0", i, name, o->iter_factor);
        if (o->kind == SCV_PLAN_TOPK) {
            if (!(o->cf > 1) || !isfinite(o->cf))
                return scv_err_set(err, SCV_EINVAL, "plan: communication option %zu (%s): the factor must be > 1", i,
                                   name);
            if (o->collective != SCV_COLL_AUTO && o->collective != SCV_COLL_ALLGATHER && o->collective != SCV_COLL_ARTOPK)
                return scv_err_set(err, SCV_EINVAL, "plan: communication option %zu (%s): unknown collective %d", i,
                                   name, (int)o->collective);
            if (req->perf->topology == SCV_TOPO_PS)
                return scv_err_set(err, SCV_EINVAL, "plan: communication option %zu (%s): Top-k is priced with the "
                                   "ring model's alpha and beta (per message, per byte); the parameter-server model "
                                   "has no per-byte term (use comm ring)", i, name);
        } else if (!(o->lssr >= 0 && o->lssr < 1))
            return scv_err_set(err, SCV_EINVAL, "plan: communication option %zu (%s): the share of local steps must "
                               "be in [0, 1)", i, name);
    }
    return SCV_OK;
}

/* res->comm_note: the iterations assumed per option, and whether kernel time is included. */
static void comm_note(const scv_plan_request *req, const int *var, size_t nvar, double t_compress,
                      scv_plan_result *res)
{
    char *w = res->comm_note, f0[32], f[32], name[64];
    size_t cap = sizeof res->comm_note;
    int same = 1, topk = 0;
    w[0] = 0;
    if (nvar < 2) return;
    double f1 = req->comms[var[1]].iter_factor > 0 ? req->comms[var[1]].iter_factor : 1;
    for (size_t i = 1; i < nvar; i++) {
        const scv_plan_comm *o = &req->comms[var[i]];
        same &= (o->iter_factor > 0 ? o->iter_factor : 1) == f1;
        topk |= o->kind == SCV_PLAN_TOPK;
    }
    plan_fmt_factor(f1, f0, sizeof f0);
    if (same) plan_add(w, cap, "iterations assumed x%s of dense: not measured (", f0);
    else plan_add(w, cap, "iterations assumed relative to dense, not measured: ");
    for (size_t i = 1; i < nvar; i++) {
        const scv_plan_comm *o = &req->comms[var[i]];
        scv_plan_comm_format(o, name, sizeof name);
        plan_fmt_factor(o->iter_factor > 0 ? o->iter_factor : 1, f, sizeof f);
        if (same) plan_add(w, cap, "%s%s", i > 1 ? ", " : "", name);
        else plan_add(w, cap, "%s%s x%s", i > 1 ? ", " : "", name, f);
    }
    if (same) plan_add(w, cap, ")");
    if (topk && t_compress > 0)
        plan_add(w, cap, "; compression kernels %.3g ms per Top-k step (measured)", 1e3 * t_compress);
    else if (topk) plan_add(w, cap, "; compression kernel time not included (none measured)");
}

/* What scv_plan's passes share while they fill the points: the request, the result, the
 * communication variants (dense first), and the counts its note and errors report. */
typedef struct plan_build {
    const scv_plan_request *req;
    const scv_plan_policy *pol;
    scv_plan_result *res;
    const scv_vm_type *mv;      /* the measured VM type */
    const int *var;             /* the communication variants, dense first */
    size_t nvar;
    double t_compress;          /* a measured compression kernel time, for Top-k points */
    double floor;               /* the measured compute seconds per sample's least (NaN: none) */
    size_t np, no_price, n_held;
    size_t n_extrap[SCV_EXTRAP_GPU_AS_MEASURED + 1];
    size_t n_never;             /* spot with the risk: points preempted faster than they progress */
} plan_build;

/* ---- a worker fewer (spot: the capacity missing while a preempted worker is replaced) ---- */

/* The models' step and evaluation seconds of point p's configuration (its B, its
 * communication variant) on count[i] workers of catalog types vm[i] (i < n), priced as
 * type_points (one type, p not a mix) and mix_points (a mix) price a point, without the
 * measured times; NaN when a type cannot be predicted. */
static double model_step_at(const scv_plan_request *req, const scv_plan_point *p, const int *vm, const int *count,
                            int n)
{
    const scv_catalog *cat = req->catalog;
    const scv_vm_type *mv = &cat->vms[req->measured_vm];
    scv_plan_policy pol = req->policy ? *req->policy : scv_plan_policy_default();
    double s[SCV_MIX_MAX_TYPES], s_max = 0, B = p->batch, tc, g = 1;
    int K = 0;
    scv_extrap how;
    for (int i = 0; i < n; i++) {
        if (compute_rule(req, &cat->vms[vm[i]], mv, &s[i], &how)) return NAN;
        s_max = fmax(s_max, s[i]);
        K += count[i];
    }
    if (K < 1) return NAN;
    if (p->mix_types.n > 0) {
        double bt[SCV_MIX_MAX_TYPES];
        int held, slow;
        scv_vm_mix mx = {.n = n};
        for (int i = 0; i < n; i++) mx.vm[i] = vm[i], mx.count[i] = count[i];
        tc = mix_split(req->perf->c0, req->perf->c1, s, count, n, B, mix_floor(&pol, K, B), bt, &held);
        g = mix_link(cat, &mx, mv, &slow);
    } else {
        tc = compute_k(req, &pol, scv_perf_sample_floor(req->measured, req->n_measured), K, B / K) * s[0];
    }
    scv_sparse_coll coll;
    double tm = scv_perf_comm_option(req->perf, K, p->comm >= 0 ? &req->comms[p->comm] : NULL, g, &coll);
    return step_time(req, p, tc, tm, kernel_s(req) * s_max) + B * req->eval_s_per_sample;
}

double scv_plan_thr_less(const scv_plan_request *req, const scv_plan_point *p, const scv_spot_risk *risk)
{
    int K = p->workers;
    if (K <= 1) return 0;
    double e = p->batch * req->eval_s_per_sample;
    if (p->mix_types.n <= 0 && p->vm == req->measured_vm && p->comm_opt.kind == SCV_PLAN_DENSE) {
        scv_plan_policy pol = req->policy ? *req->policy : scv_plan_policy_default();
        double m = measured_t_iter(req, &pol, K, p->batch, NAN), m1 = measured_t_iter(req, &pol, K - 1, p->batch, NAN);
        if (m > 0 && m1 > 0) return fmin(1, (m + e) / (m1 + e)); /* both measured */
    }
    scv_vm_mix one = {.n = 1, .vm = {p->vm}, .count = {K}};
    const scv_vm_mix *mx = p->mix_types.n > 0 ? &p->mix_types : &one;
    double full = model_step_at(req, p, mx->vm, mx->count, mx->n);
    double sum = 0, wsum = 0, sum_n = 0, n_all = 0; /* weighted by rate, and by workers */
    for (int i = 0; i < mx->n; i++) {
        int vm[SCV_MIX_MAX_TYPES], count[SCV_MIX_MAX_TYPES], n = 0;
        for (int j = 0; j < mx->n; j++)
            if (mx->count[j] - (j == i) > 0) vm[n] = mx->vm[j], count[n++] = mx->count[j] - (j == i);
        double less = model_step_at(req, p, vm, count, n);
        double r = less > 0 && full > 0 ? fmin(1, full / less) : 0; /* thr = B / step at the same B */
        double w = risk ? scv_spot_lam(risk, req->catalog, &mx->vm[i], &mx->count[i], 1) : 0;
        sum += w * r, wsum += w;
        sum_n += mx->count[i] * r, n_all += mx->count[i];
    }
    return wsum > 0 ? sum / wsum : sum_n / n_all;
}

/* Spot with the risk (req->spot_risk, SCV_PRICE_SPOT): p's time and cost become spot's expected
 * ones for its workers (count[i] of types vm[i]); -1 (p left out, counted) when it would never
 * finish. Equations in model/spot.c. */
static int spot_risk(plan_build *pb, scv_plan_point *p, const int *vm, const int *count, int n)
{
    const scv_plan_request *req = pb->req;
    if (!req->spot_risk || req->pricing != SCV_PRICE_SPOT) return 0;
    scv_spot_policy dflt = scv_spot_policy_default();
    const scv_spot_policy *pol = req->spot_risk->pol ? req->spot_risk->pol : &dflt;
    double lam = scv_spot_lam(req->spot_risk, req->catalog, vm, count, n);
    double rho = scv_spot_rho(pol, req->spot_risk->recovery, p->t_iter, scv_plan_thr_less(req, p, req->spot_risk), lam);
    if (!(rho < 1)) {
        pb->n_never++;
        return -1;
    }
    p->time_s /= 1 - rho, p->idle_s /= 1 - rho;
    double preemptions = lam * p->time_s / 3600;
    p->cost = scv_cost_usd(p->workers, p->time_s, p->price_hr) -
              preemptions * scv_spot_unbilled_s(pol->replace_s, p->time_s) * p->price_hr / 3600;
    return 0;
}

/* The request's own consistency: a non-empty space, catalog indices, mixes, utility's V. */
static int check_request(const scv_plan_request *req, scv_err *err)
{
    const scv_catalog *cat = req->catalog;
    size_t n_mixes = req->mixes ? req->n_mixes : 0;
    if (((!req->n_vms || !req->n_workers) && !n_mixes) || !req->n_batches)
        return scv_err_set(err, SCV_EINVAL, "plan: empty search space (VM types, workers or batches)");
    if (req->measured_vm < 0 || (size_t)req->measured_vm >= cat->n)
        return scv_err_set(err, SCV_EINVAL, "plan: the measured VM type is not in the catalog");
    for (size_t m = 0; m < n_mixes; m++) {
        const scv_vm_mix *mx = &req->mixes[m];
        int bad = mx->n < 1 || mx->n > SCV_MIX_MAX_TYPES;
        for (int i = 0; !bad && i < mx->n; i++)
            bad = mx->vm[i] < 0 || (size_t)mx->vm[i] >= cat->n || mx->count[i] < 1 || mx->count[i] > SCV_MAX_WORKERS;
        if (bad || scv_vm_mix_workers(mx) > SCV_MAX_WORKERS)
            return scv_err_set(err, SCV_EINVAL, "plan: mix %zu is not 1..%d catalog types of 1..%d workers in all",
                               m, SCV_MIX_MAX_TYPES, SCV_MAX_WORKERS);
    }
    if (req->objective == SCV_OBJ_UTILITY && !(req->value_per_hour > 0 && isfinite(req->value_per_hour)))
        return scv_err_set(err, SCV_EINVAL, "objective utility needs value-per-hour V > 0 ($ an hour saved is worth)");
    return check_comms(req, err);
}

/* The points of one homogeneous VM type (catalog index vi): every (K, B) that fits, each
 * communication variant. */
static void type_points(plan_build *pb, int vi)
{
    const scv_plan_request *req = pb->req;
    scv_plan_result *res = pb->res;
    const scv_vm_type *vm = &req->catalog->vms[vi];
    double scale;
    scv_extrap how;
    if (compute_rule(req, vm, pb->mv, &scale, &how)) {
        res->n_excluded_gpu++;
        return;
    }
    pb->n_extrap[how]++;
    for (size_t b = 0; b < req->n_batches; b++) {
        int B = req->batches[b];
        double iters = scv_stat_iterations(req->stat, B);
        for (size_t k = 0; k < req->n_workers; k++) {
            int K = req->workers[k];
            if (B < K) continue;
            double per = (double)B / K;
            if ((req->b_min && per < req->b_min) || (req->b_max && per > req->b_max)) continue;
            double mem = scv_worker_mem_bytes(req->job, ceil(per));
            if (req->pricing != SCV_PRICE_MEMORY && mem > vm->mem_gib * 1024.0 * 1024 * 1024) {
                res->n_excluded_memory++;
                continue;
            }
            double price = scv_vm_price(vm, req->pricing, mem, req->mem_rate_cpu, req->mem_rate_gib);
            if (!(price > 0)) {
                pb->no_price++;
                continue;
            }
            double tc = compute_k(req, pb->pol, pb->floor, K, per) * scale;
            for (size_t c = 0; c < pb->nvar; c++) { /* dense, then each option */
                scv_plan_point *p = &res->points[pb->np++];
                memset(p, 0, sizeof *p);
                double t_iter = step_time(req, p, tc, set_comm(req, pb->var[c], K, 1, p), pb->t_compress * scale);
                if (c == 0 && vi == req->measured_vm) t_iter = measured_t_iter(req, pb->pol, K, B, t_iter);
                p->mix = -1;
                p->comm_scale = 1;
                p->vm = vi;
                p->workers = K;
                p->batch = B;
                p->t_iter = t_iter;
                p->iterations = iters * p->comm_opt.iter_factor;
                p->idle_s = scv_plan_segments_idle(req, B, p->iterations);
                p->time_s = p->iterations * (t_iter + B * req->eval_s_per_sample) + p->idle_s;
                p->price_hr = price;
                p->cost = scv_cost_usd(K, p->time_s, price);
                p->err_rel = req->perf->mare;
                p->extrap = how;
                p->compute_scale = scale;
                p->extrapolated = how != SCV_EXTRAP_NONE;
                p->pareto = 0;
                if (spot_risk(pb, p, &vi, &K, 1)) pb->np--;
            }
        }
    }
}

/* The points of mix m (several VM types in one job): B split by the types' speeds, the
 * slowest link's communication, each communication variant. */
static void mix_points(plan_build *pb, size_t m)
{
    const scv_plan_request *req = pb->req;
    const scv_catalog *cat = req->catalog;
    scv_plan_result *res = pb->res;
    const scv_vm_mix *mx = &req->mixes[m];
    int n = mx->n, K = scv_vm_mix_workers(mx), slow, out = 0;
    double s[SCV_MIX_MAX_TYPES];
    scv_extrap how[SCV_MIX_MAX_TYPES], worst = SCV_EXTRAP_NONE;
    for (int i = 0; i < n && !out; i++) {
        out = compute_rule(req, &cat->vms[mx->vm[i]], pb->mv, &s[i], &how[i]) != 0;
        if (!out && extrap_rank(how[i]) > extrap_rank(worst)) worst = how[i];
    }
    if (out) {
        res->n_excluded_mix++;
        return;
    }
    double g = mix_link(cat, mx, pb->mv, &slow), s_max = 0; /* the slowest type: its kernels last */
    for (int i = 0; i < n; i++) s_max = fmax(s_max, s[i]);
    for (size_t b = 0; b < req->n_batches; b++) {
        int B = req->batches[b];
        if (B < K) continue;
        double per = (double)B / K;
        if ((req->b_min && per < req->b_min) || (req->b_max && per > req->b_max)) continue;
        double bt[SCV_MIX_MAX_TYPES], price = 0;
        int held;
        double tc = mix_split(req->perf->c0, req->perf->c1, s, mx->count, n, B, mix_floor(pb->pol, K, B), bt, &held);
        int fits = 1, priced = 1;
        for (int i = 0; i < n; i++) {
            const scv_vm_type *vm = &cat->vms[mx->vm[i]];
            double mem = scv_worker_mem_bytes(req->job, ceil(bt[i]));
            if (req->pricing != SCV_PRICE_MEMORY && mem > vm->mem_gib * 1024.0 * 1024 * 1024) fits = 0;
            double pr = scv_vm_price(vm, req->pricing, mem, req->mem_rate_cpu, req->mem_rate_gib);
            if (!(pr > 0)) priced = 0;
            price += mx->count[i] * pr;
        }
        if (!fits) {
            res->n_excluded_memory++;
            continue;
        }
        if (!priced) {
            pb->no_price++;
            continue;
        }
        pb->n_held += held > 0;
        double tc_m = scv_perf_compute(req->perf, per);
        double iters = scv_stat_iterations(req->stat, B);
        for (size_t c = 0; c < pb->nvar; c++) { /* dense, then each option, at the slowest link */
            scv_plan_point *p = &res->points[pb->np++];
            memset(p, 0, sizeof *p);
            double t_iter = step_time(req, p, tc, set_comm(req, pb->var[c], K, g, p), pb->t_compress * s_max);
            p->vm = slow;
            p->workers = K;
            p->batch = B;
            p->t_iter = t_iter;
            p->iterations = iters * p->comm_opt.iter_factor;
            p->idle_s = scv_plan_segments_idle(req, B, p->iterations);
            p->time_s = p->iterations * (t_iter + B * req->eval_s_per_sample) + p->idle_s;
            p->price_hr = price / K;
            p->cost = scv_cost_usd(K, p->time_s, p->price_hr);
            p->err_rel = req->perf->mare;
            p->extrap = worst;
            p->compute_scale = tc_m > 0 ? tc / tc_m : 1;
            p->extrapolated = worst != SCV_EXTRAP_NONE;
            p->mix = (int)m;
            p->mix_types = *mx;
            for (int i = 0; i < n; i++) p->mix_batch[i] = bt[i];
            p->comm_scale = g;
            if (spot_risk(pb, p, mx->vm, mx->count, n)) pb->np--;
        }
    }
}

/* The note: what was left out and how types were extrapolated. */
static void build_note(const plan_build *pb)
{
    const scv_plan_request *req = pb->req;
    scv_plan_result *res = pb->res;
    const scv_vm_type *mv = pb->mv;
    if (res->n_excluded_gpu)
        plan_add(res->note, sizeof res->note, "%zu VM type(s) left out: %s measurements do not predict %s types%s; ",
                 res->n_excluded_gpu, mv->gpus ? "GPU" : "CPU", mv->gpus ? "CPU" : "GPU",
                 mv->gpus ? "" : " (state an assumed GPU speed-up to include them)");
    for (int e = SCV_EXTRAP_SAME_THREADS; e <= SCV_EXTRAP_GPU_AS_MEASURED; e++)
        if (pb->n_extrap[e]) {
            plan_add(res->note, sizeof res->note, "%zu VM type(s) %s", pb->n_extrap[e], scv_extrap_desc((scv_extrap)e));
            if (e == SCV_EXTRAP_GPU_ASSUMED) plan_add(res->note, sizeof res->note, " (%.3gx)", req->gpu_speedup);
            if (e == SCV_EXTRAP_AMDAHL)
                plan_add(res->note, sizeof res->note, " (f = %.3g from %d thread(s))", req->parallel_fraction,
                         req->measured_threads);
            plan_add(res->note, sizeof res->note, "; ");
        }
    if (res->n_excluded_mix)
        plan_add(res->note, sizeof res->note,
                 "%zu mix(es) left out: %s measurements do not predict a %s type of theirs; ", res->n_excluded_mix,
                 mv->gpus ? "GPU" : "CPU", mv->gpus ? "CPU" : "GPU");
    if (pb->n_held)
        plan_add(res->note, sizeof res->note,
                 "%zu mix configuration(s) with a type too slow to keep up (held at "
                 "the trainer's floor share of B, it sets the compute time); ",
                 pb->n_held);
    for (size_t i = 0; req->measured && i < req->n_measured; i++) { /* compute_k's ratios, where they move prices */
        const scv_config_stats *m = &req->measured[i];
        double r = measured_ratio(req, pb->pol, pb->floor, m);
        if (burst(req, pb->pol, m))
            plan_add(res->note, sizeof res->note,
                     "K=%d B=%d's measurement (%.2g s) is a burst beside a longer one at K=%d: priced as unmeasured; ",
                     m->workers, m->batch, m->n_iters * m->t_iter, m->workers);
        else if (fabs(log(r)) > log(1.1))
            plan_add(res->note, sizeof res->note,
                     "K=%d's compute measured %.2fx the fit's at B=%d: its other batches priced at that ratio; ",
                     m->workers, r, m->batch);
    }
    if (req->spot_risk && req->pricing == SCV_PRICE_SPOT) {
        plan_add(res->note, sizeof res->note,
                 "spot times and costs are expected ones, with the preemptions' lost time "
                 "(model/spot.c); ");
        if (pb->n_never)
            plan_add(res->note, sizeof res->note,
                     "%zu configuration(s) left out: preempted faster than they progress; ", pb->n_never);
    }
    size_t nl = strlen(res->note);
    if (nl >= 2 && res->note[nl - 2] == ';') res->note[nl - 2] = 0;
}

/* Why no configuration was left (the points are empty): the error the caller returns. */
static int empty_error(const plan_build *pb, size_t n_mixes, scv_err *err)
{
    const scv_plan_result *res = pb->res;
    const scv_vm_type *mv = pb->mv;
    if (res->n_excluded_gpu == pb->req->n_vms && res->n_excluded_mix == n_mixes)
        return scv_err_set(err, SCV_EINFEASIBLE,
                           "no VM type can be predicted: %s measurements do not predict %s "
                           "types (state an assumed GPU speed-up to include GPU types)",
                           mv->gpus ? "GPU" : "CPU", mv->gpus ? "CPU" : "GPU");
    if (pb->n_never && !pb->no_price)
        return scv_err_set(err, SCV_EINFEASIBLE, "no configuration can finish on spot: every one is preempted "
                           "faster than it progresses (%zu; a lower preemption rate or on-demand pricing)", pb->n_never);
    if (pb->no_price)
        return scv_err_set(err, SCV_EINFEASIBLE,
                           "no configuration has a price under this pricing policy "
                           "(%zu lack one, e.g. no spot price in the catalog)", pb->no_price);
    return scv_err_set(err, SCV_EINFEASIBLE,
                       "no configuration fits the constraints (B >= K, per-worker batch "
                       "bounds, VM memory: %zu excluded because b does not fit)", res->n_excluded_memory);
}

int scv_plan(const scv_plan_request *req, scv_plan_result **out, scv_err *err)
{
    *out = NULL;
    scv_plan_policy pol = req->policy ? *req->policy : scv_plan_policy_default();
    size_t n_mixes = req->mixes ? req->n_mixes : 0;
    int rc = check_request(req, err);
    if (rc) return rc;
    size_t n_comms = req->comms ? req->n_comms : 0;
    int *var = malloc(sizeof(int) * (n_comms + 1));
    size_t nvar = var ? comm_variants(req, var) : 0;
    size_t cap = (req->n_vms * req->n_workers * req->n_batches + n_mixes * req->n_batches) * nvar;
    scv_plan_result *res = var ? calloc(1, sizeof *res) : NULL;
    if (!res || !(res->points = malloc(sizeof(scv_plan_point) * (cap ? cap : 1)))) {
        free(res);
        free(var);
        return scv_err_set(err, SCV_ENOMEM, "plan: out of memory for %zu configurations", cap);
    }
    plan_build pb = {.req = req, .pol = &pol, .res = res, .mv = &req->catalog->vms[req->measured_vm],
                     .var = var, .nvar = nvar,
                     .t_compress = kernel_s(req), .floor = scv_perf_sample_floor(req->measured, req->n_measured)};
    for (size_t v = 0; v < req->n_vms; v++) type_points(&pb, req->vms[v]);
    for (size_t m = 0; m < n_mixes; m++) mix_points(&pb, m);
    build_note(&pb);
    comm_note(req, var, nvar, pb.t_compress, res);
    free(var);
    res->n_points = pb.np;
    res->chosen = -1;
    for (size_t i = 0; i < pb.np; i++) scv_estimate_price(req->estimate, &res->points[i]);
    if (pb.np == 0) {
        rc = empty_error(&pb, n_mixes, err);
        scv_plan_result_free(res);
        return rc;
    }
    if ((rc = plan_choose(req, &pol, res, err))) {
        scv_plan_result_free(res);
        return rc;
    }
    *out = res;
    return SCV_OK;
}
