/*
 * procs.c - a job's processes found in /proc (by descent, or by the tag of their launch in
 * their environment), named and ended within a bound (procs.h). A trainer's background
 * child (a logging daemon, `cmd &`, a double fork, a child in a session of its own that
 * ignores SIGTERM) is one of them: it is ended with the job and named, never left running.
 */
#define _POSIX_C_SOURCE 200809L
#include "procs.h"
#include "../core/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

scv_proc_policy scv_proc_policy_default(void) { return (scv_proc_policy){.linger_s = 0.5, .term_s = 2.0, .gone_s = 5.0}; }

/* The time left of a wait of s seconds that started at t0 under p (cut short once p->hurry). */
static int waiting(const scv_proc_policy *p, double t0, double s)
{
    if (p->hurry && *p->hurry && s > p->hurry_s) s = p->hurry_s;
    return scv_now() - t0 < s;
}

/* Up to this many processes are looked at (a job's tree is a few dozen). */
#define PROC_MAX 65536

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* /proc/PID/stat's state and parent: 1 when read. */
static int proc_stat(long pid, char *state, long *ppid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t got = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (got <= 0) return 0;
    buf[got] = 0;
    const char *q = strrchr(buf, ')'); /* "PID (COMM) STATE PPID ...": COMM may hold anything */
    return q && sscanf(q + 1, " %c %ld", state, ppid) == 2;
}

/* The numeric entries of /proc, each passed to fn until it returns non-zero. */
static void each_proc(int (*fn)(void *ctx, long pid), void *ctx)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char *end;
        long p = strtol(e->d_name, &end, 10);
        if (*end || p < 2) continue;
        if (fn(ctx, p)) break;
    }
    if (d) closedir(d);
}

typedef struct {
    pid_t *pid, *ppid;
    unsigned char *live;
    int n;
} proc_table;

static int add_row(void *ctx, long p)
{
    proc_table *t = ctx;
    char state;
    long pp;
    if (t->n >= PROC_MAX) return 1;
    if (proc_stat(p, &state, &pp)) t->pid[t->n] = (pid_t)p, t->ppid[t->n] = (pid_t)pp, t->live[t->n++] = state != 'Z';
    return 0;
}

int scv_proc_descendants(pid_t root, pid_t *out, int cap)
{
    proc_table t = {malloc(PROC_MAX * sizeof(pid_t)), malloc(PROC_MAX * sizeof(pid_t)), malloc(PROC_MAX), 0};
    unsigned char *in = calloc(PROC_MAX, 1);
    int n = 0;
    if (t.pid && t.ppid && t.live && in) {
        each_proc(add_row, &t);
        /* breadth first from root: a parent is listed before its children */
        pid_t *queue = malloc((size_t)(t.n + 1) * sizeof(pid_t));
        int head = 0, tail = 0;
        if (queue) queue[tail++] = root;
        while (queue && head < tail) {
            pid_t up = queue[head++];
            for (int i = 0; i < t.n; i++) {
                if (in[i] || t.ppid[i] != up || t.pid[i] == root) continue;
                in[i] = 1, queue[tail++] = t.pid[i];
                if (t.live[i] && n < cap) out[n++] = t.pid[i];
            }
        }
        free(queue);
    }
    free(t.pid), free(t.ppid), free(t.live), free(in);
    return n;
}

/* 1 when the NUL-separated environment in buf[0..len) holds the entry want (with its NUL). */
static int env_has(const char *buf, size_t len, const char *want, size_t wl)
{
    for (size_t i = 0; i + wl <= len;) {
        if (!memcmp(buf + i, want, wl)) return 1;
        const char *z = memchr(buf + i, 0, len - i);
        if (!z) break;
        i = (size_t)(z - buf) + 1;
    }
    return 0;
}

typedef struct {
    char want[64];
    size_t wl;
    pid_t self, *out;
    int n, cap;
    char *buf;
    size_t bcap;
} tag_scan;

static int check_tag(void *ctx, long p)
{
    tag_scan *s = ctx;
    char state, path[64];
    long pp;
    if (p == s->self || !proc_stat(p, &state, &pp) || state == 'Z') return 0;
    snprintf(path, sizeof path, "/proc/%ld/environ", p);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    size_t len = 0;
    ssize_t got;
    while (len < s->bcap && (got = read(fd, s->buf + len, s->bcap - len)) > 0) len += (size_t)got;
    close(fd);
    if (env_has(s->buf, len, s->want, s->wl) && s->n < s->cap) s->out[s->n++] = (pid_t)p;
    return s->n >= s->cap;
}

int scv_proc_tagged(pid_t launcher, pid_t child, pid_t *out, int cap)
{
    tag_scan s = {.self = getpid(), .out = out, .cap = cap, .bcap = 1 << 20};
    /* the entry with its terminating NUL: "SCV_JOB_12=345" does not match "SCV_JOB_12=3456" */
    int w = snprintf(s.want, sizeof s.want, "SCV_JOB_%ld=%ld", (long)launcher, (long)child);
    s.wl = (size_t)w + 1;
    if (!(s.buf = malloc(s.bcap))) return 0;
    each_proc(check_tag, &s);
    free(s.buf);
    return s.n;
}

void scv_proc_tag_set(void)
{
    char name[40], value[24];
    snprintf(name, sizeof name, "SCV_JOB_%ld", (long)getppid());
    snprintf(value, sizeof value, "%ld", (long)getpid());
    setenv(name, value, 1);
}

void scv_proc_describe(pid_t pid, char *buf, size_t cap)
{
    char path[64], cmd[200];
    size_t len = 0;
    snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t got = read(fd, cmd, sizeof cmd - 1);
        close(fd);
        len = got > 0 ? (size_t)got : 0;
    }
    while (len && cmd[len - 1] == 0) len--;
    for (size_t i = 0; i < len; i++)
        if (cmd[i] == 0 || cmd[i] == '\n' || cmd[i] == '`') cmd[i] = cmd[i] == '`' ? '\'' : ' ';
    cmd[len] = 0;
    if (!len) { /* a kernel thread, or the command line cleared: its name */
        snprintf(path, sizeof path, "/proc/%ld/comm", (long)pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t got = fd >= 0 ? read(fd, cmd, sizeof cmd - 1) : 0;
        if (fd >= 0) close(fd);
        cmd[got > 0 ? got : 0] = 0;
        cmd[strcspn(cmd, "\n")] = 0;
    }
    snprintf(buf, cap, "pid %ld `%.120s%s`", (long)pid, cmd, strlen(cmd) > 120 ? "..." : "");
}

/* Reaps those of pids that are this process's children and have ended. */
static void reap(const pid_t *pids, int n)
{
    for (int i = 0; i < n; i++) {
        int st;
        waitpid(pids[i], &st, WNOHANG);
    }
}

#define END_MAX 256

int scv_proc_end(scv_proc_find find, void *ctx, const scv_proc_policy *p, char *named, size_t cap)
{
    const scv_proc_policy def = scv_proc_policy_default();
    if (!p) p = &def;
    pid_t now[END_MAX], first[END_MAX];
    unsigned char killed[END_MAX] = {0};
    if (named && cap) named[0] = 0;
    double t0 = scv_now();
    int n;
    while ((n = find(ctx, now, END_MAX)) > 0 && !(p->hurry && *p->hurry) && scv_now() - t0 < p->linger_s) {
        reap(now, n);
        nap_ms(20);
    }
    if (n <= 0) return 0;
    const int found = n;
    memcpy(first, now, (size_t)n * sizeof *now);
    char what[END_MAX][160];
    for (int i = 0; i < found; i++) scv_proc_describe(first[i], what[i], sizeof what[i]);
    for (int i = 0; i < n; i++) kill(now[i], SIGTERM), kill(now[i], SIGCONT);
    double t1 = scv_now();
    while ((n = find(ctx, now, END_MAX)) > 0 && waiting(p, t1, p->term_s)) {
        reap(now, n);
        nap_ms(20);
    }
    double t2 = scv_now();
    while (n > 0) { /* SIGKILL to every one left, a child started meanwhile too */
        for (int i = 0; i < n; i++) {
            kill(now[i], SIGKILL);
            for (int j = 0; j < found; j++) killed[j] |= first[j] == now[i];
        }
        reap(now, n);
        if (scv_now() - t2 > p->gone_s) break;
        nap_ms(20);
        n = find(ctx, now, END_MAX);
    }
    reap(first, found);
    size_t len = 0;
    for (int i = 0; named && i < found && len + 1 < cap; i++)
        len += (size_t)snprintf(named + len, cap - len, "%s%s%s", i ? ", " : "", what[i], killed[i] ? " (SIGKILL)" : "");
    if (named && len >= cap && cap) named[cap - 1] = 0;
    return n > 0 ? -1 : found;
}

/* Seconds a launch's processes get to end after its mpirun exited (scv_proc_end_launch). */
#define LAUNCH_LINGER_S 0.3

typedef struct {
    pid_t launcher, child;
} launch_tag;

static int find_tagged(void *ctx, pid_t *out, int cap)
{
    const launch_tag *t = ctx;
    return scv_proc_tagged(t->launcher, t->child, out, cap);
}

int scv_proc_end_launch_said(pid_t child, const char *whose, const char *exited)
{
    char named[2000];
    int n = scv_proc_end_launch(child, NULL, named, sizeof named);
    if (n)
        fprintf(stderr, "scavenger: %s processes %s were left running after %s exited; ended\n", whose, named, exited);
    return n;
}

int scv_proc_end_launch(pid_t child, const scv_proc_policy *p, char *named, size_t cap)
{
    launch_tag t = {getpid(), child};
    scv_proc_policy now = p ? *p : scv_proc_policy_default();
    /* its mpirun has exited: only what ends with it (the ompi-server beside it, by
     * PR_SET_PDEATHSIG) may still be on its way out */
    if (now.linger_s > LAUNCH_LINGER_S) now.linger_s = LAUNCH_LINGER_S;
    return scv_proc_end(find_tagged, &t, &now, named, cap);
}
