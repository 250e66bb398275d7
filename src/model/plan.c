/*
 * plan.c - the planner: enumerate (VM type, K, B) under constraints, predict each one's
 * iteration time (perf model), iterations to target (statistical model), wall time
 * T = iterations * t_iter and cost C = K * T * price, compute the Pareto front of
 * (T, C), and pick the configuration the objective asks for:
 *   time   the fastest (within --budget if given)
 *   cost   the cheapest (within --deadline if given)
 *   knee   Kneedle's knee of the Pareto front (Satopaa et al. 2011), within both bounds
 * A VM type without measurements is predicted by scaling compute time by the ratio of
 * GPUs (when both have GPUs) or vCPUs to the measured type, and is marked extrapolated.
 */
#include "scv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void scv_plan_result_free(scv_plan_result *r)
{
    if (!r) return;
    free(r->points);
    free(r->front);
    free(r);
}

/* sort keys for the Pareto front */
static const double *g_t, *g_c;
static int by_time(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    if (g_t[i] != g_t[j]) return g_t[i] < g_t[j] ? -1 : 1;
    if (g_c[i] != g_c[j]) return g_c[i] < g_c[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}

size_t scv_pareto_front(const double *time, const double *cost, size_t n, size_t *front)
{
    for (size_t i = 0; i < n; i++) front[i] = i;
    g_t = time, g_c = cost;
    qsort(front, n, sizeof(size_t), by_time);
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

/* compute-time scale of VM type v relative to the measured type m */
static double compute_scale(const scv_vm_type *v, const scv_vm_type *m)
{
    if (v == m) return 1;
    if (v->gpus > 0 && m->gpus > 0) return (double)m->gpus / v->gpus;
    return (double)m->vcpus / v->vcpus;
}

int scv_plan(const scv_plan_request *req, scv_plan_result **out, scv_err *err)
{
    *out = NULL;
    const scv_catalog *cat = req->catalog;
    if (!req->n_vms || !req->n_workers || !req->n_batches)
        return scv_err_set(err, SCV_EINVAL, "plan: empty search space (VM types, workers or batches)");
    if (req->measured_vm < 0 || (size_t)req->measured_vm >= cat->n)
        return scv_err_set(err, SCV_EINVAL, "plan: the measured VM type is not in the catalog");
    size_t cap = req->n_vms * req->n_workers * req->n_batches;
    scv_plan_result *res = calloc(1, sizeof *res);
    if (!res || !(res->points = malloc(sizeof(scv_plan_point) * cap))) {
        free(res);
        return scv_err_set(err, SCV_ENOMEM, "plan: out of memory for %zu configurations", cap);
    }
    const scv_vm_type *mv = &cat->vms[req->measured_vm];
    size_t np = 0, no_price = 0;
    for (size_t v = 0; v < req->n_vms; v++) {
        const scv_vm_type *vm = &cat->vms[req->vms[v]];
        double scale = compute_scale(vm, mv);
        int extrap = vm != mv;
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
                    no_price++;
                    continue;
                }
                double tc = scv_perf_compute(req->perf, per) * scale, tm = scv_perf_comm(req->perf, K);
                double t_iter = tc + tm - req->perf->overlap * fmin(tc, tm);
                scv_plan_point *p = &res->points[np++];
                p->vm = req->vms[v];
                p->workers = K;
                p->batch = B;
                p->t_iter = t_iter;
                p->iterations = iters;
                p->time_s = iters * t_iter;
                p->price_hr = price;
                p->cost = scv_cost_usd(K, p->time_s, price);
                p->err_rel = req->perf->mare;
                p->extrapolated = extrap;
                p->pareto = 0;
            }
        }
    }
    res->n_points = np;
    res->chosen = -1;
    if (np == 0) {
        size_t mem_out = res->n_excluded_memory;
        scv_plan_result_free(res);
        if (no_price)
            return scv_err_set(err, SCV_EINFEASIBLE,
                               "no configuration has a price under this pricing policy "
                               "(%zu lack one, e.g. no spot price in the catalog)", no_price);
        return scv_err_set(err, SCV_EINFEASIBLE,
                           "no configuration fits the constraints (B >= K, per-worker batch "
                           "bounds, VM memory: %zu excluded because b does not fit)", mem_out);
    }
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
    /* choose, on the front, under the bounds */
    double dl = req->deadline_s, bu = req->budget, fastest = INFINITY, cheapest = INFINITY;
    long best = -1;
    size_t nf = 0;
    double *fx = malloc(sizeof(double) * res->n_front), *fy = malloc(sizeof(double) * res->n_front);
    long *fi = malloc(sizeof(long) * res->n_front);
    for (size_t i = 0; fx && fy && fi && i < res->n_front; i++) {
        const scv_plan_point *p = &res->points[res->front[i]];
        fastest = fmin(fastest, p->time_s);
        cheapest = fmin(cheapest, p->cost);
        if ((dl > 0 && p->time_s > dl) || (bu > 0 && p->cost > bu)) continue;
        fx[nf] = p->time_s, fy[nf] = p->cost, fi[nf] = (long)res->front[i];
        nf++;
    }
    int rc = SCV_OK;
    if (!fx || !fy || !fi) rc = scv_err_set(err, SCV_ENOMEM, "plan: out of memory");
    else if (nf == 0) {
        if (dl > 0 && fastest > dl)
            rc = scv_err_set(err, SCV_EINFEASIBLE,
                             "deadline %.4g s cannot be met: the fastest configuration takes %.4g s",
                             dl, fastest);
        else if (bu > 0 && cheapest > bu)
            rc = scv_err_set(err, SCV_EINFEASIBLE,
                             "budget $%.2f cannot be met: the cheapest configuration costs $%.2f",
                             bu, cheapest);
        else
            rc = scv_err_set(err, SCV_EINFEASIBLE,
                             "no configuration meets both the deadline %.0f s and the budget $%.2f",
                             dl, bu);
    } else if (req->objective == SCV_OBJ_TIME) {
        best = fi[0]; /* the front is sorted by time */
        snprintf(res->why, sizeof res->why, "fastest%s", bu > 0 ? " within the budget" : "");
    } else if (req->objective == SCV_OBJ_COST) {
        best = fi[nf - 1]; /* and cost falls along it */
        snprintf(res->why, sizeof res->why, "cheapest%s", dl > 0 ? " within the deadline" : "");
    } else {
        long k = scv_kneedle(fx, fy, nf);
        if (k >= 0) {
            best = fi[k];
            snprintf(res->why, sizeof res->why,
                     "knee of the cost-time Pareto front (Kneedle, %zu front points)", nf);
        } else {
            best = fi[nf / 2];
            snprintf(res->why, sizeof res->why,
                     "the front (%zu points) has no knee: its middle point", nf);
        }
    }
    free(t), free(c), free(fx), free(fy), free(fi);
    if (rc) {
        scv_plan_result_free(res);
        return rc;
    }
    res->chosen = best;
    *out = res;
    return SCV_OK;
}
