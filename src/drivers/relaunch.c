/*
 * relaunch.c - the relaunch job driver: each segment is a `scavenger train` child process
 * (K ranks through mpirun, locally or on an emulated cluster) that resumes the run's
 * checkpoint (RUN_DIR/ckpt) at the same data position, trains until its stopping rule and
 * writes the checkpoint again. A configuration change costs a relaunch: the new child
 * loads the data, builds the model and reads the checkpoint back.
 *
 * While a child runs, the driver tails its metrics file (the trainer writes it a line at a
 * time) and delivers every iteration and evaluation to the loop's sink as it comes. The
 * probe, the metrics files, the tailing and recovery are shared with the elastic driver
 * (trainjob.c). Files: RUN_DIR/job.jsonl (the probe), RUN_DIR/seg-NNN-PHASE-kK-bB[-retryN].jsonl.
 */
#define _POSIX_C_SOURCE 200809L
#include "child.h"
#include "scv.h"
#include "trainjob.h"
#include "../core/util.h"
#include "../runtime/cluster.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct relaunch {
    scv_job_driver vt;
    trainjob tj;
} relaunch;

/* Checkpoint-restart on a cluster whose VMs are taken back (docs/CLUSTER.md "Surviving a
 * preemption"): the job's K is fixed, so a segment (a retry after a take-down, mostly) starts
 * once K VMs are up again, as a cloud's replacement comes, waiting at most max_wait_s. */
static const struct {
    double max_wait_s; /* a cloud's replacement VM: about 2 minutes (docs/MODEL.md's replace_s) */
    double poll_s;
    double say_every_s; /* a line on stderr at the start of a wait and this often while it lasts */
} SCV_RESTART_WAIT = {.max_wait_s = 600, .poll_s = 0.1, .say_every_s = 10};

static volatile sig_atomic_t g_wait_int;
static void on_wait_signal(int sig)
{
    (void)sig;
    g_wait_int = 1;
}

/* Waits until the cluster (if any) has K VMs that are not preempted (scv_cluster_place_up):
 * SCV_OK, or SCV_EMPI naming the preempted VMs after SCV_RESTART_WAIT.max_wait_s (the loop
 * retries), SCV_EINTR on SIGINT/SIGTERM. */
static int wait_for_vms(const trainjob *r, const char *type, scv_err *err)
{
    if (!r->cluster) return SCV_OK;
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_wait_signal;
    g_wait_int = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    const double t0 = scv_now();
    double say_at = 0; /* seconds into the wait of the next line */
    int rc = SCV_OK;
    for (;;) {
        scv_cluster c;
        int order[SCV_CLUSTER_MAX_VMS];
        if ((rc = scv_cluster_load(r->cluster, &c, err))) break;
        int up = scv_cluster_place_up(&c, type, order);
        if (up >= r->K || r->K > c.n) break; /* more than it holds: the launch says so */
        if (g_wait_int) {
            rc = scv_err_set(err, SCV_EINTR, "interrupted while waiting for VMs of cluster %s", r->cluster);
            break;
        }
        if (scv_now() - t0 > SCV_RESTART_WAIT.max_wait_s) {
            rc = scv_err_set(err, SCV_EMPI, "K=%d: cluster %s has %d of its %d VMs up (VM %d preempted) after %.0f s "
                             "of waiting for a restore", r->K, r->cluster, up, c.n, order[up], scv_now() - t0);
            break;
        }
        if (scv_now() - t0 >= say_at) { /* what it waits for, and how long so far */
            fprintf(stderr, "%sscavenger: relaunch at K=%d waits for a restore: cluster %s has %d of its %d VMs up "
                            "(VM %d preempted); %.0f s so far, at most %.0f s\n", say_at ? "" : "\n", r->K, r->cluster, up, c.n, order[up],
                    scv_now() - t0, SCV_RESTART_WAIT.max_wait_s);
            say_at += SCV_RESTART_WAIT.say_every_s;
        }
        struct timespec ts = {0, (long)(SCV_RESTART_WAIT.poll_s * 1e9)};
        nanosleep(&ts, NULL);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    return rc;
}

static int r_open(void *ctx, const char *run_dir, scv_job_info *job, scv_err *err)
{
    relaunch *r = ctx;
    return tj_open(&r->tj, run_dir, job, err);
}

static int r_progress(void *ctx, int64_t *iterations, double *samples, scv_err *err)
{
    relaunch *r = ctx;
    return tj_progress(&r->tj, iterations, samples, err);
}

static int r_configure(void *ctx, int workers, int batch, const double *split, scv_err *err)
{
    relaunch *r = ctx;
    return tj_configure(&r->tj, workers, batch, split, err);
}

static int r_train(void *ctx, const scv_segment_spec *spec, const scv_measure_sink *sink,
                   scv_segment_result *out, scv_err *err)
{
    trainjob *r = &((relaunch *)ctx)->tj;
    memset(out, 0, sizeof *out);
    out->accuracy = NAN;
    if (!r->K) return scv_err_set(err, SCV_EINVAL, "relaunch driver: train before configure");
    const char *type; /* the segment's VM type: the child places its ranks on that type's VMs */
    int prc = tj_place(r, spec, &type, err);
    if (prc) return prc;
    if ((prc = wait_for_vms(r, type, err))) {
        if (prc != SCV_EINTR) r->attempt++;
        return prc;
    }
    char metrics[1400], json[16384];
    tj_segment_path(r, spec->phase, metrics, sizeof metrics);
    scv_segwire *w = calloc(1, sizeof *w);
    if (!w) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    scv_segwire_from_spec(w, spec, r->K, r->B, r->split);
    snprintf(w->checkpoint_dir, sizeof w->checkpoint_dir, "%s", r->ckpt_dir);
    snprintf(w->metrics, sizeof w->metrics, "%s", metrics);
    w->resume = tj_has_checkpoint(r);
    scv_train_cmd c = {.job_opts = (const char *const *)r->opts, .cluster = r->cluster, .hosts = r->hostfile,
                       .vm_type = type, .catalog = r->catalog, .progress = r->show_progress, .seg = w};
    scv_argv a = {0};
    scv_train_argv(&a, &c);
    free(w);
    if (a.oom) {
        scv_argv_free(&a);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    tj_tail_start(r, metrics, sink, out);
    int intr = 0, st;
    char why[1024];
    scv_run_self_on_line(tj_errwatch_line, r); /* its mpirun's words of a failed launch: the watchdog's */
    int rc = scv_run_self_err(r->exe, a.v, json, sizeof json, why, sizeof why, &st, &intr, tj_watch_tick, r, 250,
                              err);
    scv_run_self_on_line(NULL, NULL);
    scv_argv_free(&a);
    int stalled = r->wd_fired != 0;
    tj_tail_stop(r);
    if (rc) return rc;
    if (intr) return scv_err_set(err, SCV_EINTR, "interrupted");
    if ((rc = tj_tail_verdict(r, err))) { /* a divergence, whatever the exit: not retried */
        r->attempt++;
        return rc;
    }
    char lost[512]; /* the work trained since the checkpoint the retry resumes from, stated */
    tj_lost_work(r, out, lost, sizeof lost);
    if (stalled) { /* a hang is a failed segment: retried from the checkpoint like a dead worker */
        r->attempt++;
        return scv_err_set(err, SCV_EMPI, "the %s segment (K=%d B=%d) was ended: %s%s", spec->phase, r->K, r->B,
                           r->wd_why, lost);
    }
    cJSON *o = json[0] ? cJSON_Parse(json) : NULL;
    if (!o || (st != 0 && st != 1)) {
        /* SCV_EIO: the child could not write the run's files (a full disk): a relaunch
         * writes them again, so the loop does not retry; SCV_EMPI: a worker died or was
         * stopped by a signal sent to it, not to this run (exit 130), or the child failed
         * otherwise: the loop retries from the checkpoint */
        cJSON_Delete(o);
        r->attempt++; /* a retry writes its own metrics */
        const char *msg = !strncmp(why, "scavenger train: ", 17) ? why + 17 : why;
        if (scv_child_write_failure(msg))
            return scv_err_set(err, SCV_EIO, "the %s segment (K=%d B=%d) cannot write the run's files: %s; "
                               "not retried: free space, then scavenger run --resume", spec->phase, r->K, r->B,
                               msg);
        if (st == 130)
            return scv_err_set(err, SCV_EMPI, "the %s segment (K=%d B=%d) stopped: a worker got SIGTERM or "
                               "SIGINT (scavenger train exited 130)%s; metrics in %s", spec->phase, r->K, r->B,
                               lost, metrics);
        return scv_err_set(err, SCV_EMPI, "the %s segment (K=%d B=%d) failed (scavenger train exited %d%s%.200s)%s; "
                           "metrics in %s", spec->phase, r->K, r->B, st, msg[0] ? ": " : "", msg, lost, metrics);
    }
    const cJSON *acc = cJSON_GetObjectItemCaseSensitive(o, "test_accuracy");
    out->accuracy = cJSON_IsNumber(acc) && acc->valuedouble >= 0 ? acc->valuedouble : NAN;
    out->reached = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "reached_target"));
    tj_result_shares(o, out);
    cJSON_Delete(o);
    return tj_segment_done(r, metrics, 0, out, err);
}

static int r_recover(void *ctx, int index, scv_segment_result *out, char *phase, size_t cap, int *workers,
                     int *batch, scv_err *err)
{
    relaunch *r = ctx;
    return tj_recover(&r->tj, index, out, phase, cap, workers, batch, err);
}

static int r_checkpoint(void *ctx, scv_err *err)
{
    (void)ctx, (void)err; /* every segment ends with a checkpoint: nothing is only in memory */
    return SCV_OK;
}

static void r_close(void *ctx)
{
    trainjob *t = &((relaunch *)ctx)->tj;
    free(t->split);
    t->split = NULL;
    t->K = t->B = 0;
}

static void r_destroy(void *ctx)
{
    relaunch *r = ctx;
    tj_free(&r->tj);
    free(r);
}

int scv_relaunch_driver_new(const scv_relaunch_opts *o, scv_job_driver **out, scv_err *err)
{
    *out = NULL;
    relaunch *r = calloc(1, sizeof *r);
    if (!r) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    int rc = tj_init(&r->tj, o, err);
    if (rc) {
        free(r);
        return rc;
    }
    r->vt = (scv_job_driver){.name = "relaunch", .ctx = r, .open = r_open, .progress = r_progress,
                             .configure = r_configure, .train = r_train, .checkpoint = r_checkpoint,
                             .close = r_close, .destroy = r_destroy, .recover = r_recover};
    *out = &r->vt;
    return SCV_OK;
}
