/*
 * exec.c - the exec job driver: drives an external trainer (a user's PyTorch script, say)
 * that honours docs/TRAINER-CONTRACT.md. Each segment is one `mpirun -np K /bin/sh -c EXEC`
 * (locally, on an emulated cluster, or on a hostfile's machines) with the contract's SCV_*
 * variables; the trainer resumes its own checkpoint, trains, writes metrics lines and
 * checkpoints when it stops. The trainer knows only the simple rules (an iteration count,
 * an epoch bound); the segment's other stopping rules (the target over a window of
 * evaluations, the warm-up's noise rule, the profiling rule on the iteration time) are
 * evaluated here on the metrics as they are written, and the driver stops the trainer with
 * SIGUSR1 (which mpirun forwards to every process); an accuracy target reached on subset
 * evaluations waits for the trainer's final evaluation on the whole test set (exec_rules.h).
 * Every process also gets torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK,
 * LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT: a port free for each segment). The start-up
 * probe is bounded (tj_watchdog's probe_s, probe_iters) and its lines are checked as they
 * come. Its progress is the trainer's scavenger-state.json. Metrics files, tailing and
 * recovery are trainjob.c's.
 * Files: RUN_DIR/job.jsonl (the probe), RUN_DIR/seg-NNN-PHASE-kK-bB[-retryN].jsonl,
 * RUN_DIR/ckpt/ (the trainer's).
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "../io/io.h"
#include "trainjob.h"
#include "exec_rules.h"
#include "../core/util.h"
#include "../core/rundir.h"
#include "../io/segwire.h"
#include "../runtime/launch.h"
#include "../runtime/procs.h"
#include "child.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct exec_drv {
    scv_job_driver vt;
    trainjob tj;
    uint64_t seed;
    scv_exec_rules r;
    const scv_measure_sink *outer; /* the loop's sink, while a segment runs */
    double probing;                /* when the start-up probe started (0: not probing) */
    double noted;                  /* its quiet seconds said by the last probe_note */
    int subset_now;                /* the evaluation line being read said "set":"subset" */
} exec_drv;

/* Ctrl-C (or SIGTERM) while a segment runs: the first stops the trainer at an iteration
 * boundary (SIGUSR1), a second ends it (SIGTERM to mpirun, then SIGKILL). */
static volatile sig_atomic_t g_int;
static void on_int(int sig) { (void)sig; g_int++; }

/* The rank guards' account of the processes a trainer left running (RUN_DIR/LEFTOVERS). */
#define LEFTOVERS "leftovers.log"

/* Seconds a trainer has to stop after SIGUSR1 before it is ended (a slow iteration, the
 * checkpoint), and after SIGTERM before SIGKILL. */
#define STOP_GRACE_S 120.0
#define KILL_GRACE_S 10.0
/* The start-up probe's configuration: one worker, this global batch (SCV_BATCH). */
#define PROBE_BATCH 32

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The segment's rules (src/model/stoprule.c, the trainer's own) on the trainer's metrics:
 * the cap, the noise rule (statistics a line leaves null are NaN: skipped) and the profiling
 * rule after each iteration, the target window after each evaluation. */
void scv_exec_rules_init(scv_exec_rules *x, const scv_segment_spec *s, int K)
{
    memset(x, 0, sizeof *x);
    x->accuracy = x->full_accuracy = x->window_mean = NAN;
    scv_stoprule_spec rs = {.until_iterations = s->until_iterations, .target_accuracy = s->target_accuracy,
                            .target_loss = s->target_loss, .window = s->target_window, .history = s->history,
                            .n_history = s->n_history, .workers = K, .noise_window = s->noise_window,
                            .noise_tol = s->noise_tol, .time_rse = s->time_rse, .time_min_iters = s->time_min_iters};
    scv_stoprule_init(&x->r, &rs);
}

scv_stop_verdict scv_exec_rules_iter(scv_exec_rules *x, const scv_iter_sample *s)
{
    if (x->fired) return SCV_STOP_NONE;
    scv_stop_verdict v = scv_stoprule_capped(&x->r, s->iteration)
                             ? SCV_STOP_ITERATIONS
                             : scv_stoprule_on_iteration(&x->r, s->batch, s->g_local, s->g_global, s->t_iter);
    if (v != SCV_STOP_NONE) x->fired = scv_stop_verdict_name(v);
    return v;
}

scv_stop_verdict scv_exec_rules_eval(scv_exec_rules *x, const scv_eval_sample *s)
{
    return scv_exec_rules_eval_on(x, s, 0);
}

scv_stop_verdict scv_exec_rules_eval_on(scv_exec_rules *x, const scv_eval_sample *s, int subset)
{
    if (isfinite(s->accuracy)) x->accuracy = s->accuracy;
    if (isfinite(s->accuracy) && !subset) x->full_accuracy = s->accuracy;
    x->n_subset += subset != 0;
    const int by_loss = x->r.spec.target_loss > 0;
    double v = by_loss ? s->train_loss : s->accuracy;
    if (scv_stoprule_on_evaluation(&x->r, v) != SCV_STOP_TARGET || x->reached || x->to_confirm) return SCV_STOP_NONE;
    if (subset && !by_loss) /* stopped for the whole set's verdict (its final evaluation) */
        x->to_confirm = 1, x->window_mean = x->r.mean;
    else
        x->reached = 1;
    if (!x->fired) x->fired = "target";
    return SCV_STOP_TARGET;
}

void scv_exec_rules_full(scv_exec_rules *x, double accuracy)
{
    if (!isfinite(accuracy)) return;
    x->accuracy = x->full_accuracy = accuracy;
    if (!x->to_confirm) return;
    x->to_confirm = 0;
    x->reached = accuracy >= x->r.spec.target_accuracy - SCV_TARGET_CONFIRM_TOL;
    x->confirmed = x->reached ? 1 : -1;
}

static void on_iter(void *ctx, const scv_iter_sample *x)
{
    exec_drv *e = ctx;
    scv_exec_rules_iter(&e->r, x);
    if (e->outer && e->outer->on_iter) e->outer->on_iter(e->outer->ctx, x);
}

/* An evaluation line as read: its set (for on_eval, which follows for a periodic one); a
 * non-periodic one on the whole set decides a window that waits for it; a periodic one
 * without the accuracy an accuracy target needs breaks the contract (it could never reach
 * the target). */
static void on_eval_line(void *ctx, const scv_ml_eval *x, int lineno)
{
    exec_drv *e = ctx;
    trainjob *t = &e->tj;
    int periodic = !x->role[0] || !strcmp(x->role, "periodic");
    e->subset_now = !strcmp(x->set, "subset");
    if (!periodic && !e->subset_now) scv_exec_rules_full(&e->r, x->test_accuracy);
    /* (a loss target's train_loss may be null: a period without samples) */
    if (periodic && e->r.r.spec.target_accuracy > 0 && !(e->r.r.spec.target_loss > 0) && isnan(x->test_accuracy) &&
        !t->line_err.code)
        scv_err_set(&t->line_err, SCV_EPARSE, "%s:%d: evaluation line lacks field 'test_accuracy': an accuracy target "
                    "(--target-accuracy) needs it on every periodic evaluation (a fraction in 0..1)", t->tail_path,
                    lineno);
}

static void on_eval(void *ctx, const scv_eval_sample *x)
{
    exec_drv *e = ctx;
    scv_exec_rules_eval_on(&e->r, x, e->subset_now);
    if (e->outer && e->outer->on_eval) e->outer->on_eval(e->outer->ctx, x);
}

/* torchrun's per-process variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE) from Open
 * MPI's, exported by the shell of each process before the trainer's command: an `env://`
 * script runs as under torchrun (MASTER_ADDR and MASTER_PORT, the same for all, come with the
 * environment). A fixed text, nothing taken from anywhere else. */
#define TORCHRUN_ENV                                                                                              \
    "RANK=\"$OMPI_COMM_WORLD_RANK\" WORLD_SIZE=\"$OMPI_COMM_WORLD_SIZE\" "                                          \
    "LOCAL_RANK=\"$OMPI_COMM_WORLD_LOCAL_RANK\" LOCAL_WORLD_SIZE=\"$OMPI_COMM_WORLD_LOCAL_SIZE\"; "                  \
    "export RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE; "

/* How many ports below the kernel's ephemeral range the rendezvous port is drawn from. */
#define RENDEZVOUS_PORTS 10000

/* The first port of the kernel's ephemeral range (net.ipv4.ip_local_port_range): bind(0) and
 * every outgoing connection of any process draw from there. 32768 when it cannot be read. */
static int ephemeral_low(void)
{
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    int lo = 32768;
    if (f) {
        if (fscanf(f, "%d", &lo) != 1) lo = 32768;
        fclose(f);
    }
    return lo;
}

/* port when a TCP socket can listen on it now (any address), else 0; port 0: the kernel's
 * choice. */
static int port_bindable(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0), got = 0;
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons((uint16_t)port);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        got = ntohs(a.sin_port);
    if (fd >= 0) close(fd);
    return got;
}

/* A TCP port free on this machine for the segment's rendezvous (SCV_MASTER_PORT and
 * MASTER_PORT), so each segment gets one no other process holds (the previous segment's, in
 * TIME_WAIT, included): drawn in the RENDEZVOUS_PORTS below the kernel's ephemeral range.
 * The kernel's own choice (bind to port 0) lies in that range, where it hands ports to every
 * outgoing connection and bind(0) of any process until the trainer binds it: with the test
 * binaries side by side a torch rendezvous failed "Address already in use". Where none is free
 * below the range, the kernel's choice; where that fails too, one drawn in 20000..59999. (On a
 * cluster or a hostfile's hosts worker 0 runs elsewhere: a port free here is still unlikely to
 * be taken there.) */
static int free_port(void)
{
    const int lo = ephemeral_low(), first = lo - RENDEZVOUS_PORTS > 1024 ? lo - RENDEZVOUS_PORTS : 1024;
    unsigned draw = (unsigned)getpid() * 7919u + (unsigned)time(NULL) * 104729u + (unsigned)clock();
    for (int i = 0; i < 64 && lo - first > 0; i++) {
        draw = draw * 1103515245u + 12345u;
        int port = first + (int)((draw >> 8) % (unsigned)(lo - first));
        if (port_bindable(port) == port) return port;
    }
    int port = port_bindable(0);
    if (port < 1024) port = 20000 + (int)(((unsigned)getpid() * 7919u + (unsigned)time(NULL)) % 40000u);
    return port;
}

/* Starts the trainer at K workers, global batch B; fills *pid. */
static int launch(exec_drv *e, int K, int B, const double *split, const char *metrics, const char *ckpt_dir,
                  int resume, int probe, const scv_segment_spec *s, pid_t *pid, scv_err *err)
{
    trainjob *t = &e->tj;
    /* mpirun passes SIGUSR1 to the shell too: with a trap the shell outlives it (dash does
     * not always exec the trainer) while the trainer, which gets its own, stops cleanly; a
     * fixed prefix, nothing taken from anywhere else */
    char log[1200];
    int rc = scv_run_file_path(t->run_dir, SCV_RUN_TRAINER_LOG, log, sizeof log, err);
    if (rc) return rc;
    char *cmd = malloc(strlen(t->exec) + sizeof TORCHRUN_ENV + 32);
    if (!cmd) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    sprintf(cmd, "trap : USR1; " TORCHRUN_ENV "%s", t->exec);
    /* each process is the rank guard (src/runtime/rankguard.c) running the shell: what the
     * trainer leaves running when it exits is ended and named in RUN_DIR/leftovers.log */
    char report[1200];
    snprintf(report, sizeof report, "%s/" LEFTOVERS, t->run_dir);
    char *argv[] = {"rank-guard", "--report", report, "--", "/bin/sh", "-c", cmd, NULL};
    scv_launch l = {.workers = K, .threads = 1, .program = t->exe, .argv = argv, .argc = 7,
                    .cluster = t->cluster, .hostfile = t->hostfile, .log = log, .own_group = 1,
                    .place_type = probe ? NULL : t->placed};
    char addr[256];
    rc = scv_launch_rank0_addr(&l, addr, sizeof addr, err);
    if (rc) {
        free(cmd);
        return rc;
    }
    /* the contract's variables (docs/TRAINER-CONTRACT.md), through the segment codec */
    scv_segwire *w = calloc(1, sizeof *w);
    char **env = NULL;
    int w_port = 0;
    if (!w) rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
    if (!rc) {
        w->workers = K, w->batch = B;
        scv_segwire_set_split(w, K, split);
        snprintf(w->master_addr, sizeof w->master_addr, "%s", addr);
        w->master_port = free_port();
        snprintf(w->checkpoint_dir, sizeof w->checkpoint_dir, "%s", ckpt_dir);
        w->resume = resume ? 1 : 0;
        snprintf(w->metrics, sizeof w->metrics, "%s", metrics);
        w->until_iterations = probe ? 1 : s->until_iterations;
        w->epochs = probe ? 0.0 : s->max_epochs;
        w->eval_every_epochs = probe ? 0.0 : s->eval_every_epochs;
        /* periodic evaluations on a subset (SCV_EVAL_SUBSET), and, where an accuracy target
         * may have to be confirmed on the whole set, the final evaluation (SCV_FINAL_EVAL) */
        w->eval_subset = probe ? 0 : s->eval_subset;
        w->eval_max_share = probe ? 0 : s->eval_max_share;
        w->final_eval = !probe && s->eval_subset > 0 && s->target_accuracy > 0 && !(s->target_loss > 0);
        w->seed = e->seed ? e->seed : 1;
        w->probe = probe ? 1 : 0;
        w_port = w->master_port;
        rc = scv_segwire_env(w, &env, err);
        free(w);
    }
    /* the contract's variables, then torchrun's */
    const char *v[64];
    int nv = 0;
    scv_launch_rdv rdv;
    for (int i = 0; env && env[i] && nv < 64 - 1 - SCV_LAUNCH_RDV_VARS; i++) v[nv++] = env[i];
    if (!rc) nv += scv_launch_rendezvous_env(&l, addr, w_port, &rdv, v + nv);
    v[nv] = NULL;
    l.env = v;
    if (rc) {
        free(cmd);
        return rc;
    }
    if (mkdir(ckpt_dir, 0755) != 0 && errno != EEXIST) rc = scv_err_set(err, SCV_EIO, "%s: cannot create: %s", ckpt_dir, strerror(errno));
    if (!rc) rc = scv_launch_start(&l, pid, err);
    scv_segwire_env_free(env);
    free(cmd);
    return rc;
}

/* The start-up probe past its policy (tj_watchdog's probe_s, probe_iters): 1 with why
 * naming the contract's variable the trainer ignores. */
static int probe_overrun(const exec_drv *e, char *why, size_t cap)
{
    const trainjob *t = &e->tj;
    if (!e->probing) return 0;
    if (t->res && t->res->iterations > t->wd.probe_iters) {
        snprintf(why, cap, "it ignores SCV_UNTIL_ITERATIONS=1 and SCV_PROBE=1: the start-up probe wrote %lld iteration "
                 "lines where one was asked (stop after SCV_UNTIL_ITERATIONS iterations in all)",
                 (long long)t->res->iterations);
        return 1;
    }
    if (scv_now() - e->probing > t->wd.probe_s) {
        snprintf(why, cap, "the start-up probe (one iteration: SCV_UNTIL_ITERATIONS=1, SCV_PROBE=1) ran past its %g s "
                 "(--stall-timeout); %s", t->wd.probe_s, t->wd_seen[0] ? "it ignores SCV_UNTIL_ITERATIONS"
                 : "it wrote nothing to SCV_METRICS");
        return 1;
    }
    return 0;
}

/* While the probe has written no line: every note_every_s a note on stderr, with the
 * trainer's last output line (a script that ignores the contract runs its own course). */
static void probe_note(exec_drv *e)
{
    trainjob *t = &e->tj;
    double quiet = scv_now() - e->probing, limit = t->wd.startup_s < t->wd.probe_s ? t->wd.startup_s : t->wd.probe_s;
    double every = t->wd.note_every_s < limit / 4 ? t->wd.note_every_s : limit / 4; /* a few before the end */
    if (t->wd_seen[0] || quiet < e->noted + every) return;
    e->noted += every;
    const tj_errwatch *w = &t->ew;
    fprintf(stderr, "scavenger: the trainer has written no metrics line to SCV_METRICS in %.0f s (it is ended at "
            "%g s, --stall-timeout)%s%.240s%s\n", quiet, limit, w->n_last ? "; its output's last line: \"" : "; no output",
            w->n_last ? w->last[(w->n_last - 1) % 4] : "", w->n_last ? "\"" : "");
}

/* Waits for mpirun; ticks the metrics tail and stops the trainer (SIGUSR1) once a rule
 * fired or the user pressed Ctrl-C; a trainer that does not stop within STOP_GRACE_S (or a
 * second Ctrl-C) is ended: SIGTERM, then SIGKILL. The watchdog (tj_stalled, trainjob.h):
 * a trainer that writes no metrics line for its stated time is ended the same way at once
 * (why says so). Returns mpirun's exit status; *stopped: SIGUSR1 sent; *stalled: ended by
 * the watchdog. */
static int wait_job(exec_drv *e, pid_t pid, int *stopped, int *stalled, char *why, size_t cap)
{
    *stopped = 0, *stalled = 0;
    int st = 0, termed = 0;
    double last = 0, asked = 0;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) return -1;
        if (scv_now() - last > 0.1) {
            tj_tail_tick(&e->tj), tj_errwatch_tick(&e->tj), last = scv_now();
            if (e->probing) probe_note(e);
            /* nothing to save: ended at once, every process of it (once a stop was asked,
             * STOP_GRACE_S governs: the trainer may be writing its checkpoint) */
            if (!*stalled && !*stopped && (tj_stalled(&e->tj, why, cap) || probe_overrun(e, why, cap)))
                *stalled = 1, scv_kill_tree(pid), termed = 2;
        }
        /* a rule fired, Ctrl-C, or a line that fails the segment (a divergence, a broken contract) */
        if (!*stopped && !*stalled && (e->r.fired || g_int || e->tj.line_err.code || e->tj.diverged.code))
            kill(pid, SIGUSR1), *stopped = 1, asked = scv_now();
        if (*stopped && !termed && (g_int > 1 || scv_now() - asked > STOP_GRACE_S))
            kill(pid, SIGTERM), termed = 1, asked = scv_now();
        if (termed == 1 && scv_now() - asked > KILL_GRACE_S) kill(pid, SIGKILL), termed = 2;
        nap_ms(5);
    }
    /* a process mpirun left behind (a worker blocked in a collective after another one died,
     * or one paused with SIGSTOP, say): the job's process group is mpirun's own (own_group),
     * so it goes with it; and every process of the launch, wherever it was reparented (a
     * rank guard killed before it could end the trainer's children), by its tag */
    kill(-pid, SIGKILL);
    scv_proc_end_launch_said(pid, "the trainer's", "its mpirun");
    tj_tail_tick(&e->tj);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

#define PROBE "the start-up probe"

/* The size of the file at path (0: none yet). */
static long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : 0;
}

/* What the rank guards wrote to RUN_DIR/LEFTOVERS since offset from (the invocation's
 * processes its trainer left running, ended), said on stderr naming the invocation; a
 * segment's first line on a line of its own (the loop's progress line for it is begun). */
static void say_leftovers(const trainjob *t, const char *what, long from)
{
    char path[1200], line[3400];
    snprintf(path, sizeof path, "%s/" LEFTOVERS, t->run_dir);
    FILE *f = fopen(path, "r");
    if (!f) return;
    const char *lead = strcmp(what, PROBE) ? "\n" : "";
    if (fseek(f, from, SEEK_SET) == 0)
        while (fgets(line, sizeof line, f)) {
            fprintf(stderr, "%sscavenger: %s: the trainer left processes running: %s", lead, what, line);
            lead = "";
        }
    fclose(f);
}

/* SIGINT/SIGTERM reach g_int while the driver waits for a trainer (the probe too). */
static void catch_stops(struct sigaction *old_int, struct sigaction *old_term)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_int;
    g_int = 0;
    sigaction(SIGINT, &sa, old_int);
    sigaction(SIGTERM, &sa, old_term);
}

static void restore_stops(const struct sigaction *old_int, const struct sigaction *old_term)
{
    sigaction(SIGINT, old_int, NULL);
    sigaction(SIGTERM, old_term, NULL);
}

static int x_open(void *ctx, const char *run_dir, scv_job_info *job, scv_err *err)
{
    exec_drv *e = ctx;
    trainjob *t = &e->tj;
    int drc = tj_dirs(t, run_dir, err);
    if (drc) return drc;
    /* the probe: one iteration at K=1 with a throw-away checkpoint directory; its job line
     * describes the job (parameters, training-set size) */
    char path[1200], ck[1200];
    snprintf(path, sizeof path, "%s/job.jsonl", run_dir);
    snprintf(ck, sizeof ck, "%s/probe-ckpt", run_dir);
    unlink(path);
    scv_segment_spec none = {.phase = "probe"};
    pid_t pid;
    memset(&e->r, 0, sizeof e->r);
    /* a stop during the probe ends the trainer and the run is interrupted (stored so), not
     * this process killed with the run left `running` */
    struct sigaction old_int, old_term;
    catch_stops(&old_int, &old_term);
    char leftovers[1200];
    snprintf(leftovers, sizeof leftovers, "%s/" LEFTOVERS, run_dir);
    long lo_from = file_size(leftovers);
    int rc = launch(e, 1, PROBE_BATCH, NULL, path, ck, 0, 1, &none, &pid, err);
    if (rc) {
        restore_stops(&old_int, &old_term);
        return rc;
    }
    scv_segment_result dummy = {0};
    char why[1024] = "";
    tj_tail_start(t, path, NULL, &dummy);
    t->rd.workers = 1, t->rd.batch = PROBE_BATCH, t->rd.start_iter = 0; /* the probe's segment, from scratch */
    char log[1200];
    snprintf(log, sizeof log, "%s/" SCV_RUN_TRAINER_LOG, run_dir);
    tj_errwatch_start(t, log);
    e->probing = scv_now(), e->noted = 0;
    int stopped, stalled, st = wait_job(e, pid, &stopped, &stalled, why, sizeof why);
    e->probing = 0;
    say_leftovers(t, PROBE, lo_from);
    int wrote = t->lineno > 0 || t->overlong;
    tj_tail_stop(t);
    restore_stops(&old_int, &old_term);
    if (g_int || st == 130) /* Ctrl-C or a service's stop reached the probe */
        return scv_err_set(err, SCV_EINTR, "interrupted while the trainer started");
    /* its first lines are checked as they come: a bad job line, or an iteration line before
     * it, stops the probe at once and is named */
    if ((rc = tj_tail_verdict(t, err))) return rc;
    /* a script that does not read the contract's variables writes nothing where it is told */
    static const char ignores[] = "it ignores SCV_METRICS: worker 0 must append its metrics (the job line first) to "
                                  "the file $SCV_METRICS names, and stop after $SCV_UNTIL_ITERATIONS iterations";
    int mpi_failed = t->ew.first[0] != 0; /* Open MPI said its launch failed */
    if (stalled)
        return scv_err_set(err, SCV_EIO, "the trainer does not start: %s%s%s; its output is in %s "
                           "(docs/TRAINER-CONTRACT.md)", why, wrote || mpi_failed ? "" : "; ",
                           wrote || mpi_failed ? "" : ignores, log);
    if (st == 0 && !wrote)
        return scv_err_set(err, SCV_EINVAL, "the trainer does not follow the contract: `%.200s` exited 0 without "
                           "writing a metrics line to %s; %s (docs/TRAINER-CONTRACT.md)", t->exec, path, ignores);
    if (st != 0) { /* its own last words (this invocation's output), or mpirun's */
        char said[800];
        tj_errwatch_tail(t, mpi_failed, said, sizeof said);
        if (mpi_failed)
            return scv_err_set(err, SCV_EIO, "the trainer does not start: mpirun failed (exit %d): \"%.300s\"%s%.400s; "
                               "its output is in %s", st, t->ew.first, said[0] ? "; then: " : "", said, log);
        return scv_err_set(err, st == 2 ? SCV_EINVAL : SCV_EIO,
                           "the trainer does not start (`%.200s` exited %d on one worker, one iteration%s%.300s%s; "
                           "its output is in %s; docs/TRAINER-CONTRACT.md)",
                           t->exec, st, said[0] ? ": \"" : "", said, said[0] ? "\"" : "", log);
    }
    if ((rc = scv_job_load(path, &t->job, err)) || (rc = tj_types(t, &t->job, err))) return rc;
    *job = t->job;
    return SCV_OK;
}

static int x_progress(void *ctx, int64_t *iterations, double *samples, scv_err *err)
{
    return tj_progress(&((exec_drv *)ctx)->tj, iterations, samples, err);
}

static int x_configure(void *ctx, int workers, int batch, const double *split, scv_err *err)
{
    return tj_configure(&((exec_drv *)ctx)->tj, workers, batch, split, err);
}

static int x_train(void *ctx, const scv_segment_spec *spec, const scv_measure_sink *sink, scv_segment_result *out,
                   scv_err *err)
{
    exec_drv *e = ctx;
    trainjob *t = &e->tj;
    memset(out, 0, sizeof *out);
    out->accuracy = NAN;
    if (!t->K) return scv_err_set(err, SCV_EINVAL, "exec driver: train before configure");
    if (spec->comm) /* never trained silently dense: the contract has no compression */
        return scv_err_set(err, SCV_EINVAL,
                           "exec driver: the %s segment asks for a compressed exchange; an external trainer cannot "
                           "be told to compress (docs/TRAINER-CONTRACT.md)", spec->phase);
    int rc = tj_place(t, spec, &t->placed, err); /* the segment's VM type: held, or refused */
    if (rc) return rc;
    char metrics[1400];
    tj_segment_path(t, spec->phase, metrics, sizeof metrics);
    scv_exec_rules_init(&e->r, spec, t->K);
    e->outer = sink;
    scv_measure_sink mine = {.ctx = e, .on_iter = on_iter, .on_eval = on_eval};
    t->eval_line = on_eval_line, t->eval_line_ctx = e;
    struct sigaction old_int, old_term;
    catch_stops(&old_int, &old_term);
    pid_t pid;
    /* where the trainer resumes (scavenger-state.json): its first iteration line is past it */
    int64_t it0 = 0;
    double s0 = 0;
    int resume = tj_has_checkpoint(t), known = !resume || tj_progress(t, &it0, &s0, NULL) == SCV_OK;
    char leftovers[1200];
    snprintf(leftovers, sizeof leftovers, "%s/" LEFTOVERS, t->run_dir);
    long lo_from = file_size(leftovers);
    rc = launch(e, t->K, t->B, t->split, metrics, t->ckpt_dir, resume, 0, spec, &pid, err);
    int st = -1, stopped = 0, stalled = 0;
    char why[1024] = "";
    if (!rc) {
        tj_tail_start(t, metrics, &mine, out);
        t->rd.start_iter = known ? (double)it0 : NAN;
        char log[1200];
        snprintf(log, sizeof log, "%s/" SCV_RUN_TRAINER_LOG, t->run_dir);
        tj_errwatch_start(t, log);
        st = wait_job(e, pid, &stopped, &stalled, why, sizeof why);
        tj_tail_stop(t);
        char what[80];
        snprintf(what, sizeof what, "the %s segment (K=%d B=%d)", spec->phase, t->K, t->B);
        say_leftovers(t, what, lo_from);
    }
    restore_stops(&old_int, &old_term);
    e->outer = NULL;
    t->eval_line = NULL;
    if (rc) return rc;
    /* a divergence or a line that breaks the contract, whatever the exit: not retried */
    if (!g_int && (rc = tj_tail_verdict(t, err))) {
        t->attempt++;
        return rc;
    }
    int64_t it = 0;
    double samples = 0;
    scv_err pe = {0};
    int prc = tj_progress(t, &it, &samples, &pe);
    /* after SIGUSR1, Open MPI's mpirun exits 128 + SIGUSR1 even when every process exited 0 */
    int exited = !stalled && (st == 0 || (stopped && st == 128 + SIGUSR1));
    if (!exited) {
        t->attempt++;
        if (g_int) return scv_err_set(err, SCV_EINTR, "interrupted");
        if (stalled) /* a hang is a failed segment: retried from the checkpoint like a dead worker */
            return scv_err_set(err, SCV_EMPI,
                               "the %s segment (K=%d B=%d) was ended: %s; output in %s/" SCV_RUN_TRAINER_LOG,
                               spec->phase, t->K, t->B, why, t->run_dir);
        if (st == 2)
            return scv_err_set(err, SCV_EINVAL, "the trainer refused the %s segment (K=%d B=%d; exit 2); metrics in %s",
                               spec->phase, t->K, t->B, metrics);
        if (st == 3)
            return scv_err_set(err, SCV_EIO, "the trainer cannot write its files in the %s segment (K=%d B=%d; exit 3); "
                               "not retried: free space, then scavenger run --resume", spec->phase, t->K, t->B);
        char said[800];
        tj_errwatch_tail(t, 0, said, sizeof said);
        return scv_err_set(err, SCV_EMPI, "the %s segment (K=%d B=%d) failed (mpirun exited %d%s%.500s%s); metrics in "
                           "%s, output in %s/" SCV_RUN_TRAINER_LOG, spec->phase, t->K, t->B, st, said[0] ? ": \"" : "", said,
                           said[0] ? "\"" : "", metrics, t->run_dir);
    }
    if (g_int) return scv_err_set(err, SCV_EINTR, "interrupted");
    /* never "reached" on a subset alone: a trainer that evaluates on one must say what the
     * whole set gives when it stops */
    if (e->r.to_confirm) {
        t->attempt++;
        return scv_err_set(err, SCV_EINVAL, "the target window was reached on subset evaluations (\"set\":\"subset\", "
                           "mean %.4f >= %g) in the %s segment, but the trainer wrote no evaluation on the whole test "
                           "set when it stopped: with SCV_FINAL_EVAL=1 it must (an eval line with \"role\":\"final\","
                           "\"set\":\"full\"; docs/TRAINER-CONTRACT.md, \"The target\"); or run with --eval-subset 0 "
                           "(metrics in %s)", e->r.window_mean, spec->target_accuracy, spec->phase, metrics);
    }
    /* the contract's rules 4 and 5: the state of the last iteration, written at the stop */
    if (!prc && out->iterations && it != out->total_iterations)
        prc = scv_err_set(&pe, SCV_EINVAL, "its scavenger-state.json says iteration %lld, its last metrics line %lld: "
                          "it did not checkpoint when it stopped (rules 4 and 5 of docs/TRAINER-CONTRACT.md)",
                          (long long)it, (long long)out->total_iterations);
    if (prc) { /* not retried: the trainer breaks the contract */
        t->attempt++;
        return scv_err_set(err, SCV_EINVAL, "the trainer stopped (%s segment, K=%d B=%d) but %s", spec->phase, t->K,
                           t->B, pe.msg);
    }
    out->total_iterations = it, out->samples_seen = samples;
    out->accuracy = e->r.accuracy;
    out->reached = e->r.reached;
    return tj_segment_done(t, metrics, 1, out, err);
}

static int x_recover(void *ctx, int index, scv_segment_result *out, char *phase, size_t cap, int *workers, int *batch,
                     scv_err *err)
{
    return tj_recover(&((exec_drv *)ctx)->tj, index, out, phase, cap, workers, batch, err);
}

static int x_checkpoint(void *ctx, scv_err *err)
{
    (void)ctx, (void)err; /* every invocation ends with a checkpoint */
    return SCV_OK;
}

static void x_close(void *ctx)
{
    trainjob *t = &((exec_drv *)ctx)->tj;
    free(t->split);
    t->split = NULL;
    t->K = t->B = 0;
}

static void x_destroy(void *ctx)
{
    exec_drv *e = ctx;
    tj_free(&e->tj);
    free(e);
}

int scv_exec_driver_new(const scv_relaunch_opts *o, scv_job_driver **out, scv_err *err)
{
    *out = NULL;
    if (!o->exec || !o->exec[0]) return scv_err_set(err, SCV_EINVAL, "exec driver: no trainer command");
    exec_drv *e = calloc(1, sizeof *e);
    if (!e) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    int rc = tj_init(&e->tj, o, err);
    if (rc) {
        free(e);
        return rc;
    }
    e->seed = o->seed;
    e->vt = (scv_job_driver){.name = "exec", .ctx = e, .open = x_open, .progress = x_progress,
                             .configure = x_configure, .train = x_train, .checkpoint = x_checkpoint,
                             .close = x_close, .destroy = x_destroy, .recover = x_recover};
    *out = &e->vt;
    return SCV_OK;
}
