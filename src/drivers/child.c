/*
 * child.c - see child.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "child.h"
#include "../runtime/procs.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* SIGINT or SIGTERM while a child runs: the handler can only reach file-scope state.
 * SIGINT from a terminal reaches the child too (same process group); SIGTERM is usually
 * sent to this process alone, so it is passed on to the child, which stops cleanly. */
static volatile sig_atomic_t g_int, g_term, g_child;
static void on_signal(int sig)
{
    g_int = 1;
    if (sig == SIGTERM) {
        g_term = 1;
        if (g_child > 0) kill((pid_t)g_child, SIGTERM);
    }
}

/* The child's stderr, passed on and watched for its last error line. */
typedef struct errtap {
    char *line;           /* the last "scavenger " line (NULL: not kept) */
    size_t cap;
    char cur[1024];       /* the line being read (longer ones are cut) */
    size_t len;
} errtap;

/* Every complete stderr line also goes here while set (scv_run_self_on_line). */
static void (*g_on_line)(void *ctx, const char *line);
static void *g_on_line_ctx;

void scv_run_self_on_line(void (*fn)(void *ctx, const char *line), void *ctx)
{
    g_on_line = fn, g_on_line_ctx = ctx;
}

static void errtap_line(errtap *t)
{
    t->cur[t->len] = 0;
    if (g_on_line) g_on_line(g_on_line_ctx, t->cur);
    if (t->line && !strncmp(t->cur, "scavenger ", 10)) snprintf(t->line, t->cap, "%s", t->cur);
    t->len = 0;
}

static void errtap_feed(errtap *t, const char *p, size_t n)
{
    for (size_t off = 0; off < n;) { /* on to this process's stderr (a failed write is dropped) */
        ssize_t w = write(2, p + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        off += (size_t)w;
    }
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n' || p[i] == '\r') errtap_line(t);
        else if (t->len < sizeof t->cur - 1) t->cur[t->len++] = p[i];
    }
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

int scv_run_self(const char *exe, char *const *argv, char *json, size_t cap, int *status, int *interrupted,
                 void (*tick)(void *ctx), void *ctx, int tick_ms, scv_err *err)
{
    return scv_run_self_err(exe, argv, json, cap, NULL, 0, status, interrupted, tick, ctx, tick_ms, err);
}

int scv_run_self_err(const char *exe, char *const *argv, char *json, size_t cap, char *errline, size_t errcap,
                     int *status, int *interrupted, void (*tick)(void *ctx), void *ctx, int tick_ms,
                     scv_err *err)
{
    int fd[2], efd[2] = {-1, -1};
    json[0] = 0;
    if (errline && errcap) errline[0] = 0;
    *status = -1;
    if (interrupted) *interrupted = 0;
    if (pipe(fd)) return scv_err_set(err, SCV_EIO, "cannot start %s: pipe: %s", argv[1], strerror(errno));
    if (errline && pipe(efd)) {
        int e = errno;
        close(fd[0]);
        close(fd[1]);
        return scv_err_set(err, SCV_EIO, "cannot start %s: pipe: %s", argv[1], strerror(e));
    }
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fd[0]);
        close(fd[1]);
        if (errline) close(efd[0]), close(efd[1]);
        return scv_err_set(err, SCV_EIO, "cannot start %s: fork: %s", argv[1], strerror(e));
    }
    if (pid == 0) {
        /* dies with this process, even when it is killed with SIGKILL (the child, a
         * `scavenger train`, stops cleanly on SIGTERM and passes it to its mpirun) */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) _exit(128 + SIGTERM); /* the parent died before prctl */
        /* every process it starts carries SCV_JOB_<this process>=<it> (scv_proc_end_launch) */
        scv_proc_tag_set();
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        if (errline) {
            /* its stderr is a pipe to this process: once this process is gone, writing
             * there must fail (EPIPE), not kill the child while it stops cleanly */
            signal(SIGPIPE, SIG_IGN);
            dup2(efd[1], 2);
            close(efd[0]);
            close(efd[1]);
        }
        execv(exe ? exe : "/proc/self/exe", argv);
        _exit(127);
    }
    close(fd[1]);
    if (errline) close(efd[1]);
    struct sigaction sa, old, old_term, ign, old_pipe;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    g_int = 0, g_term = 0;
    g_child = (sig_atomic_t)pid;
    sigaction(SIGINT, &sa, &old);
    sigaction(SIGTERM, &sa, &old_term);
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN; /* passing the child's stderr on to a closed pipe: EPIPE */
    if (errline) sigaction(SIGPIPE, &ign, &old_pipe);
    /* read stdout a line at a time and stderr as it comes, ticking about every tick_ms */
    errtap tap = {.line = errline, .cap = errcap};
    char buf[8192], ebuf[4096];
    size_t len = 0;
    int out_open = 1, err_open = errline != NULL;
    double next_tick = now_ms() + tick_ms;
    while (out_open || err_open) {
        struct pollfd p[2] = {{.fd = out_open ? fd[0] : -1, .events = POLLIN},
                              {.fd = err_open ? efd[0] : -1, .events = POLLIN}};
        int wait = -1;
        if (tick) {
            double left = next_tick - now_ms();
            wait = left > 0 ? (int)left + 1 : 0;
        }
        int r = poll(p, 2, wait);
        if (r < 0 && errno != EINTR) break;
        if (tick && now_ms() >= next_tick) {
            tick(ctx);
            next_tick = now_ms() + tick_ms;
        }
        if (r <= 0) continue;
        if (err_open && p[1].revents) {
            ssize_t got = read(efd[0], ebuf, sizeof ebuf);
            if (got > 0) errtap_feed(&tap, ebuf, (size_t)got);
            else if (got == 0 || errno != EINTR) err_open = 0;
        }
        if (!out_open || !p[0].revents) continue;
        ssize_t got = read(fd[0], buf + len, sizeof buf - 1 - len);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            out_open = 0;
            continue;
        }
        len += (size_t)got;
        buf[len] = 0;
        char *nl;
        while ((nl = strchr(buf, '\n'))) {
            *nl = 0;
            if (buf[0] == '{') snprintf(json, cap, "%s", buf);
            len -= (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, len + 1);
        }
        if (len == sizeof buf - 1) len = 0; /* an overlong line: not a summary */
    }
    if (len && buf[0] == '{') snprintf(json, cap, "%s", buf);
    if (tap.len) errtap_line(&tap);
    close(fd[0]);
    if (errline) close(efd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    g_child = 0;
    /* the processes it left (a child killed without notice leaves its mpirun's ranks, which
     * may write a line more), ended before the last tick reads what it wrote */
    char exited[128];
    snprintf(exited, sizeof exited, "%s %s", argv[0], argv[1]);
    scv_proc_end_launch_said(pid, "the", exited);
    sigaction(SIGINT, &old, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (errline) sigaction(SIGPIPE, &old_pipe, NULL);
    /* a caller that cannot stop on an interruption is ended by SIGTERM now that the child
     * has stopped (with the disposition it had before) */
    if (g_term && !interrupted) raise(SIGTERM);
    if (tick) tick(ctx);
    if (interrupted) *interrupted = g_int;
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return SCV_OK;
}

int scv_run_self_stopping(void) { return g_child > 0 && g_int; }

void scv_run_self_signal(int sig)
{
    if (g_child > 0) kill((pid_t)g_child, sig);
}

int scv_run_self_kill_tree(void)
{
    if (g_child <= 0) return 0;
    scv_kill_tree((pid_t)g_child);
    return 1;
}

/* Up to this many descendants are ended (a job's tree is a few dozen). */
#define KILL_TREE_MAX 4096

void scv_kill_tree(pid_t root)
{
    static pid_t pid[KILL_TREE_MAX];
    int n = scv_proc_descendants(root, pid, KILL_TREE_MAX); /* (src/runtime/procs.c) */
    kill(root, SIGKILL); /* first, so it starts no more; then every descendant, a stopped one too */
    for (int i = 0; i < n; i++) kill(pid[i], SIGKILL);
}

int scv_child_write_failure(const char *errline)
{
    static const int refused[] = {ENOSPC, EDQUOT, EROFS, EFBIG};
    if (!errline || !*errline) return 0;
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (strstr(errline, strerror(refused[i]))) return 1;
    return 0;
}

void scv_train_argv(scv_argv *a, const scv_train_cmd *c)
{
    scv_argv_add(a, "scavenger");
    scv_argv_add(a, "train");
    for (int i = 0; c->job_opts && c->job_opts[i]; i++) scv_argv_add(a, c->job_opts[i]);
    if (c->cluster) scv_argv_add(a, "--cluster"), scv_argv_add(a, c->cluster);
    if (c->hosts) scv_argv_add(a, "--hosts"), scv_argv_add(a, c->hosts);
    if (c->vm_type) scv_argv_add(a, "--vm-type"), scv_argv_add(a, c->vm_type);
    if (c->catalog) scv_argv_add(a, "--catalog"), scv_argv_add(a, c->catalog);
    if (c->seg) scv_segwire_argv(a, c->seg);
    if (c->elastic_control) scv_argv_add(a, "--elastic-control"), scv_argv_add(a, c->elastic_control);
    scv_argv_add(a, "--json");
    scv_argv_add(a, "--progress");
    scv_argv_add(a, c->progress ? "always" : "never");
}
