/*
 * preempt.c - emulated preemptions of the emulated cluster's VMs, as clouds send them
 * (docs/CLUSTER.md "Preemptions"): a notice the VM's processes can read, the take-down at
 * its end (every process of the VM SIGKILLed, its link down at both ends), restore in place,
 * and preemption traces: read strictly (errors name file:line), drawn from a seed
 * (exponential lifetimes per VM) and replayed in real time.
 *
 * Per VM I of cluster NAME, in /run/scavenger/clusters/NAME.d/I/ (cluster.c removes it on down):
 *   preempt-notice  {"vm":"NAME-I","at":EPOCH,"notice_s":S}: written atomically when the
 *                   notice is given; processes in the VM find it through
 *                   $SCV_PREEMPT_NOTICE_FILE (set by scv_cluster_enter)
 *   preempted       the same fields, written at the take-down; `enter` refuses the VM then
 *   lock            flock'ed around each change, so that preempt, a take-down and restore
 *                   never interleave
 * A notice of S > 0 s leaves a detached process (double fork, setsid, no descriptor of the
 * caller kept) that sleeps until "at" and then takes the VM down, unless the notice file it
 * holds open was removed or replaced meanwhile (restore, down, up again).
 */
#define _GNU_SOURCE
#include "cluster.h"
#include "../core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const scv_preempt_policy SCV_PREEMPT_POLICY = {
    .default_notice_s = 30.0, /* GCP and Azure; AWS gives 120 s */
    .max_notice_s = SCV_PREEMPT_MAX_NOTICE_S,
    .default_down_s = 60.0,
    .max_events = 100000,
};

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void vm_file(const char *name, int vm, const char *file, char *buf, size_t cap)
{
    char dir[300];
    scv_cluster_vm_dir(name, vm, 0, dir, sizeof dir, NULL);
    snprintf(buf, cap, "%s/%s", dir, file);
}

/* "at" of a notice or mark file; NAN when it cannot be read. */
static double file_at(const char *path)
{
    char buf[512];
    FILE *f = fopen(path, "r");
    if (!f) return NAN;
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = 0;
    const char *p = strstr(buf, "\"at\":");
    return p ? strtod(p + 5, NULL) : NAN;
}

scv_vm_state scv_cluster_vm_state(const char *name, int vm, double *at)
{
    char path[600];
    struct stat st;
    scv_vm_state s = SCV_VM_UP;
    vm_file(name, vm, SCV_PREEMPT_DONE_FILE, path, sizeof path);
    if (stat(path, &st) == 0) s = SCV_VM_PREEMPTED;
    else {
        vm_file(name, vm, SCV_PREEMPT_NOTICE_FILE, path, sizeof path);
        if (stat(path, &st) == 0) s = SCV_VM_NOTICE;
    }
    if (at) *at = s == SCV_VM_UP ? NAN : file_at(path);
    return s;
}

/* The cluster exists and has VM vm. */
static int vm_check(const char *name, int vm, scv_err *err)
{
    scv_cluster c;
    int rc = scv_cluster_load(name, &c, err);
    if (rc) return rc;
    if (vm < 1 || vm > c.n)
        return scv_err_set(err, SCV_EINVAL, "cluster %s has VMs 1..%d (%s-1..%s-%d), not %d", name, c.n, name, name,
                           c.n, vm);
    return SCV_OK;
}

/* Locks VM vm's directory (made if missing); returns the descriptor or -1 with err set. */
static int vm_lock(const char *name, int vm, scv_err *err)
{
    char dir[300], path[600];
    if (scv_cluster_vm_dir(name, vm, 1, dir, sizeof dir, err)) return -1;
    snprintf(path, sizeof path, "%s/lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        scv_err_set(err, SCV_EIO, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    while (flock(fd, LOCK_EX) != 0)
        if (errno != EINTR) {
            scv_err_set(err, SCV_EIO, "%s: cannot lock: %s", path, strerror(errno));
            close(fd);
            return -1;
        }
    return fd;
}

scv_vm_state scv_cluster_vm_wait(const char *name, int vm, double timeout_s)
{
    double end = mono_now() + timeout_s;
    while (scv_cluster_vm_state(name, vm, NULL) == SCV_VM_NOTICE && mono_now() < end) {
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    int fd = vm_lock(name, vm, NULL); /* a take-down holds it until the VM is down */
    scv_vm_state s = scv_cluster_vm_state(name, vm, NULL);
    if (fd >= 0) close(fd);
    return s;
}

static int write_event_file(const char *name, int vm, const char *file, double at, double notice_s, scv_err *err)
{
    char path[600], text[300];
    vm_file(name, vm, file, path, sizeof path);
    int len = snprintf(text, sizeof text, "{\"vm\":\"%s-%d\",\"at\":%.3f,\"notice_s\":%g}\n", name, vm, at, notice_s);
    scv_iov part = {text, (size_t)len};
    return scv_write_atomic(path, &part, 1, err);
}

/* The take-down, with the VM's lock held: the mark first (so nothing new enters), then
 * every process, then the link. */
static int take_down(const char *name, int vm, double notice_s, scv_err *err)
{
    int rc = write_event_file(name, vm, SCV_PREEMPT_DONE_FILE, wall_now(), notice_s, err);
    if (rc) return rc;
    scv_cluster_vm_kill(name, vm);
    return scv_cluster_vm_link(name, vm, 0, err);
}

/* The detached process of a notice: sleeps until at, then takes the VM down if the notice it
 * holds is still the VM's. Never returns. */
static void notice_sleeper(const char *name, int vm, double at, double notice_s)
{
    char path[600];
    vm_file(name, vm, SCV_PREEMPT_NOTICE_FILE, path, sizeof path);
    int keep = open(path, O_RDONLY);
    long maxfd = sysconf(_SC_OPEN_MAX);
    if (maxfd < 0 || maxfd > 65536) maxfd = 65536;
    for (int fd = 0; fd < maxfd; fd++)
        if (fd != keep) close(fd);
    int null = open("/dev/null", O_RDWR); /* 0, 1 and 2: nothing of the caller's is held */
    if (null >= 0) {
        dup2(null, 1);
        dup2(null, 2);
    }
    if (keep < 0) _exit(1);
    struct timespec ts = {(time_t)floor(at), (long)((at - floor(at)) * 1e9)};
    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
    struct stat held, now;
    if (fstat(keep, &held) != 0 || held.st_nlink == 0) _exit(0); /* restored, or the cluster is gone */
    int lock = vm_lock(name, vm, NULL);
    if (lock >= 0 && fstat(keep, &held) == 0 && held.st_nlink > 0 && stat(path, &now) == 0 &&
        now.st_ino == held.st_ino && now.st_dev == held.st_dev &&
        scv_cluster_vm_state(name, vm, NULL) == SCV_VM_NOTICE)
        take_down(name, vm, notice_s, NULL);
    _exit(0);
}

int scv_cluster_preempt(const char *name, int vm, double notice_s, int kill_now, scv_err *err)
{
    int rc = vm_check(name, vm, err);
    if (rc) return rc;
    if (!(notice_s >= 0 && notice_s <= SCV_PREEMPT_POLICY.max_notice_s))
        return scv_err_set(err, SCV_EINVAL, "--notice %g: must be in [0, %g] s", notice_s,
                           SCV_PREEMPT_POLICY.max_notice_s);
    int lock = vm_lock(name, vm, err);
    if (lock < 0) return err ? err->code : SCV_EIO;
    double at, now = wall_now();
    scv_vm_state s = scv_cluster_vm_state(name, vm, &at);
    if (s == SCV_VM_PREEMPTED)
        rc = scv_err_set(err, SCV_EINVAL, "VM %s-%d is already preempted (%.0f s ago); scavenger cluster restore %s %d "
                         "brings it back", name, vm, now - at, name, vm);
    else if (s == SCV_VM_NOTICE && !(kill_now && notice_s == 0))
        rc = scv_err_set(err, SCV_EINVAL, "VM %s-%d already has a preemption notice (it goes in %.0f s); "
                         "scavenger cluster restore %s %d cancels it", name, vm, at - now, name, vm);
    else if (notice_s == 0)
        rc = take_down(name, vm, 0, err);
    else {
        at = now + notice_s;
        rc = write_event_file(name, vm, SCV_PREEMPT_NOTICE_FILE, at, notice_s, err);
        pid_t pid = rc ? -1 : fork();
        if (pid == 0) {
            setsid();
            pid_t again = fork();
            if (again == 0) notice_sleeper(name, vm, at, notice_s);
            _exit(again < 0);
        }
        int st = 0;
        if (!rc && (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))) {
            char path[600];
            vm_file(name, vm, SCV_PREEMPT_NOTICE_FILE, path, sizeof path);
            unlink(path);
            rc = scv_err_set(err, SCV_EIO, "cannot start the process that ends the notice: %s", strerror(errno));
        }
    }
    close(lock);
    return rc;
}

int scv_cluster_restore(const char *name, int vm, scv_err *err)
{
    int rc = vm_check(name, vm, err);
    if (rc) return rc;
    int lock = vm_lock(name, vm, err);
    if (lock < 0) return err ? err->code : SCV_EIO;
    scv_vm_state s = scv_cluster_vm_state(name, vm, NULL);
    char path[600];
    if (s == SCV_VM_UP)
        rc = scv_err_set(err, SCV_EINVAL, "VM %s-%d is neither preempted nor under notice: nothing to restore", name,
                         vm);
    else {
        vm_file(name, vm, SCV_PREEMPT_NOTICE_FILE, path, sizeof path);
        unlink(path); /* the pending take-down sees its notice gone */
        if (s == SCV_VM_PREEMPTED) {
            scv_cluster_vm_kill(name, vm); /* a fresh VM: nothing left of the old one */
            rc = scv_cluster_vm_link(name, vm, 1, err);
            vm_file(name, vm, SCV_PREEMPT_DONE_FILE, path, sizeof path);
            if (!rc) unlink(path);
        }
    }
    close(lock);
    return rc;
}

/* ---- traces ---- */

static const char *kind_name(int k) { return k == SCV_PE_NOTICE ? "notice" : k == SCV_PE_KILL ? "kill" : "restore"; }

int scv_preempt_trace_check(const char *path, const scv_preempt_event *ev, size_t n, int n_vms, scv_err *err)
{
    if (n_vms < 1 || n_vms > SCV_CLUSTER_MAX_VMS) return SCV_OK;
    int state[SCV_CLUSTER_MAX_VMS + 1] = {0}; /* scv_vm_state */
    double until[SCV_CLUSTER_MAX_VMS + 1] = {0};
    for (size_t i = 0; i < n; i++) {
        const scv_preempt_event *e = &ev[i];
        char where[300];
        if (e->line) snprintf(where, sizeof where, "%s:%d", path, e->line);
        else snprintf(where, sizeof where, "%s: event %zu", path, i + 1);
        if (e->vm < 1 || e->vm > n_vms)
            return scv_err_set(err, SCV_EINVAL, "%s: VM %d: the cluster has VMs 1..%d", where, e->vm, n_vms);
        for (int v = 1; v <= n_vms; v++)
            if (state[v] == SCV_VM_NOTICE && until[v] <= e->t) state[v] = SCV_VM_PREEMPTED;
        int *s = &state[e->vm];
        if (e->kind == SCV_PE_NOTICE && *s != SCV_VM_UP)
            return scv_err_set(err, SCV_EINVAL, "%s: notice to VM %d at %g s, which is %s", where, e->vm, e->t,
                               *s == SCV_VM_NOTICE ? "already under notice" : "down (restore it first)");
        if (e->kind == SCV_PE_KILL && *s == SCV_VM_PREEMPTED)
            return scv_err_set(err, SCV_EINVAL, "%s: kill of VM %d at %g s, which is already down", where, e->vm, e->t);
        if (e->kind == SCV_PE_RESTORE && *s == SCV_VM_UP)
            return scv_err_set(err, SCV_EINVAL, "%s: restore of VM %d at %g s, which is up", where, e->vm, e->t);
        *s = e->kind == SCV_PE_NOTICE ? SCV_VM_NOTICE : e->kind == SCV_PE_KILL ? SCV_VM_PREEMPTED : SCV_VM_UP;
        until[e->vm] = e->t + e->notice_s;
    }
    return SCV_OK;
}

static int push(scv_preempt_event **ev, size_t *n, size_t *cap, scv_preempt_event e, const char *what, scv_err *err)
{
    if (*n >= SCV_PREEMPT_POLICY.max_events)
        return scv_err_set(err, SCV_ERANGE, "%s: more than %zu events", what, SCV_PREEMPT_POLICY.max_events);
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        scv_preempt_event *ne = realloc(*ev, nc * sizeof *ne);
        if (!ne) return scv_err_set(err, SCV_ENOMEM, "out of memory");
        *ev = ne;
        *cap = nc;
    }
    (*ev)[(*n)++] = e;
    return SCV_OK;
}

/* One line's event (comment and blanks already gone); SCV_EPARSE naming path:line. */
static int parse_line(char *line, const char *path, int lineno, double prev, scv_preempt_event *e, scv_err *err)
{
    char *tok[4], *save = NULL;
    int nt = 0;
    for (char *t = strtok_r(line, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        if (nt == 3) return scv_err_set(err, SCV_EPARSE, "%s:%d: '%s' after the event: expected SECONDS VM EVENT", path, lineno, t);
        tok[nt++] = t;
    }
    if (nt != 3) return scv_err_set(err, SCV_EPARSE, "%s:%d: expected SECONDS VM EVENT (notice[:S], kill or restore)", path, lineno);
    int64_t vm;
    memset(e, 0, sizeof *e);
    e->line = lineno;
    if (scv_parse_f64(tok[0], &e->t) || !isfinite(e->t) || e->t < 0)
        return scv_err_set(err, SCV_EPARSE, "%s:%d: SECONDS '%s': expected a number >= 0", path, lineno, tok[0]);
    if (e->t < prev)
        return scv_err_set(err, SCV_EPARSE, "%s:%d: %g s is before the previous event's %g s: times must not decrease",
                           path, lineno, e->t, prev);
    if (scv_parse_i64(tok[1], &vm) || vm < 1 || vm > SCV_CLUSTER_MAX_VMS)
        return scv_err_set(err, SCV_EPARSE, "%s:%d: VM '%s': expected an integer in 1..%d", path, lineno, tok[1],
                           SCV_CLUSTER_MAX_VMS);
    e->vm = (int)vm;
    if (!strcmp(tok[2], "kill")) e->kind = SCV_PE_KILL;
    else if (!strcmp(tok[2], "restore")) e->kind = SCV_PE_RESTORE;
    else if (!strcmp(tok[2], "notice")) e->notice_s = SCV_PREEMPT_POLICY.default_notice_s;
    else if (!strncmp(tok[2], "notice:", 7)) {
        if (scv_parse_f64(tok[2] + 7, &e->notice_s) || !(e->notice_s > 0 && e->notice_s <= SCV_PREEMPT_POLICY.max_notice_s))
            return scv_err_set(err, SCV_EPARSE, "%s:%d: '%s': the notice must be in (0, %g] s (a kill has none)", path,
                               lineno, tok[2], SCV_PREEMPT_POLICY.max_notice_s);
    } else
        return scv_err_set(err, SCV_EPARSE, "%s:%d: event '%s': expected notice[:S], kill or restore", path, lineno, tok[2]);
    return SCV_OK;
}

int scv_preempt_trace_read(const char *path, int n_vms, scv_preempt_event **ev, size_t *n, scv_err *err)
{
    *ev = NULL;
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f) return scv_err_set(err, SCV_ENOTFOUND, "%s: cannot open: %s", path, strerror(errno));
    char line[1024];
    int lineno = 0, rc = SCV_OK;
    size_t cap = 0;
    double prev = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n' && !feof(f)) {
            rc = scv_err_set(err, SCV_EPARSE, "%s:%d: line longer than %zu characters", path, lineno, sizeof line - 2);
            break;
        }
        line[strcspn(line, "#")] = 0;
        line[strcspn(line, "\r\n")] = 0;
        if (!line[strspn(line, " \t")]) continue;
        scv_preempt_event e;
        if (!(rc = parse_line(line, path, lineno, prev, &e, err))) {
            rc = push(ev, n, &cap, e, path, err);
            prev = e.t;
        }
    }
    if (!rc && ferror(f)) rc = scv_err_set(err, SCV_EIO, "%s: read error", path);
    fclose(f);
    if (!rc && !*n) rc = scv_err_set(err, SCV_EPARSE, "%s: no event (lines SECONDS VM EVENT)", path);
    if (!rc) rc = scv_preempt_trace_check(path, *ev, *n, n_vms, err);
    if (rc) {
        free(*ev);
        *ev = NULL;
        *n = 0;
    }
    return rc;
}

static int by_time(const void *a, const void *b)
{
    const scv_preempt_event *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    if (x->vm != y->vm) return x->vm - y->vm;
    return x->line - y->line;
}

static double ms(double t) { return round(t * 1000) / 1000; }

int scv_preempt_trace_random(const scv_preempt_random *p, scv_preempt_event **ev, size_t *n, scv_err *err)
{
    *ev = NULL;
    *n = 0;
    if (!(p->mean_life_s > 0) || !isfinite(p->mean_life_s))
        return scv_err_set(err, SCV_EINVAL, "--mean-life %g: must be a number of seconds > 0", p->mean_life_s);
    if (!(p->notice_s >= 0 && p->notice_s <= SCV_PREEMPT_POLICY.max_notice_s))
        return scv_err_set(err, SCV_EINVAL, "--notice %g: must be in [0, %g] s", p->notice_s, SCV_PREEMPT_POLICY.max_notice_s);
    if (!(p->down_s > 0) || !isfinite(p->down_s))
        return scv_err_set(err, SCV_EINVAL, "--down %g: must be a number of seconds > 0", p->down_s);
    if (!(p->horizon_s > 0) || !isfinite(p->horizon_s))
        return scv_err_set(err, SCV_EINVAL, "--horizon %g: must be a number of seconds > 0", p->horizon_s);
    if (p->n_vms < 1) return scv_err_set(err, SCV_EINVAL, "--vms: no VM to preempt");
    size_t cap = 0;
    int rc = SCV_OK;
    for (int i = 0; i < p->n_vms && !rc; i++) {
        /* each VM its own stream: its events do not depend on which other VMs are drawn */
        scv_rng r;
        scv_rng_seed(&r, scv_hash64(p->seed) ^ (uint64_t)p->vms[i]);
        double t = 0;
        for (;;) {
            double life = -p->mean_life_s * log1p(-scv_rng_uniform(&r)); /* Exp(mean) */
            scv_preempt_event e = {ms(t + life), p->vms[i], p->notice_s > 0 ? SCV_PE_NOTICE : SCV_PE_KILL,
                                   p->notice_s, (int)*n + 1};
            if (e.t >= p->horizon_s || (rc = push(ev, n, &cap, e, "--random", err))) break;
            scv_preempt_event back = {ms(e.t + p->notice_s + p->down_s), p->vms[i], SCV_PE_RESTORE, 0, (int)*n + 1};
            if (back.t >= p->horizon_s || (rc = push(ev, n, &cap, back, "--random", err))) break;
            t = back.t;
        }
    }
    if (!rc && *n) qsort(*ev, *n, sizeof **ev, by_time);
    for (size_t i = 0; i < *n; i++) (*ev)[i].line = 0;
    if (rc) {
        free(*ev);
        *ev = NULL;
        *n = 0;
    }
    return rc;
}

void scv_preempt_trace_write(FILE *f, const scv_preempt_random *p, const scv_preempt_event *ev, size_t n)
{
    fprintf(f, "# scavenger preemption trace: SECONDS VM EVENT (notice:S | kill | restore)\n");
    if (p) {
        fprintf(f, "# drawn: --random %llu --mean-life %g --notice %g --down %g --horizon %g --vms ",
                (unsigned long long)p->seed, p->mean_life_s, p->notice_s, p->down_s, p->horizon_s);
        for (int i = 0; i < p->n_vms; i++) fprintf(f, "%s%d", i ? "," : "", p->vms[i]);
        fprintf(f, "\n# per VM: lifetime from its start or restore to the %s ~ exponential, mean %g s\n"
                   "# (xoshiro256** seeded per VM); the restore %g s after the take-down\n",
                p->notice_s > 0 ? "notice" : "kill", p->mean_life_s, p->down_s);
    }
    for (size_t i = 0; i < n; i++) {
        if (ev[i].kind == SCV_PE_NOTICE) fprintf(f, "%.3f %d notice:%g\n", ev[i].t, ev[i].vm, ev[i].notice_s);
        else fprintf(f, "%.3f %d %s\n", ev[i].t, ev[i].vm, kind_name(ev[i].kind));
    }
}

int scv_preempt_replay(const char *name, const scv_preempt_event *ev, size_t n, volatile sig_atomic_t *stop,
                       FILE *progress, scv_err *err)
{
    scv_cluster c;
    int rc = scv_cluster_load(name, &c, err);
    if (rc || (rc = scv_preempt_trace_check("the trace", ev, n, c.n, err))) return rc;
    double t0 = mono_now(), end = 0;
    for (size_t i = 0; i < n; i++)
        end = fmax(end, ev[i].t + (ev[i].kind == SCV_PE_NOTICE ? ev[i].notice_s : 0));
    for (size_t i = 0; i <= n; i++) {
        double due = i < n ? ev[i].t : end;
        for (double left; (left = t0 + due - mono_now()) > 0;) {
            if (stop && *stop) {
                if (progress) fprintf(progress, "replay %s: stopped at %.1f s after %zu of %zu events\n", name,
                                      mono_now() - t0, i, n);
                return scv_err_set(err, SCV_EINTR, "replay stopped after %zu of %zu events (notices already "
                                   "given still take their VMs down)", i, n);
            }
            struct timespec ts = {0, (long)(fmin(left, 0.1) * 1e9)};
            nanosleep(&ts, NULL);
        }
        if (i == n) break;
        const scv_preempt_event *e = &ev[i];
        rc = e->kind == SCV_PE_RESTORE ? scv_cluster_restore(name, e->vm, err)
             : scv_cluster_preempt(name, e->vm, e->kind == SCV_PE_KILL ? 0 : e->notice_s, 1, err);
        if (progress) {
            if (e->kind == SCV_PE_NOTICE)
                fprintf(progress, "replay %s: %8.1f s  %s-%d notice, goes at %.1f s\n", name, mono_now() - t0, name,
                        e->vm, e->t + e->notice_s);
            else fprintf(progress, "replay %s: %8.1f s  %s-%d %s\n", name, mono_now() - t0, name, e->vm, kind_name(e->kind));
            fflush(progress);
        }
        if (rc) return rc;
    }
    if (progress) fprintf(progress, "replay %s: done, %zu events in %.1f s\n", name, n, mono_now() - t0);
    return SCV_OK;
}

int scv_cluster_place_up(const scv_cluster *c, const char *type, int *order)
{
    int all[SCV_CLUSTER_MAX_VMS], n = 0, up = 0;
    scv_cluster_place_order(c, type, all);
    for (int want = SCV_VM_UP; want <= SCV_VM_PREEMPTED; want++) /* up, under notice, preempted */
        for (int i = 0; i < c->n; i++)
            if ((int)scv_cluster_vm_state(c->name, all[i], NULL) == want) {
                order[n++] = all[i];
                up += want != SCV_VM_PREEMPTED;
            }
    return up;
}
