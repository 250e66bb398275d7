/*
 * choose.c - the planner's choice: the Pareto front of the points scv_plan (plan.c) filled,
 * in time T [s] and cost C [$], the dense points' own front beside it, and the point the
 * objective asks for under the request's bounds, with why (res->why); and what a point costs
 * the run from where it stands (scv_plan_run_end, the segments' idle; plan.c prices each point
 * from the start by the same scv_plan_segments_idle).
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
 */
#include "scv.h"
#include "model.h"
#include "plan_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
void plan_fmt_factor(double f, char *b, size_t cap)
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
    else snprintf(buf, cap, "K=%d B=%d", p->workers, p->batch);
    size_t len = strlen(buf);
    if (has_options(req) && len + 1 < cap) { /* the communication option: " topk:100", " dense" */
        buf[len++] = ' ';
        scv_plan_comm_format(&p->comm_opt, buf + len, cap - len);
    }
}

void plan_add(char *buf, size_t cap, const char *fmt, ...)
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
static void explain(const scv_plan_request *req, const scv_plan_policy *pol, scv_plan_result *res, const long *fi,
                    size_t nf, size_t k, choice_rule rule, const char *bounds)
{
    char *w = res->why, nb[128];
    size_t cap = sizeof res->why;
    w[0] = 0;
    switch (rule) {
    case RULE_FASTEST: plan_add(w, cap, "fastest"); break;
    case RULE_CHEAPEST: plan_add(w, cap, "cheapest"); break;
    case RULE_ONLY: plan_add(w, cap, "the only front point"); break;
    case RULE_UTILITY:
        plan_add(w, cap, "the most utility: cost + $%.4g per hour of time is least", req->value_per_hour);
        break;
    case RULE_KNEEDLE: plan_add(w, cap, "knee of %zu front points (Kneedle)", nf); break;
    case RULE_MARGINAL:
        plan_add(w, cap, "knee of %zu front point(s): faster while <= %.3g%% more cost per 1%% time saved", nf,
                 pol->knee_max_cost_per_time);
        break;
    }
    const scv_plan_point *p = &res->points[fi[k]];
    if (k + 1 < nf) { /* the slower neighbour */
        const scv_plan_point *s = &res->points[fi[k + 1]];
        label(req, s, nb, sizeof nb);
        plan_add(w, cap, "; %.2fx faster than %s for %+.0f%% cost", s->time_s / p->time_s, nb,
                 100 * (p->cost / s->cost - 1));
    }
    if (k > 0) { /* the faster neighbour */
        const scv_plan_point *f = &res->points[fi[k - 1]];
        label(req, f, nb, sizeof nb);
        plan_add(w, cap, "; %s would save %.0f%% more time for %+.0f%% cost", nb, 100 * (1 - f->time_s / p->time_s),
                 100 * (f->cost / p->cost - 1));
    }
    if (bounds) plan_add(w, cap, "; %s", bounds);
    if (p->extrap != SCV_EXTRAP_NONE) plan_add(w, cap, "; %s", scv_extrap_desc(p->extrap));
    if (p->comm_opt.kind != SCV_PLAN_DENSE) {
        char f[32];
        plan_fmt_factor(p->comm_opt.iter_factor, f, sizeof f);
        plan_add(w, cap, "; iterations assumed x%s of dense: not measured", f);
    }
}

/* Segments: at most this many counted (the loop's own cap is lower: max_segments). */
#define SEGMENTS_MAX 10000

double scv_plan_segments_idle(const scv_plan_request *req, int B, double iterations)
{
    if (!(req->segment_idle_s > 0) || !(iterations > 0) || B < 1) return 0;
    double n_train = req->job && req->job->n_train > 0 ? req->job->n_train : 0;
    double least = fmax(1, fmax(req->segment_min_iters, n_train / B)), share = fmin(1, fmax(0, req->segment_share));
    int n = 0;
    for (double rest = ceil(iterations); rest > 0 && n < SEGMENTS_MAX; n++) rest -= ceil(fmax(least, share * rest));
    return n * req->segment_idle_s;
}

/* The share of the target the run has done, in [0, 1]. */
static double done_of(const scv_plan_request *req) { return fmin(1, fmax(0, req->done_share)); }

void scv_plan_run_end(const scv_plan_request *req, const scv_plan_point *p, double *time_s, double *cost)
{
    /* the rest's segments, at the point's idle per segment (spot's factor in it); a request
     * without the segment rule: the point's share */
    double left = 1 - done_of(req), rest = left * (p->time_s - p->idle_s);
    double all = scv_plan_segments_idle(req, p->batch, p->iterations);
    rest += all > 0 ? scv_plan_segments_idle(req, p->batch, left * p->iterations) * p->idle_s / all : left * p->idle_s;
    *time_s = fmax(0, req->spent_s) + rest;
    *cost = fmax(0, req->spent_cost) + (p->time_s > 0 ? p->cost * rest / p->time_s : 0);
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
        plan_add(bounds, sizeof bounds, "meets %s", which);
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
                                     "no configuration meets both the deadline %.0f s and the budget %s%s", dl, ub,
                                     run);
            }
        } else {
            k = choose_on(fx, fy, nf, req->objective, req->value_per_hour, pol, &rule);
            plan_add(bounds, sizeof bounds, "within %s (the unbounded choice %s misses it)", which, ul);
        }
    }
    if (rc == SCV_OK) {
        res->chosen = fi[k];
        explain(req, pol, res, fi, nfr, k, rule, bounds[0] ? bounds : NULL);
    }
    free(fx), free(fy), free(fi);
    return rc;
}

int plan_choose(const scv_plan_request *req, const scv_plan_policy *pol, scv_plan_result *res, scv_err *err)
{
    size_t np = res->n_points;
    double *t = malloc(sizeof(double) * np), *c = malloc(sizeof(double) * np);
    res->front = malloc(sizeof(size_t) * np);
    if (!t || !c || !res->front) {
        free(t), free(c);
        return scv_err_set(err, SCV_ENOMEM, "plan: out of memory");
    }
    for (size_t i = 0; i < np; i++) t[i] = res->points[i].time_s, c[i] = res->points[i].cost;
    res->n_front = scv_pareto_front(t, c, np, res->front);
    for (size_t i = 0; i < res->n_front; i++) res->points[res->front[i]].pareto = 1;
    free(t), free(c);
    if (dense_plan(req, pol, res)) return scv_err_set(err, SCV_ENOMEM, "plan: out of memory");
    return choose(req, pol, res, err);
}
