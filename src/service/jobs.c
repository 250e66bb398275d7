/*
 * jobs.c - the service's submitted runs. A job arrives as the JSON object `scavenger run
 * JOB.json` reads, checked by svc_job_check() (jobs_check.c: errors name the field, and a
 * well-formed job that cannot run here is refused too). svc_submit() queues it; a manager
 * thread starts at most max_runs `scavenger run` children at a time (fork, its own process
 * group, execv with an argv array: no shell ever sees a request's text), reaps them, and
 * finds the run each one created in the store by its report directory (a setting only the
 * service gives).
 * Stopping sends SIGINT to the child's process group, as Ctrl-C does in a terminal: the
 * run checkpoints, is stored as interrupted and can be resumed (another child with
 * `--resume ID`).
 * The submissions are saved in WORK_DIR/submissions.json (atomically, under jobs_mu) on
 * every change and reloaded on start: the queued ones queue again in order with their ids;
 * one that was running when the service ended is stopped (a child still alive after a
 * crash gets SIGINT, as a clean stop would have sent it, and SIGKILL 30 s later) and its
 * run can be resumed; finished ones keep their state. A damaged file stops the start with
 * an error naming it and is never overwritten. WORK_DIR/lock keeps a second service off
 * the same store.
 */
#define _GNU_SOURCE
#include "service.h"
#include "../core/util.h"
#include "../core/rundir.h"
#include "../io/json_out.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *svc_sub_state_name(svc_sub_state s)
{
    static const char *const names[] = {"queued", "running", "done", "failed", "stopped", "rejected"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

/* wall clock, s since the epoch (what the dashboard shows) */
static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
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

int svc_sub_log_path(svc_state *s, long long run, char *buf, size_t cap)
{
    int found = 0;
    pthread_mutex_lock(&s->jobs_mu);
    for (size_t i = 0; i < s->n_subs; i++) {
        const svc_sub *u = &s->subs[i];
        if ((u->run_id == run || u->resume_run == run) && u->log_path[0] && u->state != SUB_QUEUED) {
            snprintf(buf, cap, "%s", u->log_path); /* the newest wins */
            found = 1;
        }
    }
    pthread_mutex_unlock(&s->jobs_mu);
    return found;
}

int svc_run_path(const svc_config *cfg, long long run_id, const char *name, char *buf, size_t cap)
{
    char runs[1100];
    int rc = scv_runs_dir_path(cfg->db, runs, sizeof runs, NULL);
    return rc ? rc : scv_run_dir_path(runs, run_id, name, buf, cap, NULL);
}

/* The report of a run the service started lands in the run's own folder (DB.runs/ID, beside
 * its segment files, where `scavenger run` puts a report by default): the child was given
 * --report WORK_DIR/reports/TAG (the tag by which the service finds the run it created), so
 * once the run exists that name becomes a link to DB.runs/ID. The child makes the directory
 * ready before it trains (an empty directory then: `run --report`'s check, issue 38 item 8):
 * an empty directory is replaced by the link. The report is written when the run ends, long
 * after the manager (every 100 ms) found the run; a directory that holds files already
 * stays, and the report with it (the stored job names it either way). */
static void link_report_dir(svc_state *s, const svc_sub *u)
{
    char run_dir[1200];
    struct stat st, rs;
    if (!u->report_dir[0] || !u->run_id) return;
    if (svc_run_path(&s->cfg, u->run_id, NULL, run_dir, sizeof run_dir)) return;
    if (stat(run_dir, &rs) != 0 || !S_ISDIR(rs.st_mode)) return;
    if (lstat(u->report_dir, &st) == 0 && (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode) || rmdir(u->report_dir) != 0))
        return; /* linked already, or not an empty directory */
    (void)!symlink(run_dir, u->report_dir);
}

/* The job file: atomically (a temporary file, fsync, rename), as a queued submission that
 * survives a crash needs it whole. */
static int write_file(const char *path, const char *text, scv_err *err)
{
    scv_iov part = {text, strlen(text)};
    return scv_write_atomic(path, &part, 1, err);
}

/* ---- the saved submissions (WORK_DIR/submissions.json) ---- */

#define STATE_VERSION 1
#define STATE_MAX_BYTES (64u << 20)
#define KEEP_FINISHED 1000          /* finished submissions kept (the oldest go first) */
#define ORPHAN_GRACE_S 30.0         /* SIGINT, then SIGKILL this much later */

/* A process's start time in clock ticks since boot (/proc/PID/stat field 22); -1 if none. */
static long long proc_start(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
    if (!p) return -1;
    p++;
    for (int field = 3; field < 22 && *p; field++) { /* skip fields 3 (the state) to 21 */
        while (*p == ' ') p++;
        while (*p && *p != ' ') p++;
    }
    char *e = NULL;
    long long v = strtoll(p, &e, 10);
    return e != p && v >= 0 ? v : -1;
}

/* The process group pgid still has a live member. Not kill(-pgid, 0): after a crash the
 * run's processes are not this service's children, and one that exited stays a zombie
 * member of its group until init reaps it, which may take seconds. */
static int group_alive(pid_t pgid)
{
    if (pgid <= 1 || (kill(-pgid, 0) && errno == ESRCH)) return 0;
    DIR *d = opendir("/proc");
    if (!d) return 1; /* no /proc: the signal's answer */
    int alive = 0;
    for (struct dirent *e; !alive && (e = readdir(d));) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%.20s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        const char *p = strrchr(buf, ')');
        char state;
        long ppid, pgrp;
        if (p && sscanf(p + 1, " %c %ld %ld", &state, &ppid, &pgrp) == 3 && pgrp == pgid && state != 'Z' && state != 'X')
            alive = 1;
    }
    closedir(d);
    return alive;
}

static void read_boot_id(char *buf, size_t cap)
{
    buf[0] = 0;
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f) return;
    if (!fgets(buf, (int)cap, f)) buf[0] = 0;
    fclose(f);
    buf[strcspn(buf, "\r\n")] = 0;
}

/* A string field of the state file, after a comma. */
static void jstr(FILE *f, const char *name, const char *v)
{
    fprintf(f, ",\"%s\":", name);
    scv_json_str(f, v);
}

/* Writes every submission to the state file atomically. jobs_mu held. */
static int save_state(svc_state *s, scv_err *err)
{
    if (!s->state_loaded) return SCV_OK; /* never over a file that was not read */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return scv_err_set(err, SCV_ENOMEM, "%s: out of memory", s->state_file);
    fprintf(f, "{\"version\":%d,\"next_sub\":%lld", STATE_VERSION, s->next_sub);
    jstr(f, "boot_id", s->boot_id);
    fputs(",\"submissions\":[", f);
    for (size_t i = 0; i < s->n_subs; i++) {
        const svc_sub *u = &s->subs[i];
        fprintf(f, "%s\n{\"id\":%lld", i ? "," : "", u->id);
        jstr(f, "state", svc_sub_state_name(u->state));
        fprintf(f, ",\"run\":%lld,\"resumes\":%lld,\"submitted\":%.17g,\"started\":%.17g,\"ended\":%.17g", u->run_id,
                u->resume_run, u->submitted, u->started, u->ended);
        fprintf(f, ",\"exit_code\":%d,\"stop_requested\":%d,\"pid\":%ld,\"pid_start\":%lld", u->exit_code,
                u->stop_requested, (long)u->pid, u->pid_start);
        jstr(f, "tag", u->tag);
        jstr(f, "job_path", u->job_path);
        jstr(f, "log_path", u->log_path);
        jstr(f, "report_dir", u->report_dir);
        jstr(f, "error", u->error);
        if (u->resume_budget[0]) jstr(f, "resume_budget", u->resume_budget);
        fputc('}', f);
    }
    fputs("]}\n", f);
    int bad = ferror(f);
    if (fclose(f) || bad || !buf) {
        free(buf);
        return scv_err_set(err, SCV_ENOMEM, "%s: out of memory", s->state_file);
    }
    scv_iov part = {buf, len};
    int rc = scv_write_atomic(s->state_file, &part, 1, err);
    free(buf);
    return rc;
}

/* Saves; a failure is reported once (per message) and retried by the manager. jobs_mu held. */
static void persist(svc_state *s)
{
    scv_err e = {0};
    if (save_state(s, &e)) {
        s->state_dirty = 1;
        if (strcmp(e.msg, s->state_err)) {
            fprintf(stderr, "scavenger serve: cannot save the submissions: %s (retrying)\n", e.msg);
            snprintf(s->state_err, sizeof s->state_err, "%s", e.msg);
        }
        return;
    }
    if (s->state_dirty && s->state_err[0]) fprintf(stderr, "scavenger serve: %s: saved again\n", s->state_file);
    s->state_dirty = 0;
    s->state_err[0] = 0;
}

/* One saved submission into u; an error names the file, the entry and the field. */
static int load_sub(const char *file, const cJSON *o, size_t i, svc_sub *u, scv_err *err)
{
    memset(u, 0, sizeof *u);
#define BAD(field, why) scv_err_set(err, SCV_ECORRUPT, "%s: submissions[%zu].%s: %s", file, i, field, why)
    if (!cJSON_IsObject(o)) return scv_err_set(err, SCV_ECORRUPT, "%s: submissions[%zu]: not an object", file, i);
    static const char *const nums[] = {"id", "run", "resumes", "submitted", "started", "ended", "exit_code",
                                       "stop_requested", "pid", "pid_start"};
    double v[10];
    for (int k = 0; k < 10; k++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, nums[k]);
        if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble)) return BAD(nums[k], "missing or not a finite number");
        v[k] = x->valuedouble;
        int whole = k < 3 || k >= 6;
        if (whole && (v[k] != floor(v[k]) || fabs(v[k]) > 1e15)) return BAD(nums[k], "not an integer");
        if (k != 6 && k != 9 && v[k] < 0) return BAD(nums[k], "negative");
    }
    if (v[0] < 1) return BAD("id", "not a submission number (1, 2, ...)");
    if (v[8] > INT_MAX) return BAD("pid", "out of range");
    if (v[6] < -1 || v[6] > 255) return BAD("exit_code", "out of range (-1: not known, else 0 to 255)");
    u->id = (long long)v[0], u->run_id = (long long)v[1], u->resume_run = (long long)v[2];
    u->submitted = v[3], u->started = v[4], u->ended = v[5];
    u->exit_code = (int)v[6], u->stop_requested = v[7] != 0, u->pid = (pid_t)v[8], u->pid_start = (long long)v[9];
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "state");
    int state = -1;
    for (int k = SUB_QUEUED; k <= SUB_REJECTED && cJSON_IsString(st); k++)
        if (!strcmp(st->valuestring, svc_sub_state_name((svc_sub_state)k))) state = k;
    if (state < 0) return BAD("state", "missing or not one of queued, running, done, failed, stopped, rejected");
    u->state = (svc_sub_state)state;
    struct {
        const char *name;
        char *buf;
        size_t cap;
    } strs[] = {{"tag", u->tag, sizeof u->tag}, {"job_path", u->job_path, sizeof u->job_path},
                {"log_path", u->log_path, sizeof u->log_path}, {"report_dir", u->report_dir, sizeof u->report_dir},
                {"error", u->error, sizeof u->error}};
    for (size_t k = 0; k < sizeof strs / sizeof strs[0]; k++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, strs[k].name);
        if (!cJSON_IsString(x)) return BAD(strs[k].name, "missing or not a string");
        if (strlen(x->valuestring) >= strs[k].cap) return BAD(strs[k].name, "too long");
        snprintf(strs[k].buf, strs[k].cap, "%s", x->valuestring);
    }
    const cJSON *rb = cJSON_GetObjectItemCaseSensitive(o, "resume_budget"); /* optional: a resume's new budget */
    if (rb) {
        char *e = NULL;
        double d = cJSON_IsString(rb) ? strtod(rb->valuestring, &e) : NAN;
        if (!e || e == rb->valuestring || *e || !(d > 0) || !isfinite(d) || strlen(rb->valuestring) >= sizeof u->resume_budget)
            return BAD("resume_budget", "not a number of dollars above 0 (as a string)");
        snprintf(u->resume_budget, sizeof u->resume_budget, "%s", rb->valuestring);
    }
    if (!u->tag[0] || !u->log_path[0]) return BAD(u->tag[0] ? "log_path" : "tag", "empty");
    if (!u->resume_run && (!u->job_path[0] || !u->report_dir[0]))
        return BAD(u->job_path[0] ? "report_dir" : "job_path", "empty (a new run needs its job file and report directory)");
    if (u->state == SUB_RUNNING && u->pid < 2) return BAD("pid", "a running submission without its process");
#undef BAD
    return SCV_OK;
}

/* Reads the state file (absent: no submissions yet). Nothing is changed when it fails. */
static int load_state(svc_state *s, scv_err *err)
{
    const char *file = s->state_file;
    FILE *f = fopen(file, "r");
    if (!f) {
        if (errno == ENOENT) return SCV_OK;
        return scv_err_set(err, SCV_EIO, "%s: cannot read: %s (the service's saved submissions)", file, strerror(errno));
    }
    struct stat st;
    size_t want = fstat(fileno(f), &st) == 0 && st.st_size >= 0 && (size_t)st.st_size < STATE_MAX_BYTES
                      ? (size_t)st.st_size + 1 : STATE_MAX_BYTES + 1;
    char *text = malloc(want + 1);
    size_t n = text ? fread(text, 1, want, f) : 0;
    int rerr = ferror(f);
    fclose(f);
    if (!text) return scv_err_set(err, SCV_ENOMEM, "%s: out of memory", file);
    if (rerr) {
        free(text);
        return scv_err_set(err, SCV_EIO, "%s: read error (the service's saved submissions)", file);
    }
    if (n > STATE_MAX_BYTES) {
        free(text);
        return scv_err_set(err, SCV_ECORRUPT, "%s: larger than %u bytes: not a state file of this service", file,
                           STATE_MAX_BYTES);
    }
    text[n] = 0;
    const char *end = NULL;
    cJSON *o = strlen(text) == n ? cJSON_ParseWithOpts(text, &end, 1) : NULL;
    free(text);
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(o, "version"),
                *next = cJSON_GetObjectItemCaseSensitive(o, "next_sub"),
                *boot = cJSON_GetObjectItemCaseSensitive(o, "boot_id"),
                *arr = cJSON_GetObjectItemCaseSensitive(o, "submissions");
    int rc = SCV_OK;
    if (!cJSON_IsObject(o)) rc = scv_err_set(err, SCV_ECORRUPT, "%s: not a JSON object (damaged or truncated)", file);
    else if (!cJSON_IsNumber(ver) || ver->valuedouble != STATE_VERSION)
        rc = scv_err_set(err, SCV_ECORRUPT, "%s: field 'version': expected %d", file, STATE_VERSION);
    else if (!cJSON_IsNumber(next) || !(next->valuedouble >= 0 && next->valuedouble <= 1e15) ||
             next->valuedouble != floor(next->valuedouble))
        rc = scv_err_set(err, SCV_ECORRUPT, "%s: field 'next_sub': expected an integer >= 0", file);
    else if (!cJSON_IsString(boot))
        rc = scv_err_set(err, SCV_ECORRUPT, "%s: field 'boot_id': expected a string", file);
    else if (!cJSON_IsArray(arr))
        rc = scv_err_set(err, SCV_ECORRUPT, "%s: field 'submissions': expected an array", file);
    size_t cnt = rc ? 0 : (size_t)cJSON_GetArraySize(arr);
    svc_sub *subs = cnt ? calloc(cnt, sizeof *subs) : NULL;
    if (cnt && !subs) rc = scv_err_set(err, SCV_ENOMEM, "%s: out of memory", file);
    long long next_sub = rc ? 0 : (long long)next->valuedouble;
    int same_boot = !rc && s->boot_id[0] && !strcmp(boot->valuestring, s->boot_id);
    size_t i = 0;
    for (const cJSON *x = rc ? NULL : arr->child; x && !rc; x = x->next, i++) {
        rc = load_sub(file, x, i, &subs[i], err);
        for (size_t j = 0; j < i && !rc; j++)
            if (subs[j].id == subs[i].id)
                rc = scv_err_set(err, SCV_ECORRUPT, "%s: submissions[%zu].id: %lld is given twice", file, i, subs[i].id);
        if (!rc && subs[i].id > next_sub) next_sub = subs[i].id;
    }
    cJSON_Delete(o);
    if (rc) {
        free(subs);
        return rc;
    }
    /* the runs that were running: still alive (a crash: this service is not their parent),
     * or ended with the service */
    for (i = 0; i < cnt; i++) {
        svc_sub *u = &subs[i];
        if (u->state != SUB_RUNNING) continue;
        long long st = same_boot ? proc_start(u->pid) : -1;
        u->orphan = same_boot && (st == u->pid_start || (st < 0 && group_alive(u->pid)));
        if (!u->orphan) {
            u->state = SUB_STOPPED;
            u->exit_code = -1;
            if (!u->ended) u->ended = wall_now();
            snprintf(u->error, sizeof u->error, "the service ended while this run trained: resume it");
        }
    }
    free(s->subs);
    s->subs = subs, s->n_subs = s->cap_subs = cnt;
    s->next_sub = next_sub;
    if (cnt && !s->cfg.quiet) {
        int q = 0, o2 = 0;
        for (i = 0; i < cnt; i++) q += subs[i].state == SUB_QUEUED, o2 += subs[i].orphan;
        fprintf(stderr, "scavenger serve: %s: %zu submission(s) reloaded, %d queued%s\n", file, cnt, q,
                o2 ? "; runs left over from a crash are being stopped (SIGINT)" : "");
    }
    return SCV_OK;
}

/* Drops the oldest finished submissions beyond KEEP_FINISHED. jobs_mu held. */
static void prune_finished(svc_state *s)
{
    size_t fin = 0;
    for (size_t i = 0; i < s->n_subs; i++) fin += s->subs[i].state >= SUB_DONE;
    size_t drop = fin > KEEP_FINISHED ? fin - KEEP_FINISHED : 0, w = 0;
    if (!drop) return;
    for (size_t i = 0; i < s->n_subs; i++) {
        if (drop && s->subs[i].state >= SUB_DONE) {
            drop--;
            continue;
        }
        s->subs[w++] = s->subs[i];
    }
    s->n_subs = w;
}

int svc_submit(svc_state *s, const char *job, long long resume_run, const char *budget, long long *sub_id,
               scv_err *err)
{
    pthread_mutex_lock(&s->jobs_mu);
    int rc = SCV_OK, queued = 0;
    for (size_t i = 0; i < s->n_subs; i++) queued += s->subs[i].state == SUB_QUEUED;
    if (queued >= s->cfg.max_queue) {
        rc = scv_err_set(err, SCV_ERANGE, "the queue is full (%d submissions wait); try again later", queued);
        goto out;
    }
    prune_finished(s);
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
    snprintf(u->resume_budget, sizeof u->resume_budget, "%s", budget && resume_run ? budget : "");
    u->submitted = wall_now();
    /* unique across restarts of the service on the same store */
    snprintf(u->tag, sizeof u->tag, "s%lld-%ld-%lld", u->id, (long)getpid(), (long long)time(NULL));
    snprintf(u->log_path, sizeof u->log_path, "%s/logs/%s.log", s->cfg.work_dir, u->tag);
    if (job) {
        snprintf(u->job_path, sizeof u->job_path, "%s/jobs/%s.json", s->cfg.work_dir, u->tag);
        snprintf(u->report_dir, sizeof u->report_dir, "%s/reports/%s", s->cfg.work_dir, u->tag);
        if ((rc = write_file(u->job_path, job, err))) {
            s->next_sub--;
            goto out;
        }
    }
    s->n_subs++;
    /* accepted only once it is saved: a submission the service answered 202 survives a restart */
    if ((rc = save_state(s, err))) {
        s->n_subs--;
        s->next_sub--;
        if (job) unlink(u->job_path);
        goto out;
    }
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
        persist(s);
    } else if (u->state == SUB_RUNNING) {
        u->stop_requested = 1;
        if (u->orphan && !u->orphan_signalled) u->orphan_signalled = scv_now();
        if (kill(-u->pid, SIGINT) && errno != ESRCH)
            rc = scv_err_set(err, SCV_EIO, "cannot signal the run's processes: %s", strerror(errno));
        persist(s);
    } else {
        rc = scv_err_set(err, SCV_EINVAL, "submission %lld is not queued or running (%s)", id, svc_sub_state_name(u->state));
    }
    pthread_mutex_unlock(&s->jobs_mu);
    return rc;
}

static void sub_json(cJSON *a, const svc_sub *u, int full)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return;
    cJSON_AddNumberToObject(o, "id", (double)u->id);
    cJSON_AddStringToObject(o, "state", svc_sub_state_name(u->state));
    if (u->run_id) cJSON_AddNumberToObject(o, "run", (double)u->run_id);
    else cJSON_AddNullToObject(o, "run");
    if (u->resume_run) cJSON_AddNumberToObject(o, "resumes", (double)u->resume_run);
    if (u->resume_budget[0]) cJSON_AddNumberToObject(o, "budget", strtod(u->resume_budget, NULL));
    cJSON_AddNumberToObject(o, "submitted", u->submitted);
    if (u->started > 0) cJSON_AddNumberToObject(o, "started", u->started);
    if (u->ended > 0) cJSON_AddNumberToObject(o, "ended", u->ended);
    if (u->state >= SUB_DONE && u->started > 0) {
        if (u->exit_code >= 0) cJSON_AddNumberToObject(o, "exit_code", u->exit_code);
        else cJSON_AddNullToObject(o, "exit_code"); /* ended with the service: not known */
    }
    if (u->error[0]) {
        char e[sizeof u->error];
        memcpy(e, u->error, sizeof e);
        if (!full) svc_scrub_quoted(e);
        cJSON_AddStringToObject(o, "error", e);
    }
    cJSON_AddItemToArray(a, o);
}

char *svc_sub_json(svc_state *s, long long id, int full)
{
    pthread_mutex_lock(&s->jobs_mu);
    svc_sub *u = find_sub(s, id);
    char *out = NULL;
    if (u) {
        cJSON *a = cJSON_CreateArray();
        if (a) {
            sub_json(a, u, full);
            cJSON *o = cJSON_GetArrayItem(a, 0);
            out = o ? cJSON_PrintUnformatted(o) : NULL;
            cJSON_Delete(a);
        }
    }
    pthread_mutex_unlock(&s->jobs_mu);
    return out;
}

char *svc_subs_json(svc_state *s, int full)
{
    pthread_mutex_lock(&s->jobs_mu);
    cJSON *o = cJSON_CreateObject(), *a = cJSON_CreateArray();
    char *out = NULL;
    if (o && a) {
        for (size_t i = s->n_subs; i-- > 0;) sub_json(a, &s->subs[i], full); /* newest first */
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

void svc_scrub_quoted(char *text)
{
    char *w = text;
    for (const char *r = text; *r;) {
        const char *end = *r == '`' ? strchr(r + 1, '`') : NULL;
        if (!end) {
            *w++ = *r++;
            continue;
        }
        size_t span = (size_t)(end + 1 - r); /* the quoted span, backquotes included */
        const char *put = span >= strlen("`" SVC_HIDDEN "`") ? "`" SVC_HIDDEN "`" : span >= 5 ? "`...`" : "``";
        size_t n = strlen(put) < span ? strlen(put) : span;
        memmove(w, put, n); /* w <= r: never past what was read */
        w += n, r = end + 1;
    }
    *w = 0;
}

/* Why a child failed, from its log: its last lines (at most LOG_REASON_LINES, newest last,
 * joined by newlines), without a usage error's hint ("usage: ..." and "Try 'scavenger run
 * --help'.", which say nothing about the job) and without progress lines overwritten by \r. */
#define LOG_REASON_LINES 3
static void log_reason(const char *path, char *buf, size_t cap)
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
    const char *keep[LOG_REASON_LINES];
    int nk = 0;
    char *save = NULL;
    for (char *l = strtok_r(tail, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *cr = strrchr(l, '\r');
        if (cr && cr[1]) l = cr + 1; /* a progress line: what was drawn last */
        size_t n = strlen(l);
        while (n && (l[n - 1] == '\r' || l[n - 1] == ' ')) l[--n] = 0;
        if (!n || !strncmp(l, "usage: ", 7) || !strncmp(l, "Try '", 5)) continue;
        if (nk == LOG_REASON_LINES) memmove(keep, keep + 1, sizeof keep[0] * --nk);
        keep[nk++] = l;
    }
    size_t used = 0;
    for (int i = 0; i < nk; i++) { /* the newest lines matter most: older ones go first when long */
        size_t total = 0;
        for (int k = i; k < nk; k++) total += strlen(keep[k]) + 1;
        if (total > cap && i < nk - 1) continue;
        int w = snprintf(buf + used, cap - used, "%s%s", used ? "\n" : "", keep[i]);
        if (w < 0 || (size_t)w >= cap - used) break;
        used += (size_t)w;
    }
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
        if (u->resume_budget[0]) { /* a budget-stopped run goes on with a larger one */
            argv[n++] = "--budget";
            argv[n++] = u->resume_budget;
        }
    } else {
        argv[n++] = u->job_path;
        argv[n++] = "--report";
        argv[n++] = u->report_dir;
    }
    argv[n++] = "--db";
    argv[n++] = s->cfg.db;
    if (s->cfg.host_limits[0]) { /* after a resume's stored job: the operator's bound wins */
        argv[n++] = "--host-limits";
        argv[n++] = s->cfg.host_limits;
    }
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
    u->pid_start = proc_start(pid);
    u->state = SUB_RUNNING;
    u->started = wall_now();
}

/* A run left over from a crashed service (not our child, so not waitable): SIGINT to its
 * process group, as a clean stop sends, then SIGKILL after ORPHAN_GRACE_S; once the group
 * is gone the submission is stopped and its run can be resumed. Returns 1 while it lives.
 * jobs_mu held. */
static int tend_orphan(svc_sub *u)
{
    double now = scv_now();
    if (group_alive(u->pid) && !(u->orphan_signalled && now - u->orphan_signalled > ORPHAN_GRACE_S + 10)) {
        if (!u->orphan_signalled) {
            u->orphan_signalled = now;
            kill(-u->pid, SIGINT);
        } else if (now - u->orphan_signalled > ORPHAN_GRACE_S) {
            kill(-u->pid, SIGKILL);
        }
        return 1;
    }
    u->state = SUB_STOPPED;
    u->exit_code = -1;
    u->ended = wall_now();
    u->orphan = 0;
    snprintf(u->error, sizeof u->error, "the service ended while this run trained; its processes were stopped on "
             "restart: resume it");
    return 0;
}

static void *manager(void *arg)
{
    svc_state *s = arg;
    while (!s->stopping) {
        pthread_mutex_lock(&s->jobs_mu);
        int running = 0, changed = 0;
        for (size_t i = 0; i < s->n_subs; i++) {
            svc_sub *u = &s->subs[i];
            if (u->state != SUB_RUNNING) continue;
            int st;
            if (u->orphan) {
                if (tend_orphan(u)) running++;
                else changed = 1;
            } else if (waitpid(u->pid, &st, WNOHANG) == u->pid) {
                u->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                u->ended = wall_now();
                u->state = u->exit_code == 0                          ? SUB_DONE
                           : u->exit_code == 130 || u->stop_requested ? SUB_STOPPED
                           : u->exit_code == 2                        ? SUB_REJECTED
                                                                      : SUB_FAILED;
                if (u->exit_code) log_reason(u->log_path, u->error, sizeof u->error);
                changed = 1;
            } else {
                running++;
            }
            if (!u->run_id && u->report_dir[0]) { /* the run it created, once it did */
                long long id = 0;
                pthread_mutex_lock(&s->store_mu);
                scv_store_run_by_job_field(s->store, "report", u->report_dir, &id, NULL);
                pthread_mutex_unlock(&s->store_mu);
                u->run_id = id;
                changed |= id != 0;
            }
            if (u->run_id && !u->resume_run) link_report_dir(s, u);
        }
        for (size_t i = 0; i < s->n_subs && running < s->cfg.max_runs; i++)
            if (s->subs[i].state == SUB_QUEUED) {
                spawn(s, &s->subs[i]);
                running += s->subs[i].state == SUB_RUNNING;
                changed = 1;
            }
        if (changed || s->state_dirty) persist(s);
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
    /* one service per store: a second would run the same queue */
    snprintf(d, sizeof d, "%s/lock", s->cfg.work_dir);
    int fd = open(d, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return scv_err_set(err, SCV_EIO, "%s: cannot create: %s", d, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB)) {
        int e = errno;
        close(fd);
        return e == EWOULDBLOCK ? scv_err_set(err, SCV_EIO, "%s: another scavenger serve uses the store %s", d, s->cfg.db)
                                : scv_err_set(err, SCV_EIO, "%s: cannot lock: %s", d, strerror(e));
    }
    s->lock_fd = fd, s->have_lock = 1;
    read_boot_id(s->boot_id, sizeof s->boot_id);
    snprintf(s->state_file, sizeof s->state_file, "%s/submissions.json", s->cfg.work_dir);
    if ((rc = load_state(s, err))) return rc;
    s->state_loaded = 1;
    /* the runs of submissions that ended with the service, found now */
    pthread_mutex_lock(&s->jobs_mu);
    for (size_t i = 0; i < s->n_subs; i++) {
        svc_sub *u = &s->subs[i];
        if (!u->run_id && u->report_dir[0] && u->state != SUB_QUEUED) {
            pthread_mutex_lock(&s->store_mu);
            scv_store_run_by_job_field(s->store, "report", u->report_dir, &u->run_id, NULL);
            pthread_mutex_unlock(&s->store_mu);
        }
    }
    rc = save_state(s, err); /* what was reloaded, with the runs that ended with the service stopped */
    pthread_mutex_unlock(&s->jobs_mu);
    if (rc) return rc;
    if (pthread_create(&s->manager, NULL, manager, s))
        return scv_err_set(err, SCV_EINTERNAL, "cannot start the job manager thread");
    s->manager_started = 1;
    return SCV_OK;
}

/* Stops the manager, then the running children (SIGINT: they checkpoint and are stored as
 * interrupted), waiting up to wait_s for them before SIGKILL; saves their state (stopped:
 * resumable after a restart) and releases the store's lock. */
void svc_jobs_stop(svc_state *s, double wait_s)
{
    s->stopping = 1;
    if (s->manager_started) pthread_join(s->manager, NULL);
    s->manager_started = 0;
    pthread_mutex_lock(&s->jobs_mu);
    int any = 0;
    for (size_t i = 0; i < s->n_subs; i++)
        if (s->subs[i].state == SUB_RUNNING) {
            kill(-s->subs[i].pid, SIGINT);
            any = 1;
        }
    double t0 = scv_now();
    for (;;) {
        int left = 0;
        for (size_t i = 0; i < s->n_subs; i++) {
            svc_sub *u = &s->subs[i];
            if (u->state != SUB_RUNNING) continue;
            int st = 0, gone = 0;
            if (u->orphan) gone = !group_alive(u->pid);
            else if (waitpid(u->pid, &st, WNOHANG) == u->pid) gone = 2;
            if (!gone && scv_now() - t0 > wait_s) {
                kill(-u->pid, SIGKILL);
                if (!u->orphan && waitpid(u->pid, &st, 0) == u->pid) gone = 2;
                else gone = 1;
            }
            if (!gone) {
                left++;
                continue;
            }
            u->state = SUB_STOPPED;
            u->ended = wall_now();
            u->exit_code = gone == 2 ? (WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st)) : -1;
            snprintf(u->error, sizeof u->error, "stopped with the service: resume it");
        }
        if (!left) break;
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (any || s->state_dirty) persist(s);
    pthread_mutex_unlock(&s->jobs_mu);
    if (s->have_lock) close(s->lock_fd);
    s->have_lock = 0;
}
