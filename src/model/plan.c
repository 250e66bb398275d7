/*
 * plan.c - the planner: enumerate (VM type, K, B) and (mixed cluster, B) under constraints,
 * predict each one's iteration time (perf model), iterations to target (statistical model),
 * wall time T = iterations * t_iter [s] and cost C = K * T / 3600 * price [$], compute the
 * Pareto front of (T, C), and pick the configuration the objective asks for.
 *
 * Choice (docs/MODEL.md, "Choosing"):
 *   1. the unconstrained choice u on the whole front:
 *        time  the fastest point        cost  the cheapest point
 *        knee  Kneedle's knee of the front (Satopaa et al. 2011); when the front has fewer
 *              than 3 points or Kneedle finds none (straight or concave front), the marginal
 *              rule: start at the cheapest point and step to the next faster one while
 *                  r = [(C_fast - C_slow) / C_slow] / [(T_slow - T_fast) / T_slow]
 *              (% more cost per 1% of time saved) is <= policy.knee_max_cost_per_time.
 *   2. a deadline or budget that u meets leaves u chosen; otherwise the same rule runs on the
 *      feasible part of the front (T <= deadline, C <= budget), which is the Pareto front of
 *      the feasible points (a point dominating a feasible point is itself feasible).
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

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

scv_plan_policy scv_plan_policy_default(void)
{
    scv_plan_policy p = {.knee_max_cost_per_time = 1.0, .mix_min_share = 0.02, .degenerate_c1_share = 0.01};
    return p;
}

const char *scv_extrap_desc(scv_extrap e)
{
    switch (e) {
    case SCV_EXTRAP_NONE: return "measured";
    case SCV_EXTRAP_SAME_THREADS: return "extrapolated: other CPU type, same threads, compute as measured";
    case SCV_EXTRAP_NO_SCALING: return "extrapolated: no thread-scaling measurement, compute as measured";
    case SCV_EXTRAP_AMDAHL: return "extrapolated: compute scaled by Amdahl's law with the measured parallel fraction";
    case SCV_EXTRAP_GPU_ASSUMED: return "extrapolated: GPU type, compute divided by the assumed GPU speed-up";
    case SCV_EXTRAP_GPU_AS_MEASURED: return "extrapolated: other GPU type, compute as measured";
    }
    return "?";
}

void scv_plan_result_free(scv_plan_result *r)
{
    if (!r) return;
    free(r->points);
    free(r->front);
    free(r->front_dense);
    free(r);
}

/* ---- Pareto front: an in-place heapsort of indices by (time, cost, index); no state
 * outside the call, so it is reentrant ---- */
static int after(const double *t, const double *c, size_t i, size_t j)
{
    if (t[i] != t[j]) return t[i] > t[j];
    if (c[i] != c[j]) return c[i] > c[j];
    return i > j;
}

static void sift_down(size_t *a, size_t root, size_t end, const double *t, const double *c)
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= end) return;
        if (child + 1 < end && after(t, c, a[child + 1], a[child])) child++;
        if (!after(t, c, a[child], a[root])) return;
        size_t tmp = a[root];
        a[root] = a[child];
        a[child] = tmp;
        root = child;
    }
}

size_t scv_pareto_front(const double *time, const double *cost, size_t n, size_t *front)
{
    for (size_t i = 0; i < n; i++) front[i] = i;
    for (size_t i = n / 2; i-- > 0;) sift_down(front, i, n, time, cost);
    for (size_t end = n; end > 1; end--) {
        size_t tmp = front[0];
        front[0] = front[end - 1];
        front[end - 1] = tmp;
        sift_down(front, 0, end - 1, time, cost);
    }
    size_t k = 0;
    double best = INFINITY;
    for (size_t i = 0; i < n; i++)
        if (cost[front[i]] < best) {
            best = cost[front[i]];
            front[k++] = front[i];
        }
    return k;
}

long scv_kneedle(const double *x, const double *y, size_t n)
{
    if (n < 3) return -1;
    double x0 = x[0], x1 = x[n - 1], ymin = y[0], ymax = y[0];
    for (size_t i = 1; i < n; i++) ymin = fmin(ymin, y[i]), ymax = fmax(ymax, y[i]);
    if (!(x1 > x0) || !(ymax > ymin)) return -1;
    /* normalised decreasing convex curve lies under the chord 1 - x: the knee maximises
     * the distance (1 - xn) - yn */
    long best = -1;
    double dmax = 0;
    for (size_t i = 0; i < n; i++) {
        double xn = (x[i] - x0) / (x1 - x0), yn = (y[i] - ymin) / (ymax - ymin);
        double d = (1 - xn) - yn;
        if (d > dmax + 1e-12) dmax = d, best = (long)i;
    }
    return best;
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

/* ---- choosing on a front (time ascending, cost falling) ---- */
typedef enum { RULE_FASTEST, RULE_CHEAPEST, RULE_KNEEDLE, RULE_MARGINAL, RULE_ONLY, RULE_UTILITY } choice_rule;

/* % more cost per 1% of time saved going from the slower point s to the faster point f */
static double cost_per_time(double t_f, double c_f, double t_s, double c_s)
{
    return ((c_f - c_s) / c_s) / ((t_s - t_f) / t_s);
}

static size_t choose_on(const double *t, const double *c, size_t n, scv_objective obj, double value_per_hour,
                        const scv_plan_policy *pol, choice_rule *rule)
{
    if (n == 1) {
        *rule = RULE_ONLY;
        return 0;
    }
    if (obj == SCV_OBJ_UTILITY) { /* the least cost plus the value of the time it takes */
        *rule = RULE_UTILITY;
        size_t best = 0;
        for (size_t i = 1; i < n; i++)
            if (c[i] + value_per_hour * t[i] / 3600 < c[best] + value_per_hour * t[best] / 3600) best = i;
        return best;
    }
    if (obj == SCV_OBJ_TIME) {
        *rule = RULE_FASTEST;
        return 0;
    }
    if (obj == SCV_OBJ_COST) {
        *rule = RULE_CHEAPEST;
        return n - 1;
    }
    long k = scv_kneedle(t, c, n);
    if (k >= 0) {
        *rule = RULE_KNEEDLE;
        return (size_t)k;
    }
    *rule = RULE_MARGINAL;
    size_t i = n - 1;
    while (i > 0 && cost_per_time(t[i - 1], c[i - 1], t[i], c[i]) <= pol->knee_max_cost_per_time) i--;
    return i;
}

/* "1.0", "1.25": a factor as people read it. */
static void fmt_factor(double f, char *b, size_t cap)
{
    int n = snprintf(b, cap, "%.6g", f);
    if (n > 0 && !strpbrk(b, ".eni") && (size_t)n + 2 < cap) strcat(b, ".0");
}

/* The request has an option that is not dense. */
static int has_options(const scv_plan_request *req)
{
    for (size_t i = 0; req->comms && i < req->n_comms; i++)
        if (req->comms[i].kind != SCV_PLAN_DENSE) return 1;
    return 0;
}

static void label(const scv_plan_request *req, const scv_plan_point *p, char *buf, size_t cap)
{
    if (p->mix_types.n > 0) {
        int len = scv_vm_mix_format(req->catalog, &p->mix_types, buf, cap);
        if (len >= 0 && (size_t)len < cap) snprintf(buf + len, cap - (size_t)len, " B=%d", p->batch);
    } else if (req->n_vms > 1 || req->n_mixes)
        snprintf(buf, cap, "%s K=%d B=%d", req->catalog->vms[p->vm].name, p->workers, p->batch);
    else
        snprintf(buf, cap, "K=%d B=%d", p->workers, p->batch);
    size_t len = strlen(buf);
    if (has_options(req) && len + 1 < cap) { /* the communication option: " topk:100", " dense" */
        buf[len++] = ' ';
        scv_plan_comm_format(&p->comm_opt, buf + len, cap - len);
    }
}

static void add(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char *buf, size_t cap, const char *fmt, ...)
{
    size_t len = strlen(buf);
    if (len + 1 >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, cap - len, fmt, ap);
    va_end(ap);
}

/* res->why: the rule, the chosen point against its neighbours on the front it was chosen
 * on, and how the bounds acted. */
static void explain(const scv_plan_request *req, const scv_plan_policy *pol, scv_plan_result *res,
                    const long *fi, size_t nf, size_t k, choice_rule rule, const char *bounds)
{
    char *w = res->why, nb[128];
    size_t cap = sizeof res->why;
    w[0] = 0;
    switch (rule) {
    case RULE_FASTEST: add(w, cap, "fastest"); break;
    case RULE_CHEAPEST: add(w, cap, "cheapest"); break;
    case RULE_ONLY: add(w, cap, "the only front point"); break;
    case RULE_UTILITY:
        add(w, cap, "the most utility: cost + $%.4g per hour of time is least", req->value_per_hour);
        break;
    case RULE_KNEEDLE: add(w, cap, "knee of %zu front points (Kneedle)", nf); break;
    case RULE_MARGINAL:
        add(w, cap, "knee of %zu front point(s): faster while <= %.3g%% more cost per 1%% time saved",
            nf, pol->knee_max_cost_per_time);
        break;
    }
    const scv_plan_point *p = &res->points[fi[k]];
    if (k + 1 < nf) { /* the slower neighbour */
        const scv_plan_point *s = &res->points[fi[k + 1]];
        label(req, s, nb, sizeof nb);
        add(w, cap, "; %.2fx faster than %s for %+.0f%% cost", s->time_s / p->time_s, nb,
            100 * (p->cost / s->cost - 1));
    }
    if (k > 0) { /* the faster neighbour */
        const scv_plan_point *f = &res->points[fi[k - 1]];
        label(req, f, nb, sizeof nb);
        add(w, cap, "; %s would save %.0f%% more time for %+.0f%% cost", nb,
            100 * (1 - f->time_s / p->time_s), 100 * (f->cost / p->cost - 1));
    }
    if (bounds) add(w, cap, "; %s", bounds);
    if (p->extrap != SCV_EXTRAP_NONE) add(w, cap, "; %s", scv_extrap_desc(p->extrap));
    if (p->comm_opt.kind != SCV_PLAN_DENSE) {
        char f[32];
        fmt_factor(p->comm_opt.iter_factor, f, sizeof f);
        add(w, cap, "; iterations assumed x%s of dense: not measured", f);
    }
}

/* The compute model at per-worker batch b; where the fit put (next to) nothing on the sample
 * (c1 under policy.degenerate_c1_share of floor, the measured per-sample least:
 * scv_perf_sample_floor; NaN: none), never under b x floor. */
static double compute_at(const scv_perf_model *m, const scv_plan_policy *pol, double floor, double b)
{
    double t = scv_perf_compute(m, b);
    return isfinite(floor) && m->c1 < pol->degenerate_c1_share * floor && t < floor * b ? floor * b : t;
}

/* A configuration's measured mean iteration time where the request has one, else t_model. */
static double measured_t_iter(const scv_plan_request *req, int K, int B, double t_model)
{
    for (size_t i = 0; req->measured && i < req->n_measured; i++) {
        const scv_config_stats *m = &req->measured[i];
        if (m->workers == K && m->batch == B && m->t_iter > 0) return m->t_iter;
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
    fmt_factor(f1, f0, sizeof f0);
    if (same) add(w, cap, "iterations assumed x%s of dense: not measured (", f0);
    else add(w, cap, "iterations assumed relative to dense, not measured: ");
    for (size_t i = 1; i < nvar; i++) {
        const scv_plan_comm *o = &req->comms[var[i]];
        scv_plan_comm_format(o, name, sizeof name);
        fmt_factor(o->iter_factor > 0 ? o->iter_factor : 1, f, sizeof f);
        if (same) add(w, cap, "%s%s", i > 1 ? ", " : "", name);
        else add(w, cap, "%s%s x%s", i > 1 ? ", " : "", name, f);
    }
    if (same) add(w, cap, ")");
    if (topk && t_compress > 0) add(w, cap, "; compression kernels %.3g ms per Top-k step (measured)", 1e3 * t_compress);
    else if (topk) add(w, cap, "; compression kernel time not included (none measured)");
}

/* The share of the target the run has done, in [0, 1]. */
static double done_of(const scv_plan_request *req) { return fmin(1, fmax(0, req->done_share)); }

void scv_plan_run_end(const scv_plan_request *req, const scv_plan_point *p, double *time_s, double *cost)
{
    double left = 1 - done_of(req);
    *time_s = fmax(0, req->spent_s) + left * p->time_s;
    *cost = fmax(0, req->spent_cost) + left * p->cost;
}

int scv_plan_meets(const scv_plan_request *req, const scv_plan_point *p)
{
    double t, c;
    scv_plan_run_end(req, p, &t, &c);
    return !(req->deadline_s > 0 && t > req->deadline_s) && !(req->budget > 0 && c > req->budget);
}

/* The objective's point on a front (indices into pts, by time) under the request's bounds,
 * as scv_plan chooses: the unconstrained choice when it meets them, else the choice on the
 * front's feasible part. -1: none is feasible; -2: out of memory. */
static long choose_bounded(const scv_plan_request *req, const scv_plan_policy *pol, const scv_plan_point *pts,
                           const size_t *front, size_t nf)
{
    if (!nf) return -1;
    double *t = malloc(sizeof(double) * nf), *c = malloc(sizeof(double) * nf);
    size_t *ix = malloc(sizeof(size_t) * nf);
    long r = -2;
    if (t && c && ix) {
        choice_rule rule;
        for (size_t i = 0; i < nf; i++) t[i] = pts[front[i]].time_s, c[i] = pts[front[i]].cost, ix[i] = front[i];
        size_t k = choose_on(t, c, nf, req->objective, req->value_per_hour, pol, &rule);
        if (scv_plan_meets(req, &pts[ix[k]])) r = (long)ix[k];
        else {
            size_t m = 0;
            for (size_t i = 0; i < nf; i++)
                if (scv_plan_meets(req, &pts[ix[i]])) t[m] = t[i], c[m] = c[i], ix[m] = ix[i], m++;
            r = m ? (long)ix[choose_on(t, c, m, req->objective, req->value_per_hour, pol, &rule)] : -1;
        }
    }
    free(t), free(c), free(ix);
    return r;
}

/* The dense points' front and choice into res (after the front of all points). */
static int dense_plan(const scv_plan_request *req, const scv_plan_policy *pol, scv_plan_result *res)
{
    size_t np = res->n_points, nd = 0;
    double *t = malloc(sizeof(double) * (np ? np : 1)), *c = malloc(sizeof(double) * (np ? np : 1));
    size_t *map = malloc(sizeof(size_t) * (np ? np : 1));
    res->front_dense = malloc(sizeof(size_t) * (np ? np : 1));
    int rc = t && c && map && res->front_dense ? SCV_OK : SCV_ENOMEM;
    for (size_t i = 0; !rc && i < np; i++)
        if (res->points[i].comm_opt.kind == SCV_PLAN_DENSE)
            t[nd] = res->points[i].time_s, c[nd] = res->points[i].cost, map[nd++] = i;
    if (!rc) {
        res->n_front_dense = scv_pareto_front(t, c, nd, res->front_dense);
        for (size_t i = 0; i < res->n_front_dense; i++) res->front_dense[i] = map[res->front_dense[i]];
        res->chosen_dense = choose_bounded(req, pol, res->points, res->front_dense, res->n_front_dense);
        if (res->chosen_dense == -2) rc = SCV_ENOMEM;
    }
    free(t), free(c), free(map);
    return rc;
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
        tc = compute_at(req->perf, &pol, scv_perf_sample_floor(req->measured, req->n_measured), B / K) * s[0];
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
        double m = measured_t_iter(req, K, p->batch, NAN), m1 = measured_t_iter(req, K - 1, p->batch, NAN);
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
    p->time_s /= 1 - rho;
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
            double tc = compute_at(req->perf, pb->pol, pb->floor, per) * scale;
            for (size_t c = 0; c < pb->nvar; c++) { /* dense, then each option */
                scv_plan_point *p = &res->points[pb->np++];
                memset(p, 0, sizeof *p);
                double t_iter = step_time(req, p, tc, set_comm(req, pb->var[c], K, 1, p), pb->t_compress * scale);
                if (c == 0 && vi == req->measured_vm) t_iter = measured_t_iter(req, K, B, t_iter);
                p->mix = -1;
                p->comm_scale = 1;
                p->vm = vi;
                p->workers = K;
                p->batch = B;
                p->t_iter = t_iter;
                p->iterations = iters * p->comm_opt.iter_factor;
                p->time_s = p->iterations * (t_iter + B * req->eval_s_per_sample);
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
            p->time_s = p->iterations * (t_iter + B * req->eval_s_per_sample);
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
        add(res->note, sizeof res->note,
            "%zu VM type(s) left out: %s measurements do not predict %s types%s; ",
            res->n_excluded_gpu, mv->gpus ? "GPU" : "CPU", mv->gpus ? "CPU" : "GPU",
            mv->gpus ? "" : " (state an assumed GPU speed-up to include them)");
    for (int e = SCV_EXTRAP_SAME_THREADS; e <= SCV_EXTRAP_GPU_AS_MEASURED; e++)
        if (pb->n_extrap[e]) {
            add(res->note, sizeof res->note, "%zu VM type(s) %s", pb->n_extrap[e], scv_extrap_desc((scv_extrap)e));
            if (e == SCV_EXTRAP_GPU_ASSUMED) add(res->note, sizeof res->note, " (%.3gx)", req->gpu_speedup);
            if (e == SCV_EXTRAP_AMDAHL)
                add(res->note, sizeof res->note, " (f = %.3g from %d thread(s))", req->parallel_fraction,
                    req->measured_threads);
            add(res->note, sizeof res->note, "; ");
        }
    if (res->n_excluded_mix)
        add(res->note, sizeof res->note, "%zu mix(es) left out: %s measurements do not predict a %s type of theirs; ",
            res->n_excluded_mix, mv->gpus ? "GPU" : "CPU", mv->gpus ? "CPU" : "GPU");
    if (pb->n_held)
        add(res->note, sizeof res->note, "%zu mix configuration(s) with a type too slow to keep up (held at "
            "the trainer's floor share of B, it sets the compute time); ", pb->n_held);
    if (req->spot_risk && req->pricing == SCV_PRICE_SPOT) {
        add(res->note, sizeof res->note, "spot times and costs are expected ones, with the preemptions' lost time "
            "(model/spot.c); ");
        if (pb->n_never)
            add(res->note, sizeof res->note, "%zu configuration(s) left out: preempted faster than they progress; ",
                pb->n_never);
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

/* The choice: the unconstrained choice on the whole front, kept when it meets the bounds;
 * otherwise the same rule on the feasible part of the front. Sets res->chosen and the
 * explanation. */
static int choose(const scv_plan_request *req, const scv_plan_policy *pol, scv_plan_result *res, scv_err *err)
{
    int rc = SCV_OK;
    size_t nfr = res->n_front;
    double dl = req->deadline_s, bu = req->budget;
    double *fx = malloc(sizeof(double) * nfr), *fy = malloc(sizeof(double) * nfr);
    long *fi = malloc(sizeof(long) * nfr);
    if (!fx || !fy || !fi) {
        free(fx), free(fy), free(fi);
        return scv_err_set(err, SCV_ENOMEM, "plan: out of memory");
    }
    for (size_t i = 0; i < nfr; i++) {
        const scv_plan_point *p = &res->points[res->front[i]];
        fx[i] = p->time_s, fy[i] = p->cost, fi[i] = (long)res->front[i];
    }
    choice_rule rule;
    size_t k = choose_on(fx, fy, nfr, req->objective, req->value_per_hour, pol, &rule);
    const scv_plan_point *u = &res->points[fi[k]];
    int bounded = dl > 0 || bu > 0;
    int meets = scv_plan_meets(req, u);
    const char *which = dl > 0 && bu > 0 ? "the deadline and the budget" : dl > 0 ? "the deadline" : "the budget";
    char bounds[256] = "";
    if (bounded && meets) {
        add(bounds, sizeof bounds, "meets %s", which);
    } else if (bounded) {
        /* the run's ends at the fastest and the cheapest front points (a plan from the start:
         * their own time and cost) */
        double fastest, cheapest, unused;
        scv_plan_run_end(req, &res->points[fi[0]], &fastest, &unused);
        scv_plan_run_end(req, &res->points[fi[nfr - 1]], &unused, &cheapest);
        char ul[128], run[160] = "", spent[32];
        label(req, u, ul, sizeof ul);
        scv_fmt_usd(req->spent_cost, spent, sizeof spent);
        if (req->spent_s > 0 || req->done_share > 0)
            snprintf(run, sizeof run, " (the run so far: %.4g s and %s spent, %.0f%% of the target done)", req->spent_s,
                     spent, 100 * done_of(req));
        size_t nf = 0;
        for (size_t i = 0; i < nfr; i++) {
            if (!scv_plan_meets(req, &res->points[fi[i]])) continue;
            fx[nf] = fx[i], fy[nf] = fy[i], fi[nf] = fi[i];
            nf++;
        }
        nfr = nf;
        if (nf == 0) {
            const char *ends = run[0] ? "the run ends at" : "the fastest configuration takes";
            if (dl > 0 && fastest > dl)
                rc = scv_err_set(err, SCV_EINFEASIBLE, "deadline %.4g s cannot be met: %s %.4g s%s%s", dl, ends,
                                 fastest, run[0] ? " at the fastest configuration" : "", run);
            else {
                char ub[32], uc[32]; /* the one money format: a small budget never reads "$0.00" */
                scv_fmt_usd(bu, ub, sizeof ub);
                scv_fmt_usd(cheapest, uc, sizeof uc);
                if (bu > 0 && cheapest > bu)
                    rc = scv_err_set(err, SCV_EINFEASIBLE, "budget %s cannot be met: %s %s%s%s", ub,
                                     run[0] ? "the run costs" : "the cheapest configuration costs", uc,
                                     run[0] ? " at the cheapest configuration" : "", run);
                else
                    rc = scv_err_set(err, SCV_EINFEASIBLE,
                                     "no configuration meets both the deadline %.0f s and the budget %s%s", dl, ub, run);
            }
        } else {
            k = choose_on(fx, fy, nf, req->objective, req->value_per_hour, pol, &rule);
            add(bounds, sizeof bounds, "within %s (the unbounded choice %s misses it)", which, ul);
        }
    }
    if (rc == SCV_OK) {
        res->chosen = fi[k];
        explain(req, pol, res, fi, nfr, k, rule, bounds[0] ? bounds : NULL);
    }
    free(fx), free(fy), free(fi);
    return rc;
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
    size_t np = pb.np;
    double *t = malloc(sizeof(double) * np), *c = malloc(sizeof(double) * np);
    res->front = malloc(sizeof(size_t) * np);
    if (!t || !c || !res->front) {
        free(t), free(c);
        scv_plan_result_free(res);
        return scv_err_set(err, SCV_ENOMEM, "plan: out of memory");
    }
    for (size_t i = 0; i < np; i++) t[i] = res->points[i].time_s, c[i] = res->points[i].cost;
    res->n_front = scv_pareto_front(t, c, np, res->front);
    for (size_t i = 0; i < res->n_front; i++) res->points[res->front[i]].pareto = 1;
    free(t), free(c);
    if (dense_plan(req, &pol, res)) {
        scv_plan_result_free(res);
        return scv_err_set(err, SCV_ENOMEM, "plan: out of memory");
    }
    if ((rc = choose(req, &pol, res, err))) {
        scv_plan_result_free(res);
        return rc;
    }
    *out = res;
    return SCV_OK;
}
