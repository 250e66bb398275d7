/*
 * record.c - the run's records in the store: each step with its measurements and shares, the
 * fitted models and the target's estimate, and the plan's points (as the service draws them).
 */
#define _POSIX_C_SOURCE 200809L
#include "loop_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Records a segment the driver trained: the step, its measurement, the switch before it. */
/* Closes a memory stream of JSON (open_memstream(buf, ...)) and stores it as the run's model
 * row of this kind; a failed stream is SCV_ENOMEM. Frees *buf. */
static int store_memstream(loop *l, const char *kind, FILE *f, char **buf, scv_err *err)
{
    int bad = ferror(f);
    if (fclose(f) || bad || !*buf) {
        free(*buf);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    int rc = scv_store_model(l->p->store, l->r->run_id, kind, *buf, err);
    free(*buf);
    return rc;
}

/* Dynamic batching: a segment's adjustments and final shares, into the report and the store
 * (models kind "dynbatch": {"step", "workers", "batch", "rebalances", "shares"}). */
static int record_shares(loop *l, int step, int K, int B, const scv_segment_result *res, scv_err *err)
{
    scv_run_result *r = l->r;
    r->rebalances += res->rebalances;
    r->n_shares = res->n_shares;
    memcpy(r->shares, res->shares, sizeof(double) * (size_t)res->n_shares);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    fprintf(f, "{\"step\":%d,\"workers\":%d,\"batch\":%d,\"rebalances\":%d,\"shares\":[", step, K, B,
            res->rebalances);
    for (int k = 0; k < res->n_shares; k++) fprintf(f, "%s%.5f", k ? "," : "", res->shares[k]);
    fputs("]}", f);
    return store_memstream(l, "dynbatch", f, &buf, err);
}

int loop_record_step(loop *l, const char *phase, int K, int B, const scv_segment_result *rs, scv_run_step **out,
                       scv_err *err)
{
    scv_run_result *r = l->r;
    const scv_segment_result res = *rs;
    int rc;
    if (r->n_steps == l->steps_cap) {
        size_t cap = l->steps_cap ? 2 * l->steps_cap : 16;
        scv_run_step *n = realloc(r->steps, cap * sizeof *n);
        if (!n) return scv_err_set(err, SCV_ENOMEM, "out of memory");
        r->steps = n, l->steps_cap = cap;
    }
    scv_run_step *t = &r->steps[r->n_steps];
    memset(t, 0, sizeof *t);
    snprintf(t->phase, sizeof t->phase, "%s", phase);
    snprintf(t->vm, sizeof t->vm, "%s", l->p->catalog->vms[l->place.seg_vm].name);
    t->workers = K, t->batch = B, t->iterations = res.iterations;
    t->first_start = res.first_start, t->last_end = res.last_end;
    t->t_iter = res.stats.workers ? res.stats.t_iter : NAN;
    t->accuracy = res.accuracy, t->reached = res.reached;
    t->idle_before = 0;
    if (r->n_steps) {
        const scv_run_step *prev = &r->steps[r->n_steps - 1];
        t->idle_before = res.iterations && prev->iterations ? t->first_start - prev->last_end : NAN;
        if (l->resumed_decision || (t->idle_before < 0)) t->idle_before = NAN; /* across a resume:
                                                    not the loop's idle */
        l->resumed_decision = 0;
    }
    r->n_steps++;
    loop_shortfall_to_steps(l, phase, K, B);
    l->seg_t0 = l->seg_t1 = NAN;
    l->iteration = res.total_iterations;
    l->samples = res.samples_seen;
    progress_advance(&l->curve.prog, res.samples_seen);
    r->epochs = l->job.n_train > 0 ? res.samples_seen / l->job.n_train : NAN;
    if (isfinite(res.accuracy)) r->accuracy = res.accuracy;
    loop_tally(l);
    if ((rc = scv_store_step(l->p->store, r->run_id, (int)r->n_steps - 1, t, err))) return rc;
    int mixed = 0; /* the segment trained more than one cluster or K */
    for (int i = 0; i < res.n_stragglers; i++) {
        const scv_straggler_event *e = &res.stragglers[i];
        scv_straggler_event *n = realloc(r->stragglers, (r->n_stragglers + 1) * sizeof *n);
        if (!n) return scv_err_set(err, SCV_ENOMEM, "out of memory");
        r->stragglers = n;
        r->stragglers[r->n_stragglers++] = *e;
        mixed |= e->replaced || e->dropped; /* a drop too: K and K - 1 in one segment */
        if ((rc = scv_store_straggler(l->p->store, r->run_id, e, err))) return rc;
    }
    if (res.n_preemptions > 0) { /* survived in place: the segment trained at more than one K */
        scv_survive_event *n = realloc(r->preemptions, (r->n_preemptions + (size_t)res.n_preemptions) * sizeof *n);
        if (!n) return scv_err_set(err, SCV_ENOMEM, "out of memory");
        r->preemptions = n;
        memcpy(r->preemptions + r->n_preemptions, res.preemptions, (size_t)res.n_preemptions * sizeof *n);
        r->n_preemptions += (size_t)res.n_preemptions;
        mixed = 1;
    }
    if (res.n_shares > 0 && (rc = record_shares(l, (int)r->n_steps - 1, K, B, &res, err))) return rc;
    /* a segment whose straggler was replaced or dropped, or that shrank or grew at a
     * preemption, mixed clusters: its times stand for none of them; one on another VM type
     * than the run's is not a measurement of the type the models are fitted on */
    if (res.stats.workers && !mixed && !l->seg_compressed && l->place.seg_vm == l->place.vm_index) {
        if ((rc = scv_store_measurement(l->p->store, r->run_id, phase, &res.stats, err))) return rc;
        if ((rc = loop_keep_measurement(l, &res.stats, err))) return rc;
    }
    if (r->n_steps > 1) {
        const scv_run_step *prev = &r->steps[r->n_steps - 2];
        if ((prev->workers != K || prev->batch != B) &&
            (rc = scv_store_switch(l->p->store, r->run_id, prev->workers, prev->batch, K, B, t->idle_before, err)))
            return rc;
    }
    if (res.reached) r->reached = 1;
    if (out) *out = t;
    return SCV_OK;
}

/* "" dense, else " with topk:100 (allgather)" or " with selsync:0.9": the option a
 * configuration trains with. */
const char *loop_comm_text(const loop *l, int comm, scv_sparse_coll coll, char *buf, size_t cap)
{
    buf[0] = 0;
    if (comm < 0 || comm == l->dense || (size_t)comm >= l->p->n_comms) return buf;
    char o[64];
    scv_plan_comm_format(&l->comms[comm], o, sizeof o);
    if (l->comms[comm].kind != SCV_PLAN_TOPK || l->comms[comm].collective != SCV_COLL_AUTO)
        snprintf(buf, cap, " with %s", o);
    else snprintf(buf, cap, " with %s (%s)", o, coll == SCV_SPARSE_ALLGATHER ? "allgather" : "artopk");
    return buf;
}

int loop_store_models(loop *l, scv_err *err)
{
    const scv_perf_model *pf = &l->r->perf;
    const scv_stat_model *sm = &l->r->stat;
    char pj[512];
    snprintf(pj, sizeof pj, "{\"c0\":%.6g,\"c1\":%.6g,\"alpha\":%.6g,\"beta\":%.6g,\"mare\":%.4g}", pf->c0, pf->c1,
             pf->alpha, pf->beta, pf->mare);
    int rc = scv_store_model(l->p->store, l->r->run_id, "perf", pj, err);
    snprintf(pj, sizeof pj, "{\"b_simple\":%.6g,\"s_min\":%.6g,\"gamma_a\":%.6g,\"gamma_s\":%.6g,\"theta\":%.6g}",
             sm->b_simple, sm->s_min, sm->gamma_a, sm->gamma_s, sm->theta);
    if (!rc) rc = scv_store_model(l->p->store, l->r->run_id, "stat", pj, err);
    const scv_run_result *r = l->r; /* the target's prediction with its band (NaN -> null) */
    char lo[32] = "null", hi[32] = "null";
    if (isfinite(r->target_epochs_lo)) snprintf(lo, sizeof lo, "%.6g", r->target_epochs_lo);
    if (isfinite(r->target_epochs_hi)) snprintf(hi, sizeof hi, "%.6g", r->target_epochs_hi);
    snprintf(pj, sizeof pj, "{\"source\":\"%s\",\"epochs\":%.6g,\"epochs_lo\":%s,\"epochs_hi\":%s,\"batch\":%d}",
             scv_target_source_name(r->target_source), r->target_epochs, lo, hi, r->target_batch);
    return rc ? rc : scv_store_model(l->p->store, l->r->run_id, "target", pj, err);
}

/* The plan's points as a models row of kind "plan" (a service draws the live trade-off from
 * it): whether times are relative, the point at the configuration trained at with its time
 * band when the learning curve gave the target, and every point (scv_plan_point_json). */
int loop_store_plan(loop *l, const scv_plan_result *res, scv_err *err)
{
    const scv_run_result *r = l->r;
    const scv_plan_point *ch = loop_find_point(res, l->K, l->B, l->comm);
    if (!ch) ch = &res->points[res->chosen];
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    fprintf(f, "{\"relative\":%s", r->relative ? "true" : "false"); /* first: the runs list reads it */
    if (r->relative) fprintf(f, ",\"nominal_epochs\":%.6g,\"nominal_batch\":%d", r->target_epochs, r->target_batch);
    fputs(",\"chosen\":", f);
    scv_plan_point_json(f, l->p->catalog, ch);
    if (ch->time_lo_s > 0 && isfinite(ch->time_hi_s)) /* its band (plan) */
        fprintf(f, ",\"time_lo_s\":%.6g,\"time_hi_s\":%.6g", ch->time_lo_s, ch->time_hi_s);
    fputs(",\"points\":[", f);
    for (size_t i = 0; i < res->n_points; i++) {
        if (i) fputc(',', f);
        scv_plan_point_json(f, l->p->catalog, &res->points[i]);
    }
    fputs("]}", f);
    return store_memstream(l, "plan", f, &buf, err);
}
