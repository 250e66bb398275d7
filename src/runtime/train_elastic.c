/*
 * train_elastic.c - the built-in trainer's elastic mode (`scavenger train
 * --elastic-control DIR`): one job, a segment per command. Rank 0 reads the driver's
 * commands, every process of the job applies them (the active ranks resize, train a
 * segment through train_segment.c and reply; parked ones wait), stragglers are replaced
 * or dropped, and preemption notices are survived in place. trainer.c sets the run up and
 * calls scv_train_elastic_main().
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "runtime.h"
#include "comm.h"
#include "exchange.h"
#include "trainer.h"
#include "cluster.h"
#include "../model/model.h"
#include "../core/util.h"
#include "../io/json_out.h"
#include "../io/segwire.h"
#include "../train/dnn.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- elastic mode: one job, a segment per command ----
 *
 * The driver appends commands (JSON lines) to CONTROL/cmd and reads the answers from
 * CONTROL/reply, both plain files that each side tails (no FIFO open-order deadlocks, and
 * a restarted job starts from fresh files). Rank 0 reads a command and broadcasts it to
 * every process of the job, parked ones included (scv_comm_command); each applies it:
 *   {"cmd":"segment","workers":K,"batch":B, stopping rules..., "metrics":PATH,
 *    "checkpoint_every":N, "checkpoint_end":0|1}
 *       K processes become the active ranks (more are spawned when the job has fewer;
 *       the others are parked); the state (position, parameters, optimiser) goes from
 *       rank 0 to the active ranks in memory; B takes effect at the first iteration;
 *       then one segment trains and rank 0 answers {"type":"segment","rc":..,"result":..}
 *   {"cmd":"stop"} every process leaves (the last checkpoint is the segment's).
 * The root rewrites each segment command before the broadcast: the stragglers left out
 * ("exclude"), the processes under a preemption notice ("preempted", with K cut to the
 * processes left: "workers", the driver's own K kept as "workers_wanted"); the reply lists
 * the notices and restores acted on ("preemptions", preempt_apply below).
 * A grow re-broadcasts the same command over the grown job, so the newcomers (which start
 * parked, load the data and wait for a command) apply it with everyone else. */
#define CMD_BYTES 16384

typedef struct {
    FILE *cmd, *reply;  /* rank 0 */
    long cmd_off;
    char exe[4096];     /* this program, for spawning */
} control;

/* Rank 0: the next complete command line (SCV_OK), SCV_EINTR when interrupted. Polls the
 * file every millisecond (the latency of a configuration change). */
static int control_read(control *ctl, char *line, size_t cap)
{
    struct timespec ts = {0, 1000000L};
    for (;;) {
        if (scv_train_stop_requested()) return SCV_EINTR;
        clearerr(ctl->cmd);
        fseek(ctl->cmd, ctl->cmd_off, SEEK_SET);
        if (fgets(line, (int)cap, ctl->cmd)) {
            size_t n = strlen(line);
            if (n && line[n - 1] == '\n') { /* complete */
                ctl->cmd_off += (long)n;
                line[n - 1] = 0;
                return SCV_OK;
            }
        }
        nanosleep(&ts, NULL);
    }
}

static void control_reply(control *ctl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void control_reply(control *ctl, const char *fmt, ...)
{
    if (!ctl->reply) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(ctl->reply, fmt, ap);
    va_end(ap);
    fputc('\n', ctl->reply);
    fflush(ctl->reply);
}

/* The segment's parameters: the job's (base) with the command's configuration and rules,
 * read through the segment codec (src/io/segwire.h: every field named and range-checked
 * there); split and hist (SCV_MAX_SPACE and SCV_TARGET_WINDOW_MAX values) and metrics (mcap) hold what q
 * points to. */
static int segment_params(const scv_train_params *base, const cJSON *o, scv_train_params *q, double *split,
                          double *hist, char *metrics, size_t mcap, scv_err *err)
{
    *q = *base;
    scv_segwire *w = calloc(1, sizeof *w);
    if (!w) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    /* a field the command leaves out keeps these */
    w->target_window = 1, w->checkpoint_every = base->checkpoint_every, w->collective = SCV_COLL_AUTO;
    int rc = scv_segwire_json_read(w, o, "elastic command", err);
    if (!rc && w->workers > SCV_MAX_SPACE)
        rc = scv_err_set(err, SCV_EINVAL, "elastic command: field 'workers' = %d: at most %d", w->workers, SCV_MAX_SPACE);
    if (!rc && strlen(w->metrics) >= mcap)
        rc = scv_err_set(err, SCV_EINVAL, "elastic command: field 'metrics' is longer than %zu bytes", mcap - 1);
    /* the segment's gradient exchange: Top-k or SelSync on a job without its own options */
    if (!rc && w->compress_cf != 0 && scv_exchange_opts_on(&base->comm))
        rc = scv_err_set(err, SCV_EINVAL, "elastic command: \"compress_cf\" %g: expected a factor in (1, 1e6] "
                                          "on a job without its own communication options", w->compress_cf);
    if (!rc && w->selsync && (w->compress_cf != 0 || scv_exchange_opts_on(&base->comm)))
        rc = scv_err_set(err, SCV_EINVAL, "elastic command: \"selsync_lssr\": expected a share in [0, 1), "
                                          "without \"compress_cf\", on a job without its own communication options");
    if (rc) {
        free(w);
        return rc;
    }
    q->workers = w->workers, q->batch = w->batch, q->iterations = w->until_iterations;
    q->eval_subset = w->eval_subset, q->target_window = w->target_window;
    q->stop_noise_window = w->noise_window, q->stop_time_min = w->time_min, q->checkpoint_every = w->checkpoint_every;
    q->epochs = w->epochs;
    q->target_accuracy = w->target_accuracy;
    q->target_loss = w->target_loss;
    q->eval_every = 0;
    q->eval_every_epochs = w->eval_every_epochs;
    q->stop_noise_tol = w->noise_tol;
    q->stop_time_rse = w->time_rse;
    q->no_final_eval = !w->final_eval;
    q->no_end_checkpoint = !w->checkpoint_end;
    q->resume = 0;
    q->progress = 0;
    q->rank_weights = NULL;
    q->dynamic_batching = w->dynamic_batching; /* base->dynbatch: the policy */
    if (w->compress_cf != 0) /* Top-k at "compress_cf" over "collective", else the job's exchange */
        q->comm.compress = SCV_COMPRESS_TOPK, q->comm.cf = w->compress_cf, q->comm.collective = w->collective;
    if (w->selsync) /* SelSync at a share of local steps */
        q->comm.selsync = 1, q->comm.sel.lssr = w->selsync_lssr, q->comm.sel.delta = 0;
    q->straggler = w->straggler;
    if (w->n_split) { /* checked below (finite, positive, within the ratio) */
        memcpy(split, w->split, sizeof(double) * (size_t)w->n_split);
        q->rank_weights = split;
    }
    q->n_target_history = w->n_history < SCV_TARGET_WINDOW_MAX ? w->n_history : SCV_TARGET_WINDOW_MAX, q->target_history = NULL;
    if (q->n_target_history) {
        memcpy(hist, w->history, sizeof(double) * (size_t)q->n_target_history);
        q->target_history = hist;
    }
    q->metrics_path = NULL;
    if (w->metrics[0]) {
        snprintf(metrics, mcap, "%s", w->metrics);
        q->metrics_path = metrics;
    }
    free(w);
    return scv_train_params_check(q, err);
}

/* The job's processes as elastic mode sees them (every process keeps the same copy: every
 * process sees every command). Process i runs on host i of elastic_hosts when given. */
typedef struct {
    char hosts_buf[4096];
    const char *hosts[SCV_MAX_WORKERS];
    int nh;                         /* 0: no host list (local processes) */
    char excl[SCV_MAX_WORKERS];     /* processes left out for good (stragglers) */
    char gone[SCV_MAX_WORKERS];     /* processes under a preemption notice or preempted (the
                                       command's "preempted"): out until restored */
    int members[SCV_MAX_WORKERS];   /* the active ones, by rank in all (worker k = members[k]) */
    int n_members;
} procs;

static void procs_init(procs *pr, const char *hosts)
{
    memset(pr, 0, sizeof *pr);
    if (!hosts) return;
    snprintf(pr->hosts_buf, sizeof pr->hosts_buf, "%s", hosts);
    char *save = NULL;
    for (char *t = strtok_r(pr->hosts_buf, ",", &save); t && pr->nh < SCV_MAX_WORKERS; t = strtok_r(NULL, ",", &save))
        pr->hosts[pr->nh++] = t;
}

static const char *host_of(const procs *pr, int proc) { return proc >= 0 && proc < pr->nh ? pr->hosts[proc] : ""; }

/* The job's processes (all_size of them) not left out. */
static int n_kept(const procs *pr, int all_size)
{
    int n = 0;
    for (int i = 0; i < all_size; i++) n += !pr->excl[i] && !pr->gone[i];
    return n;
}

/* 1 when a straggler among K workers can be replaced: a process left that is neither active
 * nor excluded, or a host left to spawn one on (without a host list every process shares
 * this machine's cores, and a fresh one would be no faster). */
static int can_replace(const procs *pr, int all_size, int K)
{
    return pr->nh && (n_kept(pr, all_size) > K || pr->nh > all_size);
}

/* Makes K processes the active ranks: the first K that are not excluded (spawning more
 * when the job has too few: *grew), and gives the state of worker 0 to any that was not
 * active before (*joined: the first of them, -1: none); B's buffers grow to q->batch. A new
 * B alone is a buffer resize; a shrink parks the leaving ranks (the staying ones hold the
 * state already). */
static int elastic_resize(run_ctx *c, control *ctl, procs *pr, const scv_train_params *q, int *grew, int *joined,
                          int *left, scv_err *err)
{
    int K = q->workers, rc = SCV_OK, force = 0;
    *grew = 0, *joined = -1, *left = 0;
    int have = scv_comm_all_size(c->comm), avail = n_kept(pr, have);
    if (scv_comm_join_mode(c->comm)) { /* a job on a cluster: the processes gone leave it (docs/CLUSTER.md) */
        char gone[SCV_MAX_WORKERS] = {0};
        int n_gone = 0;
        for (int i = 1; i < have; i++)
            if (pr->gone[i] && scv_comm_present(c->comm, i)) gone[i] = 1, n_gone++;
        if (n_gone) {
            if ((rc = scv_comm_leave(c->comm, gone, left, err))) return rc;
            if (*left) return SCV_OK; /* this process: out of the job, it exits */
            force = 1;                /* every process parked: the members activated again */
            c->rank = -1;
        }
        for (int i = 0, n = 0; i < have && n < K; i++) { /* a slot needed again whose process left: a */
            if (pr->excl[i] || pr->gone[i]) continue;    /* process joins on its host (a restore) */
            n++;
            if (scv_comm_present(c->comm, i)) continue;
            if ((rc = scv_comm_join(c->comm, ctl->exe, c->p->elastic_argv, i, pr->nh ? host_of(pr, i) : NULL, err)))
                return rc;
            *grew = 1;
            return SCV_OK; /* one join per command: see below */
        }
    }
    if (K > avail) {
        /* In join mode one process joins per command: a join's accept is collective over every
         * process in the job, the one that joined last included, and that one learns of the
         * next join from the command, sent again after each join (*grew). Joining them all
         * here left the last joiner waiting for the command while the others accepted the
         * next: the two collectives crossed on the job's communicator (K = 3 never started). */
        int n_new = scv_comm_join_mode(c->comm) ? 1 : K - avail;
        if (have + n_new > SCV_MAX_WORKERS)
            return scv_err_set(err, SCV_EINVAL, "elastic: %d processes, at most %d", have + n_new, SCV_MAX_WORKERS);
        if (pr->nh && pr->nh < have + n_new)
            return scv_err_set(err, SCV_EINVAL, "elastic: %d workers need %d hosts, %d given", K, have + n_new, pr->nh);
        if ((rc = scv_comm_grow(c->comm, ctl->exe, c->p->elastic_argv, n_new, pr->nh ? pr->hosts + have : NULL, err)))
            return rc;
        *grew = 1;
        return SCV_OK;
    }
    int members[SCV_MAX_WORKERS], n = 0, changed = K != pr->n_members || force;
    for (int i = 0; i < have && n < K; i++)
        if (!pr->excl[i] && !pr->gone[i]) members[n++] = i;
    for (int k = 0; k < K; k++) {
        int was = 0;
        for (int j = 0; j < pr->n_members && !was; j++) was = pr->members[j] == members[k];
        if (!was && *joined < 0) *joined = members[k];
        changed |= k >= pr->n_members || pr->members[k] != members[k];
    }
    if (changed && (rc = scv_comm_activate(c->comm, members, K, err))) return rc;
    memcpy(pr->members, members, sizeof(int) * (size_t)K);
    pr->n_members = K;
    c->rank = scv_comm_rank(c->comm);
    c->K = scv_comm_size(c->comm);
    if (c->rank < 0) return SCV_OK; /* parked */
    int64_t *cn = realloc(c->counts, sizeof(int64_t) * (size_t)K), *of = cn ? realloc(c->offsets, sizeof(int64_t) * (size_t)K) : NULL;
    if (cn) c->counts = cn;
    if (of) c->offsets = of;
    if (q->batch > c->batch_cap) {
        size_t d = (size_t)c->train->c * c->train->h * c->train->w;
        float *bx = realloc(c->bx, sizeof(float) * d * (size_t)q->batch);
        uint8_t *by = bx ? realloc(c->by, (size_t)q->batch) : NULL;
        if (bx) c->bx = bx;
        if (by) c->by = by, c->batch_cap = q->batch;
        if (!bx || !by) rc = SCV_ENOMEM;
    }
    if (!cn || !of) rc = SCV_ENOMEM;
    if ((rc = scv_comm_agree(c->comm, rc ? scv_err_set(err, rc, "out of memory") : SCV_OK, err))) return rc;
    if (*joined < 0) return SCV_OK; /* every worker held the state already */
    size_t np = scv_net_nparams(c->model);
    if ((rc = scv_comm_bcast(c->comm, &c->st, sizeof c->st, 0, err))) return rc;
    if ((rc = scv_comm_bcast(c->comm, &c->wall_before, sizeof c->wall_before, 0, err))) return rc;
    if ((rc = scv_comm_bcast(c->comm, scv_net_params(c->model), np * sizeof(float), 0, err))) return rc;
    return scv_comm_bcast(c->comm, c->mom, np * sizeof(float), 0, err);
}

/* Rank 0: rewrites a command's "exclude" to the processes left out (with proc, >= 0, added;
 * taken back when the command's K needs them) so that every process, spawned later ones
 * too, applies the same list, and, when c is given, its "history" to
 * the target window as it stands (the command then continues the segment that just
 * stopped). 0 when it does not fit. */
static int rewrite_cmd(char *cmd, size_t cap, procs *pr, int proc, const run_ctx *c, int all_size)
{
    cJSON *o = cJSON_Parse(cmd), *ex = cJSON_CreateArray(), *h = c ? cJSON_CreateDoubleArray(c->window, c->n_window) : NULL;
    int ok = o && ex && (h || !c);
    if (proc >= 0) pr->excl[proc] = 1;
    /* more workers than the processes left and the hosts to spawn on: the processes left out
     * come back, the latest first (a slow worker is better than none) */
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "workers");
    int K = cJSON_IsNumber(w) && w->valuedouble >= 1 && w->valuedouble <= SCV_MAX_WORKERS ? (int)w->valuedouble : 0;
    int avail = (pr->nh ? pr->nh - all_size : SCV_MAX_WORKERS) + n_kept(pr, all_size);
    for (int i = all_size - 1; i > 0 && avail < K; i--)
        if (pr->excl[i]) pr->excl[i] = 0, avail++;
    for (int i = 0; ok && i < SCV_MAX_WORKERS; i++)
        if (pr->excl[i]) ok = cJSON_AddItemToArray(ex, cJSON_CreateNumber(i));
    if (ok) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, "exclude");
        cJSON_AddItemToObject(o, "exclude", ex), ex = NULL;
        if (h) {
            cJSON_DeleteItemFromObjectCaseSensitive(o, SCV_SEGWIRE_HISTORY_KEY);
            cJSON_AddItemToObject(o, SCV_SEGWIRE_HISTORY_KEY, h), h = NULL;
        }
        ok = cJSON_PrintPreallocated(o, cmd, (int)cap, 0);
    }
    cJSON_Delete(o), cJSON_Delete(ex), cJSON_Delete(h);
    return ok;
}

/* The segment reply's "stragglers" array: the events found since the last reply. */
static void events_json(char *buf, size_t cap, run_ctx *c)
{
    size_t len = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < c->n_events && len < cap; i++) {
        const scv_straggler_event *e = &c->events[i];
        char h[2 * sizeof e->host], bh[2 * sizeof e->by_host], note[2 * sizeof e->note];
        len += (size_t)snprintf(buf + len, cap - len,
                                "%s{\"iteration\":%lld,\"worker\":%d,\"host\":%s,\"ratio\":%.4f,\"replaced\":%s,"
                                "\"dropped\":%s,\"by_host\":%s,\"idle_s\":%.6f,\"note\":%s}",
                                i ? "," : "", (long long)e->iteration, e->worker, scv_json_strbuf(h, sizeof h, e->host),
                                e->ratio, e->replaced ? "true" : "false", e->dropped ? "true" : "false",
                                scv_json_strbuf(bh, sizeof bh, e->by_host),
                                e->idle_s, scv_json_strbuf(note, sizeof note, e->note));
    }
    if (len < cap) snprintf(buf + len, cap - len, "]");
    c->n_events = 0;
}

/* A process that got a notice (left) or came back, as the segment's reply reports it. */
typedef struct {
    int64_t iteration;
    int proc, restored, workers; /* workers: the job's K after it */
    double idle_s;               /* the resize's seconds (-1: not resized yet) */
} preempt_event;

/* The elastic job's loop state (every process keeps its own copy). */
typedef struct ejob {
    control ctl;
    const scv_train_params *base;
    int root;           /* all-rank 0: reads the commands, writes the replies */
    char *cmd, *evs, metrics[4096];
    double split[SCV_MAX_SPACE], hist[SCV_TARGET_WINDOW_MAX]; /* segment_params reads at most the window */
    procs *pr;
    scv_train_params last; /* the latest segment's parameters (its B, its metrics) */
    int resend;         /* a grow re-broadcasts the same command over the grown job */
    int have;           /* root: cmd holds the next command already (a segment's continuation) */
    int dirty;          /* trained since the last checkpoint */
    int release;        /* a failed segment ends the job: the parked processes get a stop */
    int pending;        /* root: the straggler event whose replacement the next resize makes */
    double t0;          /* when the command was read (a grow's spawn counts in its resize time) */
    run_ctx *run;
    double poll_t;      /* root: when the notices were last polled */
    preempt_event pev[64];
    int n_pev;          /* root: preemption events since the last reply (idle_s < 0: not resized yet) */
    int wanted;         /* root: the workers the driver asked for (the command's "workers_wanted") */
    int root_noticed;   /* root: its own process has a notice, acted on (the state written) */
    int spare_up;       /* root: the spare hosts usable at the last preempt_apply (spare_hosts_up) */
    char dropped[SCV_MAX_WORKERS]; /* root: slow processes dropped (elastic_drop): left out of
                                      later commands too, which run short of them */
} ejob;

/* A failure that the processes do not share (in the job's start, or a broken collective)
 * would leave the others waiting in a command broadcast: the job is ended (mpirun ends every
 * process), and the driver restarts it from the checkpoint. */
static void elastic_abort(run_ctx *c, scv_err *err, const char *what)
{
    fprintf(stderr, "scavenger train: %s\n", err ? err->msg : what);
    scv_comm_abort(c->comm, 1);
}

/* ---- preemptions survived in place (docs/CLUSTER.md "Surviving a preemption") ----
 * The job's root polls, between iterations (at most every poll_s), the notice of every
 * process of the job: CONTROL/preempt-notice.P (a job on one machine: the driver, an
 * operator or a test gives process P a notice) or, on the emulated cluster, the notice and
 * the preempted mark of the VM process P runs on (host 10.213.S.I is VM I; its files sit
 * beside the root's own $SCV_PREEMPT_NOTICE_FILE). A process under notice or preempted is
 * "gone": the root's verdict rides in the next allreduce (step_scalars.preempt), every rank
 * stops after the same iteration, and the segment goes on, as a command the root gives
 * itself, without it: K - 1 workers at the same B (the leaving worker's share is split over
 * the others; the position and the sample order carry, so no sample is skipped or seen
 * twice). No checkpoint is written or read. Once its notice is gone (`cluster restore`) the
 * process comes back the same way, up to the workers the driver asked for
 * ("workers_wanted"). A replacement is spawned only on a spare host of a host list. Process
 * 0 runs the job and never leaves: at its notice the state is written and the job goes on
 * at the same K; its take-down ends the job (the driver resumes it from that checkpoint,
 * stating the samples lost since). On a cluster the job runs in join mode (comm_mpi.c): a
 * process under notice also leaves the MPI job (elastic_resize, scv_comm_leave) and exits,
 * so its VM's take-down ends nothing; a restore joins a new process in its slot. */
static const struct {
    double poll_s;            /* the notices are stat'ed at most this often (a cloud's notice: 30-120 s) */
    int checkpoint_on_notice; /* 1: the state is also written at a notice (the job goes on), so that a
                                 take-down the job cannot survive (a process 0's, MPI without ULFM)
                                 loses only the work since the notice */
} SCV_SURVIVE_POLICY = {.poll_s = 0.005, .checkpoint_on_notice = 1};

/* 1 when process proc has a notice or is preempted. */
static int proc_gone_now(const ejob *j, int proc)
{
    char path[4400];
    struct stat st;
    snprintf(path, sizeof path, "%s/preempt-notice.%d", j->base->elastic_control, proc);
    if (stat(path, &st) == 0) return 1;
    const char *own = getenv(SCV_PREEMPT_NOTICE_ENV); /* .../NAME.d/<vm>/preempt-notice */
    int a, b, cc, vm;
    if (!own || sscanf(host_of(j->pr, proc), "%d.%d.%d.%d", &a, &b, &cc, &vm) != 4) return 0;
    const char *end = strrchr(own, '/');
    const char *dir = end;
    while (dir && dir > own && *--dir != '/') {}
    if (!end || !dir || *dir != '/') return 0;
    const char *files[] = {SCV_PREEMPT_NOTICE_FILE, SCV_PREEMPT_DONE_FILE};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%.*s/%d/%s", (int)(dir - own), own, vm, files[i]);
        if (stat(path, &st) == 0) return 1;
    }
    return 0;
}

/* The spare hosts of the host list (those after the job's processes) that a process can be
 * spawned on: the first ones whose VM is neither under notice nor preempted (a job started
 * while a VM was down lists it last, launch.c); without a host list, limit. */
static int spare_hosts_up(const ejob *j, int all, int limit)
{
    const procs *pr = j->pr;
    if (!pr->nh) return limit;
    int n = 0;
    while (all + n < pr->nh && !proc_gone_now(j, all + n)) n++;
    return n;
}

/* The root, before an allreduce: 1 when the job must resize now for a notice (an active
 * process got one), 2 for a restore (a gone process is back, or a spare host's VM is, while
 * the job runs short of the workers asked for), 0 when not. */
static int preempt_poll(void *ctx)
{
    ejob *j = ctx;
    double now = scv_now();
    if (now - j->poll_t < SCV_SURVIVE_POLICY.poll_s) return 0;
    j->poll_t = now;
    const procs *pr = j->pr;
    for (int k = 1; k < pr->n_members; k++)
        if (proc_gone_now(j, pr->members[k])) return 1;
    if (!j->root_noticed && proc_gone_now(j, 0)) return 1; /* it stays; its state is written */
    int all = scv_comm_all_size(j->run->comm);
    if (scv_comm_join_mode(j->run->comm)) /* a parked process under notice leaves the job too */
        for (int i = 1; i < all; i++)
            if (!pr->gone[i] && scv_comm_present(j->run->comm, i) && proc_gone_now(j, i)) {
                int active = 0;
                for (int k = 1; k < pr->n_members && !active; k++) active = pr->members[k] == i;
                if (!active) return 1;
            }
    for (int i = 1; i < all && pr->n_members < j->wanted; i++)
        if (pr->gone[i] && !proc_gone_now(j, i)) return 2;
    if (pr->nh && j->spare_up >= 0 && pr->n_members < j->wanted && spare_hosts_up(j, all, 0) > j->spare_up)
        return 2;
    return 0;
}

/* Root: the gone processes polled again (events kept for the reply), and the command in cmd
 * rewritten with them: "preempted", "workers_wanted" (the driver's K) and "workers" (as many
 * as the processes left and the spare hosts allow, at least 1); a split of B over another K
 * is dropped (the even split). 0 when the command cannot be rewritten (left as it was). */
static int preempt_apply(ejob *j, char *cmd, size_t cap)
{
    run_ctx *c = j->run;
    procs *pr = j->pr;
    cJSON *o = cJSON_Parse(cmd);
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "cmd");
    if (!cJSON_IsString(k) || strcmp(k->valuestring, "segment")) {
        cJSON_Delete(o);
        return 0;
    }
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "workers_wanted");
    if (!cJSON_IsNumber(w)) w = cJSON_GetObjectItemCaseSensitive(o, "workers");
    int wanted = cJSON_IsNumber(w) && w->valuedouble >= 1 && w->valuedouble <= SCV_MAX_WORKERS ? (int)w->valuedouble : 0;
    if (!wanted) { /* refused by segment_params, as it is */
        cJSON_Delete(o);
        return 0;
    }
    int all = scv_comm_all_size(c->comm), n_gone = 0, changed[SCV_MAX_WORKERS] = {0}, n_changed = 0;
    const int root_notice = proc_gone_now(j, 0);
    if (root_notice && !j->root_noticed) changed[n_changed++] = 0; /* reported; it stays */
    j->root_noticed = root_notice;
    for (int i = 1; i < all; i++) {
        int g = proc_gone_now(j, i);
        if (g != pr->gone[i]) changed[n_changed++] = i;
        pr->gone[i] = (char)g, n_gone += g;
    }
    const int spare = spare_hosts_up(j, all, n_gone ? 0 : SCV_MAX_WORKERS), kept = n_kept(pr, all);
    int avail = kept + spare;
    int K = wanted < avail ? wanted : avail > 0 ? avail : 1;
    if (pr->nh && j->spare_up >= 0 && spare > j->spare_up && K > kept) /* a spare host's VM is back, and */
        changed[n_changed++] = all + j->spare_up;                        /* a process is spawned on it */
    j->spare_up = spare;
    cJSON *gl = cJSON_CreateArray();
    int ok = gl != NULL;
    for (int i = 1; ok && i < all; i++)
        if (pr->gone[i]) ok = cJSON_AddItemToArray(gl, cJSON_CreateNumber(i));
    const cJSON *was = cJSON_GetObjectItemCaseSensitive(o, "workers");
    if (ok && cJSON_IsNumber(was) && (int)was->valuedouble != K) cJSON_DeleteItemFromObjectCaseSensitive(o, "split");
    cJSON_DeleteItemFromObjectCaseSensitive(o, "preempted");
    cJSON_DeleteItemFromObjectCaseSensitive(o, "workers");
    cJSON_DeleteItemFromObjectCaseSensitive(o, "workers_wanted");
    if (!ok || !cJSON_AddItemToObject(o, "preempted", gl)) /* else o owns it */
        cJSON_Delete(gl), ok = 0;
    ok = ok && cJSON_AddNumberToObject(o, "workers", K) && cJSON_AddNumberToObject(o, "workers_wanted", wanted);
    char *out = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!out || strlen(out) >= cap) {
        free(out);
        return 0;
    }
    snprintf(cmd, cap, "%s", out);
    free(out);
    j->wanted = wanted;
    for (int i = 0; i < n_changed && j->n_pev < (int)(sizeof j->pev / sizeof j->pev[0]); i++) {
        int p = changed[i];
        j->pev[j->n_pev++] = (preempt_event){.iteration = (int64_t)c->st.iteration, .proc = p,
                                                  .restored = p && !pr->gone[p], .workers = K, .idle_s = -1};
        fprintf(stderr, "scavenger train: iteration %llu: process %d%s%s %s; the job goes on with %d worker(s)\n",
                (unsigned long long)c->st.iteration, p, pr->nh ? " on " : "", host_of(pr, p),
                !p ? "has a preemption notice (it runs the job and stays: the state is written, and its take-down "
                     "ends the job, resumed from that checkpoint)"
                : pr->gone[p] ? "has a preemption notice" : "is back", K);
    }
    return 1;
}

/* Root: the reply's "preemptions" array (the events since the last reply). */
static void preempt_events_json(ejob *j, char *buf, size_t cap)
{
    size_t len = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < j->n_pev && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len,
                                "%s{\"iteration\":%lld,\"process\":%d,\"event\":\"%s\",\"workers\":%d,\"idle_s\":%.6f}",
                                i ? "," : "", (long long)j->pev[i].iteration, j->pev[i].proc,
                                j->pev[i].restored ? "restored" : "notice", j->pev[i].workers, j->pev[i].idle_s);
    if (len < cap) snprintf(buf + len, cap - len, "]");
    j->n_pev = 0;
}

/* A notice or a restore stopped the segment (every worker at the same iteration): it goes on
 * at the new K, as a command the root gives itself (like a straggler's replacement); at a
 * notice the state is written first (SCV_SURVIVE_POLICY.checkpoint_on_notice; collective).
 * 0 when the job cannot go on (*rc). */
static int elastic_preempted(run_ctx *c, ejob *j, int notice, int *rc, scv_err *err)
{
    c->n_shares = 0; /* another K: dynamic batching starts again */
    double t0 = scv_now();
    if (notice && SCV_SURVIVE_POLICY.checkpoint_on_notice && j->base->checkpoint_dir) {
        c->p = &j->last;
        *rc = scv_train_save_checkpoint(c, 0, err);
        c->p = j->base;
        if (*rc) {
            j->release = 1;
            return 0;
        }
    }
    if (j->root) {
        j->t0 = t0;
        if (!rewrite_cmd(j->cmd, CMD_BYTES, j->pr, -1, c, scv_comm_all_size(c->comm)) ||
            !preempt_apply(j, j->cmd, CMD_BYTES)) {
            scv_err_set(err, SCV_ENOMEM, "elastic: the continued command does not fit");
            elastic_abort(c, err, "elastic: the continued command does not fit");
        }
        j->have = 1;
    }
    j->dirty = 1;
    return 1;
}

/* The job's start: this program's path, the control files (root), the buffers. */
static int elastic_open(run_ctx *c, ejob *j, scv_err *err)
{
    int rc = SCV_OK;
    ssize_t xn = readlink("/proc/self/exe", j->ctl.exe, sizeof j->ctl.exe - 1);
    if (xn <= 0) rc = scv_err_set(err, SCV_EIO, "cannot resolve /proc/self/exe: %s", strerror(errno));
    else j->ctl.exe[xn] = 0;
    j->root = scv_comm_all_rank(c->comm) == 0;
    if (!rc && j->root) {
        char path[4096];
        snprintf(path, sizeof path, "%s/cmd", j->base->elastic_control);
        if (!(j->ctl.cmd = fopen(path, "r")))
            rc = scv_err_set(err, SCV_EIO, "%s: cannot open the elastic control file: %s", path, strerror(errno));
        snprintf(path, sizeof path, "%s/reply", j->base->elastic_control);
        if (!rc && !(j->ctl.reply = fopen(path, "a")))
            rc = scv_err_set(err, SCV_EIO, "%s: cannot open the elastic reply file: %s", path, strerror(errno));
        if (!rc) control_reply(&j->ctl, "{\"type\":\"ready\",\"processes\":%d}", scv_comm_all_size(c->comm));
    }
    j->cmd = calloc(1, CMD_BYTES), j->evs = calloc(1, CMD_BYTES);
    j->pr = calloc(1, sizeof *j->pr);
    if (!j->cmd || !j->evs || !j->pr) rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
    if (rc) elastic_abort(c, err, "elastic job failed");
    procs_init(j->pr, j->base->elastic_hosts);
    if (!scv_comm_joined(c->comm)) /* mpirun started the first K, all active */
        for (int i = 0; i < scv_comm_size(c->comm); i++) j->pr->members[j->pr->n_members++] = i;
    j->last = *j->base;
    j->pending = -1;
    j->spare_up = -1; /* not counted yet: the first command's spare hosts are no restore */
    j->run = c;
    if (j->root) c->preempt_poll = preempt_poll, c->preempt_ctx = j;
    return rc;
}

/* Root: cmd's "workers" set to K (and a split of B over the old K dropped: the even split);
 * with no_drop, its straggler rule's "drop_below" set to 0 (the speed was the model's for the
 * old K: the loop's next segment brings one for the K it asks). 0 when it does not fit or
 * is not a segment command (left as it was). */
static int cmd_set_workers(char *cmd, size_t cap, int K, int no_drop)
{
    cJSON *o = cJSON_Parse(cmd);
    int ok = cJSON_IsObject(o) && cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, "workers"));
    if (ok) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, "split");
        cJSON_DeleteItemFromObjectCaseSensitive(o, "workers");
        ok = cJSON_AddNumberToObject(o, "workers", K) != NULL;
    }
    cJSON *sr = cJSON_GetObjectItemCaseSensitive(o, "straggler");
    if (ok && no_drop && cJSON_IsObject(sr)) {
        cJSON_DeleteItemFromObjectCaseSensitive(sr, "drop_below");
        ok = cJSON_AddNumberToObject(sr, "drop_below", 0) != NULL;
    }
    char *out = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    ok = out && strlen(out) < cap;
    if (ok) snprintf(cmd, cap, "%s", out);
    free(out);
    return ok;
}

/* Root: a command from the driver after a drop: its K cut to the processes not dropped and
 * the spare hosts (without a host list a fresh local process may take a dropped one's
 * place: no cut), so that rewrite_cmd does not take a dropped worker back. 0 when the
 * command cannot be rewritten. */
static int drop_cap(ejob *j, char *cmd, size_t cap)
{
    const procs *pr = j->pr;
    int all = scv_comm_all_size(j->run->comm), n_dropped = 0;
    for (int i = 1; i < all; i++) n_dropped += j->dropped[i] && pr->excl[i];
    if (!n_dropped || !pr->nh) return 1;
    cJSON *o = cJSON_Parse(cmd);
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "workers");
    int K = cJSON_IsNumber(w) ? (int)w->valuedouble : 0, most = all - n_dropped + (pr->nh > all ? pr->nh - all : 0);
    cJSON_Delete(o);
    if (K <= most || most < 1) return 1;
    fprintf(stderr, "scavenger train: %d worker(s) asked for, %d process(es) dropped as too slow: %d\n", K, n_dropped,
            most);
    return cmd_set_workers(cmd, cap, most, 0);
}

/* The next command, read by the root (unless it holds one already) and broadcast to every
 * process of the job, parked ones included; its JSON (NULL: not JSON). */
static cJSON *elastic_next(run_ctx *c, ejob *j, scv_err *err)
{
    if (j->root && !j->resend && !j->have) {
        j->t0 = scv_now();
        int r = control_read(&j->ctl, j->cmd, CMD_BYTES);
        if (r == SCV_EINTR) snprintf(j->cmd, CMD_BYTES, "{\"cmd\":\"stop\",\"why\":\"interrupted\"}");
        else if (!drop_cap(j, j->cmd, CMD_BYTES) ||
                 !rewrite_cmd(j->cmd, CMD_BYTES, j->pr, -1, NULL, scv_comm_all_size(c->comm))) /* too long or
                                                                                  not JSON: refused below */
            snprintf(j->cmd, CMD_BYTES, "{\"cmd\":\"not a command\"}");
        else
            preempt_apply(j, j->cmd, CMD_BYTES); /* the processes gone: the workers left */
    } else if (!j->root && !j->resend) {
        j->t0 = scv_now();
    }
    j->resend = j->have = 0;
    if (scv_comm_command(c->comm, j->cmd, CMD_BYTES, err)) elastic_abort(c, err, "command broadcast failed");
    return cJSON_Parse(j->cmd);
}

/* A stop (or not a command): the state trained since the last checkpoint made durable. */
static int elastic_stop(run_ctx *c, ejob *j, const cJSON *k, scv_err *err)
{
    int bad = !cJSON_IsString(k) || strcmp(k->valuestring, "stop"), rc = SCV_OK;
    if (bad && j->root) control_reply(&j->ctl, "{\"type\":\"error\",\"error\":\"not a command; stopping\"}");
    else if (bad) { /* every process got the same bytes: the root's reply says it; here, in a joined process's log */
        char head[61];
        size_t n = 0;
        for (; n < sizeof head - 1 && j->cmd[n]; n++) /* its start, printable */
            head[n] = j->cmd[n] >= 0x20 && j->cmd[n] < 0x7f ? j->cmd[n] : '?';
        head[n] = 0;
        fprintf(stderr, "scavenger train: process %d: the command broadcast is not a command (%s); stopping\n",
                scv_comm_all_rank(c->comm), head);
    }
    if (j->dirty && c->rank >= 0 && j->base->checkpoint_dir) { /* the state trained since: durable */
        c->p = &j->last;
        rc = scv_train_save_checkpoint(c, 0, err);
        c->p = j->base;
    }
    return rc;
}

/* A straggler stopped the segment (every worker at the same iteration): the segment goes on
 * without it (a spare process takes its place), as a command that all-rank 0 gives itself
 * and broadcasts like any other. */
static void elastic_replace(run_ctx *c, ejob *j, const scv_train_result *res, scv_err *err)
{
    int proc = j->pr->members[res->straggler];
    c->n_shares = 0; /* a fresh worker in its place: dynamic batching starts again */
    if (j->root) {
        scv_straggler_event *e = &c->events[c->strag_event];
        e->replaced = 1;
        snprintf(e->note + strlen(e->note), sizeof e->note - strlen(e->note), "; replaced");
        j->pending = c->strag_event;
        j->t0 = scv_now();
        if (!rewrite_cmd(j->cmd, CMD_BYTES, j->pr, proc, c, scv_comm_all_size(c->comm))) { /* a full window
                                                      values made it too long: the job ends */
            scv_err_set(err, SCV_ENOMEM, "elastic: the continued command does not fit");
            elastic_abort(c, err, "elastic: the continued command does not fit");
        }
        j->have = 1;
    }
    j->dirty = 1;
}

/* A slow worker the loop's model says to drop (straggler_action in train_segment.c) stopped
 * the segment (every worker at the same iteration): the segment goes on without it at K - 1
 * workers and the same B (its share goes to the others, like a preemption notice's shrink;
 * the position and the sample order carry), as a command the root gives itself. */
static void elastic_drop(run_ctx *c, ejob *j, const scv_train_result *res, scv_err *err)
{
    int proc = j->pr->members[res->straggler], K = j->pr->n_members - 1;
    c->n_shares = 0; /* another K: dynamic batching starts again */
    if (j->root) {
        scv_straggler_event *e = &c->events[c->strag_event];
        e->dropped = 1;
        size_t n = strlen(e->note);
        snprintf(e->note + n, sizeof e->note - n, "; dropped: %d worker(s) at B = %d (no more drops in this segment)",
                 K, j->last.batch);
        j->dropped[proc] = 1;
        j->pending = c->strag_event;
        j->t0 = scv_now();
        if (!cmd_set_workers(j->cmd, CMD_BYTES, K, 1) ||
            !rewrite_cmd(j->cmd, CMD_BYTES, j->pr, proc, c, scv_comm_all_size(c->comm))) {
            scv_err_set(err, SCV_ENOMEM, "elastic: the continued command does not fit");
            elastic_abort(c, err, "elastic: the continued command does not fit");
        }
        j->have = 1;
    }
    j->dirty = 1;
}

/* Root: the segment's reply, with the stragglers found (and why those not replaced were not). */
static void elastic_reply(run_ctx *c, ejob *j, const scv_train_result *res, int src, const scv_err *se,
                          double resize_s)
{
    const procs *pr = j->pr;
    for (int i = 0; j->root && i < c->n_events; i++) { /* found, not replaced: why */
        scv_straggler_event *e = &c->events[i];
        if (!e->replaced && !e->dropped && !strstr(e->note, "not replaced") && !strstr(e->note, "choice: absorb"))
            snprintf(e->note + strlen(e->note), sizeof e->note - strlen(e->note), "; not replaced: %s",
                     e->worker == 0 ? "worker 0 runs the job"
                     : !pr->nh      ? "no host list (local processes share this machine's cores)"
                     : !c->strag_stop ? "no spare host"
                                      : "the segment ended at that iteration");
    }
    if (c->rank == 0) {
        char js[16384], esc[2 * sizeof se->msg];
        scv_train_result_json(res, js, sizeof js);
        char pev[4096];
        events_json(j->evs, CMD_BYTES, c);
        preempt_events_json(j, pev, sizeof pev);
        control_reply(&j->ctl,
                      "{\"type\":\"segment\",\"rc\":%d,\"error\":%s,\"resize_s\":%.6f,\"stragglers\":%s,"
                      "\"preemptions\":%s,\"result\":%s}",
                      src, scv_json_strbuf(esc, sizeof esc, src ? se->msg : ""), resize_s, j->evs, pev, js);
    }
}

/* One segment command: its parameters, the resize, the segment, the reply. 1: the job goes
 * on with the next command; 0: it ends (*rc). */
static int elastic_segment(run_ctx *c, ejob *j, cJSON *o, scv_train_result *res, int *rc, scv_err *err)
{
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(o, "exclude"), *v;
    procs *pr = j->pr;
    memset(pr->excl, 0, sizeof pr->excl); /* the command's list is the whole of it */
    cJSON_ArrayForEach(v, ex) if (cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble < SCV_MAX_WORKERS)
        pr->excl[(int)v->valuedouble] = 1;
    memset(pr->gone, 0, sizeof pr->gone); /* and its "preempted" */
    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(o, "preempted"))
        if (cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble < SCV_MAX_WORKERS) pr->gone[(int)v->valuedouble] = 1;
    scv_train_params q;
    scv_err qe = {0};
    int qrc = segment_params(j->base, o, &q, j->split, j->hist, j->metrics, sizeof j->metrics, &qe);
    cJSON_Delete(o);
    if (qrc) { /* every process read the same command: all refuse it alike, the job goes on */
        char esc[2 * sizeof qe.msg];
        if (j->root)
            control_reply(&j->ctl, "{\"type\":\"segment\",\"rc\":%d,\"refused\":true,\"error\":%s}", qrc,
                          scv_json_strbuf(esc, sizeof esc, qe.msg));
        return 1;
    }
    int grew = 0, joined = -1, left = 0;
    if ((*rc = elastic_resize(c, &j->ctl, pr, &q, &grew, &joined, &left, err))) elastic_abort(c, err, "resizing failed");
    if (left) { /* under a notice, out of the job (join mode): it ends here, before its VM's take-down */
        fprintf(stderr, "scavenger train: process %d left the job (preemption notice)\n", scv_comm_all_rank(c->comm));
        return 0;
    }
    if (grew) return j->resend = 1;
    double resize_s = scv_now() - j->t0;
    if (j->root && j->pending >= 0) { /* the straggler's replacement: the process that joined */
        scv_straggler_event *e = &c->events[j->pending];
        snprintf(e->by_host, sizeof e->by_host, "%s", host_of(pr, joined));
        e->idle_s = resize_s;
        j->pending = -1;
    }
    for (int i = 0; j->root && i < j->n_pev; i++) /* the preemptions' resize */
        if (j->pev[i].idle_s < 0) j->pev[i].idle_s = resize_s;
    if (c->rank < 0) return 1; /* parked: wait for the next command */
    c->p = &q;
    c->strag_stop = can_replace(pr, scv_comm_all_size(c->comm), q.workers);
    memset(res, 0, sizeof *res);
    scv_err se = {0};
    int src = c->rank == 0 && q.metrics_path ? scv_train_open_metrics(c, "a", &se) : SCV_OK;
    if (!(src = scv_comm_agree(c->comm, src, &se))) src = scv_train_segment(c, res, &se);
    res->rank = c->rank;
    j->last = q;
    c->p = j->base;
    for (int i = 0; j->root && i < c->n_events; i++) { /* where the stragglers found ran */
        scv_straggler_event *e = &c->events[i];
        if (!e->host[0] && e->worker < pr->n_members)
            snprintf(e->host, sizeof e->host, "%s", host_of(pr, pr->members[e->worker]));
    }
    if (!src && !strcmp(res->stopped_by, "straggler")) {
        if (j->root && c->strag_action == SCV_HETERO_DROP) elastic_drop(c, j, res, err);
        else elastic_replace(c, j, res, err); /* and the other ranks (the root's part aside, alike) */
        return 1;
    }
    if (!src && (!strcmp(res->stopped_by, "preempt") || !strcmp(res->stopped_by, "restored")))
        return elastic_preempted(c, j, !strcmp(res->stopped_by, "preempt"), rc, err);
    elastic_reply(c, j, res, src, &se, resize_s);
    if (src) { /* interrupted or failed (every active rank alike: train_segment agrees):
                * the job ends; the driver resumes from the checkpoint */
        *rc = src, j->release = 1;
        if (err) *err = se;
        return 0;
    }
    j->dirty = q.no_end_checkpoint;
    return 1;
}

int scv_train_elastic_main(run_ctx *c, scv_train_result *res, scv_err *err)
{
    ejob *j = calloc(1, sizeof *j);
    if (!j) {
        scv_err_set(err, SCV_ENOMEM, "out of memory");
        elastic_abort(c, err, "elastic job failed");
        return SCV_ENOMEM;
    }
    j->base = c->p;
    int rc = elastic_open(c, j, err);
    while (!rc) {
        cJSON *o = elastic_next(c, j, err);
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "cmd");
        if (!cJSON_IsString(k) || strcmp(k->valuestring, "segment")) { /* stop, or not a command */
            rc = elastic_stop(c, j, k, err);
            cJSON_Delete(o);
            break;
        }
        if (!elastic_segment(c, j, o, res, &rc, err)) break;
    }
    /* a failed segment: the active ranks release the parked ones with a stop (rank 0 sends,
     * the others take part in the broadcast the parked ones wait in) */
    if (j->release) {
        snprintf(j->cmd, CMD_BYTES, "{\"cmd\":\"stop\"}");
        scv_comm_command(c->comm, j->cmd, CMD_BYTES, NULL);
    }
    free(j->cmd);
    free(j->evs);
    free(j->pr);
    if (j->ctl.cmd) fclose(j->ctl.cmd);
    if (j->ctl.reply) fclose(j->ctl.reply);
    free(j);
    return rc;
}
