/*
 * child.c - see child.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "child.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
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

int scv_run_self(const char *exe, char *const *argv, char *json, size_t cap, int *status, int *interrupted,
                 void (*tick)(void *ctx), void *ctx, int tick_ms, scv_err *err)
{
    int fd[2];
    json[0] = 0;
    *status = -1;
    if (interrupted) *interrupted = 0;
    if (pipe(fd)) return scv_err_set(err, SCV_EIO, "cannot start %s: pipe: %s", argv[1], strerror(errno));
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fd[0]);
        close(fd[1]);
        return scv_err_set(err, SCV_EIO, "cannot start %s: fork: %s", argv[1], strerror(e));
    }
    if (pid == 0) {
        /* dies with this process, even when it is killed with SIGKILL (the child, a
         * `scavenger train`, stops cleanly on SIGTERM and passes it to its mpirun) */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) _exit(128 + SIGTERM); /* the parent died before prctl */
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execv(exe ? exe : "/proc/self/exe", argv);
        _exit(127);
    }
    close(fd[1]);
    struct sigaction sa, old, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    g_int = 0, g_term = 0;
    g_child = (sig_atomic_t)pid;
    sigaction(SIGINT, &sa, &old);
    sigaction(SIGTERM, &sa, &old_term);
    /* read stdout a line at a time between ticks */
    char buf[8192];
    size_t len = 0;
    for (;;) {
        struct pollfd p = {.fd = fd[0], .events = POLLIN};
        int r = poll(&p, 1, tick ? tick_ms : -1);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) {
            if (tick) tick(ctx);
            continue;
        }
        ssize_t got = read(fd[0], buf + len, sizeof buf - 1 - len);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
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
    close(fd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    g_child = 0;
    sigaction(SIGINT, &old, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    /* a caller that cannot stop on an interruption is ended by SIGTERM now that the child
     * has stopped (with the disposition it had before) */
    if (g_term && !interrupted) raise(SIGTERM);
    if (tick) tick(ctx);
    if (interrupted) *interrupted = g_int;
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return SCV_OK;
}

void scv_argv_add(scv_argv *a, const char *s)
{
    if (a->oom) return;
    if (a->n + 2 > a->cap) {
        int cap = a->cap ? 2 * a->cap : 32;
        char **v = realloc(a->v, sizeof(char *) * (size_t)cap);
        if (!v) {
            a->oom = 1;
            return;
        }
        a->v = v, a->cap = cap;
    }
    if (!(a->v[a->n] = strdup(s))) {
        a->oom = 1;
        return;
    }
    a->v[++a->n] = NULL;
}

void scv_argv_addf(scv_argv *a, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    scv_argv_add(a, buf);
}

void scv_argv_free(scv_argv *a)
{
    for (int i = 0; i < a->n; i++) free(a->v[i]);
    free(a->v);
    memset(a, 0, sizeof *a);
}

void scv_train_argv(scv_argv *a, const scv_train_cmd *c)
{
    scv_argv_add(a, "scavenger");
    scv_argv_add(a, "train");
    for (int i = 0; c->job_opts && c->job_opts[i]; i++) scv_argv_add(a, c->job_opts[i]);
    if (c->cluster) scv_argv_add(a, "--cluster"), scv_argv_add(a, c->cluster);
    if (c->vm_type) scv_argv_add(a, "--vm-type"), scv_argv_add(a, c->vm_type);
    if (c->catalog) scv_argv_add(a, "--catalog"), scv_argv_add(a, c->catalog);
    if (c->workers) scv_argv_add(a, "--workers"), scv_argv_addf(a, "%d", c->workers);
    if (c->batch) scv_argv_add(a, "--batch"), scv_argv_addf(a, "%d", c->batch);
    if (c->split && c->workers > 1) {
        char s[4096];
        size_t len = 0;
        for (int k = 0; k < c->workers && len < sizeof s; k++)
            len += (size_t)snprintf(s + len, sizeof s - len, "%s%.9g", k ? "," : "", c->split[k]);
        scv_argv_add(a, "--batch-split"), scv_argv_add(a, s);
    }
    if (c->checkpoint_dir) scv_argv_add(a, "--checkpoint"), scv_argv_add(a, c->checkpoint_dir);
    if (c->checkpoint_every) scv_argv_add(a, "--checkpoint-every"), scv_argv_addf(a, "%lld", (long long)c->checkpoint_every);
    if (c->resume) scv_argv_add(a, "--resume");
    if (c->metrics) scv_argv_add(a, "--metrics"), scv_argv_add(a, c->metrics);
    if (c->target_accuracy > 0) scv_argv_add(a, "--target-accuracy"), scv_argv_addf(a, "%.17g", c->target_accuracy);
    if (c->target_loss > 0) scv_argv_add(a, "--target-loss"), scv_argv_addf(a, "%.17g", c->target_loss);
    if (c->epochs > 0) scv_argv_add(a, "--epochs"), scv_argv_addf(a, "%.17g", c->epochs);
    if (c->iterations > 0) scv_argv_add(a, "--iterations"), scv_argv_addf(a, "%lld", (long long)c->iterations);
    if (c->eval_every_epochs > 0) scv_argv_add(a, "--eval-every-epochs"), scv_argv_addf(a, "%.17g", c->eval_every_epochs);
    if (c->noise_window > 0)
        scv_argv_add(a, "--stop-noise-stable"), scv_argv_addf(a, "%d:%.17g", c->noise_window, c->noise_tol);
    if (c->time_rse > 0) scv_argv_add(a, "--stop-time-stable"), scv_argv_addf(a, "%.17g:%d", c->time_rse, c->time_min);
    if (c->no_final_eval) scv_argv_add(a, "--no-final-eval");
    if (c->eval_subset > 0) scv_argv_add(a, "--eval-subset"), scv_argv_addf(a, "%d", c->eval_subset);
    if (c->target_window > 1) {
        scv_argv_add(a, "--target-window"), scv_argv_addf(a, "%d", c->target_window);
        if (c->n_history > 0) {
            char h[1024];
            size_t len = 0;
            for (int i = 0; i < c->n_history && len < sizeof h; i++)
                len += (size_t)snprintf(h + len, sizeof h - len, "%s%.9g", i ? "," : "", c->history[i]);
            scv_argv_add(a, "--target-history"), scv_argv_add(a, h);
        }
    }
    scv_argv_add(a, "--json");
    scv_argv_add(a, "--progress");
    scv_argv_add(a, c->progress ? "always" : "never");
}
