/*
 * elastic.c - the elastic job driver (Or et al.'s resizing in place): one `scavenger train
 * --elastic-control DIR` job stays up across segments and configurations. Each segment is
 * a command appended to DIR/cmd; the job applies its K and B in place (a new B at the next
 * iteration; fewer K: the leaving ranks are parked; more: parked ranks are activated or new
 * processes spawned, and the state goes from rank 0 to them in memory), trains until the
 * command's stopping rule, checkpoints, and answers in DIR/reply (train_elastic.c describes the
 * protocol). No checkpoint is read between segments; one is written at the end of every
 * training segment (not after the short warm-up and search ones), every checkpoint_every
 * iterations, when interrupted and when stopped.
 *
 * The job is started at the first segment (and again after a failure: a job whose process
 * died cannot continue without ULFM, so the loop's retry starts a new one from the last
 * checkpoint, as the relaunch driver would). On a cluster the job runs in join mode
 * (launch.c, comm_mpi.c): a worker under a preemption notice leaves the MPI job before its
 * VM's take-down, so a take-down after a notice is survived in place. Segment metrics files, the probe, progress
 * and recovery are the relaunch driver's (trainjob.c). Files: RUN_DIR/elastic/{cmd,reply,
 * job-N.log (attempt N's output; job.log links to the latest)}.
 */
#define _POSIX_C_SOURCE 200809L
#include "child.h"
#include "scv.h"
#include "trainjob.h"
#include "../core/util.h"
#include "../core/rundir.h"
#include "../core/invariant.h"

#include "../runtime/cluster.h"
#include "../runtime/procs.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct elastic {
    scv_job_driver vt;
    trainjob tj;
    char dir[1200], cmd_path[1300], reply_path[1300], log_path[1300];
    pid_t pid;                 /* the running job (0: none) */
    FILE *reply;               /* the reply file, open while a job runs (NULL: not yet) */
    long reply_off;            /* how much of it was read */
    double start_s;            /* seconds the last job start took until it was ready */
    char job_type[64];         /* the VM type the job runs on ("": the driver's own) */
} elastic;

/* SIGINT/SIGTERM while a segment runs: passed on to the job (a terminal's Ctrl-C reaches
 * it anyway, a signal sent to this process alone does not), which stops at its next
 * iteration boundary and checkpoints; the segment then returns SCV_EINTR. */
static volatile sig_atomic_t g_int, g_job;
static void on_signal(int sig)
{
    g_int = 1;
    if (g_job > 0) kill((pid_t)g_job, sig);
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The job's next reply line, if a complete one was written: 1, else 0. */
static int read_reply(elastic *e, char *line, size_t cap)
{
    if (!e->reply && !(e->reply = fopen(e->reply_path, "r"))) return 0;
    clearerr(e->reply);
    int got = 0;
    if (fseek(e->reply, e->reply_off, SEEK_SET) == 0 && fgets(line, (int)cap, e->reply)) {
        size_t n = strlen(line);
        if (n && line[n - 1] == '\n') e->reply_off += (long)n, line[n - 1] = 0, got = 1;
    }
    return got;
}

static void close_reply(elastic *e)
{
    if (e->reply) fclose(e->reply);
    e->reply = NULL, e->reply_off = 0;
}

/* Once the job's process was reaped: the processes it left (its mpirun and ranks, tagged at
 * its start, wherever they were reparented) are ended, and waited for, before anything
 * reads what the job wrote. A job killed without notice loses its processes one at a time:
 * rank 0 may write an iteration's line after the job's own process is gone, and a lost
 * segment's work is stated from the last line (tj_lost_work); nor may a rank left running
 * write beside the retry's job. Then the job is forgotten. */
static void job_reaped(elastic *e)
{
    scv_proc_end_launch_said(e->pid, "the elastic job's", "it");
    e->pid = 0, g_job = 0;
}

/* 1 while the job runs; reaps it (and forgets it, job_reaped) once it has ended. */
static int job_alive(elastic *e, int *status)
{
    if (status) *status = -1;
    if (e->pid <= 0) return 0;
    int st;
    pid_t w = waitpid(e->pid, &st, WNOHANG);
    if (w == 0) return 1;
    if (status) *status = w == e->pid ? (WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st)) : -1;
    job_reaped(e);
    return 0;
}

static int append_cmd(elastic *e, const char *line, scv_err *err)
{
    int fd = open(e->cmd_path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) return scv_err_set(err, SCV_EIO, "%s: cannot open: %s", e->cmd_path, strerror(errno));
    size_t n = strlen(line);
    int bad = write(fd, line, n) != (ssize_t)n || write(fd, "\n", 1) != 1;
    int er = errno;
    close(fd);
    return bad ? scv_err_set(err, SCV_EIO, "%s: cannot write: %s", e->cmd_path, strerror(er)) : SCV_OK;
}

/* Ends a stalled job at once, every process of it (scv_kill_tree), and reaps it. */
static void end_job_now(elastic *e)
{
    scv_kill_tree(e->pid);
    int st;
    while (waitpid(e->pid, &st, 0) < 0 && errno == EINTR) {}
    job_reaped(e);
}

/* The next attempt's log: RUN_DIR/elastic/job-N.log, N one past the highest there (a
 * resumed run goes on numbering), and job.log a link to it (the latest); each attempt's
 * log is kept, and a failure names its own. */
static void next_log(elastic *e)
{
    int next = 1;
    DIR *d = opendir(e->dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        int i;
        char tail;
        if (sscanf(de->d_name, "job-%d.lo%c", &i, &tail) == 2 && i >= next) next = i + 1;
    }
    if (d) closedir(d);
    snprintf(e->log_path, sizeof e->log_path, "%s/job-%d.log", e->dir, next);
    char link[1400], tmp[1400], target[32];
    snprintf(link, sizeof link, "%s/job.log", e->dir);
    snprintf(tmp, sizeof tmp, "%s/.job.log.tmp", e->dir);
    snprintf(target, sizeof target, "job-%d.log", next);
    unlink(tmp);
    struct stat sb;
    if (lstat(link, &sb) == 0 && !S_ISLNK(sb.st_mode)) { /* an earlier version's log: kept as job-0.log */
        char old[1400];
        snprintf(old, sizeof old, "%s/job-0.log", e->dir);
        rename(link, old);
    }
    if (symlink(target, tmp) == 0 && rename(tmp, link) != 0) unlink(tmp); /* (the link is a convenience) */
}

/* Why the job cannot start on the run's cluster, before it is tried: the cluster is gone
 * (`scavenger cluster down`) or none of its VMs is up (all preempted); SCV_OK otherwise. */
static int cluster_lost(const elastic *e, scv_err *err)
{
    const trainjob *t = &e->tj;
    if (!t->cluster) return SCV_OK;
    scv_cluster c;
    scv_err ce = {0};
    if (scv_cluster_load(t->cluster, &c, &ce))
        return scv_err_set(err, SCV_EMPI, "the run's cluster is lost: %s (it was taken down under the run?)", ce.msg);
    int order[SCV_CLUSTER_MAX_VMS];
    if (scv_cluster_place_up(&c, e->job_type[0] ? e->job_type : t->vm_type, order) < 1)
        return scv_err_set(err, SCV_EMPI, "the run's cluster %s has none of its %d VMs up (all preempted): the elastic "
                           "job cannot start until one is restored (scavenger cluster restore %s %d)", c.name, c.n,
                           c.name, order[0]);
    return SCV_OK;
}

/* Starts the job at the configured K and B (resuming the checkpoint when there is one) and
 * waits for its ready line; one not ready within the watchdog's start-up time is ended
 * (SCV_EMPI: retried). */
static int start_job(elastic *e, scv_err *err)
{
    trainjob *t = &e->tj;
    double t0 = scv_now();
    if (mkdir(e->dir, 0755) != 0 && errno != EEXIST)
        return scv_err_set(err, SCV_EIO, "%s: cannot create: %s", e->dir, strerror(errno));
    int lost = cluster_lost(e, err);
    if (lost) return lost;
    next_log(e);
    close_reply(e); /* the new job's files replace the old ones */
    const char *files[] = {e->cmd_path, e->reply_path};
    for (int i = 0; i < 2; i++) { /* fresh control files for a fresh job */
        FILE *f = fopen(files[i], "w");
        if (!f || fclose(f) != 0) return scv_err_set(err, SCV_EIO, "%s: cannot create: %s", files[i], strerror(errno));
    }
    /* the job starts at the configuration; its segments' commands say the rest */
    scv_segwire *w = calloc(1, sizeof *w);
    if (!w) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    w->workers = t->K, w->batch = t->B, w->final_eval = 1, w->resume = tj_has_checkpoint(t);
    scv_segwire_set_split(w, t->K, t->split);
    snprintf(w->checkpoint_dir, sizeof w->checkpoint_dir, "%s", t->ckpt_dir);
    scv_train_cmd c = {.job_opts = (const char *const *)t->opts, .cluster = t->cluster,
                       .vm_type = e->job_type[0] ? e->job_type : t->vm_type, .catalog = t->catalog,
                       .elastic_control = e->dir, .seg = w};
    scv_argv a = {0};
    scv_train_argv(&a, &c);
    free(w);
    if (a.oom) {
        scv_argv_free(&a);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    fflush(NULL);
    pid_t parent = getpid(), pid = fork();
    if (pid < 0) {
        scv_argv_free(&a);
        return scv_err_set(err, SCV_EIO, "cannot start the elastic job: fork: %s", strerror(errno));
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* the job dies with the run, even after SIGKILL */
        if (getppid() != parent) _exit(128 + SIGTERM);
        scv_proc_tag_set(); /* every process of the job carries SCV_JOB_<this run>=<the job> */
        int fd = open(e->log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) dup2(fd, 1), dup2(fd, 2), close(fd);
        execv(t->exe ? t->exe : "/proc/self/exe", a.v);
        _exit(127);
    }
    scv_argv_free(&a);
    e->pid = pid;
    g_job = (sig_atomic_t)pid; /* a signal during the start reaches the job too */
    tj_errwatch_start(t, e->log_path); /* (written from its start: read from 0) */
    t->ew.off = 0;
    char line[4096], why[700];
    for (double ticked = 0;;) { /* the job loads the data and builds the model first */
        if (read_reply(e, line, sizeof line)) {
            if (strstr(line, "\"ready\"")) break;
            continue;
        }
        /* whether it runs, asked once: job_alive reaps a job that ended, and its status is
         * read then or never (asked twice, an exit between the asks read -1, not its 2) */
        int st = -1;
        if (!job_alive(e, &st)) { /* a usage error is the options'; anything else may pass (retried) */
            if (g_int) return scv_err_set(err, SCV_EINTR, "interrupted");
            char said[600];
            tj_errwatch_tick(t);
            tj_errwatch_tail(t, 0, said, sizeof said);
            int lrc = cluster_lost(e, err); /* lost while it started: that is why */
            if (lrc) return lrc;
            return scv_err_set(err, st == 2 ? SCV_EINVAL : SCV_EMPI, "the elastic job did not start (scavenger train "
                               "exited %d%s%.300s%s); see %s", st, said[0] ? ": \"" : "", said, said[0] ? "\"" : "",
                               e->log_path);
        }
        /* the watchdog (retried), unless a stop was asked: the job is leaving by itself; and
         * a job whose mpirun said its launch failed, at once */
        if (!g_int && scv_now() - ticked > 0.1) {
            tj_errwatch_tick(t), ticked = scv_now();
            if (tj_errwatch_failed(t, t->wd.error_grace_s, why, sizeof why)) {
                end_job_now(e);
                return scv_err_set(err, SCV_EMPI, "the elastic job did not start: %s; see %s", why, e->log_path);
            }
        }
        if (!g_int && scv_now() - t0 > t->wd.startup_s) {
            end_job_now(e);
            return scv_err_set(err, SCV_EMPI, "the elastic job did not start: not ready in %.0f s (the start-up "
                               "timeout, --stall-timeout); see %s", scv_now() - t0, e->log_path);
        }
        nap_ms(5);
    }
    tj_errwatch_start(t, NULL); /* (its segments are watched by their lines) */
    e->start_s = scv_now() - t0;
    return SCV_OK;
}

/* The command of one segment: the configuration and the spec's stopping rules, through
 * the segment codec (src/io/segwire.h; train_elastic.c reads it back). */
static char *segment_cmd(const elastic *e, const scv_segment_spec *s, const char *metrics)
{
    const trainjob *t = &e->tj;
    scv_segwire *w = calloc(1, sizeof *w);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = w ? open_memstream(&buf, &len) : NULL;
    if (!f) {
        free(w);
        return NULL;
    }
    scv_segwire_from_spec(w, s, t->K, t->B, t->split);
    snprintf(w->metrics, sizeof w->metrics, "%s", metrics);
    fputs("{\"cmd\":\"segment\",", f);
    scv_segwire_json_write(f, w);
    fputc('}', f);
    free(w);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Ends a job that does not leave by itself (SIGTERM, then SIGKILL) and reaps it. */
static void end_job(elastic *e)
{
    for (int i = 0; i < 2000 && job_alive(e, NULL); i++) nap_ms(5); /* up to 10 s */
    if (!job_alive(e, NULL)) return;
    kill(e->pid, SIGTERM);
    for (int i = 0; i < 1000 && job_alive(e, NULL); i++) nap_ms(5);
    if (!job_alive(e, NULL)) return;
    kill(e->pid, SIGKILL);
    int st;
    waitpid(e->pid, &st, 0);
    job_reaped(e);
}

/* The preemptions a segment's reply says the job survived in place ("preemptions": notices
 * it shrank at, restores it grew back at) into out. */
static void preemptions_of(const cJSON *o, scv_segment_result *out)
{
    const cJSON *ev, *x;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(o, "preemptions")) {
        if (out->n_preemptions == SCV_MAX_PREEMPT_EVENTS) break;
        scv_survive_event *e = &out->preemptions[out->n_preemptions++];
        e->iteration = cJSON_IsNumber(x = cJSON_GetObjectItemCaseSensitive(ev, "iteration")) ? (int64_t)x->valuedouble : 0;
        e->process = cJSON_IsNumber(x = cJSON_GetObjectItemCaseSensitive(ev, "process")) ? x->valueint : -1;
        e->workers = cJSON_IsNumber(x = cJSON_GetObjectItemCaseSensitive(ev, "workers")) ? x->valueint : 0;
        e->idle_s = cJSON_IsNumber(x = cJSON_GetObjectItemCaseSensitive(ev, "idle_s")) ? x->valuedouble : NAN;
        x = cJSON_GetObjectItemCaseSensitive(ev, "event");
        e->restored = cJSON_IsString(x) && !strcmp(x->valuestring, "restored");
    }
}

static void stop_job(elastic *e);

static int e_train(void *ctx, const scv_segment_spec *spec, const scv_measure_sink *sink, scv_segment_result *out,
                   scv_err *err)
{
    elastic *e = ctx;
    trainjob *t = &e->tj;
    memset(out, 0, sizeof *out);
    out->accuracy = NAN;
    if (!t->K) return scv_err_set(err, SCV_EINVAL, "elastic driver: train before configure");
    /* the segment's VM type: another than the running job's is a relaunch at the new
     * placement (the job stops, writing its checkpoint, and a new one starts from it on
     * that type's VMs); a type not held is refused */
    const char *type;
    int prc = tj_place(t, spec, &type, err);
    if (prc) return prc;
    if (strcmp(type ? type : "", e->job_type)) {
        stop_job(e);
        snprintf(e->job_type, sizeof e->job_type, "%s", type ? type : "");
    }
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    g_int = 0, g_job = (sig_atomic_t)e->pid;
    sigaction(SIGINT, &sa, &old_int); /* from here (a job's start too) a signal reaches the job */
    sigaction(SIGTERM, &sa, &old_term);
    char metrics[1400];
    tj_segment_path(t, spec->phase, metrics, sizeof metrics);
    char *cmd = NULL;
    int rc = job_alive(e, NULL) ? SCV_OK : start_job(e, err);
    if (!rc && !(cmd = segment_cmd(e, spec, metrics))) rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
    if (!rc) rc = append_cmd(e, cmd, err);
    free(cmd);
    if (rc) {
        g_job = 0;
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        if (rc != SCV_EINTR) t->attempt++;
        return rc;
    }
    tj_tail_start(t, metrics, sink, out);
    char line[65536]; /* a segment reply: the result (up to 16 KiB), the stragglers (up to 16 KiB), an error */
    int answered = 0, status = 0, stalled = 0;
    double last_tick = 0;
    char why[1024] = "";
    while (!answered) {
        if (read_reply(e, line, sizeof line)) {
            answered = strstr(line, "\"type\":\"segment\"") != NULL;
            continue;
        }
        if (!job_alive(e, &status)) break;
        if (scv_now() - last_tick > 0.1) {
            tj_tail_tick(t), last_tick = scv_now();
            /* the watchdog: ended, retried like a dead worker; not once a stop was asked (passed
             * on to the job, which is writing its checkpoint, however quiet its lines) */
            if (!g_int && tj_stalled(t, why, sizeof why)) {
                stalled = 1;
                end_job_now(e);
                break;
            }
        }
        nap_ms(2);
    }
    tj_tail_tick(t);
    tj_tail_stop(t);
    g_job = 0;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (!answered) { /* the job died (a worker did: without ULFM the MPI job ends): the loop
                      * retries with a new job from the checkpoint (SCV_EMPI) */
        t->attempt++;
        if (g_int) return scv_err_set(err, SCV_EINTR, "interrupted");
        if (tj_tail_verdict(t, err)) return SCV_EINVAL; /* it diverged: not retried */
        if (stalled)
            return scv_err_set(err, SCV_EMPI, "the %s segment (K=%d B=%d) was ended: %s; see %s", spec->phase, t->K,
                               t->B, why, e->log_path);
        char lost[512], said[400];
        tj_lost_work(t, out, lost, sizeof lost);
        tj_log_tail(e->log_path, 2, said, sizeof said);
        return scv_err_set(err, SCV_EMPI, "the elastic job ended during the %s segment (K=%d B=%d; exit %d%s%.200s%s; "
                           "see %s)%s", spec->phase, t->K, t->B, status, said[0] ? ": \"" : "", said,
                           said[0] ? "\"" : "", e->log_path, lost);
    }
    cJSON *o = cJSON_Parse(line);
    const cJSON *jrc = cJSON_GetObjectItemCaseSensitive(o, "rc");
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(o, "result");
    int src = cJSON_IsNumber(jrc) ? jrc->valueint : SCV_EMPI;
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "refused"))) { /* the job goes on */
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "error");
        scv_err_set(err, SCV_EINVAL, "the elastic job refused the %s segment (K=%d B=%d): %.400s", spec->phase, t->K,
                    t->B, cJSON_IsString(m) ? m->valuestring : "no reason");
        cJSON_Delete(o);
        return SCV_EINVAL;
    }
    const cJSON *ev;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(o, "stragglers")) { /* found, replaced or not */
        if (out->n_stragglers == SCV_MAX_STRAGGLER_EVENTS) break;
        scv_straggler_event *e = &out->stragglers[out->n_stragglers++];
        const cJSON *x;
        e->iteration = cJSON_IsNumber(x = cJSON_GetObjectItemCaseSensitive(ev, "iteration")) ? (int64_t)x->valuedouble : 0;
        e->worker = cJSON_IsNumber(x = cJSON_GetObjectItemCaseSensitive(ev, "worker")) ? x->valueint : -1;
        e->ratio = cJSON_IsNumber(x = cJSON_GetObjectItemCaseSensitive(ev, "ratio")) ? x->valuedouble : NAN;
        e->idle_s = cJSON_IsNumber(x = cJSON_GetObjectItemCaseSensitive(ev, "idle_s")) ? x->valuedouble : NAN;
        e->replaced = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ev, "replaced"));
        e->dropped = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ev, "dropped"));
        if (cJSON_IsString(x = cJSON_GetObjectItemCaseSensitive(ev, "host"))) snprintf(e->host, sizeof e->host, "%s", x->valuestring);
        if (cJSON_IsString(x = cJSON_GetObjectItemCaseSensitive(ev, "by_host")))
            snprintf(e->by_host, sizeof e->by_host, "%s", x->valuestring);
        if (cJSON_IsString(x = cJSON_GetObjectItemCaseSensitive(ev, "note"))) snprintf(e->note, sizeof e->note, "%s", x->valuestring);
    }
    preemptions_of(o, out);
    if (src == SCV_OK && cJSON_IsObject(res)) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(res, "test_accuracy");
        out->accuracy = cJSON_IsNumber(a) && a->valuedouble >= 0 ? a->valuedouble : NAN;
        out->reached = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "reached_target"));
        tj_result_shares(res, out);
        /* where the job is: the reply's (it checkpoints only now and then) */
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(res, "iterations");
        const cJSON *ss = cJSON_GetObjectItemCaseSensitive(res, "samples_seen");
        if (cJSON_IsNumber(it) && cJSON_IsNumber(ss))
            out->total_iterations = (int64_t)it->valuedouble, out->samples_seen = ss->valuedouble;
    } else { /* the trainer's own code: SCV_EIO (its files cannot be written: not retried), an
              * interruption, or anything else (retried) */
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "error");
        src = src == SCV_EIO ? SCV_EIO : src == SCV_EINTR && g_int ? SCV_EINTR : SCV_EMPI;
        scv_err_set(err, src, "the %s segment (K=%d B=%d): %.400s%s", spec->phase, t->K, t->B,
                    cJSON_IsString(m) ? m->valuestring : "no result",
                    src == SCV_EIO ? "; not retried: free space, then scavenger run --resume" : "");
    }
    cJSON_Delete(o);
    if (src && src != SCV_EINTR && tj_tail_verdict(t, err)) src = SCV_EINVAL; /* it diverged: not retried */
    if (src) { /* the job leaves after a failed segment (it is ended if it does not) */
        end_job(e);
        t->attempt++;
        return src;
    }
    if (g_int) return scv_err_set(err, SCV_EINTR, "interrupted"); /* after the segment's last allreduce */
    return tj_segment_done(t, metrics, 1, out, err);
}

static void stop_job(elastic *e)
{
    if (!job_alive(e, NULL)) return;
    append_cmd(e, "{\"cmd\":\"stop\"}", NULL);
    end_job(e);
}

static int e_open(void *ctx, const char *run_dir, scv_job_info *job, scv_err *err)
{
    elastic *e = ctx;
    int rc = tj_open(&e->tj, run_dir, job, err);
    if (strcmp(e->tj.run_dir, run_dir)) return rc; /* tj_dirs refused the directory: nothing to name */
    /* they fit: tj_dirs took run_dir, shorter than e->dir by more than the names below */
    int prc = scv_run_file_path(run_dir, SCV_RUN_ELASTIC_DIR, e->dir, sizeof e->dir, NULL);
    SCV_ASSERT(prc == SCV_OK);
    snprintf(e->cmd_path, sizeof e->cmd_path, "%s/cmd", e->dir);
    snprintf(e->reply_path, sizeof e->reply_path, "%s/reply", e->dir);
    snprintf(e->log_path, sizeof e->log_path, "%s/job.log", e->dir); /* (each start: its own, next_log) */
    return rc;
}

static int e_progress(void *ctx, int64_t *iterations, double *samples, scv_err *err)
{
    elastic *e = ctx;
    return tj_progress(&e->tj, iterations, samples, err);
}

static int e_configure(void *ctx, int workers, int batch, const double *split, scv_err *err)
{
    elastic *e = ctx;
    return tj_configure(&e->tj, workers, batch, split, err);
}

static int e_checkpoint(void *ctx, scv_err *err)
{
    (void)ctx, (void)err; /* training segments end with one, and a stopped job writes one */
    return SCV_OK;
}

static int e_recover(void *ctx, int index, scv_segment_result *out, char *phase, size_t cap, int *workers, int *batch,
                     scv_err *err)
{
    elastic *e = ctx;
    return tj_recover(&e->tj, index, out, phase, cap, workers, batch, err);
}

static void e_close(void *ctx)
{
    elastic *e = ctx;
    stop_job(e);
    free(e->tj.split);
    e->tj.split = NULL;
    e->tj.K = e->tj.B = 0;
}

static void e_destroy(void *ctx)
{
    elastic *e = ctx;
    stop_job(e);
    close_reply(e);
    tj_free(&e->tj);
    free(e);
}

int scv_elastic_driver_new(const scv_relaunch_opts *o, scv_job_driver **out, scv_err *err)
{
    *out = NULL;
    elastic *e = calloc(1, sizeof *e);
    if (!e) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    int rc = tj_init(&e->tj, o, err);
    if (rc) {
        free(e);
        return rc;
    }
    e->vt = (scv_job_driver){.name = "elastic", .ctx = e, .open = e_open, .progress = e_progress,
                             .configure = e_configure, .train = e_train, .checkpoint = e_checkpoint,
                             .close = e_close, .destroy = e_destroy, .recover = e_recover};
    *out = &e->vt;
    return SCV_OK;
}
