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

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void scv_plan_job_free(scv_plan_job *j)
{
    if (!j) return;
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
        (rc = find_comms(a, j, comms, &ncomm, err)) || (rc = thread_scaling(a, j, &mthreads, &pf, err)))
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
                            .t_compress = profile_t_compress(j->prof, &n_compressed)};
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
               "\"note\":%s},\"measured_on\":%s,\"catalog\":%s}",
            a->stat == SCV_STAT_GNS ? "gns" : "scavenger", sm->b_simple, sm->s_min, sm->gamma_a,
            sm->gamma_s, sm->theta, sm->target_epochs, j->target_batch, scv_json_strbuf(j1, sizeof j1, sm->note),
            scv_json_strbuf(j2, sizeof j2, j->measured->name), scv_json_strbuf(j3, sizeof j3, j->catalog));
}
