/*
 * plan_job.c - the `plan` pipeline (see plan_job.h): loads the profile and the catalog,
 * finds the measured VM type and the types to plan over, measures the thread scaling when
 * a configuration was profiled at several thread counts, reads the mixed clusters and the
 * communication options asked for (with the compression kernel time the profile measured),
 * fits the parallel and the statistical models, plans, and writes the JSON report of
 * `plan --json`. Nothing here depends on the order of the profile's files (the profile's
 * configurations come in a canonical order; the thread count and the default base batch
 * are chosen from their values).
 */
#define _POSIX_C_SOURCE 200809L
#include "plan_job.h"
#include "json_out.h"
#include "../model/model.h"
#include "io.h"
#include "../core/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void scv_plan_job_free(scv_plan_job *j)
{
    if (!j) return;
    free(j->spot_front);
    j->spot_front = NULL;
    scv_plan_result_free(j->res);
    scv_profile_free(j->prof);
    scv_catalog_free(j->cat);
    j->res = NULL, j->prof = NULL, j->cat = NULL;
}

/* The measured VM type: the args' or the profile's, checked against the catalog. */
static int find_measured(const scv_plan_args *a, scv_plan_job *j, scv_err *err)
{
    const char *measured = a->measured_on ? a->measured_on : j->prof->job.vm;
    j->measured = measured[0] ? scv_catalog_find(j->cat, measured) : NULL;
    if (j->measured) return SCV_OK;
    int o = a->option_names;
    if (!measured[0])
        return scv_err_set(err, SCV_EINVAL, "%s: the profile does not name its VM type (train "
                           "--vm-type): %s", j->profile_name, o ? "pass --measured-on TYPE" : "give \"measured_on\"");
    if (!a->measured_on)
        return scv_err_set(err, SCV_ENOTFOUND, "%s: the profile's VM type '%s' (the \"vm\" of its "
                           "job line, from train --vm-type) is not a VM type of %s: %s", j->profile_name,
                           measured, j->catalog, o ? "pass --measured-on TYPE or --catalog CSV"
                                                   : "give \"measured_on\" or \"catalog\"");
    if (o) return scv_err_set(err, SCV_ENOTFOUND, "--measured-on %s: not a VM type of %s", measured, j->catalog);
    return scv_err_set(err, SCV_ENOTFOUND, "field \"measured_on\": '%s' is not a VM type of %s", measured,
                       j->catalog);
}

/* The catalog indices to plan over into vms (room for every type). */
static int find_vms(const scv_plan_args *a, scv_plan_job *j, int *vms, size_t *nvms, scv_err *err)
{
    *nvms = 0;
    if (!a->vms) {
        vms[(*nvms)++] = (int)(j->measured - j->cat->vms);
        return SCV_OK;
    }
    int rc = scv_vm_list_parse(j->cat, a->vms, a->option_names ? "--vm" : "vm", j->catalog, vms, nvms, err);
    if (rc && rc != SCV_ENOMEM) j->bad_arg = 1;
    return rc;
}

/* Items of a list: separators + 1 (0 for NULL). */
static double n_items(const char *list, char sep)
{
    if (!list) return 0;
    double n = 1;
    for (; *list; list++) n += *list == sep;
    return n;
}

/* The space's size bound (before the profile's types are resolved): VM types of a->vms (at
 * most the catalog's, 1 when none) and mixes, times K, B and communication options. SCV_ERANGE
 * naming the limit when it exceeds a->max_points: refused before any work or memory. */
static int check_space(const scv_plan_args *a, const scv_catalog *cat, scv_err *err)
{
    if (a->max_points <= 0) return SCV_OK;
    double nv = !a->vms ? 1 : !strcmp(a->vms, "all") ? (double)cat->n : n_items(a->vms, ',');
    if (nv > (double)cat->n) nv = (double)cat->n;
    double types = nv + n_items(a->mixes, ';');
    double comms = a->compress ? n_items(a->compress, ',') + 1 : 1;
    if (comms > SCV_PLAN_MAX_COMMS + 1) comms = SCV_PLAN_MAX_COMMS + 1;
    double pts = types * (double)(a->n_workers ? a->n_workers : 1) * (double)(a->n_batches ? a->n_batches : 1) * comms;
    if (pts <= (double)a->max_points) return SCV_OK;
    return scv_err_set(err, SCV_ERANGE,
                       "the space is too large: %.0f VM type(s) and mix(es) x %zu worker count(s) x %zu batch size(s) "
                       "x %.0f communication option(s) = %.0f points, over the limit max_points = %ld: narrow %s",
                       types, a->n_workers, a->n_batches, comms, pts, a->max_points,
                       a->option_names ? "--vm, --workers or --batch" : "\"vm\", \"workers\" or \"batch\"");
}

/* The mixes of a->mixes (';'-separated specs) into *out (malloc'ed; NULL and 0 when none). */
static int find_mixes(const scv_plan_args *a, scv_plan_job *j, scv_vm_mix **out, size_t *n, scv_err *err)
{
    *out = NULL, *n = 0;
    if (!a->mixes) return SCV_OK;
    size_t cap = 1;
    for (const char *p = a->mixes; *p; p++) cap += *p == ';';
    char *list = strdup(a->mixes), *save = NULL;
    if (!list || !(*out = malloc(sizeof **out * cap))) {
        free(list);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    int rc = SCV_OK;
    for (char *t = strtok_r(list, ";", &save); t && !rc; t = strtok_r(NULL, ";", &save)) {
        scv_err e = {0};
        if ((rc = scv_vm_mix_parse(j->cat, t, &(*out)[*n], &e))) {
            const char *of = rc == SCV_ENOTFOUND ? j->catalog : NULL;
            scv_err_set(err, rc, "%s: %s%s%s%s", a->option_names ? "--mix" : "field \"mix\"", e.msg, of ? " (" : "",
                        of ? of : "", of ? ")" : "");
            j->bad_arg = 1;
        } else
            (*n)++;
    }
    if (!rc && !*n) {
        rc = scv_err_set(err, SCV_EINVAL, "%s: no mix in '%s' (expected TYPE:COUNT[,TYPE:COUNT...], mixes "
                         "separated by ';')", a->option_names ? "--mix" : "field \"mix\"", a->mixes);
        j->bad_arg = 1;
    }
    free(list);
    return rc;
}

/* The communication options of a->compress into out (room for SCV_PLAN_MAX_COMMS + 1); 0
 * options when none are asked for. */
static int find_comms(const scv_plan_args *a, scv_plan_job *j, scv_plan_comm *out, size_t *n, scv_err *err)
{
    *n = 0;
    if (!a->compress) return SCV_OK;
    const char *what = a->option_names ? "--compress" : "field \"compress\":";
    scv_err e = {0};
    double f = a->compress_iterations > 0 ? a->compress_iterations : 1;
    int rc = scv_plan_comm_parse(a->compress, f, out, SCV_PLAN_MAX_COMMS + 1, n, &e);
    if (!rc && a->topology == SCV_TOPO_PS)
        for (size_t i = 0; i < *n && !rc; i++)
            if (out[i].kind == SCV_PLAN_TOPK) {
                char name[64];
                scv_plan_comm_format(&out[i], name, sizeof name);
                rc = scv_err_set(&e, SCV_EINVAL, "'%s': Top-k is priced with the ring model's alpha and beta (per "
                                 "message, per byte); the parameter-server model has no per-byte term (%s ring)",
                                 name, a->option_names ? "--comm" : "\"comm\":");
            }
    if (rc) {
        j->bad_arg = 1;
        return scv_err_set(err, rc, "%s %s", what, e.msg);
    }
    return SCV_OK;
}

/* The compression kernel time the profile measured: the mean over its compressed
 * iterations (0: none), their count in *n. */
static double profile_t_compress(const scv_profile *prof, long *n)
{
    double sum = 0;
    *n = 0;
    for (size_t i = 0; i < prof->n; i++)
        if (prof->configs[i].n_compressed > 0 && prof->configs[i].t_compress > 0)
            sum += prof->configs[i].t_compress * prof->configs[i].n_compressed, *n += prof->configs[i].n_compressed;
    return *n ? sum / (double)*n : 0;
}

/* The configurations at a thread count other than the models' (mthreads), said per file
 * into j->left_out ("p3.jsonl: 1 configuration at 2 threads left out of the fit (the
 * models use 1 thread)"): each file (or text) loaded on its own to name it; one that does
 * not load alone is counted under "the profile". Only when some were left out. */
static void left_out_note(const scv_plan_args *a, scv_plan_job *j, int mthreads, size_t n_out)
{
    size_t len = 0, named = 0;
    char *list = a->profile ? strdup(a->profile) : NULL, *save = NULL;
    const char *tok = list ? strtok_r(list, ",", &save) : NULL;
    for (size_t i = 0; a->profile ? tok != NULL : i < a->n_metrics; i++) {
        char label[64];
        scv_profile *one = NULL;
        scv_err e = {0};
        int rc = a->profile ? scv_profile_load(tok, &one, &e)
                            : scv_profile_load_texts(a->metrics + i, 1, "metrics", &one, &e);
        if (!a->profile) snprintf(label, sizeof label, "metrics[%zu]", i);
        for (int t = 0; !rc && t <= 1024; t++) { /* each thread count of this file, ascending */
            size_t n = 0;
            for (size_t k = 0; k < one->n; k++) n += one->configs[k].threads == t && t > 0 && t != mthreads;
            if (!n) continue;
            named += n;
            if (len < sizeof j->left_out)
                len += (size_t)snprintf(j->left_out + len, sizeof j->left_out - len,
                                        "%s%s: %zu configuration%s at %d thread%s left out of the fit (the models use "
                                        "%d thread%s)", len ? "; " : "", a->profile ? tok : label, n, n == 1 ? "" : "s",
                                        t, t == 1 ? "" : "s", mthreads, mthreads == 1 ? "" : "s");
        }
        scv_profile_free(one);
        if (a->profile) tok = strtok_r(NULL, ",", &save);
    }
    free(list);
    if (named < n_out && len < sizeof j->left_out) /* measured at another count only when pooled */
        snprintf(j->left_out + len, sizeof j->left_out - len,
                 "%s%s: %zu configuration%s at other thread counts left out of the fit (the models use %d thread%s)",
                 len ? "; " : "", j->profile_name, n_out - named, n_out - named == 1 ? "" : "s", mthreads,
                 mthreads == 1 ? "" : "s");
}

/* Thread scaling, measured: a configuration profiled at several thread counts gives
 * Amdahl's parallel fraction (*pf, else -1); the models are fitted on one thread count
 * (*mthreads, scv_profile_models_threads), so the profile keeps only those configurations (and the
 * ones of no known thread count). */
static int thread_scaling(const scv_plan_args *a, scv_plan_job *j, int *mthreads, double *pf, scv_err *err)
{
    scv_profile *prof = j->prof;
    int nthr = 0, thr[16];
    double tcs[16];
    *mthreads = scv_profile_models_threads(prof);
    *pf = -1;
    for (size_t i = 0; i < prof->n && nthr < 2; i++) { /* the first (K, B) at 2+ thread counts */
        nthr = 0;
        for (size_t k = 0; k < prof->n && nthr < 16; k++) {
            const scv_config_stats *c = &prof->configs[k];
            if (c->workers == prof->configs[i].workers && c->batch == prof->configs[i].batch && c->threads > 0)
                thr[nthr] = c->threads, tcs[nthr++] = c->t_iter - c->t_comm;
        }
    }
    size_t nfit = 0;
    for (size_t i = 0; i < prof->n; i++) /* keep the models' thread count only */
        if (prof->configs[i].threads == *mthreads || prof->configs[i].threads <= 0) prof->configs[nfit++] = prof->configs[i];
    if (nthr >= 2) {
        double t1;
        int rc = scv_amdahl_fit(thr, tcs, (size_t)nthr, pf, &t1, err);
        if (rc) return rc;
        snprintf(j->scaling, sizeof j->scaling, "thread scaling measured: parallel fraction f = %.3f from %d thread counts",
                 *pf, nthr);
    }
    if (nfit < prof->n) left_out_note(a, j, *mthreads, prof->n - nfit);
    prof->n = nfit;
    if (*mthreads > 0) prof->job.threads = *mthreads;
    return SCV_OK;
}

/* ---- spot with the risk of preemption (model/spot.c) ---- */

/* Whether to compare, the policy, and the user's rates (checked against the catalog). */
static int find_rates(const scv_plan_args *a, scv_plan_job *j, scv_err *err)
{
    j->spot_pol = a->spot_pol ? *a->spot_pol : scv_spot_policy_default();
    j->spot_rates = (scv_spot_rates){.all = -1};
    j->spot_best = -1;
    j->spot_on = a->preempt_rate || a->spot_risk || a->pricing == SCV_PRICE_SPOT;
    if (!a->preempt_rate) return SCV_OK;
    scv_err e = {0};
    int rc = scv_spot_rates_parse(a->preempt_rate, j->cat, &j->spot_rates, &e);
    if (!rc) return SCV_OK;
    j->bad_arg = 1;
    return scv_err_set(err, rc, "%s %s%s%s%s", a->option_names ? "--preempt-rate" : "field \"preempt_rate\":", e.msg,
                       rc == SCV_ENOTFOUND ? " (" : "", rc == SCV_ENOTFOUND ? j->catalog : "",
                       rc == SCV_ENOTFOUND ? ")" : "");
}

/* "c5.xlarge K=8 B=512" (a mix: its types) */
static void point_label(const scv_plan_job *j, const scv_plan_point *p, char *b, size_t cap)
{
    char vm[256];
    if (p->mix_types.n > 0) scv_vm_mix_format(j->cat, &p->mix_types, vm, sizeof vm);
    else snprintf(vm, sizeof vm, "%s", j->cat->vms[p->vm].name);
    snprintf(b, cap, "%.200s K=%d B=%d", vm, p->workers, p->batch);
}

/* One point's comparison: its time is the on-demand-equivalent T0 (scv_plan prices no
 * preemption), its prices the catalog's on-demand and spot (the middle of the spot range)
 * summed over its workers, its rate the sum of its workers'. */
static int spot_point(const scv_plan_args *a, const scv_plan_job *j, const scv_plan_request *req,
                      const scv_plan_point *p, scv_spot_result *out, scv_err *err)
{
    const scv_catalog *cat = j->cat;
    scv_vm_mix one = {.n = 1, .vm = {p->vm}, .count = {p->workers}};
    const scv_vm_mix *mx = p->mix_types.n > 0 ? &p->mix_types : &one;
    scv_spot_recovery how = a->spot_inplace ? SCV_SPOT_INPLACE : SCV_SPOT_RESTART;
    scv_spot_risk risk = {.pol = &j->spot_pol, .rates = &j->spot_rates, .recovery = how};
    double lam = scv_spot_lam(&risk, cat, mx->vm, mx->count, mx->n), od = 0, sp = 0;
    for (int i = 0; i < mx->n; i++) {
        const scv_vm_type *v = &cat->vms[mx->vm[i]];
        od += mx->count[i] * v->ondemand;
        sp += mx->count[i] * scv_vm_price(v, SCV_PRICE_SPOT, 0, 0, 0);
    }
    /* T0: the plan's time, less the preemptions' share when the plan priced spot with the risk */
    double t0 = p->time_s, thr_less = scv_plan_thr_less(req, p, &risk);
    if (a->pricing == SCV_PRICE_SPOT) t0 *= 1 - scv_spot_rho(&j->spot_pol, how, p->t_iter, thr_less, lam);
    scv_spot_in in = {.pol = &j->spot_pol, .recovery = how,
                      .workers = p->workers, .homogeneous = mx->n == 1, .t0_s = t0, .t_iter = p->t_iter,
                      .thr_less = thr_less,
                      .lam = lam, .price_od = od, .price_spot = sp, .deadline_s = a->deadline_s,
                      .objective = a->objective};
    scv_err e = {0};
    int rc = scv_spot_eval(&in, out, &e);
    if (rc) {
        char label[256];
        point_label(j, p, label, sizeof label);
        scv_err_set(err, rc, "%s (%s: %.3g $/h on-demand in %s)", e.msg, label, od, j->catalog);
    }
    return rc;
}

/* r's best mode is better than b's: meeting the deadline first, then by the objective (time:
 * the faster; otherwise the cheaper). */
static int spot_better(const scv_spot_result *r, const scv_spot_result *b, scv_objective obj)
{
    const scv_spot_price *x = &r->mode[r->best], *y = &b->mode[b->best];
    if (r->meets != b->meets) return r->meets;
    return obj == SCV_OBJ_TIME ? x->time_s < y->time_s : x->cost < y->cost;
}

/* The chosen point's comparison and every front point's. */
static int spot_compare(const scv_plan_args *a, scv_plan_job *j, const scv_plan_request *req, scv_err *err)
{
    const scv_plan_result *res = j->res;
    int rc = spot_point(a, j, req, &res->points[res->chosen], &j->spot_chosen, err);
    if (rc) return rc;
    if (!(j->spot_front = calloc(res->n_front ? res->n_front : 1, sizeof *j->spot_front)))
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    for (size_t i = 0; i < res->n_front && !rc; i++) {
        rc = spot_point(a, j, req, &res->points[res->front[i]], &j->spot_front[i], err);
        if (!rc && (j->spot_best < 0 || spot_better(&j->spot_front[i], &j->spot_front[j->spot_best], a->objective)))
            j->spot_best = (long)i;
    }
    return rc;
}

/* The catalog types of a point (one, or a mix's) into vm; returns how many. */
static int point_types(const scv_plan_point *p, int *vm)
{
    if (p->mix_types.n <= 0) return vm[0] = p->vm, 1;
    for (int i = 0; i < p->mix_types.n; i++) vm[i] = p->mix_types.vm[i];
    return p->mix_types.n;
}

/* The distinct types of the chosen point and the front, at most cap, into vm. */
static size_t spot_types(const scv_plan_job *j, int *vm, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i <= j->res->n_front; i++) {
        const scv_plan_point *p = &j->res->points[i == 0 ? (size_t)j->res->chosen : j->res->front[i - 1]];
        int t[SCV_MIX_MAX_TYPES], nt = point_types(p, t);
        for (int k = 0; k < nt; k++) {
            size_t q = 0;
            while (q < n && vm[q] != t[k]) q++;
            if (q == n && n < cap) vm[n++] = t[k];
        }
    }
    return n;
}

static void fmt_num(char *b, size_t cap, double v)
{
    if (isfinite(v)) snprintf(b, cap, "%.6g", v);
    else snprintf(b, cap, "null");
}

static void spot_result_json(FILE *f, const scv_spot_result *r)
{
    char t[32], c[32], n[32], rho[32];
    fprintf(f, "{\"best\":\"%s\",\"meets_deadline\":%s,\"lost_s_per_preemption\":%.6g,\"delay_s_per_preemption\":%.6g,"
               "\"capacity_lost_share\":%.6g,\"modes\":[", scv_spot_mode_name(r->best), r->meets ? "true" : "false",
            r->lost_s, r->delay_s, r->cap_lost);
    for (int m = 0, first = 1; m < SCV_SPOT_MODES; m++) {
        const scv_spot_price *p = &r->mode[m];
        if (!p->ok) continue;
        fmt_num(t, sizeof t, p->time_s), fmt_num(c, sizeof c, p->cost), fmt_num(n, sizeof n, p->preemptions);
        fmt_num(rho, sizeof rho, p->rho);
        fprintf(f, "%s{\"pricing\":\"%s\",\"ondemand_workers\":%d,\"spot_workers\":%d,\"expected_preemptions\":%s,"
                   "\"lost_share\":%s,\"time_s\":%s,\"cost\":%s}",
                first ? "" : ",", scv_spot_mode_name((scv_spot_mode)m), p->n_ondemand, p->n_spot, n, rho, t, c);
        first = 0;
    }
    fmt_num(t, sizeof t, r->fallback_s);
    fprintf(f, "],\"fallback_at_s\":%s", t);
    if (!isnan(r->fallback_s)) fprintf(f, ",\"fallback_margin_s\":%.6g,\"fallback_switch_s\":%.6g", r->margin_s, r->switch_s);
    fputc('}', f);
}

/* "spot": the policy, the rates, the chosen point's comparison and the front's. */
static void spot_json(FILE *f, const scv_plan_args *a, const scv_plan_job *j)
{
    const scv_spot_policy *pol = &j->spot_pol;
    char b[256];
    fprintf(f, ",\"spot\":{\"recovery\":\"%s\",\"policy\":{\"restart_s\":%.6g,\"inplace_idle_s\":%.6g,"
               "\"replace_s\":%.6g,\"ckpt_every\":%.6g,\"mix_ondemand_share\":%.6g},\"rates\":[",
            a->spot_inplace ? "inplace" : "restart", pol->restart_s, pol->inplace_idle_s, pol->replace_s,
            pol->ckpt_every, pol->mix_ondemand_share);
    int vm[64];
    size_t n = spot_types(j, vm, 64);
    for (size_t i = 0; i < n; i++) {
        int user;
        double r = scv_spot_rate(pol, &j->spot_rates, j->cat, vm[i], &user);
        fprintf(f, "%s{\"vm\":%s,\"per_vm_hour\":%.6g,\"source\":\"%s\"}", i ? "," : "",
                scv_json_strbuf(b, sizeof b, j->cat->vms[vm[i]].name), r, user ? "user" : "provider default");
    }
    fprintf(f, "],\"chosen\":");
    spot_result_json(f, &j->spot_chosen);
    fprintf(f, ",\"front\":[");
    for (size_t i = 0; i < j->res->n_front; i++) {
        const scv_plan_point *p = &j->res->points[j->res->front[i]];
        char vm[256]; /* the type, or a mix's "a:2+b:1" */
        if (p->mix_types.n > 0) scv_vm_mix_format(j->cat, &p->mix_types, vm, sizeof vm);
        else snprintf(vm, sizeof vm, "%s", j->cat->vms[p->vm].name);
        fprintf(f, "%s{\"vm\":%s,\"workers\":%d,\"batch\":%d,\"risk\":", i ? "," : "",
                scv_json_strbuf(b, sizeof b, vm), p->workers, p->batch);
        spot_result_json(f, &j->spot_front[i]);
        fputc('}', f);
    }
    fprintf(f, "],\"best_on_front\":%ld}", j->spot_best);
}


static void spot_row(FILE *f, const char *mark, const char *label, const scv_spot_price *p, scv_spot_mode m)
{
    char t[32], c[32], od[24];
    scv_fmt_time(p->time_s, t, sizeof t);
    scv_fmt_usd(p->cost, c, sizeof c);
    snprintf(od, sizeof od, "%d+%d", p->n_ondemand, p->n_spot);
    fprintf(f, "%s %-28s %-14s %-8s %-11.3g %-10s %s\n", mark, label, scv_spot_mode_name(m), od, p->preemptions,
            isfinite(p->time_s) ? t : "never", isfinite(p->cost) ? c : "-");
}

void scv_plan_job_spot_print(FILE *f, const scv_plan_args *a, const scv_plan_job *j, size_t top)
{
    if (!j->spot_on || !j->spot_front) return;
    const scv_spot_policy *pol = &j->spot_pol;
    const scv_spot_result *r = &j->spot_chosen;
    fprintf(f, "\nspot with the risk of preemption (model/spot.c; docs/MODEL.md \"Spot with the risk\"):\n");
    if (a->spot_inplace)
        fprintf(f, "  recovery in place: %.3g s idle per preemption;", pol->inplace_idle_s);
    else
        fprintf(f, "  recovery by checkpoint-restart: %.3g s plus half of %.0f iterations lost per preemption;",
                pol->restart_s, pol->ckpt_every);
    fprintf(f, " a replacement joins after %.3g s, meanwhile the chosen configuration at K - 1 (same B)\n"
               "  lacks %.0f%% of its progress rate, so a preemption costs %.3g s in all\n  preemptions per VM-hour:",
            pol->replace_s, 100 * r->cap_lost, r->delay_s);
    int vm[64];
    size_t n = spot_types(j, vm, 64);
    for (size_t i = 0; i < n; i++) {
        int user;
        double rate = scv_spot_rate(pol, &j->spot_rates, j->cat, vm[i], &user);
        fprintf(f, "%s %s %.3g (%s)", i ? "," : "", j->cat->vms[vm[i]].name, rate,
                user ? "--preempt-rate" : j->cat->vms[vm[i]].provider);
    }
    fprintf(f, "%s\n\n", n && !a->preempt_rate ? "; provider defaults: --preempt-rate gives your figures" : "");
    char label[256];
    fprintf(f, "  %-28s %-14s %-8s %-11s %-10s %s\n", "CONFIGURATION", "PRICING", "OD+SPOT", "E[PREEMPT]", "TIME",
            "COST");
    point_label(j, &j->res->points[j->res->chosen], label, sizeof label);
    for (int m = 0; m < SCV_SPOT_MODES; m++) {
        if (!r->mode[m].ok) continue;
        spot_row(f, (int)r->best == m ? ">" : " ", label, &r->mode[m], (scv_spot_mode)m);
        label[0] = 0;
    }
    fprintf(f, "\n  the front, each configuration's best pricing:\n");
    for (size_t i = 0; i < j->res->n_front && i < top; i++) {
        const scv_spot_result *q = &j->spot_front[i];
        point_label(j, &j->res->points[j->res->front[i]], label, sizeof label);
        spot_row(f, (long)i == j->spot_best ? "*" : " ", label, &q->mode[q->best], q->best);
    }
    if (j->res->n_front > top) fprintf(f, "   ... %zu more on the front\n", j->res->n_front - top);
    if (j->spot_best >= 0) {
        const scv_spot_result *q = &j->spot_front[j->spot_best];
        point_label(j, &j->res->points[j->res->front[j->spot_best]], label, sizeof label);
        fprintf(f, "  * with the risk, the %s on the front%s: %s on %s\n",
                a->objective == SCV_OBJ_TIME ? "fastest" : "cheapest", a->deadline_s > 0 ? " meeting the deadline" : "",
                label, scv_spot_mode_name(q->best));
    }
    if (!isnan(r->fallback_s)) {
        char t[32], d[32];
        scv_fmt_time(r->fallback_s, t, sizeof t);
        scv_fmt_time(a->deadline_s, d, sizeof d);
        if (r->fallback_s == 0)
            fprintf(f, "  fallback: no room for spot before the deadline (%s needs the on-demand time plus a %.0f s "
                       "margin): on-demand from the start\n", d, r->margin_s);
        else if (!isfinite(r->fallback_s))
            fprintf(f, "  fallback: no preemption expected (rate 0): none needed\n");
        else {
            char e[32];
            scv_fmt_time(r->mode[SCV_SPOT_SPOT].time_s, e, sizeof e);
            if (r->fallback_s >= r->mode[SCV_SPOT_SPOT].time_s)
                fprintf(f, "  fallback (Can't Be Late): none expected, spot is expected to end at %s with the margin "
                           "to spare before the deadline", e);
            else
                fprintf(f, "  fallback (Can't Be Late): switch the chosen configuration to on-demand by %s after the "
                           "start (at spot's expected progress; spot alone would end at %s)", t, e);
            fprintf(f, "; at run time, switch as soon as the time left to the deadline (%s) minus the work left "
                       "(on-demand seconds) falls to %.0f s (the switch's %.0f s and one more preemption's %.0f s)\n",
                    d, r->margin_s, r->switch_s, r->delay_s);
        }
    }
}

/* The target's estimate, as `run` makes it from a stored run: epochs from a target run are a
 * rerun's (LEARNT: the shipped corpus's reruns' spread, carried to other batches by the job's
 * carry from the corpus: scv_carry_for_job), so each point has the band `run` would state for
 * them; given epochs are taken as they are (GIVEN, no band). A corpus that cannot be read
 * leaves the band out (the plan stays as it was). */
static void target_estimate(const scv_plan_args *a, scv_plan_job *j)
{
    scv_estimate *e = &j->estimate;
    *e = scv_estimate_none();
    e->source = a->target_run ? SCV_TARGET_LEARNT : SCV_TARGET_GIVEN;
    e->epochs = j->target_epochs, e->batch = j->target_batch;
    if (!a->target_run) return;
    char buf[4096];
    scv_lcurve_set set = {0};
    scv_calib cal = {0};
    scv_carry c;
    scv_calib_policy cp = scv_calib_policy_default();
    if (scv_lcurves_load(scv_data_file("curves.jsonl", buf, sizeof buf), &set, NULL) == SCV_OK &&
        scv_calib_build(&set, &cp, &cal, NULL) == SCV_OK) {
        scv_carry_for_job(&set, &j->prof->job, SCV_METRIC_ACCURACY, cp.coverage, &c);
        e->carry = scv_carry_err_of(&c);
        scv_estimate_rerun_band(e, &cal, SCV_METRIC_ACCURACY);
    }
    scv_calib_free(&cal);
    scv_lcurve_set_free(&set);
}

int scv_plan_job_run(const scv_plan_args *a, scv_plan_job *j, scv_err *err)
{
    memset(j, 0, sizeof *j);
    j->catalog = a->catalog ? a->catalog : scv_data_file("vm-catalog.csv", j->catbuf, sizeof j->catbuf);
    j->profile_name = a->profile ? a->profile : "metrics";
    int rc = a->profile ? scv_profile_load(a->profile, &j->prof, err)
                        : scv_profile_load_texts(a->metrics, a->n_metrics, "metrics", &j->prof, err);
    if (rc || (rc = scv_catalog_load(j->catalog, &j->cat, err)) || (rc = check_space(a, j->cat, err))) return rc;
    if (!j->prof->has_job)
        return scv_err_set(err, SCV_EINVAL, "%s: no job line (metrics from an older trainer?)", j->profile_name);
    if ((rc = find_measured(a, j, err))) return rc;
    int *vms = malloc(sizeof(int) * j->cat->n), mthreads;
    size_t nvms = 0, nmix = 0, ncomm = 0;
    scv_vm_mix *mixes = NULL;
    scv_plan_comm comms[SCV_PLAN_MAX_COMMS + 1];
    double pf;
    long n_compressed = 0;
    if (!vms) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    if ((rc = find_vms(a, j, vms, &nvms, err)) || (rc = find_mixes(a, j, &mixes, &nmix, err)) ||
        (rc = find_comms(a, j, comms, &ncomm, err)) || (rc = find_rates(a, j, err)) ||
        (rc = thread_scaling(a, j, &mthreads, &pf, err)))
        goto done;
    /* models */
    j->perf = (scv_perf_model){.overlap = a->overlap};
    if ((rc = scv_perf_fit(j->prof->configs, j->prof->n, a->topology, 4.0 * j->prof->job.n_params, &j->perf, err)))
        goto done;
    j->target_epochs = a->target_epochs;
    j->target_batch = a->base_batch;
    if (a->target_run &&
        (rc = scv_profile_target(a->target_run, a->target_accuracy, &j->target_epochs, &j->target_batch, err)))
        goto done;
    if (!j->target_batch) /* the smallest profiled batch: not the first file's */
        for (size_t i = 0; i < j->prof->n; i++)
            if (!j->target_batch || j->prof->configs[i].batch < j->target_batch)
                j->target_batch = j->prof->configs[i].batch;
    if ((rc = scv_stat_fit(a->stat, j->prof->configs, j->prof->n, j->prof->job.n_train, j->target_epochs,
                           j->target_batch, &j->stat, err)))
        goto done;
    target_estimate(a, j);
    scv_plan_request req = {.catalog = j->cat, .vms = vms, .n_vms = nvms, .measured_vm = (int)(j->measured - j->cat->vms),
                            .workers = a->workers, .n_workers = a->n_workers, .batches = a->batches,
                            .n_batches = a->n_batches, .b_min = a->b_min, .b_max = a->b_max,
                            .pricing = a->pricing, .perf = &j->perf, .stat = &j->stat, .job = &j->prof->job,
                            .objective = a->objective, .value_per_hour = a->value_per_hour,
                            .deadline_s = a->deadline_s, .budget = a->budget, .measured_threads = mthreads,
                            /* with a measured scaling, workers use their VM's vCPUs */
                            .worker_threads = pf >= 0 ? 0 : mthreads, .parallel_fraction = pf,
                            .gpu_speedup = a->gpu_speedup, .mixes = mixes, .n_mixes = nmix,
                            .comms = ncomm ? comms : NULL, .n_comms = ncomm,
                            .t_compress = profile_t_compress(j->prof, &n_compressed), .estimate = &j->estimate};
    scv_spot_risk risk = {.pol = &j->spot_pol, .rates = &j->spot_rates,
                          .recovery = a->spot_inplace ? SCV_SPOT_INPLACE : SCV_SPOT_RESTART};
    if (j->spot_on && a->pricing == SCV_PRICE_SPOT) req.spot_risk = &risk; /* the front on spot's expected figures */
    if (a->pricing == SCV_PRICE_MEMORY &&
        (rc = scv_memory_rates(j->cat, j->measured->provider, &req.mem_rate_cpu, &req.mem_rate_gib, err)))
        goto done;
    rc = scv_plan(&req, &j->res, err);
    if (!rc && ncomm && n_compressed) { /* the communication the models were fitted on */
        size_t len = strlen(j->res->comm_note);
        snprintf(j->res->comm_note + len, sizeof j->res->comm_note - len,
                 "; %ld profiled iteration(s) were compressed: the parallel model's communication was fitted on "
                 "them too", n_compressed);
    }
    if (!rc && j->spot_on) rc = spot_compare(a, j, &req, err);
done:
    free(vms);
    free(mixes);
    return rc;
}

void scv_plan_job_json(FILE *f, const scv_plan_args *a, const scv_plan_job *j)
{
    const scv_plan_result *res = j->res;
    const scv_catalog *cat = j->cat;
    const scv_perf_model *perf = &j->perf;
    const scv_stat_model *sm = &j->stat;
    char j1[2048], j2[2048], j3[4200];
    fprintf(f, "{\"chosen\":");
    scv_plan_point_json(f, cat, &res->points[res->chosen]);
    fprintf(f, ",\"why\":%s,\"note\":%s,\"n_configs\":%zu,\"excluded_memory\":%zu,"
               "\"excluded_gpu_types\":%zu,",
            scv_json_strbuf(j1, sizeof j1, res->why), scv_json_strbuf(j2, sizeof j2, res->note), res->n_points,
            res->n_excluded_memory, res->n_excluded_gpu);
    if (a->mixes) fprintf(f, "\"excluded_mixes\":%zu,", res->n_excluded_mix);
    if (a->compress) { /* the plan without compression beside the one with it */
        fprintf(f, "\"comm_note\":%s,\"chosen_dense\":", scv_json_strbuf(j1, sizeof j1, res->comm_note));
        if (res->chosen_dense >= 0) scv_plan_point_json(f, cat, &res->points[res->chosen_dense]);
        else fputs("null", f);
        fprintf(f, ",\"front_dense\":[");
        for (size_t i = 0; i < res->n_front_dense; i++) {
            if (i) fputc(',', f);
            scv_plan_point_json(f, cat, &res->points[res->front_dense[i]]);
        }
        fprintf(f, "],");
    }
    fprintf(f, "\"front\":[");
    for (size_t i = 0; i < res->n_front; i++) {
        if (i) fputc(',', f);
        scv_plan_point_json(f, cat, &res->points[res->front[i]]);
    }
    if (a->all_points) {
        fprintf(f, "],\"points\":[");
        for (size_t i = 0; i < res->n_points; i++) {
            if (i) fputc(',', f);
            scv_plan_point_json(f, cat, &res->points[i]);
        }
    }
    fprintf(f, "],\"perf\":{\"comm\":\"%s\",\"c0\":%.6g,\"c1\":%.6g,\"alpha\":%.6g,\"beta\":%.6g,"
               "\"alpha_msg\":%.6g,\"overlap\":%.3g,\"mare\":%.4g,\"points\":%d,\"note\":%s},",
            a->topology == SCV_TOPO_RING ? "ring" : "ps", perf->c0, perf->c1, perf->alpha, perf->beta, perf->alpha_msg,
            perf->overlap, perf->mare, perf->n_points, scv_json_strbuf(j1, sizeof j1, perf->note));
    fprintf(f, "\"profile\":[");
    for (size_t i = 0; i < j->prof->n; i++) {
        const scv_config_stats *q = &j->prof->configs[i];
        double bs = scv_gns_b_simple(q->workers, q->batch, q->g_local, q->g_global);
        char bsj[32] = "null"; /* JSON has no NaN: K = 1 has no estimate */
        if (isfinite(bs)) snprintf(bsj, sizeof bsj, "%.6g", bs);
        fprintf(f, "%s{\"workers\":%d,\"batch\":%d,\"iterations\":%d,\"t_compute\":%.6g,"
                   "\"t_comm\":%.6g,\"t_iter\":%.6g,\"predicted_t_iter\":%.6g,\"b_simple\":%s}",
                i ? "," : "", q->workers, q->batch, q->n_iters, q->t_compute, q->t_comm,
                q->t_iter, scv_perf_iter(perf, q->workers, q->batch), bsj);
    }
    fprintf(f, "],\"left_out\":%s,", j->left_out[0] ? scv_json_strbuf(j1, sizeof j1, j->left_out) : "null");
    fprintf(f, "\"stat\":{\"model\":\"%s\",\"b_simple\":%.6g,\"s_min\":%.6g,\"gamma_a\":%.6g,"
               "\"gamma_s\":%.6g,\"theta\":%.6g,\"target_epochs\":%.6g,\"target_batch\":%d,"
               "\"note\":%s},\"measured_on\":%s,\"catalog\":%s",
            a->stat == SCV_STAT_GNS ? "gns" : "scavenger", sm->b_simple, sm->s_min, sm->gamma_a,
            sm->gamma_s, sm->theta, sm->target_epochs, j->target_batch, scv_json_strbuf(j1, sizeof j1, sm->note),
            scv_json_strbuf(j2, sizeof j2, j->measured->name), scv_json_strbuf(j3, sizeof j3, j->catalog));
    if (j->spot_on && j->spot_front) spot_json(f, a, j);
    fputc('}', f);
}
