/*
 * hostfile.c - an Open MPI hostfile checked before anything runs on it (--hosts): every
 * line bounded in length, every host an RFC 1123 name (labels of letters, digits and '-',
 * 1 to 63 characters, 253 in all; an optional "user@"), an IPv4 or an IPv6 address, every
 * field slots=N, max_slots=N (or max-slots=N) with N a whole number in range, and every
 * host resolving within a short bound. getaddrinfo() blocks with no timeout of its own, so
 * each host is resolved in a detached thread of its own and waited for until the bound
 * (a thread still resolving then is left to finish: it owns a reference to the shared
 * state, freed by whoever is last). Threads, not child processes: the check runs in the
 * service's HTTP threads too, and a child forked from a threaded process may only call
 * async-signal-safe functions (getaddrinfo takes locks another thread may have held at the
 * fork: the child would hang to the bound and a good host be refused). Errors name the
 * file and line ("hosts:3: ..."): before, a 100 KB name crashed mpirun, and an
 * unresolvable host hung the launch for more than a minute with no word of which line.
 */
#define _POSIX_C_SOURCE 200809L
#include "launch.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

scv_hostfile_policy scv_hostfile_policy_default(void)
{
    return (scv_hostfile_policy){.max_line = 1024, .max_hosts = 4096, .max_slots = 65536,
                                 .resolve_timeout_ms = 5000, .parallel = 16, .resolve = NULL};
}

/* RFC 1123 host name: labels [A-Za-z0-9-]{1,63}, not starting or ending with '-', joined
 * by '.', 253 characters at most (a trailing '.' allowed) */
static const char *bad_name(const char *h)
{
    size_t n = strlen(h);
    if (n && h[n - 1] == '.') n--;
    if (!n) return "an empty host name";
    if (n > 253) return "longer than 253 characters (RFC 1123)";
    size_t lab = 0;
    for (size_t i = 0; i <= n; i++) {
        char c = i < n ? h[i] : '.';
        if (c == '.') {
            if (!lab) return "an empty label (two dots, or a leading dot)";
            if (h[i - 1] == '-') return "a label ends with '-'";
            lab = 0;
            continue;
        }
        if (!isalnum((unsigned char)c) && c != '-') return "a character other than letters, digits, '-' and '.'";
        if (!lab && c == '-') return "a label starts with '-'";
        if (++lab > 63) return "a label longer than 63 characters (RFC 1123)";
    }
    return NULL;
}

/* slots=N, max_slots=N, max-slots=N: *which 0 slots, 1 max_slots; -1 when not one of them */
static int field(const char *tok, int *which, long *v, long max)
{
    const char *eq = strchr(tok, '=');
    if (!eq) return -1;
    size_t k = (size_t)(eq - tok);
    if (k == 5 && !strncmp(tok, "slots", 5)) *which = 0;
    else if (k == 9 && (!strncmp(tok, "max_slots", 9) || !strncmp(tok, "max-slots", 9))) *which = 1;
    else return -1;
    const char *s = eq + 1;
    if (!*s) return 0;
    long x = 0;
    for (; *s; s++) {
        if (!isdigit((unsigned char)*s)) return 0;
        x = x * 10 + (*s - '0');
        if (x > max) return 0;
    }
    *v = x;
    return x >= 1;
}

typedef struct {
    char *name;
    int line;
    int state;       /* 0 waiting, 1 running, 2 resolved, 3 does not resolve, 4 timed out */
} host;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int resolve_here(const char *name)
{
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(name, NULL, &hints, &ai);
    if (ai) freeaddrinfo(ai);
    return rc == 0 ? 0 : -1;
}

/* What the caller and its resolver threads share: the names (copies), each one's state and
 * when its thread started; freed by the last of them to let go (refs). */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs;
    size_t n;
    char **name;
    int *state;
    double *started;
    int (*resolve)(const char *name);
} shared;

typedef struct {
    shared *sh;
    size_t i;
} job;

static void shared_put(shared *sh) /* under sh->mu; unlocks it */
{
    int last = --sh->refs == 0;
    pthread_mutex_unlock(&sh->mu);
    if (!last) return;
    for (size_t i = 0; i < sh->n; i++) free(sh->name[i]);
    free(sh->name), free(sh->state), free(sh->started);
    pthread_cond_destroy(&sh->cv);
    pthread_mutex_destroy(&sh->mu);
    free(sh);
}

static void *resolver(void *arg)
{
    job j = *(job *)arg;
    free(arg);
    shared *sh = j.sh;
    int ok = (sh->resolve ? sh->resolve(sh->name[j.i]) : resolve_here(sh->name[j.i])) == 0;
    pthread_mutex_lock(&sh->mu);
    if (sh->state[j.i] == 1) sh->state[j.i] = ok ? 2 : 3; /* else: timed out already */
    pthread_cond_broadcast(&sh->cv);
    shared_put(sh);
    return NULL;
}

/* Resolves every host, at most pol->parallel at a time, each in a detached thread waited
 * for until the bound; fills state (2, 3 or 4). SCV_EIO/SCV_ENOMEM when a thread cannot be
 * started. */
static int resolve_all(host *h, size_t n, const scv_hostfile_policy *pol, scv_err *err)
{
    shared *sh = calloc(1, sizeof *sh);
    if (!sh) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    sh->name = calloc(n, sizeof *sh->name), sh->state = calloc(n, sizeof *sh->state);
    sh->started = calloc(n, sizeof *sh->started);
    sh->n = n, sh->refs = 1, sh->resolve = pol->resolve;
    int bad = !sh->name || !sh->state || !sh->started;
    for (size_t i = 0; i < n && !bad; i++) bad = !(sh->name[i] = strdup(h[i].name));
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&sh->mu, NULL);
    pthread_cond_init(&sh->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (bad) {
        pthread_mutex_lock(&sh->mu);
        shared_put(sh);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    pthread_attr_t ta;
    pthread_attr_init(&ta);
    pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
    sigset_t all, old; /* the resolvers take no signals: they stay with the caller's threads */
    sigfillset(&all);
    const double bound = pol->resolve_timeout_ms / 1000.0;
    const size_t par = (size_t)(pol->parallel > 0 ? pol->parallel : 1);
    size_t next = 0, running = 0, done = 0;
    int rc = SCV_OK;
    pthread_mutex_lock(&sh->mu);
    while (done < n && !rc) {
        while (running < par && next < n && !rc) {
            job *j = malloc(sizeof *j);
            if (!j) {
                rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
                break;
            }
            *j = (job){sh, next};
            sh->state[next] = 1, sh->started[next] = now_s();
            sh->refs++;
            pthread_t tid;
            pthread_sigmask(SIG_SETMASK, &all, &old);
            int e = pthread_create(&tid, &ta, resolver, j);
            pthread_sigmask(SIG_SETMASK, &old, NULL);
            if (e) {
                sh->refs--, sh->state[next] = 0;
                free(j);
                rc = scv_err_set(err, SCV_EIO, "cannot start a thread (resolving the hostfile's hosts): %s",
                                 strerror(e));
                break;
            }
            next++, running++;
        }
        if (rc) break;
        /* the ones that ended or passed their bound; then wait for the next of either */
        double t = now_s(), wake = t + bound;
        running = done = 0;
        for (size_t i = 0; i < next; i++) {
            if (sh->state[i] == 1 && t - sh->started[i] > bound) sh->state[i] = 4;
            if (sh->state[i] == 1) {
                running++;
                if (sh->started[i] + bound < wake) wake = sh->started[i] + bound;
            } else done++;
        }
        if (done == n) break;
        if (running < par && next < n) continue;
        wake += 0.001;
        struct timespec ts = {(time_t)wake, (long)((wake - (double)(time_t)wake) * 1e9)};
        pthread_cond_timedwait(&sh->cv, &sh->mu, &ts);
    }
    for (size_t i = 0; i < n; i++) h[i].state = sh->state[i] == 1 ? 4 : sh->state[i];
    pthread_attr_destroy(&ta);
    shared_put(sh);
    return rc;
}

int scv_hostfile_check(const char *path, const scv_hostfile_policy *pol_in, scv_err *err)
{
    scv_hostfile_policy pol = pol_in ? *pol_in : scv_hostfile_policy_default();
    FILE *f = fopen(path, "r");
    if (!f) return scv_err_set(err, SCV_ENOTFOUND, "%s: cannot read the hostfile: %s", path, strerror(errno));
    size_t cap = (size_t)pol.max_line + 2, n = 0;
    char *line = malloc(cap);
    host *h = calloc((size_t)pol.max_hosts, sizeof *h);
    int rc = SCV_OK, lineno = 0;
    if (!line || !h) rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
    while (!rc && fgets(line, (int)cap, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\n') line[--len] = 0;
        else if (!feof(f)) {
            rc = scv_err_set(err, SCV_EINVAL, "%s:%d: a line longer than %d characters", path, lineno, pol.max_line);
            break;
        }
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char *save = NULL, *tok = strtok_r(line, " \t\r", &save);
        if (!tok) continue;
        char *name = strrchr(tok, '@'), shown[80];
        snprintf(shown, sizeof shown, "%.64s%s", tok, strlen(tok) > 64 ? "..." : "");
        if (name) { /* user@host: the user a login name */
            for (const char *u = tok; u < name && !rc; u++)
                if (!isalnum((unsigned char)*u) && !strchr("._-", *u))
                    rc = scv_err_set(err, SCV_EINVAL, "%s:%d: '%s': the user before '@' is not a login name", path,
                                     lineno, shown);
            if (!rc && name == tok)
                rc = scv_err_set(err, SCV_EINVAL, "%s:%d: '%s': nothing before '@'", path, lineno, shown);
            name++;
        } else name = tok;
        unsigned char a6[16];
        const char *why = inet_pton(AF_INET6, name, a6) == 1 ? NULL : bad_name(name);
        if (!rc && why)
            rc = scv_err_set(err, SCV_EINVAL, "%s:%d: '%s' is not a host name: %s", path, lineno, shown, why);
        long slots = 0, max_slots = 0;
        for (char *t; !rc && (t = strtok_r(NULL, " \t\r", &save));) {
            int which = -1;
            long v = 0;
            int ok = field(t, &which, &v, pol.max_slots);
            if (ok < 0)
                rc = scv_err_set(err, SCV_EINVAL, "%s:%d: unknown field '%.64s' (expected slots=N or max_slots=N)",
                                 path, lineno, t);
            else if (!ok)
                rc = scv_err_set(err, SCV_EINVAL, "%s:%d: '%.64s': expected a whole number of slots from 1 to %d",
                                 path, lineno, t, pol.max_slots);
            else if (which) max_slots = v;
            else slots = v;
        }
        if (!rc && slots && max_slots && max_slots < slots)
            rc = scv_err_set(err, SCV_EINVAL, "%s:%d: max_slots=%ld is less than slots=%ld", path, lineno, max_slots,
                             slots);
        if (!rc && n == (size_t)pol.max_hosts)
            rc = scv_err_set(err, SCV_EINVAL, "%s:%d: more than %d hosts", path, lineno, pol.max_hosts);
        if (rc) break;
        size_t j = 0;
        while (j < n && strcmp(h[j].name, name)) j++;
        if (j < n) continue; /* a host listed twice is resolved once */
        if (!(h[n].name = strdup(name))) rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
        else h[n++].line = lineno;
    }
    if (!rc && ferror(f)) rc = scv_err_set(err, SCV_EIO, "%s: read error", path);
    if (!rc && !n) rc = scv_err_set(err, SCV_EINVAL, "%s: no host in the hostfile", path);
    fclose(f);
    if (!rc && pol.resolve_timeout_ms > 0 && (rc = resolve_all(h, n, &pol, err)) == SCV_OK)
        for (size_t i = 0; i < n && !rc; i++) { /* the first bad host in the file's order */
            if (h[i].state == 3)
                rc = scv_err_set(err, SCV_ENOTFOUND, "%s:%d: host '%s' does not resolve (no such host name)", path,
                                 h[i].line, h[i].name);
            else if (h[i].state == 4)
                rc = scv_err_set(err, SCV_ENOTFOUND, "%s:%d: host '%s' did not resolve within %g s", path, h[i].line,
                                 h[i].name, pol.resolve_timeout_ms / 1000.0);
        }
    for (size_t i = 0; h && i < n; i++) free(h[i].name);
    free(h);
    free(line);
    return rc;
}
