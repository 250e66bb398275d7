/*
 * report_store.c - a stored run's result rebuilt from the run store, so that its report can
 * be written again at any time (`scavenger runs report ID`): a report that could not be
 * written when the run ended (a report directory gone bad during the run), a run that
 * stopped without one (interrupted, stopped by its budget, failed), or one moved away. What
 * the store holds is taken as it is: the outcome, the first decision, the steps, the
 * stragglers, the evaluations, the switches, the fitted models, the target's prediction and
 * the plans the loop stored (its first plan as the decision's, its latest as the report's
 * trade-off). What it does not hold (the forecasts along the run, the carry across batches,
 * the search's accounting) is left absent and the report says so (from_store).
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "../model/model.h"
#include "../store/store.h"
#include "report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double num(const cJSON *o, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(x) ? x->valuestring : "";
}

/* A table of the run's rows as a parsed JSON array (NULL when it cannot be read). */
static cJSON *rows(scv_store *s, long long run, const char *table)
{
    char *json = NULL;
    if (scv_store_run_rows_json(s, run, table, &json, NULL)) return NULL;
    cJSON *a = cJSON_Parse(json);
    free(json);
    if (!cJSON_IsArray(a)) cJSON_Delete(a), a = NULL;
    return a;
}

/* One point of a stored plan (scv_plan_point_json's fields) into pt; 0 when its VM type is
 * not one type of the catalog (a mixed cluster's point: left out of a rebuilt plan). */
static int point_of(const cJSON *o, const scv_catalog *cat, scv_plan_point *pt)
{
    memset(pt, 0, sizeof *pt);
    const scv_vm_type *vm = scv_catalog_find(cat, str(o, "vm"));
    if (!vm || cJSON_GetObjectItemCaseSensitive(o, "mix")) return 0;
    pt->vm = (int)(vm - cat->vms);
    pt->mix = -1, pt->comm = -1, pt->comm_scale = 1;
    pt->workers = (int)num(o, "workers"), pt->batch = (int)num(o, "batch");
    pt->t_iter = num(o, "t_iter"), pt->iterations = num(o, "iterations"), pt->time_s = num(o, "time_s");
    pt->cost = num(o, "cost"), pt->price_hr = num(o, "price_hr"), pt->err_rel = num(o, "err_rel");
    pt->extrapolated = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "extrapolated"));
    pt->pareto = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "pareto"));
    double lo = num(o, "time_lo_s"), hi = num(o, "time_hi_s"), idle = num(o, "idle_s");
    pt->idle_s = idle > 0 ? idle : 0;
    pt->time_lo_s = lo > 0 ? lo : 0;
    pt->time_hi_s = lo > 0 ? (isfinite(hi) ? hi : INFINITY) : 0;
    return pt->workers >= 1 && pt->batch >= 1;
}

/* A stored plan row ({"relative", "chosen", "points"}) as a plan: its points, its front (the
 * points marked pareto, by time) and its choice; NULL when it has none of the catalog's. */
static scv_plan_result *plan_of(const char *json, const scv_catalog *cat, int *relative)
{
    cJSON *o = cJSON_Parse(json);
    const cJSON *pts = cJSON_GetObjectItemCaseSensitive(o, "points"), *ch = cJSON_GetObjectItemCaseSensitive(o, "chosen");
    *relative = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "relative"));
    int n = cJSON_GetArraySize(pts);
    scv_plan_result *r = n > 0 ? calloc(1, sizeof *r) : NULL;
    if (!r || !(r->points = calloc((size_t)n, sizeof *r->points)) || !(r->front = calloc((size_t)n, sizeof *r->front))) {
        scv_plan_result_free(r);
        cJSON_Delete(o);
        return NULL;
    }
    const cJSON *x;
    cJSON_ArrayForEach(x, pts) if (point_of(x, cat, &r->points[r->n_points])) r->n_points++;
    scv_plan_point want;
    int have_choice = point_of(ch, cat, &want);
    r->chosen = -1;
    for (size_t i = 0; i < r->n_points; i++) {
        const scv_plan_point *p = &r->points[i];
        if (p->pareto) { /* insertion by time */
            size_t k = r->n_front;
            while (k > 0 && r->points[r->front[k - 1]].time_s > p->time_s) r->front[k] = r->front[k - 1], k--;
            r->front[k] = i, r->n_front++;
        }
        if (have_choice && r->chosen < 0 && p->vm == want.vm && p->workers == want.workers && p->batch == want.batch)
            r->chosen = (long)i;
    }
    cJSON_Delete(o);
    if (r->chosen < 0) { /* a plan without its choice is not shown as one */
        scv_plan_result_free(r);
        return NULL;
    }
    r->chosen_dense = r->chosen;
    return r;
}

/* The fitted models, the target's prediction and the plans among the run's models rows. */
static void models_of(scv_store *s, long long run, const scv_run_params *p, scv_run_result *out)
{
    cJSON *a = rows(s, run, "models"), *m;
    const char *first_plan = NULL, *last_plan = NULL;
    cJSON_ArrayForEach(m, a) {
        const char *kind = str(m, "kind");
        cJSON *j = cJSON_Parse(str(m, "json"));
        if (!strcmp(kind, "perf") && j) {
            scv_perf_model *pf = &out->perf;
            pf->c0 = num(j, "c0"), pf->c1 = num(j, "c1"), pf->alpha = num(j, "alpha"), pf->beta = num(j, "beta");
            pf->mare = num(j, "mare");
        } else if (!strcmp(kind, "stat") && j) {
            scv_stat_model *sm = &out->stat;
            sm->kind = p->stat;
            sm->b_simple = num(j, "b_simple"), sm->s_min = num(j, "s_min"), sm->gamma_a = num(j, "gamma_a");
            sm->gamma_s = num(j, "gamma_s"), sm->theta = num(j, "theta");
            snprintf(sm->note, sizeof sm->note, "as stored (the run's statistical model)");
        } else if (!strcmp(kind, "target") && j) {
            for (int k = 0; k <= SCV_TARGET_CORPUS; k++)
                if (!strcmp(str(j, "source"), scv_target_source_name((scv_target_source)k)))
                    out->target_source = (scv_target_source)k;
            out->target_epochs = num(j, "epochs"), out->target_epochs_lo = num(j, "epochs_lo");
            out->target_epochs_hi = num(j, "epochs_hi");
            out->target_batch = isfinite(num(j, "batch")) ? (int)num(j, "batch") : 0;
            snprintf(out->target_note, sizeof out->target_note, "%s, %.3g epochs at B=%d (as stored)", str(j, "source"),
                     out->target_epochs, out->target_batch);
        } else if (!strcmp(kind, "plan")) {
            if (!first_plan) first_plan = str(m, "json");
            last_plan = str(m, "json");
        }
        cJSON_Delete(j);
    }
    int rel_first = 0, rel_last = 0;
    if (first_plan) out->decision = plan_of(first_plan, p->catalog, &rel_first);
    if (last_plan && last_plan != first_plan) out->plan = plan_of(last_plan, p->catalog, &rel_last);
    else out->plan = out->decision, rel_last = rel_first;
    if (!out->plan) out->plan = out->decision; /* (the latest unreadable: the first) */
    out->relative = rel_last;
    cJSON_Delete(a);
}

/* The switches (a step at another K, B or VM type than the one before it) and their idle
 * (median, worst), as the loop counts them from its steps. */
static void switches_of(scv_run_result *out)
{
    double idle[1024];
    int n = 0;
    out->switches = 0;
    for (size_t i = 1; i < out->n_steps; i++) {
        const scv_run_step *t = &out->steps[i], *b = &out->steps[i - 1];
        if (t->workers == b->workers && t->batch == b->batch && !strcmp(t->vm, b->vm)) continue;
        out->switches++;
        if (isfinite(t->idle_before) && n < 1024) idle[n++] = t->idle_before;
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && idle[j] < idle[j - 1]; j--) {
            double t = idle[j];
            idle[j] = idle[j - 1], idle[j - 1] = t;
        }
    out->idle_median_s = n ? idle[n / 2] : NAN;
    out->idle_worst_s = n ? idle[n - 1] : NAN;
}

int scv_run_result_load(scv_store *s, long long run, const scv_run_params *p, const char *state_dir,
                        scv_run_result *out, scv_err *err)
{
    memset(out, 0, sizeof *out);
    out->accuracy = out->epochs = out->predicted_time_s = out->predicted_cost = out->predicted_band = NAN;
    out->predicted_lo_s = out->predicted_hi_s = out->search_budget_s = out->overhead_s = NAN;
    out->absolute_at_s = out->absolute_at_epochs = out->absolute_time_s = NAN;
    out->target_p_reach = out->target_nearest = out->target_epochs = out->target_epochs_lo = NAN;
    out->target_epochs_hi = out->carry_noise_scale = out->carry_gamma = out->carry_q_lo = out->carry_q_hi = NAN;
    out->carry_err = out->price_hr = out->search_cost = out->budget_next_cost = NAN;
    out->perf.c0 = out->perf.c1 = out->perf.alpha = out->perf.beta = out->perf.mare = NAN;
    out->comm = -1, out->from_store = 1;
    scv_run_summary sum;
    int rc = scv_store_run_summary(s, run, &sum, err);
    if (rc) return rc;
    out->run_id = run;
    snprintf(out->run_dir, sizeof out->run_dir, "%s/%lld", state_dir, run);
    out->state = SCV_STATE_FAILED;
    for (int k = SCV_STATE_WARMUP; k <= SCV_STATE_FAILED; k++)
        if (!strcmp(sum.state, scv_run_state_name((scv_run_state)k))) out->state = (scv_run_state)k;
    out->reached = sum.reached;
    out->accuracy = sum.accuracy;
    out->actual_time_s = sum.actual_time_s, out->actual_cost = sum.actual_cost;
    out->predicted_time_s = sum.predicted_time_s, out->predicted_cost = sum.predicted_cost;
    out->decision_relative = sum.nominal;
    snprintf(out->why, sizeof out->why, "%s", sum.why);
    if ((rc = scv_store_load_steps(s, run, &out->steps, &out->n_steps, err))) return rc;
    if ((rc = scv_store_load_stragglers(s, run, &out->stragglers, &out->n_stragglers, err))) return rc;
    scv_eval_sample *ev = NULL;
    size_t nev = 0;
    if (scv_store_load_evals(s, run, &ev, &nev, NULL) == SCV_OK && nev) {
        out->epochs = ev[nev - 1].epoch;
        if (!isfinite(out->accuracy)) out->accuracy = ev[nev - 1].accuracy;
    }
    free(ev);
    double search = 0, total = 0;
    for (size_t i = 0; i < out->n_steps; i++) {
        const scv_run_step *t = &out->steps[i];
        double secs = (t->iterations ? t->last_end - t->first_start : 0) + (isfinite(t->idle_before) ? t->idle_before : 0);
        total += secs;
        if (strcmp(t->phase, "train")) search += secs;
        if (t->iterations > 0) out->workers = t->workers, out->batch = t->batch;
        out->n_profiled += !strcmp(t->phase, "search") && t->iterations > 0;
    }
    out->search_time_s = search;
    if (!isfinite(out->actual_time_s)) out->actual_time_s = total; /* (stored before its outcome was) */
    out->relaunches = out->n_steps ? (int)out->n_steps - 1 : 0;
    models_of(s, run, p, out);
    switches_of(out);
    cJSON *meas = rows(s, run, "measurements");
    out->perf.n_points = cJSON_GetArraySize(meas);
    cJSON_Delete(meas);
    const scv_plan_result *pl = out->decision ? out->decision : out->plan;
    if (pl) { /* the decision's point: its price, its uncertainty and its band */
        const scv_plan_point *ch = &pl->points[pl->chosen];
        out->price_hr = ch->price_hr, out->predicted_band = ch->err_rel;
        if (ch->time_lo_s > 0) out->predicted_lo_s = ch->time_lo_s, out->predicted_hi_s = ch->time_hi_s;
    }
    return SCV_OK;
}
