/*
 * relaunch.c - the relaunch job driver: each segment is a `scavenger train` child process
 * (K ranks through mpirun, locally or on an emulated cluster) that resumes the run's
 * checkpoint (RUN_DIR/ckpt) at the same data position, trains until its stopping rule and
 * writes the checkpoint again. A configuration change costs a relaunch: the new child
 * loads the data, builds the model and reads the checkpoint back.
 *
 * While a child runs, the driver tails its metrics file (the trainer writes it a line at a
 * time) and delivers every iteration and evaluation to the loop's sink as it comes.
 * Files: RUN_DIR/job.jsonl (the probe), RUN_DIR/seg-NNN-PHASE-kK-bB[-retryN].jsonl.
 */
#define _POSIX_C_SOURCE 200809L
#include "child.h"
#include "scv.h"
#include "../train/ckpt.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct relaunch {
    scv_job_driver vt;
    char *exe, *cluster, *vm_type, *catalog;
    char **opts;               /* owned copies of the job's options, NULL-terminated */
    int show_progress;
    char run_dir[1024], ckpt_dir[1100];
    scv_job_info job;
    int K, B;
    double *split;
    int next_seg;              /* number of the next segment file */
    int attempt;               /* retries of the current segment */
    /* tailing the running segment's metrics */
    FILE *tail;
    const char *tail_path;
    const scv_measure_sink *sink;
    scv_segment_result *res;
    char partial[8192];
} relaunch;

static int r_progress(void *ctx, int64_t *iterations, double *samples, scv_err *err)
{
    relaunch *r = ctx;
    char file[1200];
    snprintf(file, sizeof file, "%s/" SCV_CKPT_FILE, r->ckpt_dir);
    *iterations = 0, *samples = 0;
    if (access(file, F_OK) != 0) return SCV_OK; /* nothing trained yet */
    scv_ckpt_state st;
    float *p = NULL, *m = NULL;
    size_t n;
    int rc = scv_ckpt_load(r->ckpt_dir, &st, &p, &m, &n, err);
    free(p);
    free(m);
    if (rc) return rc;
    *iterations = (int64_t)st.iteration;
    *samples = (double)st.samples_seen;
    return SCV_OK;
}

/* The first free segment number in run_dir (a resumed run continues the numbering). */
static int first_free_segment(const char *dir)
{
    int next = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        int i;
        if (sscanf(e->d_name, "seg-%d-", &i) == 1 && i >= next) next = i + 1;
    }
    if (d) closedir(d);
    return next;
}

static int r_open(void *ctx, const char *run_dir, scv_job_info *job, scv_err *err)
{
    relaunch *r = ctx;
    snprintf(r->run_dir, sizeof r->run_dir, "%s", run_dir);
    snprintf(r->ckpt_dir, sizeof r->ckpt_dir, "%s/ckpt", run_dir);
    r->next_seg = first_free_segment(run_dir);
    /* the probe: a one-iteration training writes the job line and proves the job starts */
    char path[1200], json[4096];
    snprintf(path, sizeof path, "%s/job.jsonl", run_dir);
    scv_argv a = {0};
    scv_train_cmd c = {.job_opts = (const char *const *)r->opts, .vm_type = r->vm_type, .catalog = r->catalog, .batch = 32,
                       .iterations = 1, .metrics = path, .no_final_eval = 1};
    scv_train_argv(&a, &c);
    if (a.oom) {
        scv_argv_free(&a);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    int st, rc = scv_run_self(r->exe, a.v, json, sizeof json, &st, NULL, NULL, NULL, 0, err);
    scv_argv_free(&a);
    if (rc) return rc;
    if (st != 0)
        return scv_err_set(err, st == 2 ? SCV_EINVAL : SCV_EIO,
                           "the job does not start (scavenger train exited %d): try its options with "
                           "`scavenger train`", st);
    rc = scv_job_load(path, &r->job, err);
    if (!rc) *job = r->job;
    return rc;
}

static int r_configure(void *ctx, int workers, int batch, const double *split, scv_err *err)
{
    relaunch *r = ctx;
    if (workers < 1 || batch < workers)
        return scv_err_set(err, SCV_EINVAL, "configuration K=%d B=%d: B must be at least K >= 1", workers, batch);
    free(r->split);
    r->split = NULL;
    if (split) {
        if (!(r->split = malloc(sizeof(double) * (size_t)workers))) return scv_err_set(err, SCV_ENOMEM, "out of memory");
        memcpy(r->split, split, sizeof(double) * (size_t)workers);
    }
    r->K = workers, r->B = batch;
    return SCV_OK;
}

static double jnum(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* One metrics line: iterations and evaluations go to the sink. */
static void deliver(relaunch *r, const char *line)
{
    cJSON *o = cJSON_Parse(line);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "type");
    if (!cJSON_IsString(t)) {
        cJSON_Delete(o);
        return;
    }
    double n_train = r->job.n_train > 0 ? r->job.n_train : NAN;
    if (!strcmp(t->valuestring, "iter")) {
        scv_iter_sample s = {.iteration = (int64_t)jnum(o, "iter"), .samples_seen = jnum(o, "samples_seen"),
                             .workers = (int)jnum(o, "workers"), .batch = (int)jnum(o, "batch"),
                             .t_compute = jnum(o, "t_compute"), .t_comm = jnum(o, "t_comm"),
                             .t_iter = jnum(o, "t_iter"), .loss = jnum(o, "loss"),
                             .g_local = jnum(o, "grad_sqnorm_local_mean"),
                             .g_global = jnum(o, "grad_sqnorm_global"), .wall_end = jnum(o, "ts")};
        s.epoch = s.samples_seen / n_train;
        if (r->res->iterations++ == 0) r->res->first_start = s.wall_end - s.t_iter;
        r->res->last_end = s.wall_end;
        if (r->sink && r->sink->on_iter) r->sink->on_iter(r->sink->ctx, &s);
    } else if (!strcmp(t->valuestring, "eval")) {
        const cJSON *role = cJSON_GetObjectItemCaseSensitive(o, "role");
        if (cJSON_IsString(role) && strcmp(role->valuestring, "periodic")) { /* a confirmation on the */
            cJSON_Delete(o);                                                 /* full set: not a point */
            return;                                                          /* of the curve */
        }
        scv_eval_sample e = {.iteration = (int64_t)jnum(o, "iter"), .epoch = jnum(o, "epoch_progress"),
                             .accuracy = jnum(o, "test_accuracy"), .loss = jnum(o, "test_loss"),
                             .train_loss = jnum(o, "train_loss"),
                             .train_loss_samples = jnum(o, "train_loss_samples")};
        if (!(e.train_loss_samples > 0)) e.train_loss_samples = 0;
        e.samples_seen = e.epoch * n_train;
        if (r->sink && r->sink->on_eval) r->sink->on_eval(r->sink->ctx, &e);
    }
    cJSON_Delete(o);
}

/* Reads the complete lines the child has written since the last tick. */
static void tail_tick(void *ctx)
{
    relaunch *r = ctx;
    if (!r->tail && !(r->tail = fopen(r->tail_path, "r"))) return;
    clearerr(r->tail);
    for (;;) {
        size_t have = strlen(r->partial);
        if (!fgets(r->partial + have, (int)(sizeof r->partial - have), r->tail)) break;
        size_t len = strlen(r->partial);
        if (len && r->partial[len - 1] != '\n' && len < sizeof r->partial - 1) break; /* the rest later */
        deliver(r, r->partial);
        r->partial[0] = 0;
    }
}

static int r_train(void *ctx, const scv_segment_spec *spec, const scv_measure_sink *sink,
                   scv_segment_result *out, scv_err *err)
{
    relaunch *r = ctx;
    memset(out, 0, sizeof *out);
    out->accuracy = NAN;
    if (!r->K) return scv_err_set(err, SCV_EINVAL, "relaunch driver: train before configure");
    char metrics[1400], ckfile[1200], json[8192];
    if (r->attempt)
        snprintf(metrics, sizeof metrics, "%s/seg-%03d-%s-k%d-b%d-retry%d.jsonl", r->run_dir, r->next_seg,
                 spec->phase, r->K, r->B, r->attempt);
    else
        snprintf(metrics, sizeof metrics, "%s/seg-%03d-%s-k%d-b%d.jsonl", r->run_dir, r->next_seg, spec->phase,
                 r->K, r->B);
    snprintf(ckfile, sizeof ckfile, "%s/" SCV_CKPT_FILE, r->ckpt_dir);
    scv_train_cmd c = {.job_opts = (const char *const *)r->opts, .cluster = r->cluster, .vm_type = r->vm_type,
                       .catalog = r->catalog,
                       .workers = r->K, .batch = r->B, .split = r->split, .checkpoint_dir = r->ckpt_dir,
                       .checkpoint_every = spec->checkpoint_every, .resume = access(ckfile, F_OK) == 0,
                       .metrics = metrics, .target_accuracy = spec->target_accuracy,
                       .target_loss = spec->target_loss,
                       .epochs = spec->max_epochs, .iterations = spec->until_iterations,
                       .eval_every_epochs = spec->eval_every_epochs, .noise_window = spec->noise_window,
                       .noise_tol = spec->noise_tol, .time_rse = spec->time_rse,
                       .time_min = spec->time_min_iters, .no_final_eval = !spec->final_eval,
                       .eval_subset = spec->eval_subset, .target_window = spec->target_window,
                       .history = spec->history, .n_history = spec->n_history,
                       .progress = r->show_progress};
    scv_argv a = {0};
    scv_train_argv(&a, &c);
    if (a.oom) {
        scv_argv_free(&a);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    r->tail = NULL, r->tail_path = metrics, r->sink = sink, r->res = out, r->partial[0] = 0;
    int intr = 0, st;
    int rc = scv_run_self(r->exe, a.v, json, sizeof json, &st, &intr, tail_tick, r, 250, err);
    scv_argv_free(&a);
    if (r->tail) fclose(r->tail);
    r->tail = NULL, r->sink = NULL, r->res = NULL;
    if (rc) return rc;
    if (st == 130 || intr) return scv_err_set(err, SCV_EINTR, "interrupted");
    cJSON *o = json[0] ? cJSON_Parse(json) : NULL;
    if (!o || (st != 0 && st != 1)) {
        cJSON_Delete(o);
        r->attempt++; /* a retry writes its own metrics */
        return scv_err_set(err, SCV_EIO, "the %s segment (K=%d B=%d) failed (scavenger train exited %d); "
                           "metrics in %s", spec->phase, r->K, r->B, st, metrics);
    }
    out->accuracy = jnum(o, "test_accuracy");
    if (!(out->accuracy >= 0)) out->accuracy = NAN;
    out->reached = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "reached_target"));
    cJSON_Delete(o);
    r->attempt = 0;
    r->next_seg++;
    scv_profile *p = NULL;
    if (out->iterations > 3 && scv_profile_load(metrics, &p, NULL) == SCV_OK && p->n) out->stats = p->configs[0];
    scv_profile_free(p);
    return r_progress(r, &out->total_iterations, &out->samples_seen, err);
}

/* The metrics of segment `index` (its last attempt), read as if it had just ended. */
static int r_recover(void *ctx, int index, scv_segment_result *out, char *phase, size_t cap, int *workers,
                     int *batch, scv_err *err)
{
    relaunch *r = ctx;
    memset(out, 0, sizeof *out);
    out->accuracy = NAN;
    char best[1400] = "", prefix[32];
    int best_try = -1;
    snprintf(prefix, sizeof prefix, "seg-%03d-", index);
    DIR *d = opendir(r->run_dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, prefix, strlen(prefix))) continue;
        const char *rt = strstr(e->d_name, "-retry");
        int attempt = rt ? atoi(rt + 6) : 0;
        if (attempt > best_try) best_try = attempt, snprintf(best, sizeof best, "%s/%s", r->run_dir, e->d_name);
    }
    if (d) closedir(d);
    if (best_try < 0) return SCV_ENOTFOUND;
    char ph[32];
    const char *name = strrchr(best, '/') + 1 + strlen(prefix);
    if (sscanf(name, "%31[a-z]-k%d-b%d", ph, workers, batch) != 3)
        return scv_err_set(err, SCV_EPARSE, "%s: not a segment's metrics file name", best);
    snprintf(phase, cap, "%s", ph);
    FILE *f = fopen(best, "r");
    if (!f) return scv_err_set(err, SCV_EIO, "%s: cannot read: %s", best, strerror(errno));
    r->res = out, r->sink = NULL;
    char line[8192];
    while (fgets(line, sizeof line, f)) deliver(r, line);
    fclose(f);
    r->res = NULL;
    scv_profile *p = NULL;
    if (out->iterations > 3 && scv_profile_load(best, &p, NULL) == SCV_OK && p->n) out->stats = p->configs[0];
    scv_profile_free(p);
    return r_progress(r, &out->total_iterations, &out->samples_seen, err);
}

static int r_checkpoint(void *ctx, scv_err *err)
{
    (void)ctx, (void)err; /* every segment ends with a checkpoint: nothing is only in memory */
    return SCV_OK;
}

static void r_close(void *ctx)
{
    relaunch *r = ctx;
    free(r->split);
    r->split = NULL;
    r->K = r->B = 0;
}

static void r_destroy(void *ctx)
{
    relaunch *r = ctx;
    for (int i = 0; r->opts && r->opts[i]; i++) free(r->opts[i]);
    free(r->opts);
    free(r->exe);
    free(r->cluster);
    free(r->vm_type);
    free(r->catalog);
    free(r->split);
    free(r);
}

int scv_relaunch_driver_new(const scv_relaunch_opts *o, scv_job_driver **out, scv_err *err)
{
    *out = NULL;
    relaunch *r = calloc(1, sizeof *r);
    if (!r) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    int n = 0;
    while (o->train_opts && o->train_opts[n]) n++;
    int bad = !(r->opts = calloc((size_t)n + 1, sizeof(char *)));
    for (int i = 0; i < n && !bad; i++) bad = !(r->opts[i] = strdup(o->train_opts[i]));
    if (o->exe && !bad) bad = !(r->exe = strdup(o->exe));
    if (o->cluster && !bad) bad = !(r->cluster = strdup(o->cluster));
    if (o->vm_type && !bad) bad = !(r->vm_type = strdup(o->vm_type));
    if (o->catalog && !bad) bad = !(r->catalog = strdup(o->catalog));
    r->vt = (scv_job_driver){.name = "relaunch", .ctx = r, .open = r_open, .progress = r_progress,
                             .configure = r_configure, .train = r_train, .checkpoint = r_checkpoint,
                             .close = r_close, .destroy = r_destroy, .recover = r_recover};
    r->show_progress = o->show_progress;
    if (bad) {
        r_destroy(r);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    *out = &r->vt;
    return SCV_OK;
}
