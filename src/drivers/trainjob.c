/*
 * trainjob.c - see trainjob.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "trainjob.h"
#include "child.h"
#include "../io/metrics_line.h"
#include "../train/ckpt.h"
#include "../io/io.h"
#include "../core/util.h"
#include "../core/rundir.h"
#include "../core/invariant.h"
#include "../runtime/cluster.h"
#include "../runtime/launch.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tj_init(trainjob *t, const scv_relaunch_opts *o, scv_err *err)
{
    memset(t, 0, sizeof *t);
    int n = 0;
    while (o->train_opts && o->train_opts[n]) n++;
    int bad = !(t->opts = calloc((size_t)n + 1, sizeof(char *)));
    for (int i = 0; i < n && !bad; i++) bad = !(t->opts[i] = strdup(o->train_opts[i]));
    if (o->exe && !bad) bad = !(t->exe = strdup(o->exe));
    if (o->cluster && !bad) bad = !(t->cluster = strdup(o->cluster));
    if (o->vm_type && !bad) bad = !(t->vm_type = strdup(o->vm_type));
    if (o->catalog && !bad) bad = !(t->catalog = strdup(o->catalog));
    if (o->exec && !bad) bad = !(t->exec = strdup(o->exec));
    if (o->hostfile && !bad) bad = !(t->hostfile = strdup(o->hostfile));
    t->show_progress = o->show_progress;
    t->wd = (tj_watchdog)TJ_WATCHDOG_DEFAULT;
    if (o->stall_timeout_s > 0) t->wd.startup_s = t->wd.stall_min_s = t->wd.probe_s = o->stall_timeout_s;
    if (bad) {
        tj_free(t);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    return SCV_OK;
}

void tj_free(trainjob *t)
{
    for (int i = 0; t->opts && t->opts[i]; i++) free(t->opts[i]);
    free(t->opts);
    free(t->exe);
    free(t->cluster);
    free(t->vm_type);
    free(t->catalog);
    free(t->exec);
    free(t->hostfile);
    free(t->split);
    if (t->tail) fclose(t->tail);
    memset(t, 0, sizeof *t);
}

int tj_has_checkpoint(const trainjob *t)
{
    char file[1200];
    snprintf(file, sizeof file, "%s/%s", t->ckpt_dir, t->exec ? SCV_STATE_FILE : SCV_CKPT_FILE);
    return access(file, F_OK) == 0;
}

/* An external trainer's progress: its scavenger-state.json (the trainer contract). */
static int external_progress(const trainjob *t, int64_t *iterations, double *samples, scv_err *err)
{
    char file[1200], buf[4096];
    snprintf(file, sizeof file, "%s/" SCV_STATE_FILE, t->ckpt_dir);
    FILE *f = fopen(file, "r");
    if (!f) return scv_err_set(err, SCV_EIO, "%s: cannot read: %s", file, strerror(errno));
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    cJSON *o = cJSON_Parse(buf);
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, "iteration");
    const cJSON *ss = cJSON_GetObjectItemCaseSensitive(o, "samples_seen");
    int ok = cJSON_IsNumber(it) && cJSON_IsNumber(ss) && it->valuedouble >= 0 && ss->valuedouble >= 0;
    if (ok) *iterations = (int64_t)it->valuedouble, *samples = ss->valuedouble;
    cJSON_Delete(o);
    return ok ? SCV_OK
              : scv_err_set(err, SCV_EPARSE, "%s: expected {\"iteration\": N, \"samples_seen\": S, ...} with "
                                             "numbers >= 0 (docs/TRAINER-CONTRACT.md, rule 5)", file);
}

int tj_progress(trainjob *t, int64_t *iterations, double *samples, scv_err *err)
{
    *iterations = 0, *samples = 0;
    if (!tj_has_checkpoint(t)) return SCV_OK; /* nothing trained yet */
    if (t->exec) return external_progress(t, iterations, samples, err);
    scv_ckpt_state st;
    float *p = NULL, *m = NULL;
    size_t n;
    int rc = scv_ckpt_load(t->ckpt_dir, &st, &p, &m, &n, err);
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

int tj_dirs(trainjob *t, const char *run_dir, scv_err *err)
{
    size_t n = strlen(run_dir);
    if (!n || n >= sizeof t->run_dir)
        return scv_err_set(err, SCV_ERANGE, "%.200s...: a run directory's path of %zu bytes (1 to %zu)", run_dir, n,
                           sizeof t->run_dir - 1);
    memcpy(t->run_dir, run_dir, n + 1);
    /* fits: ckpt_dir is longer than run_dir by more than "/" SCV_RUN_CKPT_DIR */
    int rc = scv_run_file_path(t->run_dir, SCV_RUN_CKPT_DIR, t->ckpt_dir, sizeof t->ckpt_dir, NULL);
    SCV_ASSERT(rc == SCV_OK);
    t->next_seg = first_free_segment(run_dir);
    return SCV_OK;
}

/* The job's learning-rate rule into t->job, from its options (train's defaults where it
 * gives none; a later option wins, as in train's getopt): the loop carries its target
 * across batches by it (src/model/carry.c). */
static void job_lr_rule(trainjob *t)
{
    scv_train_params d = scv_train_params_default();
    t->job.lr = d.lr, t->job.base_batch = d.base_batch, t->job.lr_scaling = d.lr_scaling;
    for (int i = 0; t->opts && t->opts[i] && t->opts[i + 1]; i += 2) {
        const char *k = t->opts[i], *v = t->opts[i + 1];
        if (!strcmp(k, "--lr")) t->job.lr = strtod(v, NULL);
        else if (!strcmp(k, "--base-batch")) t->job.base_batch = atoi(v);
        else if (!strcmp(k, "--lr-scaling") && scv_lr_scaling_from_name(v, &t->job.lr_scaling, NULL))
            t->job.lr_scaling = SCV_LR_SCALE_NONE; /* (checked where the options were read) */
    }
}

int tj_open(trainjob *t, const char *run_dir, scv_job_info *job, scv_err *err)
{
    int drc = tj_dirs(t, run_dir, err);
    if (drc) return drc;
    /* the probe: a one-iteration training writes the job line and proves the job starts */
    char path[1200], json[4096];
    snprintf(path, sizeof path, "%s/job.jsonl", run_dir);
    scv_argv a = {0};
    scv_segwire *w = calloc(1, sizeof *w);
    if (!w) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    w->batch = 32, w->until_iterations = 1, w->final_eval = 0;
    snprintf(w->metrics, sizeof w->metrics, "%s", path);
    scv_train_cmd c = {.job_opts = (const char *const *)t->opts, .vm_type = t->vm_type, .catalog = t->catalog,
                       .seg = w};
    scv_train_argv(&a, &c);
    free(w);
    if (a.oom) {
        scv_argv_free(&a);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    /* a stop reaches the probe (SIGTERM passed on) and the run is interrupted, not this process
     * killed with its run left `running`; the watchdog ends a probe that never starts */
    scv_segment_result dummy = {0};
    tj_tail_start(t, path, NULL, &dummy);
    char why[400] = "";
    int st, intr = 0, rc = scv_run_self_err(t->exe, a.v, json, sizeof json, why, sizeof why, &st, &intr, tj_watch_tick,
                                            t, 250, err);
    int stalled = t->wd_fired != 0;
    tj_tail_stop(t);
    scv_argv_free(&a);
    if (rc) return rc;
    if (intr || st == 130) /* Ctrl-C (or a service's stop) reached the probe: the run is interrupted, not broken */
        return scv_err_set(err, SCV_EINTR, "interrupted while the job started");
    if (stalled) return scv_err_set(err, SCV_EIO, "the job does not start: %s", t->wd_why);
    if (st != 0)
        return scv_err_set(err, st == 2 ? SCV_EINVAL : SCV_EIO,
                           "the job does not start (scavenger train exited %d%s%s): try its options with "
                           "`scavenger train`", st, why[0] ? ": " : "", why);
    rc = scv_job_load(path, &t->job, err);
    if (!rc) job_lr_rule(t), rc = tj_types(t, &t->job, err);
    if (!rc) *job = t->job;
    return rc;
}

int tj_types(const trainjob *t, scv_job_info *job, scv_err *err)
{
    job->n_types = 0;
    if (!t->cluster) return SCV_OK; /* local processes, a hostfile: its own type only */
    scv_cluster c;
    int rc = scv_cluster_load(t->cluster, &c, err);
    if (rc) return rc;
    for (int i = 0; i < c.n; i++) {
        int k = 0;
        while (k < job->n_types && strcmp(job->types[k], c.vm[i].catalog_type)) k++;
        if (k == SCV_JOB_MAX_TYPES) continue; /* (a cluster of more types: the first ones) */
        if (k == job->n_types) {
            snprintf(job->types[k], sizeof job->types[k], "%s", c.vm[i].catalog_type);
            job->type_vms[k] = 0, job->n_types++;
        }
        job->type_vms[k]++;
    }
    return SCV_OK;
}

int tj_place(const trainjob *t, const scv_segment_spec *spec, const char **type, scv_err *err)
{
    *type = t->vm_type;
    if (!spec->vm_type || (t->vm_type && !strcmp(spec->vm_type, t->vm_type))) return SCV_OK;
    if (!t->cluster)
        return scv_err_set(err, SCV_EINVAL, "the %s segment asks for VM type %s: this driver places only on %s "
                           "(%s; only an emulated cluster, --cluster, holds VMs of other types)", spec->phase,
                           spec->vm_type, t->vm_type ? t->vm_type : "its own type",
                           t->hostfile ? "a hostfile's machines" : "local processes");
    scv_cluster c;
    int rc = scv_cluster_load(t->cluster, &c, err);
    if (rc) return rc;
    int n = scv_cluster_count_type(&c, spec->vm_type);
    if (n < t->K)
        return scv_err_set(err, SCV_EINVAL, "the %s segment asks for K=%d VMs of type %s: cluster %s holds %d of "
                           "it", spec->phase, t->K, spec->vm_type, t->cluster, n);
    *type = spec->vm_type;
    return SCV_OK;
}

int tj_configure(trainjob *t, int workers, int batch, const double *split, scv_err *err)
{
    if (workers < 1 || batch < workers)
        return scv_err_set(err, SCV_EINVAL, "configuration K=%d B=%d: B must be at least K >= 1", workers, batch);
    free(t->split);
    t->split = NULL;
    if (split) {
        if (!(t->split = malloc(sizeof(double) * (size_t)workers))) return scv_err_set(err, SCV_ENOMEM, "out of memory");
        memcpy(t->split, split, sizeof(double) * (size_t)workers);
    }
    t->K = workers, t->B = batch;
    return SCV_OK;
}

void tj_segment_path(const trainjob *t, const char *phase, char *buf, size_t cap)
{
    if (t->attempt)
        snprintf(buf, cap, "%s/seg-%03d-%s-k%d-b%d-retry%d.jsonl", t->run_dir, t->next_seg, phase, t->K, t->B,
                 t->attempt);
    else
        snprintf(buf, cap, "%s/seg-%03d-%s-k%d-b%d.jsonl", t->run_dir, t->next_seg, phase, t->K, t->B);
}

/* A count that is not a number in range reads 0. */
static int64_t count_or0(double v) { return v >= 0 && v < 1e15 ? (int64_t)v : 0; }

/* One metrics line (line lineno of the file read) through the strict reader and its state
 * across lines (the segment's K, counters that only grow): iterations and evaluations go
 * to the sink. While a segment runs its lines are taken as they come
 * (docs/TRAINER-CONTRACT.md): the first bad line is kept (t->line_err, naming the file, the
 * line and the field) and the first non-finite value (t->diverged: the trainer diverged);
 * a bad iteration line's refused values read as missing, a bad evaluation is not passed on
 * (a value out of range must not reach a target). */
static void deliver(trainjob *t, const char *line, size_t len, int lineno)
{
    scv_metrics_line m;
    scv_err le = {0};
    int bad = scv_metrics_line_next_n(&t->rd, line, len, t->tail_path, lineno, &m, &le);
    if (bad && !t->line_err.code) t->line_err = le;
    if (m.nonfinite && !t->diverged.code) {
        double it = m.type == SCV_ML_ITER ? m.u.iter.iter : m.type == SCV_ML_EVAL ? m.u.eval.iter : NAN;
        if (!isfinite(it)) it = t->rd.iter + 1; /* the line after the last good one */
        char at[48] = "";
        if (isfinite(it)) snprintf(at, sizeof at, " at iteration %.0f", it);
        scv_err_set(&t->diverged, SCV_EINVAL, "the trainer diverged (%s %s%s, %s:%d)", m.nonfinite, m.nonfinite_as,
                    at, t->tail_path, lineno);
    }
    double n_train = t->job.n_train > 0 ? t->job.n_train : NAN;
    if (m.type == SCV_ML_ITER) {
        const scv_ml_iter *x = &m.u.iter;
        scv_iter_sample s = {.iteration = count_or0(x->iter), .samples_seen = x->samples_seen,
                             .workers = x->workers >= 1 ? (int)x->workers : 0,
                             .batch = x->batch >= 1 ? (int)x->batch : 0, .t_compute = x->t_compute,
                             .t_comm = x->t_comm, .t_iter = x->t_iter, .loss = x->loss, .g_local = x->g_local,
                             .g_global = x->g_global, .wall_end = x->ts};
        s.epoch = s.samples_seen / n_train;
        if (t->res->iterations++ == 0) t->res->first_start = s.wall_end - s.t_iter;
        t->res->last_end = s.wall_end;
        t->res->total_iterations = s.iteration, t->res->samples_seen = s.samples_seen;
        if (isfinite(s.t_iter) && s.t_iter > t->wd_titer) t->wd_titer = s.t_iter;
        snprintf(t->wd_seen, sizeof t->wd_seen, "iteration %lld", (long long)s.iteration);
        if (t->sink && t->sink->on_iter) t->sink->on_iter(t->sink->ctx, &s);
    } else if (m.type == SCV_ML_EVAL && !bad) {
        const scv_ml_eval *x = &m.u.eval;
        if (t->eval_line) t->eval_line(t->eval_line_ctx, x, lineno);
        if (x->role[0] && strcmp(x->role, "periodic")) return; /* a confirmation on the full set: not a
                                                                   point of the curve */
        scv_eval_sample e = {.iteration = count_or0(x->iter), .epoch = x->epoch_progress,
                             .accuracy = x->test_accuracy, .loss = x->test_loss, .train_loss = x->train_loss,
                             .train_loss_samples = x->train_loss_samples > 0 ? x->train_loss_samples : 0,
                             .seconds = x->eval_seconds};
        e.samples_seen = e.epoch * n_train;
        snprintf(t->wd_seen, sizeof t->wd_seen, "an evaluation at iteration %lld", (long long)e.iteration);
        if (t->sink && t->sink->on_eval) t->sink->on_eval(t->sink->ctx, &e);
    }
}

int tj_tail_verdict(const trainjob *t, scv_err *err)
{
    if (t->diverged.code)
        return scv_err_set(err, SCV_EINVAL, "%s; not retried: lower the learning rate", t->diverged.msg);
    if (t->line_err.code && t->exec)
        return scv_err_set(err, SCV_EINVAL, "%s (docs/TRAINER-CONTRACT.md)", t->line_err.msg);
    return SCV_OK;
}

void tj_log_tail(const char *path, int lines, char *buf, size_t cap)
{
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f || lines < 1 || cap < 8) {
        if (f) fclose(f);
        return;
    }
    enum { KEEP = 8, LINE = 240 };
    char last[KEEP][LINE], line[LINE];
    int n = 0;
    if (lines > KEEP) lines = KEEP;
    if (fseek(f, -16384L, SEEK_END) == 0 && fgets(line, sizeof line, f)) {} /* the end only; a cut line dropped */
    else rewind(f);
    while (fgets(line, sizeof line, f)) {
        size_t len = strcspn(line, "\r\n");
        if (line[len] == 0 && !feof(f)) { /* an overlong line: its first part, the rest skipped */
            int ch;
            while ((ch = fgetc(f)) != EOF && ch != '\n') {}
        }
        line[len] = 0;
        if (strspn(line, " \t") == len) continue;
        snprintf(last[n % KEEP], LINE, "%s", line);
        n++;
    }
    fclose(f);
    size_t o = 0;
    for (int i = n > lines ? n - lines : 0; i < n && o + 1 < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%s", o ? " | " : "", last[i % KEEP]);
    if (o >= cap) buf[cap - 1] = 0;
}

void tj_tail_start(trainjob *t, const char *path, const scv_measure_sink *sink, scv_segment_result *out)
{
    if (t->tail) fclose(t->tail);
    t->tail = NULL, t->sink = sink, t->res = out, t->partial[0] = 0, t->lineno = 0, t->overlong = 0;
    memset(&t->line_err, 0, sizeof t->line_err);
    memset(&t->diverged, 0, sizeof t->diverged);
    scv_ml_reader_init(&t->rd, t->K);
    t->rd.batch = t->B;
    t->rd.strict = t->exec != NULL; /* a trainer's lines: the contract's fields, the job line first */
    t->partial_len = 0;
    snprintf(t->tail_path, sizeof t->tail_path, "%s", path);
    t->wd_start = t->wd_last = scv_now(), t->wd_titer = 0, t->wd_seen[0] = 0;
    t->wd_fired = 0, t->wd_why[0] = 0;
    tj_errwatch_start(t, NULL);
}

void tj_errwatch_start(trainjob *t, const char *path)
{
    memset(&t->ew, 0, sizeof t->ew);
    if (!path) return;
    snprintf(t->ew.path, sizeof t->ew.path, "%s", path);
    struct stat sb;
    t->ew.off = stat(path, &sb) == 0 ? (long)sb.st_size : 0; /* an earlier job's lines are not this one's */
}

void tj_errwatch_line(void *ctx, const char *line)
{
    tj_errwatch *w = &((trainjob *)ctx)->ew;
    /* Open MPI's prefix ("[host:pid] [[job,0],0] ") says nothing here: left out */
    while (line[0] == '[') {
        const char *e = line;
        int depth = 0;
        do depth += *e == '[' ? 1 : *e == ']' ? -1 : 0;
        while (*++e && depth > 0);
        if (depth || (*e != ' ' && *e != ':')) break;
        line = e + strspn(e, " :");
    }
    if (strspn(line, " \t\r\n") == strlen(line)) return;
    snprintf(w->last[w->n_last++ % 4], sizeof w->last[0], "%s", line);
    if (!w->first_at && scv_launch_error_line(line)) {
        snprintf(w->first, sizeof w->first, "%s", line);
        w->first_at = scv_now();
    }
}

void tj_errwatch_tick(trainjob *t)
{
    tj_errwatch *w = &t->ew;
    if (!w->path[0]) return;
    FILE *f = fopen(w->path, "r");
    if (!f) return;
    char buf[4096];
    size_t got;
    if (fseek(f, w->off, SEEK_SET) == 0)
        while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
            w->off += (long)got;
            for (size_t i = 0; i < got; i++) {
                if (buf[i] != '\n') {
                    if (w->plen < sizeof w->partial - 1) w->partial[w->plen++] = buf[i];
                    continue;
                }
                w->partial[w->plen] = 0;
                tj_errwatch_line(t, w->partial);
                w->plen = 0;
            }
        }
    fclose(f);
}

void tj_errwatch_tail(const trainjob *t, int but_first, char *buf, size_t cap)
{
    const tj_errwatch *w = &t->ew;
    size_t o = 0;
    int n = w->n_last < 4 ? w->n_last : 4;
    buf[0] = 0;
    for (int i = w->n_last - n; i < w->n_last && o + 1 < cap; i++) {
        if (but_first && !strcmp(w->last[i % 4], w->first)) continue; /* (quoted on its own) */
        o += (size_t)snprintf(buf + o, cap - o, "%s%s", o ? " | " : "", w->last[i % 4]);
    }
    if (o >= cap && cap) buf[cap - 1] = 0;
}

int tj_errwatch_failed(const trainjob *t, double grace, char *why, size_t cap)
{
    const tj_errwatch *w = &t->ew;
    if (!w->first_at || scv_now() - w->first_at <= grace) return 0;
    const char *last = w->n_last ? w->last[(w->n_last - 1) % 4] : "";
    if (!strcmp(last, w->first)) last = "";
    snprintf(why, cap, "mpirun reported a failure and neither exited nor started the job in %g s: \"%.170s\"%s%.130s%s",
             grace, w->first, last[0] ? "; its last line: \"" : "", last, last[0] ? "\"" : "");
    return 1;
}

void tj_watch_tick(void *ctx)
{
    trainjob *t = ctx;
    tj_tail_tick(t);
    if (!t->res) return;
    /* a stalled job has nothing to save (a retry resumes the last checkpoint): ended at once,
     * every process of it; the tick after the child was reaped finds none, and a job that
     * exited is not called stalled. Once a stop was asked (SIGINT/SIGTERM passed on to it)
     * the job is writing its checkpoint, however long its lines have been quiet: not ended */
    if (!t->wd_fired && !scv_run_self_stopping() && tj_stalled(t, t->wd_why, sizeof t->wd_why) &&
        scv_run_self_kill_tree())
        t->wd_fired = scv_now();
}

int tj_stalled(const trainjob *t, char *why, size_t cap)
{
    double now = scv_now(), quiet = now - t->wd_last;
    if (!t->wd_seen[0] && tj_errwatch_failed(t, t->wd.error_grace_s, why, cap)) return 1; /* (it will not start) */
    if (!t->wd_seen[0]) {
        if (quiet <= t->wd.startup_s) return 0;
        snprintf(why, cap, "no metrics line in %g s since it started (the start-up timeout, --stall-timeout; "
                 "nothing written to %.400s)", t->wd.startup_s, t->tail_path);
        return 1;
    }
    double limit = t->wd.stall_iters * t->wd_titer;
    if (limit < t->wd.stall_min_s) limit = t->wd.stall_min_s;
    if (quiet <= limit) return 0;
    snprintf(why, cap, "no progress for %.3g s (the stall timeout: max(%g s, %g x its longest iteration "
             "%.3g s), --stall-timeout); last seen: %s, %.0f s after it started", limit, t->wd.stall_min_s,
             t->wd.stall_iters, t->wd_titer, t->wd_seen, t->wd_last - t->wd_start);
    return 1;
}

/* Reads the complete lines the job has written since the last tick. */
void tj_tail_tick(void *ctx)
{
    trainjob *t = ctx;
    if (!t->res) return;
    if (!t->tail && !(t->tail = fopen(t->tail_path, "r"))) return;
    clearerr(t->tail);
    for (;;) {
        /* the bytes read are counted by the file's offset, not by strlen: a NUL byte in a
         * line (which strlen would stop at) reaches the reader, which refuses it */
        size_t have = t->partial_len;
        long at = ftell(t->tail);
        if (!fgets(t->partial + have, (int)(sizeof t->partial - have), t->tail)) break;
        long now = ftell(t->tail);
        size_t got = at >= 0 && now > at ? (size_t)(now - at) : strlen(t->partial + have);
        size_t len = t->partial_len = have + got;
        int ends = len && t->partial[len - 1] == '\n';
        if (!ends && len < sizeof t->partial - 1) break; /* the rest later */
        /* a line longer than the buffer is not read here (its parts are no lines), only
         * counted: the check of the whole file when the segment ends reads it */
        if (!t->overlong && ends) deliver(t, t->partial, len, ++t->lineno);
        else if (ends) t->overlong = 0, ++t->lineno;
        else t->overlong = 1;
        t->partial[0] = 0, t->partial_len = 0;
        t->wd_last = scv_now();
        if (!t->wd_seen[0]) snprintf(t->wd_seen, sizeof t->wd_seen, "line %d", t->lineno);
    }
}

void tj_tail_stop(trainjob *t)
{
    if (t->tail) fclose(t->tail);
    t->tail = NULL, t->sink = NULL, t->res = NULL;
}

int tj_segment_done(trainjob *t, const char *metrics, int totals_known, scv_segment_result *out, scv_err *err)
{
    t->attempt = 0;
    t->next_seg++;
    int rc = tj_tail_verdict(t, err); /* a line read while it ran: not retried */
    if (rc) return rc;
    scv_profile *p = NULL;
    scv_err pe = {0};
    int prc = out->iterations > 3 ? scv_profile_load(metrics, &p, &pe) : SCV_OK;
    if (prc == SCV_OK && p && p->n) out->stats = *scv_profile_main(p);
    scv_profile_free(p);
    if (prc == SCV_EPARSE && t->exec) /* an external trainer that breaks the contract: not retried */
        return scv_err_set(err, SCV_EINVAL, "%s (docs/TRAINER-CONTRACT.md)", pe.msg);
    if (totals_known) return SCV_OK;
    return tj_progress(t, &out->total_iterations, &out->samples_seen, err);
}

int tj_recover(trainjob *t, int index, scv_segment_result *out, char *phase, size_t cap, int *workers, int *batch,
               scv_err *err)
{
    memset(out, 0, sizeof *out);
    out->accuracy = NAN;
    char best[1400] = "", prefix[32];
    int best_try = -1;
    snprintf(prefix, sizeof prefix, "seg-%03d-", index);
    DIR *d = opendir(t->run_dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, prefix, strlen(prefix))) continue;
        const char *rt = strstr(e->d_name, "-retry");
        int attempt = rt ? atoi(rt + 6) : 0;
        if (attempt > best_try) best_try = attempt, snprintf(best, sizeof best, "%s/%s", t->run_dir, e->d_name);
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
    /* read as the tail reads a running segment: this file's verdict only (an earlier
     * segment's bad line or divergence is not this one's), and a line longer than the tail's
     * buffer counted as one line, not read (its parts are no lines: they were refused as
     * "not a JSON object" at line numbers past the file's) */
    t->res = out, t->sink = NULL, t->lineno = 0, t->overlong = 0;
    memset(&t->line_err, 0, sizeof t->line_err);
    memset(&t->diverged, 0, sizeof t->diverged);
    scv_ml_reader_init(&t->rd, *workers);
    t->rd.batch = *batch;
    t->rd.strict = t->exec != NULL;
    snprintf(t->tail_path, sizeof t->tail_path, "%s", best);
    char line[sizeof t->partial];
    for (;;) {
        long at = ftell(f);
        if (!fgets(line, sizeof line, f)) break;
        long now = ftell(f);
        size_t len = at >= 0 && now > at ? (size_t)(now - at) : strlen(line); /* NUL bytes counted */
        int ends = len && line[len - 1] == '\n';
        if (!ends && !feof(f)) { /* overlong: the rest of it skipped */
            int ch;
            while ((ch = fgetc(f)) != EOF && ch != '\n') {}
            ++t->lineno;
            continue;
        }
        deliver(t, line, len, ++t->lineno);
    }
    fclose(f);
    t->res = NULL;
    scv_profile *p = NULL;
    if (out->iterations > 3 && scv_profile_load(best, &p, NULL) == SCV_OK && p->n) out->stats = *scv_profile_main(p);
    scv_profile_free(p);
    return tj_progress(t, &out->total_iterations, &out->samples_seen, err);
}

void tj_result_shares(const void *result, scv_segment_result *out)
{
    const cJSON *r = result, *n = cJSON_GetObjectItemCaseSensitive(r, "rebalances"), *sh;
    if (cJSON_IsNumber(n)) out->rebalances = n->valueint;
    int k = 0;
    cJSON_ArrayForEach(sh, cJSON_GetObjectItemCaseSensitive(r, "shares")) {
        if (k == SCV_MAX_WORKERS || !cJSON_IsNumber(sh)) break;
        out->shares[k++] = sh->valuedouble;
    }
    if (k) out->n_shares = k;
}

void tj_lost_work(trainjob *t, const scv_segment_result *out, char *buf, size_t cap)
{
    buf[0] = 0;
    int64_t ck_it = 0;
    double ck_s = 0;
    if (!out || out->iterations <= 0 || tj_progress(t, &ck_it, &ck_s, NULL) != SCV_OK) return;
    const double lost = out->samples_seen - ck_s;
    if (lost <= 0)
        snprintf(buf, cap, "; lost no samples (the checkpoint holds iteration %lld, the last one reported)",
                 (long long)ck_it);
    else
        snprintf(buf, cap, "; lost %.0f samples (iterations %lld-%lld, trained after the checkpoint at iteration "
                 "%lld: trained again from it, none counted twice)", lost, (long long)ck_it + 1,
                 (long long)out->total_iterations, (long long)ck_it);
}
