/*
 * jobs.c - the service's submitted runs. A job arrives as the JSON object `scavenger run
 * JOB.json` reads; svc_job_check() refuses what the service must not run (errors name the
 * field): unknown settings, wrong types, bad values of the loop's settings (checked by the
 * library's own scv_run_params_set), the service's own settings (db, report), paths outside
 * the data directory (dataset, catalog) and an external trainer's command (exec, hosts)
 * unless the operator allowed them. svc_submit() queues it; a manager thread starts at
 * most max_runs `scavenger run` children at a time (fork, its own process group, execv with
 * an argv array: no shell ever sees a request's text), reaps them, and finds the run each
 * one created in the store by its report directory (a setting only the service gives).
 * Stopping sends SIGINT to the child's process group, as Ctrl-C does in a terminal: the
 * run checkpoints, is stored as interrupted and can be resumed (another child with
 * `--resume ID`).
 */
#define _GNU_SOURCE
#include "service.h"
#include "../core/util.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *svc_sub_state_name(svc_sub_state s)
{
    static const char *const names[] = {"queued", "running", "done", "failed", "stopped", "rejected"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

/* the built-in trainer's options (cmd_run.c JOB_OPTS) and the run command's own */
/* wall clock, s since the epoch (what the dashboard shows) */
static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static const char *const JOB_OPTS[] = {"model", "hidden", "dataset", "threads", "lr", "momentum",
                                       "weight-decay", "lr-scaling", "base-batch", "warmup-epochs",
                                       "lr-decay", "lr-step-epochs", "lr-gamma", "lr-horizon", "seed",
                                       NULL};
static const char *const NUM_OPTS[] = {"threads", "lr", "momentum", "weight-decay", "base-batch",
                                       "warmup-epochs", "lr-step-epochs", "lr-gamma", "lr-horizon", "seed",
                                       NULL};

static int in_list(const char *const *list, const char *name)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(list[i], name)) return 1;
    return 0;
}

static int field_err(char *field, size_t fcap, const char *name, scv_err *err, int code, const char *fmt,
                     const char *a)
{
    snprintf(field, fcap, "%s", name);
    char m[1024];
    snprintf(m, sizeof m, fmt, a);
    return scv_err_set(err, code, "field '%s': %s", name, m);
}

/* path must resolve inside dir (both made absolute and free of links first) */
static int path_inside(const char *dir, const char *path)
{
    char rd[PATH_MAX], rp[PATH_MAX];
    if (!realpath(dir, rd) || !realpath(path, rp)) return 0;
    size_t n = strlen(rd);
    return !strncmp(rd, rp, n) && (rp[n] == '/' || rp[n] == 0 || (n == 1 && rd[0] == '/'));
}

int svc_job_check(const svc_config *cfg, const char *body, char **out, char *field, size_t fcap, scv_err *err)
{
    *out = NULL;
    field[0] = 0;
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithOpts(body, &end, 1);
    if (!o || !cJSON_IsObject(o)) {
        cJSON_Delete(o);
        snprintf(field, fcap, "body");
        return scv_err_set(err, SCV_EPARSE, "body: not a JSON object%s", end && *end ? " (or something follows it)" : "");
    }
    scv_run_params p = scv_run_params_default();
    int rc = SCV_OK, has_target = 0;
    for (cJSON *it = o->child; it && !rc; it = it->next) {
        const char *name = it->string;
        char val[512];
        int len = 0;
        for (const cJSON *q = o->child; q != it; q = q->next)
            if (!strcmp(q->string, name)) {
                rc = field_err(field, fcap, name, err, SCV_EINVAL, "given twice%s", "");
                break;
            }
        if (rc) break;
        if (cJSON_IsString(it)) len = snprintf(val, sizeof val, "%s", it->valuestring);
        else if (cJSON_IsNumber(it) && isfinite(it->valuedouble)) len = snprintf(val, sizeof val, "%.17g", it->valuedouble);
        else {
            rc = field_err(field, fcap, name, err, SCV_EINVAL, "must be a string or a finite number%s", "");
            break;
        }
        if (len >= (int)sizeof val) {
            rc = field_err(field, fcap, name, err, SCV_EINVAL, "the value is longer than 511 characters%s", "");
            break;
        }
        if (!strcmp(name, "db") || !strcmp(name, "report")) {
            rc = field_err(field, fcap, name, err, SCV_EINVAL, "set by the service, not by a job%s", "");
        } else if (!strcmp(name, "exec") || !strcmp(name, "hosts")) {
            if (!cfg->allow_exec)
                rc = field_err(field, fcap, name, err, SCV_EINVAL,
                               "external trainers and hostfiles are off in this service (serve --allow-exec)%s", "");
        } else if (!strcmp(name, "driver")) {
            if (strcmp(val, "elastic") && strcmp(val, "relaunch") && (strcmp(val, "exec") || !cfg->allow_exec))
                rc = field_err(field, fcap, name, err, SCV_EINVAL, "'%s': expected elastic or relaunch", val);
        } else if (!strcmp(name, "cluster")) {
            if (!val[0] || strlen(val) > 31 || strspn(val, "abcdefghijklmnopqrstuvwxyz0123456789-_") != strlen(val))
                rc = field_err(field, fcap, name, err, SCV_EINVAL, "'%s': expected a cluster name", val);
        } else if (!strcmp(name, "catalog") || (!strcmp(name, "dataset") && strcmp(val, "fashion-mnist") &&
                                                 strncmp(val, "synthetic:", 10))) {
            if (!cfg->allow_paths && !path_inside(cfg->data_dir, val))
                rc = field_err(field, fcap, name, err, SCV_EINVAL,
                               "'%s' is not an existing path inside the service's data directory", val);
        } else if (!strcmp(name, "dataset")) {
            int64_t nsamp;
            if (strncmp(val, "synthetic:", 10) == 0 && (scv_parse_i64(val + 10, &nsamp) || nsamp < 10 || nsamp > 10000000))
                rc = field_err(field, fcap, name, err, SCV_EINVAL, "'%s': expected synthetic:N with 10 <= N <= 10^7", val);
        } else if (!strcmp(name, "model")) {
            if (strcmp(val, "logreg") && strcmp(val, "mlp") && strcmp(val, "lenet") && strcmp(val, "resnet"))
                rc = field_err(field, fcap, name, err, SCV_EINVAL, "'%s': expected logreg, mlp, lenet or resnet", val);
        } else if (!strcmp(name, "hidden")) {
            scv_model_spec spec = {.name = "mlp"};
            if (scv_model_parse_hidden(val, &spec, NULL))
                rc = field_err(field, fcap, name, err, SCV_EINVAL, "'%s': expected layer sizes such as 256,128", val);
        } else if (in_list(NUM_OPTS, name)) {
            char *e = NULL;
            double d = strtod(val, &e);
            if (e == val || *e || !isfinite(d) || d < 0)
                rc = field_err(field, fcap, name, err, SCV_EINVAL, "'%s': expected a non-negative number", val);
        } else if (in_list(JOB_OPTS, name)) {
            /* lr-scaling, lr-decay: the trainer checks their names */
        } else {
            scv_err e = {0};
            int st = scv_run_params_set(&p, name, val, &e);
            if (st == SCV_ENOTFOUND) rc = field_err(field, fcap, name, err, SCV_EINVAL, "unknown setting%s", "");
            else if (st) rc = field_err(field, fcap, name, err, SCV_EINVAL, "%s", e.msg);
            if (!strcmp(name, "target-accuracy") || !strcmp(name, "target-loss")) has_target = 1;
        }
    }
    if (!rc && !has_target)
        rc = field_err(field, fcap, "target-accuracy", err, SCV_EINVAL,
                       "a job needs a target: target-accuracy (0 < A <= 1) or target-loss%s", "");
    if (!rc && !(*out = cJSON_PrintUnformatted(o))) rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
    cJSON_Delete(o);
    return rc;
}

/* ---- the submissions ---- */

static svc_sub *find_sub(svc_state *s, long long id)
{
    for (size_t i = 0; i < s->n_subs; i++)
        if (s->subs[i].id == id) return &s->subs[i];
    return NULL;
}

long long svc_sub_of_run(svc_state *s, long long run, int active_only)
{
    long long id = 0;
    pthread_mutex_lock(&s->jobs_mu);
    for (size_t i = 0; i < s->n_subs; i++) {
        const svc_sub *u = &s->subs[i];
        if ((u->run_id == run || u->resume_run == run) &&
            (!active_only || u->state == SUB_QUEUED || u->state == SUB_RUNNING))
            id = u->id; /* the newest wins */
    }
    pthread_mutex_unlock(&s->jobs_mu);
    return id;
}

static int write_file(const char *path, const char *text, scv_err *err)
{
    FILE *f = fopen(path, "w");
    if (!f) return scv_err_set(err, SCV_EIO, "%s: cannot create: %s", path, strerror(errno));
    size_t n = strlen(text);
    int bad = fwrite(text, 1, n, f) != n;
    bad |= fclose(f) != 0;
    return bad ? scv_err_set(err, SCV_EIO, "%s: write failed", path) : SCV_OK;
}

int svc_submit(svc_state *s, const char *job, long long resume_run, long long *sub_id, scv_err *err)
{
    pthread_mutex_lock(&s->jobs_mu);
    int rc = SCV_OK, queued = 0;
    for (size_t i = 0; i < s->n_subs; i++) queued += s->subs[i].state == SUB_QUEUED;
    if (queued >= s->cfg.max_queue) {
        rc = scv_err_set(err, SCV_ERANGE, "the queue is full (%d submissions wait); try again later", queued);
        goto out;
    }
    if (s->n_subs == s->cap_subs) {
        size_t c = s->cap_subs ? 2 * s->cap_subs : 16;
        svc_sub *a = realloc(s->subs, c * sizeof *a);
        if (!a) {
            rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
            goto out;
        }
        s->subs = a, s->cap_subs = c;
    }
    svc_sub *u = &s->subs[s->n_subs];
    memset(u, 0, sizeof *u);
    u->id = ++s->next_sub;
    u->resume_run = resume_run;
    u->run_id = resume_run;
    u->submitted = wall_now();
    /* unique across restarts of the service on the same store */
    snprintf(u->tag, sizeof u->tag, "s%lld-%ld-%lld", u->id, (long)getpid(), (long long)time(NULL));
    snprintf(u->log_path, sizeof u->log_path, "%s/logs/%s.log", s->cfg.work_dir, u->tag);
    if (job) {
        snprintf(u->job_path, sizeof u->job_path, "%s/jobs/%s.json", s->cfg.work_dir, u->tag);
        snprintf(u->report_dir, sizeof u->report_dir, "%s/reports/%s", s->cfg.work_dir, u->tag);
        if ((rc = write_file(u->job_path, job, err))) goto out;
    }
    s->n_subs++;
    *sub_id = u->id;
out:
    pthread_mutex_unlock(&s->jobs_mu);
    return rc;
}

int svc_stop_sub(svc_state *s, long long id, scv_err *err)
{
    pthread_mutex_lock(&s->jobs_mu);
    svc_sub *u = find_sub(s, id);
    int rc = SCV_OK;
    if (!u) rc = scv_err_set(err, SCV_ENOTFOUND, "no submission %lld", id);
    else if (u->state == SUB_QUEUED) {
        u->state = SUB_STOPPED;
        u->ended = wall_now();
        snprintf(u->error, sizeof u->error, "stopped before it started");
    } else if (u->state == SUB_RUNNING) {
        u->stop_requested = 1;
        if (kill(-u->pid, SIGINT) && errno != ESRCH)
            rc = scv_err_set(err, SCV_EIO, "cannot signal the run's processes: %s", strerror(errno));
    } else {
        rc = scv_err_set(err, SCV_EINVAL, "submission %lld is not queued or running (%s)", id, svc_sub_state_name(u->state));
    }
    pthread_mutex_unlock(&s->jobs_mu);
    return rc;
}

static void sub_json(cJSON *a, const svc_sub *u)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return;
    cJSON_AddNumberToObject(o, "id", (double)u->id);
    cJSON_AddStringToObject(o, "state", svc_sub_state_name(u->state));
    if (u->run_id) cJSON_AddNumberToObject(o, "run", (double)u->run_id);
    else cJSON_AddNullToObject(o, "run");
    if (u->resume_run) cJSON_AddNumberToObject(o, "resumes", (double)u->resume_run);
    cJSON_AddNumberToObject(o, "submitted", u->submitted);
    if (u->started > 0) cJSON_AddNumberToObject(o, "started", u->started);
    if (u->ended > 0) cJSON_AddNumberToObject(o, "ended", u->ended);
    if (u->state >= SUB_DONE && u->started > 0) cJSON_AddNumberToObject(o, "exit_code", u->exit_code);
    if (u->error[0]) cJSON_AddStringToObject(o, "error", u->error);
    cJSON_AddItemToArray(a, o);
}

char *svc_sub_json(svc_state *s, long long id)
{
    pthread_mutex_lock(&s->jobs_mu);
    svc_sub *u = find_sub(s, id);
    char *out = NULL;
    if (u) {
        cJSON *a = cJSON_CreateArray();
        if (a) {
            sub_json(a, u);
            cJSON *o = cJSON_GetArrayItem(a, 0);
            out = o ? cJSON_PrintUnformatted(o) : NULL;
            cJSON_Delete(a);
        }
    }
    pthread_mutex_unlock(&s->jobs_mu);
    return out;
}

char *svc_subs_json(svc_state *s)
{
    pthread_mutex_lock(&s->jobs_mu);
    cJSON *o = cJSON_CreateObject(), *a = cJSON_CreateArray();
    char *out = NULL;
    if (o && a) {
        for (size_t i = s->n_subs; i-- > 0;) sub_json(a, &s->subs[i]); /* newest first */
        cJSON_AddItemToObject(o, "submissions", a);
        a = NULL;
        cJSON_AddNumberToObject(o, "max_runs", s->cfg.max_runs);
        out = cJSON_PrintUnformatted(o);
    }
    cJSON_Delete(a);
    cJSON_Delete(o);
    pthread_mutex_unlock(&s->jobs_mu);
    return out;
}

/* The last non-empty line of a child's log (why it failed). */
static void last_line(const char *path, char *buf, size_t cap)
{
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return;
    char tail[4096];
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        fseek(f, n > (long)sizeof tail - 1 ? n - (long)sizeof tail + 1 : 0, SEEK_SET);
    }
    size_t len = fread(tail, 1, sizeof tail - 1, f);
    fclose(f);
    tail[len] = 0;
    while (len && (tail[len - 1] == '\n' || tail[len - 1] == '\r' || tail[len - 1] == ' ')) tail[--len] = 0;
    char *nl = strrchr(tail, '\n'), *cr = nl ? strrchr(nl, '\r') : strrchr(tail, '\r');
    const char *l = cr ? cr + 1 : nl ? nl + 1 : tail;
    size_t n = strlen(l) < cap - 1 ? strlen(l) : cap - 1;
    memcpy(buf, l, n);
    buf[n] = 0;
}

/* Starts u: fork, its own process group, stdout and stderr to its log, execv. jobs_mu held. */
static void spawn(svc_state *s, svc_sub *u)
{
    char rid[32];
    snprintf(rid, sizeof rid, "%lld", u->resume_run);
    char *argv[12];
    int n = 0;
    argv[n++] = s->cfg.exe;
    argv[n++] = "run";
    if (u->resume_run) {
        argv[n++] = "--resume";
        argv[n++] = rid;
    } else {
        argv[n++] = u->job_path;
        argv[n++] = "--report";
        argv[n++] = u->report_dir;
    }
    argv[n++] = "--db";
    argv[n++] = s->cfg.db;
    argv[n] = NULL;
    int fd = open(u->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        u->state = SUB_FAILED;
        snprintf(u->error, sizeof u->error, "%.300s: cannot create: %.100s", u->log_path, strerror(errno));
        return;
    }
    pid_t pid = fork();
    if (pid == 0) { /* the child: async-signal-safe calls only until execv */
        setpgid(0, 0);
        /* the service blocks SIGINT and SIGTERM (its main thread waits for them) and ignores
         * SIGPIPE: the run gets the defaults back, so that stopping it works */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) dup2(nul, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        for (int i = 3; i < 1024; i++) close(i);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fd);
    if (pid < 0) {
        u->state = SUB_FAILED;
        snprintf(u->error, sizeof u->error, "cannot start the run: %s", strerror(errno));
        return;
    }
    setpgid(pid, pid); /* also here: no signal can miss the group */
    u->pid = pid;
    u->state = SUB_RUNNING;
    u->started = wall_now();
}

static void *manager(void *arg)
{
    svc_state *s = arg;
    while (!s->stopping) {
        pthread_mutex_lock(&s->jobs_mu);
        int running = 0;
        for (size_t i = 0; i < s->n_subs; i++) {
            svc_sub *u = &s->subs[i];
            if (u->state != SUB_RUNNING) continue;
            int st;
            pid_t w = waitpid(u->pid, &st, WNOHANG);
            if (w == u->pid) {
                u->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                u->ended = wall_now();
                u->state = u->exit_code == 0                          ? SUB_DONE
                           : u->exit_code == 130 || u->stop_requested ? SUB_STOPPED
                           : u->exit_code == 2                        ? SUB_REJECTED
                                                                      : SUB_FAILED;
                if (u->exit_code) last_line(u->log_path, u->error, sizeof u->error);
            } else {
                running++;
            }
            if (!u->run_id && u->report_dir[0]) { /* the run it created, once it did */
                long long id = 0;
                pthread_mutex_lock(&s->store_mu);
                scv_store_run_by_job_field(s->store, "report", u->report_dir, &id, NULL);
                pthread_mutex_unlock(&s->store_mu);
                u->run_id = id;
            }
        }
        for (size_t i = 0; i < s->n_subs && running < s->cfg.max_runs; i++)
            if (s->subs[i].state == SUB_QUEUED) {
                spawn(s, &s->subs[i]);
                running += s->subs[i].state == SUB_RUNNING;
            }
        pthread_mutex_unlock(&s->jobs_mu);
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static int mkdir_p(const char *dir, scv_err *err)
{
    if (mkdir(dir, 0700) && errno != EEXIST) return scv_err_set(err, SCV_EIO, "%s: cannot create: %s", dir, strerror(errno));
    return SCV_OK;
}

int svc_jobs_start(svc_state *s, scv_err *err)
{
    char d[1200];
    int rc = mkdir_p(s->cfg.work_dir, err);
    const char *subdirs[] = {"jobs", "logs", "reports"};
    for (int i = 0; i < 3 && !rc; i++) {
        snprintf(d, sizeof d, "%s/%s", s->cfg.work_dir, subdirs[i]);
        rc = mkdir_p(d, err);
    }
    if (rc) return rc;
    if (pthread_create(&s->manager, NULL, manager, s))
        return scv_err_set(err, SCV_EINTERNAL, "cannot start the job manager thread");
    s->manager_started = 1;
    return SCV_OK;
}

/* Stops the manager, then the running children (SIGINT: they checkpoint and are stored as
 * interrupted), waiting up to wait_s for them before SIGKILL. */
void svc_jobs_stop(svc_state *s, double wait_s)
{
    s->stopping = 1;
    if (s->manager_started) pthread_join(s->manager, NULL);
    s->manager_started = 0;
    pthread_mutex_lock(&s->jobs_mu);
    for (size_t i = 0; i < s->n_subs; i++)
        if (s->subs[i].state == SUB_RUNNING) kill(-s->subs[i].pid, SIGINT);
    double t0 = scv_now();
    for (;;) {
        int left = 0;
        for (size_t i = 0; i < s->n_subs; i++) {
            svc_sub *u = &s->subs[i];
            if (u->state != SUB_RUNNING) continue;
            int st;
            if (waitpid(u->pid, &st, WNOHANG) == u->pid) u->state = SUB_STOPPED;
            else if (scv_now() - t0 > wait_s) {
                kill(-u->pid, SIGKILL);
                waitpid(u->pid, &st, 0);
                u->state = SUB_STOPPED;
            } else left++;
        }
        if (!left) break;
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    pthread_mutex_unlock(&s->jobs_mu);
}
