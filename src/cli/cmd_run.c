/*
 * cmd_run.c - `scavenger run`: the Scavenger loop. Trains the job, measures it, searches the
 * (K, B) space online, decides, reconfigures and trains to the target, with no offline
 * profiling and no wasted work: every iteration of every phase is training, and every
 * switch resumes the same checkpoint at the same data position.
 *
 *   1. warm-up at the start configuration until the noise estimate is stable: the trainer
 *      stops when B_simple of two consecutive 40-iteration windows agree within 25% (at
 *      most 400 iterations);
 *   2. search: `partial` profiles the corners (smallest/largest K x smallest/largest B),
 *      `full` every configuration, each until its mean iteration time has a relative
 *      standard error under 3% (30 to 60 iterations); `none` profiles nothing and plans from
 *      the stored measurements of the same job;
 *   3. fit the parallel and statistical models, plan, choose (objective and bounds);
 *   4. train at the choice in segments; after each, compare the measured iteration time
 *      with the prediction and re-plan when it drifts by more than 15%, switching only when
 *      the predicted gain exceeds 1.5x the measured switch cost plus 5% of the remaining
 *      time.
 * Each phase is a `scavenger train` child process resuming the run's checkpoint; the idle
 * time between the last iteration of one and the first of the next is measured from the
 * metrics' wall-clock stamps. Everything is stored in SQLite; a report is written at the end.
 */
#define _POSIX_C_SOURCE 200809L
#include "child.h"
#include "cli.h"
#include "../io/svg.h"
#include "scv.h"
#include "../core/util.h"
#include "../runtime/cluster.h"
#include "../train/ckpt.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RUN_USAGE "usage: scavenger run [JOB.json] [options]   |   scavenger run --resume RUN_ID\n"
#define MAX_SEGS 256
#define MAX_ARGS 192

/* train options passed through, all taking a value */
static const char *TRAIN_OPTS[] = {"model", "hidden", "dataset", "threads", "lr", "momentum",
                                   "weight-decay", "lr-scaling", "base-batch", "warmup-epochs",
                                   "lr-decay", "lr-step-epochs", "lr-gamma", "lr-horizon", "seed",
                                   NULL};
/* run options with a value */
static const char *RUN_OPTS[] = {"search", "objective", "deadline", "budget", "workers", "batch",
                                 "vm-type", "catalog", "pricing", "stat", "comm", "cluster", "db",
                                 "report", "start", "target-accuracy", "max-epochs",
                                 "target-epochs", "target-batch", NULL};

typedef struct {
    char phase[16];
    int K, B;
    int64_t iters;        /* iterations of this segment */
    double first_start;   /* wall clock when its first iteration began */
    double last_end;      /* ... when its last iteration ended */
    double idle_before;   /* since the previous segment's last iteration */
    double t_iter;        /* mean */
    double accuracy;
    int reached;
    scv_config_stats stats;
} segment;

typedef struct {
    /* options */
    const char *opt[64];  /* values by name, see get() */
    const char *names[64];
    char flags[64][40];   /* "--name" of each */
    int nopt;
    double target, max_epochs, deadline, budget, target_epochs;
    int target_batch;
    /* state */
    scv_store *db;
    long long run_id;
    char dir[1024], ckpt[1100], job_key[512], vm_type[64];
    scv_catalog *cat;
    const scv_vm_type *vm;
    int *Ks, *Bs;
    long nk, nb;
    segment segs[MAX_SEGS];
    int nsegs, first_seg_index;
    int n_train;
    int retries;
} run_ctx;

static const char *get(const run_ctx *c, const char *name)
{
    for (int i = c->nopt - 1; i >= 0; i--) /* later occurrences win */
        if (!strcmp(c->names[i], name)) return c->opt[i];
    return NULL;
}

static int is_in(const char *const *list, const char *name)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(list[i], name)) return 1;
    return 0;
}

/* ---- options: command line and job file ---- */

/* Appends the options of a job file ({"model": "lenet", "workers": "1,2", ...}). */
static int load_job_file(const char *path, char **store, int *n, scv_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f) return scv_err_set(err, SCV_ENOTFOUND, "%s: cannot open: %s", path, strerror(errno));
    char buf[65536];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = 0;
    cJSON *o = cJSON_Parse(buf);
    if (!o || !cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return scv_err_set(err, SCV_EPARSE, "%s: not a JSON object", path);
    }
    int rc = SCV_OK;
    for (cJSON *it = o->child; it && !rc; it = it->next) {
        char val[256];
        if (cJSON_IsString(it)) snprintf(val, sizeof val, "%s", it->valuestring);
        else if (cJSON_IsNumber(it)) snprintf(val, sizeof val, "%.17g", it->valuedouble);
        else {
            rc = scv_err_set(err, SCV_EPARSE, "%s: field '%s' must be a string or a number", path, it->string);
            break;
        }
        if (!is_in(TRAIN_OPTS, it->string) && !is_in(RUN_OPTS, it->string)) {
            rc = scv_err_set(err, SCV_EPARSE, "%s: unknown field '%s'", path, it->string);
            break;
        }
        if (*n + 2 > MAX_ARGS) break;
        store[(*n)++] = strdup(it->string);
        store[(*n)++] = strdup(val);
    }
    cJSON_Delete(o);
    return rc;
}

/* The effective job as JSON (what --resume and the store keep). */
static void job_json(const run_ctx *c, char *buf, size_t cap)
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; i < c->nopt; i++) {
        if (!strcmp(c->names[i], "db")) continue;
        cJSON_DeleteItemFromObjectCaseSensitive(o, c->names[i]);
        cJSON_AddStringToObject(o, c->names[i], c->opt[i]);
    }
    char *s = cJSON_PrintUnformatted(o);
    snprintf(buf, cap, "%s", s ? s : "{}");
    free(s);
    cJSON_Delete(o);
}

/* ---- one phase = one `scavenger train` child ---- */

/* Iterations and samples the run's checkpoint holds (0 before the first phase). */
static long long ckpt_progress(const run_ctx *c, double *samples)
{
    scv_ckpt_state st;
    float *p = NULL, *m = NULL;
    size_t n;
    long long it = 0;
    if (samples) *samples = 0;
    if (scv_ckpt_load(c->ckpt, &st, &p, &m, &n, NULL) == SCV_OK) {
        it = (long long)st.iteration;
        if (samples) *samples = (double)st.samples_seen;
    }
    free(p);
    free(m);
    return it;
}

/* Appends the job's train options (--model ... --seed) to av; returns the new count. */
static int add_train_opts(run_ctx *c, char **av, int n)
{
    for (int i = 0; i < c->nopt; i++)
        if (is_in(TRAIN_OPTS, c->names[i])) {
            av[n++] = c->flags[i];
            av[n++] = (char *)c->opt[i];
        }
    return n;
}

/* Scans a segment's metrics: iterations, the first iteration's start and the last's end. */
static void scan_metrics(const char *path, segment *s)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    s->iters = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (!strstr(line, "\"type\":\"iter\"")) continue;
        const char *ts = strstr(line, "\"ts\":"), *ti = strstr(line, "\"t_iter\":");
        if (!ts || !ti) continue;
        double t = strtod(ts + 5, NULL), d = strtod(ti + 9, NULL);
        if (s->iters++ == 0) s->first_start = t - d;
        s->last_end = t;
    }
    if (f) fclose(f);
}

static int run_segment(run_ctx *c, const char *phase, int K, int B, const char *const *extra,
                       segment **out, scv_err *err)
{
    if (c->nsegs == MAX_SEGS) return scv_err_set(err, SCV_ERANGE, "too many phases");
    segment *s = &c->segs[c->nsegs];
    memset(s, 0, sizeof *s);
    snprintf(s->phase, sizeof s->phase, "%s", phase);
    s->K = K, s->B = B;
    char metrics[1200], ks[16], bs[16], tacc[32], maxe[32], evalev[32], json[8192];
    snprintf(metrics, sizeof metrics, "%s/seg-%03d-%s-k%d-b%d.jsonl", c->dir, c->first_seg_index + c->nsegs, phase, K, B);
    snprintf(ks, sizeof ks, "%d", K);
    snprintf(bs, sizeof bs, "%d", B);
    snprintf(tacc, sizeof tacc, "%g", c->target);
    snprintf(maxe, sizeof maxe, "%g", c->max_epochs);
    snprintf(evalev, sizeof evalev, "0.25");
    char *av[MAX_ARGS];
    int n = 0;
    av[n++] = "scavenger";
    av[n++] = "train";
    n = add_train_opts(c, av, n);
    const char *cl = get(c, "cluster");
    if (cl) av[n++] = "--cluster", av[n++] = (char *)cl;
    av[n++] = "--vm-type", av[n++] = c->vm_type;
    av[n++] = "--workers", av[n++] = ks;
    av[n++] = "--batch", av[n++] = bs;
    av[n++] = "--checkpoint", av[n++] = c->ckpt;
    av[n++] = "--checkpoint-every", av[n++] = "100";
    av[n++] = "--metrics", av[n++] = metrics;
    av[n++] = "--target-accuracy", av[n++] = tacc;
    av[n++] = "--epochs", av[n++] = maxe;
    av[n++] = "--eval-every-epochs", av[n++] = evalev; /* epochs to target, to a quarter */
    av[n++] = "--json";
    int tty = isatty(STDERR_FILENO); /* on a terminal, each phase shows its progress line */
    av[n++] = "--progress", av[n++] = tty ? "always" : "never";
    char ckfile[1200];
    snprintf(ckfile, sizeof ckfile, "%s/checkpoint.scv", c->ckpt);
    int resume_at = n;
    if (access(ckfile, F_OK) == 0) av[n++] = "--resume";
    for (int i = 0; extra && extra[i]; i++) av[n++] = (char *)extra[i];
    av[n] = NULL;
    fprintf(stderr, "scavenger run: %-8s K=%d B=%d ...%s", phase, K, B, tty ? "\n" : "");
    for (;;) {
        int intr = 0;
        int st = scv_run_self(av, json, sizeof json, &intr);
        if (st == EXIT_INTR || intr) {
            fprintf(stderr, " interrupted\n");
            return scv_err_set(err, SCV_EINTR, "interrupted");
        }
        cJSON *o = json[0] ? cJSON_Parse(json) : NULL;
        if (o && (st == 0 || st == 1)) {
            const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "test_accuracy");
            s->accuracy = cJSON_IsNumber(a) ? a->valuedouble : NAN;
            s->reached = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "reached_target"));
            cJSON_Delete(o);
            break;
        }
        cJSON_Delete(o);
        /* no summary: a rank died. Resume from the last checkpoint (at most twice). */
        if (++c->retries > 2 || access(ckfile, F_OK) != 0) {
            fprintf(stderr, " failed\n");
            return scv_err_set(err, SCV_EIO, "the %s phase (K=%d B=%d) failed (exit %d) and retries are "
                               "spent; metrics in %s", phase, K, B, st, metrics);
        }
        fprintf(stderr, " a worker died (exit %d); resuming from the last checkpoint ...", st);
        /* the retry writes its own metrics: the dead attempt's last iterations are redone */
        snprintf(metrics, sizeof metrics, "%s/seg-%03d-%s-k%d-b%d-retry%d.jsonl", c->dir,
                 c->first_seg_index + c->nsegs, phase, K, B, c->retries);
        if (av[resume_at] == NULL || strcmp(av[resume_at], "--resume")) {
            memmove(&av[resume_at + 1], &av[resume_at], sizeof(char *) * (size_t)(n - resume_at + 1));
            av[resume_at] = "--resume";
            n++;
        }
    }
    scan_metrics(metrics, s);
    scv_profile *p = NULL;
    if (s->iters > 3 && scv_profile_load(metrics, &p, NULL) == SCV_OK && p->n) {
        s->stats = p->configs[0];
        s->t_iter = p->configs[0].t_iter;
        if (c->n_train <= 0) c->n_train = (int)p->job.n_train;
    }
    scv_profile_free(p);
    if (c->nsegs > 0 && s->iters > 0 && c->segs[c->nsegs - 1].last_end > 0)
        s->idle_before = s->first_start - c->segs[c->nsegs - 1].last_end;
    if (s->stats.workers) scv_store_measurement(c->db, c->run_id, phase, &s->stats, NULL);
    if (c->nsegs > 0 && (c->segs[c->nsegs - 1].K != K || c->segs[c->nsegs - 1].B != B))
        scv_store_switch(c->db, c->run_id, c->segs[c->nsegs - 1].K, c->segs[c->nsegs - 1].B, K, B,
                         s->idle_before, NULL);
    fprintf(stderr, " %lld iterations, %.1f ms/iteration%s\n", (long long)s->iters, 1e3 * s->t_iter,
            s->reached ? ", target reached" : "");
    c->nsegs++;
    *out = s;
    return SCV_OK;
}

/* ---- planning ---- */

static int plan_now(run_ctx *c, const scv_config_stats *cs, size_t n, scv_plan_result **res,
                    scv_perf_model *perf, scv_stat_model *sm, int *relative, scv_err *err)
{
    /* validated in cmd_run: absent options give index -1 -> the defaults below */
    int cm = cli_choice(get(c, "comm"), CLI_COMMS), st = cli_choice(get(c, "stat"), CLI_STATS);
    int pr = cli_choice(get(c, "pricing"), CLI_PRICINGS), ob = cli_choice(get(c, "objective"), CLI_OBJECTIVES);
    scv_comm_kind comm = cm < 0 ? SCV_COMM_RING : (scv_comm_kind)cm;
    scv_stat_kind stat = st < 0 ? SCV_STAT_GNS : (scv_stat_kind)st;
    scv_job_info job;
    char first[1200];
    snprintf(first, sizeof first, "%s/job.jsonl", c->dir); /* the job's size */
    int rc = scv_job_load(first, &job, err);
    if (rc) return rc;
    memset(perf, 0, sizeof *perf);
    rc = scv_perf_fit(cs, n, comm, 4 * job.n_params, perf, err);
    if (rc) return rc;
    double e0 = c->target_epochs;
    int b0 = c->target_batch;
    *relative = 0;
    if (!(e0 > 0) && scv_store_learnt_target(c->db, c->job_key, c->target, &e0, &b0, NULL) != SCV_OK) {
        /* unknown target: the choice between configurations does not depend on S_min, so
         * plan with a nominal 10 epochs at the smallest batch and say so */
        e0 = 10, b0 = c->Bs[0], *relative = 1;
    }
    if ((rc = scv_stat_fit(stat, cs, n, job.n_train, e0, b0 ? b0 : c->Bs[0], sm, err))) return rc;
    int vm = (int)(c->vm - c->cat->vms);
    scv_plan_request req = {.catalog = c->cat, .vms = &vm, .n_vms = 1, .measured_vm = vm,
                            .workers = c->Ks, .n_workers = (size_t)c->nk, .batches = c->Bs,
                            .n_batches = (size_t)c->nb, .perf = perf, .stat = sm, .job = &job,
                            .deadline_s = c->deadline, .budget = c->budget,
                            .objective = ob < 0 ? SCV_OBJ_KNEE : (scv_objective)ob,
                            .pricing = pr < 0 ? SCV_PRICE_ONDEMAND : (scv_pricing)pr};
    if (req.pricing == SCV_PRICE_MEMORY &&
        (rc = scv_memory_rates(c->cat, c->vm->provider, &req.mem_rate_cpu, &req.mem_rate_gib, err)))
        return rc;
    return scv_plan(&req, res, err);
}

static const scv_plan_point *find_point(const scv_plan_result *r, int K, int B)
{
    for (size_t i = 0; i < r->n_points; i++)
        if (r->points[i].workers == K && r->points[i].batch == B) return &r->points[i];
    return NULL;
}

/* ---- the report ---- */

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void write_report(run_ctx *c, const char *outdir, const scv_plan_result *res,
                         const scv_perf_model *perf, const scv_stat_model *sm, int relative,
                         double pred_time, double pred_cost, int reached, double acc)
{
    mkdir(outdir, 0755);
    double t0 = c->segs[0].first_start, t1 = c->segs[c->nsegs - 1].last_end, cost = 0, search_t = 0,
           search_c = 0, idles[MAX_SEGS];
    int nsw = 0, nrel = 0; /* switches: configuration changes; relaunches: every phase change */
    for (int i = 0; i < c->nsegs; i++) {
        const segment *s = &c->segs[i];
        double span = s->last_end - s->first_start + s->idle_before;
        cost += s->K * span / 3600 * c->vm->ondemand;
        if (strcmp(s->phase, "train")) search_t += span, search_c += s->K * span / 3600 * c->vm->ondemand;
        if (i > 0) {
            nrel++;
            if (s->K != c->segs[i - 1].K || s->B != c->segs[i - 1].B) idles[nsw++] = s->idle_before;
        }
    }
    qsort(idles, (size_t)nsw, sizeof(double), cmp_d);
    double med = nsw ? idles[nsw / 2] : 0, worst = nsw ? idles[nsw - 1] : 0;
    static const scv_plan_point none_point;
    static const scv_perf_model none_perf;
    static const scv_stat_model none_stat;
    static const scv_plan_result none_res = {.why = "no plan: the target was reached while searching"};
    const scv_plan_point *ch = res ? &res->points[res->chosen] : &none_point;
    if (!perf) perf = &none_perf;
    if (!sm) sm = &none_stat;
    char path[1300];
    snprintf(path, sizeof path, "%s/tradeoff.svg", outdir);
    if (res) scv_plan_svg_write(path, c->cat, res, 0, 0, NULL);
    else res = &none_res;
    snprintf(path, sizeof path, "%s/report.json", outdir);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "{\"run\":%lld,\"vm\":\"%s\",\"target_accuracy\":%g,\"reached\":%s,\"test_accuracy\":%.6g,"
                   "\"chosen\":",
                c->run_id, c->vm->name, c->target, reached ? "true" : "false", isfinite(acc) ? acc : -1);
        if (ch->workers) scv_plan_point_json(f, c->cat, ch);
        else fprintf(f, "null");
        char ptj[32] = "null", pcj[32] = "null"; /* JSON has no NaN */
        if (isfinite(pred_time)) snprintf(ptj, sizeof ptj, "%.6g", pred_time);
        if (isfinite(pred_cost)) snprintf(pcj, sizeof pcj, "%.6g", pred_cost);
        fprintf(f, ",\"why\":\"%s\",\"relative_prediction\":%s,\"predicted_time_s\":%s,\"predicted_cost\":%s,"
                   "\"actual_time_s\":%.6g,\"actual_cost\":%.6g,\"search_time_s\":%.6g,\"search_cost\":%.6g,"
                   "\"switches\":%d,\"relaunches\":%d,\"switch_idle_median_s\":%.4g,\"switch_idle_worst_s\":%.4g,"
                   "\"perf\":{\"c0\":%.6g,\"c1\":%.6g,\"alpha\":%.6g,\"beta\":%.6g,\"mare\":%.4g},"
                   "\"stat\":{\"b_simple\":%.6g,\"s_min\":%.6g,\"gamma_a\":%.6g,\"gamma_s\":%.6g,\"theta\":%.6g},\"steps\":[",
                res->why, relative ? "true" : "false", ptj, pcj, t1 - t0, cost, search_t, search_c, nsw,
                nrel, med, worst, perf->c0, perf->c1, perf->alpha, perf->beta, perf->mare, sm->b_simple, sm->s_min,
                sm->gamma_a, sm->gamma_s, sm->theta);
        for (int i = 0; i < c->nsegs; i++) {
            const segment *s = &c->segs[i];
            fprintf(f, "%s{\"phase\":\"%s\",\"workers\":%d,\"batch\":%d,\"iterations\":%lld,\"t_iter\":%.6g,"
                       "\"seconds\":%.4f,\"idle_before_s\":%.4f}",
                    i ? "," : "", s->phase, s->K, s->B, (long long)s->iters, s->t_iter,
                    s->last_end - s->first_start, s->idle_before);
        }
        fprintf(f, "],\"front\":[");
        for (size_t i = 0; i < res->n_front; i++) {
            if (i) fputc(',', f);
            scv_plan_point_json(f, c->cat, &res->points[res->front[i]]);
        }
        fprintf(f, "],\"points\":[");
        for (size_t i = 0; i < res->n_points; i++) {
            if (i) fputc(',', f);
            scv_plan_point_json(f, c->cat, &res->points[i]);
        }
        fprintf(f, "]}\n");
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/report.md", outdir);
    f = fopen(path, "w");
    if (!f) return;
    char pt[32], at[32];
    scv_fmt_time(pred_time, pt, sizeof pt);
    scv_fmt_time(t1 - t0, at, sizeof at);
    fprintf(f, "# Scavenger run %lld\n\nJob `%s` on %s, target test accuracy %.4f: **%s** (%.4f).\n\n",
            c->run_id, c->job_key, c->vm->name, c->target, reached ? "reached" : "not reached", acc);
    fprintf(f, "## Choice\n\nK = %d, B = %d (%s). Predicted time to target from the start %s, cost $%.6f%s; "
               "actual (whole run, search included) %s, $%.6f.\n\n",
            ch->workers, ch->batch, res->why, pt, pred_cost,
            relative ? " (relative: the target's epochs were unknown, so absolute predictions are nominal)" : "",
            at, cost);
    fprintf(f, "Search overhead: %.1f s and $%.6f in warm-up and search phases (all of it training).\n\n",
            search_t, search_c);
    fprintf(f, "Switches (configuration changes): %d, idle time median %.2f s, worst %.2f s; %d relaunches "
               "in all (a phase ends and the next resumes the checkpoint).\n\n", nsw, med, worst, nrel);
    fprintf(f, "## Steps\n\n| # | phase | K | B | iterations | ms/iteration | seconds | idle before (s) |\n"
               "|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < c->nsegs; i++) {
        const segment *s = &c->segs[i];
        fprintf(f, "| %d | %s | %d | %d | %lld | %.2f | %.2f | %.2f |\n", i + 1, s->phase, s->K, s->B,
                (long long)s->iters, 1e3 * s->t_iter, s->last_end - s->first_start, s->idle_before);
    }
    fprintf(f, "\n## Models\n\nParallel: t_iter = %.4g + %.4g b ms + ring(alpha %.4g ms, beta %.4g ns/byte), fit "
               "error %.1f%%. Statistical: %s.\n\n## Trade-off\n\n![cost against time](tradeoff.svg)\n\n"
               "| vm | K | B | predicted time (s) | predicted cost ($) |\n|---|---|---|---|---|\n",
            1e3 * perf->c0, 1e3 * perf->c1, 1e3 * perf->alpha, 1e9 * perf->beta, 100 * perf->mare, sm->note);
    for (size_t i = 0; i < res->n_front; i++) {
        const scv_plan_point *p = &res->points[res->front[i]];
        fprintf(f, "| %s | %d | %d | %.2f | %.6f |%s\n", c->cat->vms[p->vm].name, p->workers, p->batch, p->time_s,
                p->cost, (long)res->front[i] == res->chosen ? " chosen" : "");
    }
    fclose(f);
}

/* ---- the command ---- */

static void default_db(char *buf, size_t cap)
{
    const char *x = getenv("XDG_DATA_HOME"), *h = getenv("HOME");
    char base[900];
    if (x && *x) snprintf(base, sizeof base, "%s/scavenger", x);
    else snprintf(base, sizeof base, "%s/.local/share/scavenger", h && *h ? h : "/tmp");
    char tmp[900];
    snprintf(tmp, sizeof tmp, "%s", base);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(tmp, 0755);
            *p = '/';
        }
    mkdir(tmp, 0755);
    snprintf(buf, cap, "%s/scavenger.db", base);
}

static int usage(const char *fmt, const char *arg)
{
    return cli_usage_error("run", RUN_USAGE, fmt, arg);
}

static void help(void)
{
    printf(RUN_USAGE
           "\nThe Scavenger loop: trains the job, searches (K, B) online, picks the configuration the\n"
           "objective asks for and trains to the target there; every phase is training.\n\n"
           "Job (as `scavenger train`): --model --hidden --dataset --lr --momentum --weight-decay\n"
           "  --lr-scaling --base-batch --warmup-epochs --lr-decay ... --seed --threads\n"
           "  --target-accuracy A   (required)          --max-epochs E (default 30)\n"
           "Search:\n"
           "  --search full|partial|none   (default partial)\n"
           "  --workers SPEC --batch SPEC  the space (default 1,2 and 64,256)\n"
           "  --start K,B          first configuration (default: smallest K >= 2, smallest B)\n"
           "Choice:\n"
           "  --objective time|cost|knee (default knee)   --deadline D   --budget USD\n"
           "  --stat gns|scavenger  --comm ring|ps  --pricing ondemand|spot|memory\n"
           "  --target-epochs E --target-batch B0   the target's epochs, if known (else learnt\n"
           "                       from a stored run of the same job, else the plan is relative)\n"
           "Where:\n"
           "  --cluster NAME       an emulated cluster (else local processes)\n"
           "  --vm-type TYPE       catalog type the measurements stand for (default: the\n"
           "                       cluster's type, else c5.xlarge)\n"
           "  --catalog CSV        prices (default data/vm-catalog.csv)\n"
           "State and output:\n"
           "  --db PATH            run database (default ~/.local/share/scavenger/scavenger.db)\n"
           "  --report DIR         report.md, report.json, tradeoff.svg (default: the run dir)\n"
           "  --resume RUN_ID      continue an interrupted run\n"
           "A job file holds the same settings: {\"model\": \"lenet\", \"target-accuracy\": 0.89, ...}\n"
           "Exit status: 0 target reached, 1 failure or target not reached, 2 usage, 130 interrupted.\n");
}

int cmd_run(int argc, char **argv)
{
    static char *owned[MAX_ARGS];
    int nowned = 0;
    run_ctx *c = calloc(1, sizeof *c);
    if (!c) return EXIT_FAIL;
    scv_err err = {0};
    long long resume = 0;
    int rc = EXIT_FAIL;
    /* collect name/value pairs: job file first, then the command line (later wins) */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help();
            free(c);
            return EXIT_OK;
        }
        if (!strcmp(a, "--resume")) {
            int64_t v;
            if (i + 1 >= argc || scv_parse_i64(argv[i + 1], &v) || v < 1) {
                free(c);
                return usage("--resume needs a run id%s", "");
            }
            resume = v;
            i++;
            continue;
        }
        if (a[0] != '-') {
            if (load_job_file(a, owned, &nowned, &err)) {
                fprintf(stderr, "scavenger run: %s\n", err.msg);
                free(c);
                return EXIT_USAGE;
            }
            continue;
        }
        if (strncmp(a, "--", 2) || i + 1 >= argc || (!is_in(TRAIN_OPTS, a + 2) && !is_in(RUN_OPTS, a + 2))) {
            free(c);
            return usage("unknown option or missing value: '%s'", a);
        }
        if (nowned + 2 > MAX_ARGS) break;
        owned[nowned++] = strdup(a + 2);
        owned[nowned++] = strdup(argv[++i]);
    }
    /* the database, and on --resume the stored job */
    char dbpath[1024], jobbuf[65536], status[64];
    const char *dbarg = NULL;
    for (int i = 0; i + 1 < nowned; i += 2)
        if (!strcmp(owned[i], "db")) dbarg = owned[i + 1];
    if (dbarg) snprintf(dbpath, sizeof dbpath, "%s", dbarg);
    else default_db(dbpath, sizeof dbpath);
    if (scv_store_open(dbpath, &c->db, &err)) goto out;
    if (resume) {
        if (scv_store_run_get(c->db, resume, jobbuf, sizeof jobbuf, status, sizeof status, &err)) goto out;
        if (!strcmp(status, "done")) {
            scv_err_set(&err, SCV_EINVAL, "run %lld is already done", resume);
            goto out;
        }
        char tmp[64];
        snprintf(tmp, sizeof tmp, "/tmp/scv-run-%lld-%ld.json", resume, (long)getpid());
        FILE *f = fopen(tmp, "w");
        if (f) {
            fputs(jobbuf, f);
            fclose(f);
        }
        char *prior[MAX_ARGS];
        int np = 0;
        if (load_job_file(tmp, prior, &np, &err)) goto out;
        unlink(tmp);
        /* stored job first, then whatever the command line adds */
        memmove(owned + np, owned, sizeof(char *) * (size_t)nowned);
        memcpy(owned, prior, sizeof(char *) * (size_t)np);
        nowned += np;
    }
    for (int i = 0; i + 1 < nowned && c->nopt < 64; i += 2) {
        c->names[c->nopt] = owned[i];
        snprintf(c->flags[c->nopt], sizeof c->flags[0], "--%s", owned[i]);
        c->opt[c->nopt++] = owned[i + 1];
    }
    /* validate */
    const char *v;
    if (!(v = get(c, "target-accuracy")) || scv_parse_f64(v, &c->target) || !(c->target > 0) || c->target > 1) {
        rc = usage("--target-accuracy A (0 < A <= 1) is required%s", "");
        goto out_quiet;
    }
    c->max_epochs = 30;
    if ((v = get(c, "max-epochs")) && (scv_parse_f64(v, &c->max_epochs) || !(c->max_epochs > 0))) {
        rc = usage("--max-epochs '%s': expected a positive number", v);
        goto out_quiet;
    }
    if ((v = get(c, "deadline")) && (c->deadline = scv_parse_duration(v)) < 0) {
        rc = usage("--deadline '%s': expected seconds, or a number with s, m or h", v);
        goto out_quiet;
    }
    if ((v = get(c, "budget")) && (scv_parse_f64(v, &c->budget) || !(c->budget > 0))) {
        rc = usage("--budget '%s': expected a positive number of dollars", v);
        goto out_quiet;
    }
    if ((v = get(c, "target-epochs")) && (scv_parse_f64(v, &c->target_epochs) || !(c->target_epochs > 0))) {
        rc = usage("--target-epochs '%s': expected a positive number", v);
        goto out_quiet;
    }
    if ((v = get(c, "target-batch"))) c->target_batch = atoi(v);
    const char *search = get(c, "search") ? get(c, "search") : "partial";
    if (strcmp(search, "full") && strcmp(search, "partial") && strcmp(search, "none")) {
        rc = usage("--search '%s': expected full, partial or none", search);
        goto out_quiet;
    }
    static const struct {
        const char *name;
        const char *const *values;
    } choices[] = {{"objective", CLI_OBJECTIVES}, {"stat", CLI_STATS}, {"comm", CLI_COMMS}, {"pricing", CLI_PRICINGS}};
    for (int i = 0; i < 4; i++)
        if ((v = get(c, choices[i].name)) && cli_choice(v, choices[i].values) < 0) {
            rc = usage("'%s': not a value this option takes (see --help)", v);
            goto out_quiet;
        }
    c->nk = scv_parse_int_set(get(c, "workers") ? get(c, "workers") : "1,2", 0, 1, 1024, &c->Ks, &err);
    if (c->nk > 0)
        c->nb = scv_parse_int_set(get(c, "batch") ? get(c, "batch") : "64,256", 1, 1, 1 << 24, &c->Bs, &err);
    if (c->nk < 0 || c->nb < 0) {
        rc = usage("%s", err.msg);
        goto out_quiet;
    }
    /* the VM type and its price */
    char catbuf[4200];
    const char *catalog = get(c, "catalog") ? get(c, "catalog") : scv_default_data_file("vm-catalog.csv", catbuf, sizeof catbuf);
    if (scv_catalog_load(catalog, &c->cat, &err)) goto out;
    const char *cl = get(c, "cluster");
    scv_cluster cluster;
    if (cl && scv_cluster_load(cl, &cluster, &err)) goto out;
    snprintf(c->vm_type, sizeof c->vm_type, "%s",
             get(c, "vm-type") ? get(c, "vm-type") : cl ? cluster.vm[0].catalog_type : "c5.xlarge");
    if (!(c->vm = scv_catalog_find(c->cat, c->vm_type))) {
        scv_err_set(&err, SCV_ENOTFOUND, "--vm-type %s: not a VM type of %s", c->vm_type, catalog);
        goto out;
    }
    if (cl && c->Ks[c->nk - 1] > cluster.n) {
        scv_err_set(&err, SCV_EINVAL, "--workers goes up to %d but cluster %s has %d VMs", c->Ks[c->nk - 1], cl, cluster.n);
        goto out;
    }
    snprintf(c->job_key, sizeof c->job_key, "model=%s;hidden=%s;dataset=%s",
             get(c, "model") ? get(c, "model") : "lenet",
             get(c, "hidden") ? get(c, "hidden") : (get(c, "model") && !strcmp(get(c, "model"), "mlp") ? "256,128" : "-"),
             get(c, "dataset") ? get(c, "dataset") : "fashion-mnist");
    if ((c->deadline > 0 || c->budget > 0) && !(c->target_epochs > 0)) {
        double e;
        int b;
        if (scv_store_learnt_target(c->db, c->job_key, c->target, &e, &b, NULL) != SCV_OK) {
            scv_err_set(&err, SCV_EINVAL, "a deadline or budget needs the target's epochs: give --target-epochs E "
                        "--target-batch B0, or run the job once without bounds (its run is stored and learnt)");
            goto out;
        }
    }
    /* the run and its directory */
    char jj[65536];
    job_json(c, jj, sizeof jj);
    if (resume) c->run_id = resume;
    else if (scv_store_run_new(c->db, c->job_key, jj, &c->run_id, &err)) goto out;
    snprintf(c->dir, sizeof c->dir, "%.900s.runs/%lld", dbpath, c->run_id);
    {
        char d1[1024];
        snprintf(d1, sizeof d1, "%.900s.runs", dbpath);
        mkdir(d1, 0755);
        mkdir(c->dir, 0755);
    }
    snprintf(c->ckpt, sizeof c->ckpt, "%s/ckpt", c->dir);
    for (c->first_seg_index = 0;; c->first_seg_index++) { /* continue the numbering on resume */
        char probe[1300];
        snprintf(probe, sizeof probe, "%s/seg-%03d-", c->dir, c->first_seg_index);
        int found = 0;
        for (const char *ph[] = {"warmup", "search", "train"}, **q = ph; q < ph + 3 && !found; q++) {
            char pat[1400];
            snprintf(pat, sizeof pat, "%s%s", probe, *q);
            for (long a = 0; a < c->nk && !found; a++)
                for (long b = 0; b < c->nb && !found; b++) {
                    char f2[1500];
                    snprintf(f2, sizeof f2, "%s-k%d-b%d.jsonl", pat, c->Ks[a], c->Bs[b]);
                    found = access(f2, F_OK) == 0;
                }
        }
        if (!found) break;
    }
    scv_store_run_status(c->db, c->run_id, "running", NULL);
    fprintf(stderr, "scavenger run: run %lld (%s), search %s, state in %s\n", c->run_id, c->job_key, search, c->dir);

    /* phases */
    scv_config_stats *cs = NULL;
    size_t ncs = 0;
    scv_plan_result *res = NULL;
    scv_perf_model perf;
    scv_stat_model sm;
    int relative = 0, K = 0, B = 0, code = SCV_OK, reached = 0;
    double acc = NAN, pred_time = NAN, pred_cost = NAN;
    segment *s = NULL;
    int decided = resume && scv_store_last_decision(c->db, c->run_id, &K, &B, NULL) == SCV_OK;
    /* start configuration */
    int K0 = c->Ks[0], B0 = c->Bs[0];
    for (long i = 0; i < c->nk; i++)
        if (c->Ks[i] >= 2) {
            K0 = c->Ks[i];
            break;
        }
    if ((v = get(c, "start")) && sscanf(v, "%d,%d", &K0, &B0) != 2) {
        rc = usage("--start '%s': expected K,B", v);
        goto out_quiet;
    }
    if (B0 < K0) B0 = K0;
    const char *warm[] = {"--iterations", NULL, "--stop-noise-stable", "40:0.25", "--no-final-eval", NULL};
    char capbuf[32];
    if (!strcmp(search, "none") || decided) {
        long long from = 0;
        if (scv_store_load_measurements(c->db, c->job_key, c->run_id, &cs, &ncs, &from, &err) && !decided) goto fail;
        if (decided && !cs) { /* resume: plan from this run's own measurements */
            if (scv_store_load_measurements(c->db, c->job_key, -1, &cs, &ncs, &from, &err)) goto fail;
        }
    }
    /* the job line: a 0-iteration training writes it (and proves the job starts) */
    {
        char jpath[1200], json[4096];
        snprintf(jpath, sizeof jpath, "%s/job.jsonl", c->dir);
        char bs[16];
        snprintf(bs, sizeof bs, "%d", B0);
        char *av[MAX_ARGS];
        int n = 0;
        av[n++] = "scavenger";
        av[n++] = "train";
        n = add_train_opts(c, av, n);
        av[n++] = "--batch", av[n++] = bs, av[n++] = "--iterations", av[n++] = "1";
        av[n++] = "--metrics", av[n++] = jpath, av[n++] = "--vm-type", av[n++] = c->vm_type;
        av[n++] = "--no-final-eval", av[n++] = "--json", av[n++] = "--progress", av[n++] = "never";
        av[n] = NULL;
        int st = scv_run_self(av, json, sizeof json, NULL);
        if (st != 0) {
            scv_err_set(&err, SCV_EINVAL, "the job does not start (exit %d): try it with `scavenger train`", st);
            goto fail;
        }
        FILE *jf = fopen(jpath, "r");
        char line[2048];
        if (jf && fgets(line, sizeof line, jf)) {
            const char *nt = strstr(line, "\"n_train\":");
            if (nt) c->n_train = atoi(nt + 10);
        }
        if (jf) fclose(jf);
    }
    if (!strcmp(search, "none") || decided) {
        if (!cs) goto fail;
    } else {
        /* 1. warm-up until the noise estimate is stable */
        snprintf(capbuf, sizeof capbuf, "%lld", ckpt_progress(c, NULL) + 400);
        warm[1] = capbuf;
        if ((code = run_segment(c, "warmup", K0, B0, warm, &s, &err))) goto fail;
        reached = s->reached, acc = s->accuracy;
        /* 2. search */
        int cfg[2048][2], ncfg = 0;
        if (!strcmp(search, "full")) {
            for (long a = 0; a < c->nk; a++)
                for (long b = 0; b < c->nb && ncfg < 2048; b++) cfg[ncfg][0] = c->Ks[a], cfg[ncfg++][1] = c->Bs[b];
        } else {
            int ks[2] = {c->Ks[0], c->Ks[c->nk - 1]}, bs[2] = {c->Bs[0], c->Bs[c->nb - 1]};
            for (int a = 0; a < 2; a++)
                for (int b = 0; b < 2; b++) {
                    int dup = 0;
                    for (int q = 0; q < ncfg; q++) dup |= cfg[q][0] == ks[a] && cfg[q][1] == bs[b];
                    if (!dup) cfg[ncfg][0] = ks[a], cfg[ncfg++][1] = bs[b];
                }
        }
        cs = calloc((size_t)ncfg + 1, sizeof *cs);
        if (!cs) goto fail;
        const char *prof[] = {"--iterations", NULL, "--stop-time-stable", "0.03:30", "--no-final-eval", NULL};
        if (s->stats.workers) cs[ncs++] = s->stats; /* the warm-up measured its configuration */
        for (int q = 0; q < ncfg && !reached; q++) {
            int k = cfg[q][0], b = cfg[q][1];
            if (b < k || (k == K0 && b == B0 && s->stats.workers)) continue;
            char cap2[32];
            /* --iterations is a total: the current count plus 60 */
            snprintf(cap2, sizeof cap2, "%lld", ckpt_progress(c, NULL) + 60);
            prof[1] = cap2;
            segment *ps;
            if ((code = run_segment(c, "search", k, b, prof, &ps, &err))) goto fail;
            if (ps->stats.workers) cs[ncs++] = ps->stats;
            reached = ps->reached, acc = ps->accuracy;
        }
    }
    /* 3. plan and decide (a target reached while searching still gets its plan, for the
     * report, when the measurements allow one) */
    if ((code = plan_now(c, cs, ncs, &res, &perf, &sm, &relative, &err))) {
        if (!reached) goto fail;
        fprintf(stderr, "scavenger run: target reached while searching; no plan: %s\n", err.msg);
        res = NULL;
    }
    if (!res) goto finish;
    const scv_plan_point *ch = &res->points[res->chosen];
    K = ch->workers, B = ch->batch;
    pred_time = ch->time_s, pred_cost = ch->cost;
    scv_store_decision(c->db, c->run_id, "plan", K, B, c->vm->name, pred_time, pred_cost, res->why, NULL);
    {
        char pj[512];
        snprintf(pj, sizeof pj, "{\"c0\":%.6g,\"c1\":%.6g,\"alpha\":%.6g,\"beta\":%.6g,\"mare\":%.4g}", perf.c0,
                 perf.c1, perf.alpha, perf.beta, perf.mare);
        scv_store_model(c->db, c->run_id, "perf", pj, NULL);
        snprintf(pj, sizeof pj, "{\"b_simple\":%.6g,\"s_min\":%.6g,\"gamma_a\":%.6g,\"gamma_s\":%.6g,\"theta\":%.6g}",
                 sm.b_simple, sm.s_min, sm.gamma_a, sm.gamma_s, sm.theta);
        scv_store_model(c->db, c->run_id, "stat", pj, NULL);
    }
    printf("trade-off (%zu configurations; %s):\n", res->n_points,
           relative ? "times relative: the target's epochs are not known yet" : "predicted time and cost to target");
    scv_plan_print_header(stdout);
    for (size_t i = 0; i < res->n_front && i < 12; i++)
        scv_plan_print_point(stdout, c->cat, &res->points[res->front[i]], (long)res->front[i] == res->chosen ? ">" : " ");
    printf("chosen: K=%d, B=%d (%s)\n", K, B, res->why);
    fflush(stdout);
    /* 4. train to the target, re-planning on drift */
    for (int round = 0; round < 200 && !reached; round++) {
        double seen;
        long long done = ckpt_progress(c, &seen);
        double remaining = scv_stat_iterations(&sm, B) - (double)done;
        /* segments of half the predicted remainder, at least an epoch: each ends with a
         * drift check (and costs a relaunch) */
        long long chunk = (long long)fmax(fmax(200, (double)c->n_train / B), remaining / 2);
        char cap3[32];
        snprintf(cap3, sizeof cap3, "%lld", done + chunk);
        const char *tr[] = {"--iterations", cap3, NULL};
        segment *ts;
        if ((code = run_segment(c, "train", K, B, tr, &ts, &err))) goto fail;
        acc = ts->accuracy;
        if (ts->reached) {
            reached = 1;
            break;
        }
        ckpt_progress(c, &seen);
        if (seen / fmax(c->n_train, 1) >= c->max_epochs - 1e-9 || ts->iters == 0) break;
        const scv_plan_point *pp = find_point(res, K, B);
        if (pp && ts->stats.workers && fabs(ts->t_iter / pp->t_iter - 1) > 0.15) {
            /* drift: replace this configuration's measurement, re-plan */
            int found = 0;
            for (size_t i = 0; i < ncs; i++)
                if (cs[i].workers == K && cs[i].batch == B) cs[i] = ts->stats, found = 1;
            if (!found) {
                scv_config_stats *ncs2 = realloc(cs, (ncs + 1) * sizeof *cs);
                if (ncs2) cs = ncs2, cs[ncs++] = ts->stats;
            }
            scv_plan_result *r2 = NULL;
            scv_perf_model p2;
            scv_stat_model s2;
            int rel2;
            if (plan_now(c, cs, ncs, &r2, &p2, &s2, &rel2, NULL) == SCV_OK) {
                const scv_plan_point *nc = &r2->points[r2->chosen], *cur = find_point(r2, K, B);
                double idle = 0;
                int nid = 0;
                for (int i = 1; i < c->nsegs; i++) idle += c->segs[i].idle_before, nid++;
                idle = nid ? idle / nid : 1.0;
                double rem_cur = cur ? fmax(0, scv_stat_iterations(&s2, B) - (double)done - chunk) * cur->t_iter : 0;
                double rem_new = fmax(0, scv_stat_iterations(&s2, nc->batch) - (double)done - chunk) * nc->t_iter;
                char why[256];
                if ((nc->workers != K || nc->batch != B) && rem_cur - rem_new > 1.5 * idle + 0.05 * rem_cur) {
                    snprintf(why, sizeof why, "drift %.0f%%: switch saves %.1f s > cost %.1f s", 100 * (ts->t_iter / pp->t_iter - 1),
                             rem_cur - rem_new, 1.5 * idle + 0.05 * rem_cur);
                    K = nc->workers, B = nc->batch;
                } else {
                    snprintf(why, sizeof why, "drift %.0f%%: stay (no switch pays for itself)", 100 * (ts->t_iter / pp->t_iter - 1));
                }
                fprintf(stderr, "scavenger run: re-plan: %s\n", why);
                scv_store_decision(c->db, c->run_id, "replan", K, B, c->vm->name, nc->time_s, nc->cost, why, NULL);
                scv_plan_result_free(res);
                res = r2, perf = p2, sm = s2;
            }
        }
    }
    /* 5. outcome, report */
finish:
    {
        double total = c->segs[c->nsegs - 1].last_end - c->segs[0].first_start, cost = 0, seen;
        for (int i = 0; i < c->nsegs; i++)
            cost += c->segs[i].K * (c->segs[i].last_end - c->segs[i].first_start + c->segs[i].idle_before) / 3600 *
                    c->vm->ondemand;
        ckpt_progress(c, &seen);
        double ep = seen / fmax(c->n_train, 1);
        scv_store_outcome(c->db, c->run_id, total, cost, acc, reached, NULL);
        if (reached) scv_store_set_target(c->db, c->run_id, c->target, ep, B, NULL);
        const char *rep = get(c, "report") ? get(c, "report") : c->dir;
        write_report(c, rep, res, res ? &perf : NULL, res ? &sm : NULL, relative, pred_time, pred_cost,
                     reached, acc);
        char at[32];
        scv_fmt_time(total, at, sizeof at);
        printf("%s: test accuracy %.4f after %.2f epochs in %s, $%.6f; report in %s/report.md (run %lld)\n",
               reached ? "target reached" : "target NOT reached", acc, ep, at, cost, rep, c->run_id);
        rc = reached ? EXIT_OK : EXIT_FAIL;
    }
    scv_plan_result_free(res);
    free(cs);
    goto out_quiet;
fail:
    scv_plan_result_free(res);
    free(cs);
    if (code == SCV_EINTR) {
        scv_store_run_status(c->db, c->run_id, "interrupted", NULL);
        fprintf(stderr, "scavenger run: interrupted; the checkpoint is kept: scavenger run --resume %lld%s%s\n",
                c->run_id, dbarg ? " --db " : "", dbarg ? dbarg : "");
        rc = EXIT_INTR;
        goto out_quiet;
    }
    if (c->run_id) scv_store_run_status(c->db, c->run_id, "failed", NULL);
out:
    if (rc != EXIT_OK) fprintf(stderr, "scavenger run: %s\n", err.msg[0] ? err.msg : "failed");
out_quiet:
    scv_store_close(c->db);
    scv_catalog_free(c->cat);
    free(c->Ks);
    free(c->Bs);
    free(c);
    for (int i = 0; i < nowned; i++) free(owned[i]);
    return rc;
}
