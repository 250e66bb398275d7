/*
 * cmd_serve.c - `scavenger serve`: the Scavenger service (src/service/) as a command. Parses
 * the options, finds or creates the bearer token (DB.token, mode 0600, printed once when it
 * is made), starts the HTTP daemon and the job manager, and waits for SIGINT or SIGTERM,
 * then stops the runs it started (they checkpoint and can be resumed) and exits.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "cli/opt.h"
#include "scv.h"
#include "../service/service.h"
#include "../store/store.h"
#include "job/hostlimits.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define SERVE_USAGE "usage: scavenger serve [--listen ADDR:PORT] [--db PATH] [options]\n"

enum { V_LISTEN = 1, V_DB, V_DATA_DIR, V_ALLOW_PATHS, V_ALLOW_EXEC, V_MAX_RUNS, V_MAX_QUEUE, V_MAX_BODY,
       V_PORT_FILE, V_QUIET, V_MAX_CONNS, V_MAX_CONNS_IP, V_CONN_TIMEOUT, V_REQUEST_TIMEOUT, V_MAX_PLAN_POINTS,
       V_ALLOW_HOST, V_HOST_LIMITS, V_MAX_PLANS, V_MAX_STREAMS, V_MAX_STREAMS_RUN };

/* serve's options, declared once: --help, the completion and the man page are made from it */
const scv_option SERVE_OPTIONS[] = {
    {"listen", "ADDR:PORT", "where to listen (default 127.0.0.1:8080; port 0: any free port).\n"
                            "Off loopback every API call needs the token", V_LISTEN, 0, NULL, {0}},
    {"db", "PATH", "the run store (default ~/.local/share/scavenger/scavenger.db)", V_DB, 0, NULL, {0}},
    {"data-dir", "DIR", "job files' paths (dataset, catalog) must lie under DIR (default:\n"
                        "the store's directory)", V_DATA_DIR, 0, NULL, {0}},
    {"allow-paths", NULL, "... or anywhere (and /api/plan may read files)", V_ALLOW_PATHS, 0, NULL, {0}},
    {"allow-exec", NULL, "jobs may run an external trainer (exec, hosts)", V_ALLOW_EXEC, 0, NULL, {0}},
    {"allow-host", "NAME,...", "the Host header may also name NAME (a DNS name, a reverse\n"
                               "proxy's public name; any port). Else only the address listened on\n"
                               "(on loopback also localhost, 127.0.0.1, [::1]) with the port", V_ALLOW_HOST, 0, NULL, {0}},
    {"max-runs", "N", "runs at a time (default 1); the rest wait in a queue", V_MAX_RUNS, 0, NULL, {0}},
    {"max-queue", "N", "submissions waiting at most (default 64)", V_MAX_QUEUE, 0, NULL, {0}},
    {"max-body", "BYTES", "request bodies at most (default 1048576; larger: 413)", V_MAX_BODY, 0, NULL, {0}},
    {"max-conns", "N", "connections open at once, all clients (default 1024); near it the\n"
                      "oldest one still waiting for its request is closed for a new one", V_MAX_CONNS, 0, NULL, {0}},
    {"max-conns-per-ip", "N", "connections open at once from one address (default 128); past it\n"
                             "that address's oldest one waiting for its request is closed", V_MAX_CONNS_IP, 0, NULL, {0}},
    {"conn-timeout", "S", "close a connection silent for S seconds (default 10)", V_CONN_TIMEOUT, 0, NULL, {0}},
    {"request-timeout", "S", "cut a connection whose request has not arrived whole within S\n"
                             "seconds (default 20): a client trickling bytes", V_REQUEST_TIMEOUT, 0, NULL, {0}},
    {"max-plan-points", "N", "/api/plan's space at most: VM types x workers x batches x options\n"
                             "(default 100000; larger: 422)", V_MAX_PLAN_POINTS, 0, NULL, {0}},
    {"host-limits", "threads=N,memory=SIZE", "what one run may take of this host:\n"
                                             "its local ranks x threads (default 8 a core), its local ranks\n"
                                             "x a rank's memory (default 3/4 of it); beyond: 422 naming it", V_HOST_LIMITS,
     0, NULL, {0}},
    {"max-plans", "N", "/api/plan computed at once (default 2; the last one kept for the\n"
                       "token; more: 503 with Retry-After)", V_MAX_PLANS, 0, NULL, {0}},
    {"max-streams", "N", "event streams open at once, all runs (default 256; more: 503)", V_MAX_STREAMS, 0, NULL, {0}},
    {"max-streams-per-run", "N", "event streams of one run open at once (default 32)", V_MAX_STREAMS_RUN, 0, NULL, {0}},
    {"port-file", "FILE", "write the port listened on to FILE", V_PORT_FILE, 0, NULL, {0}},
    {"quiet", NULL, "no notice of the submissions reloaded at start", V_QUIET, 0, NULL, {0}},
    {NULL, NULL, NULL, 0, 0, NULL, {0}},
};

static void help(void)
{
    printf(SERVE_USAGE
           "\nThe Scavenger service: a JSON API (docs/API.md) and a live dashboard at http://ADDR:PORT/,\n"
           "sharing the run store with the command line.\n\n");
    cli_opt_help(stdout, SERVE_OPTIONS, 21, 0);
    printf("The token for writes (Authorization: Bearer TOKEN) is DB.token, made on the first\n"
           "start (mode 0600) and printed then only; a file of your own needs 32 or more\n"
           "characters of A-Z a-z 0-9 - . _ ~. The submissions are kept in\n"
           "DB.serve/submissions.json: the queue survives a restart (docs/API.md).\n");
}

static int usage(const char *fmt, const char *arg)
{
    return cli_usage_error("serve", SERVE_USAGE, fmt, arg);
}

/* A token's strength: at least TOKEN_MIN characters of TOKEN_ALPHABET (a made token is 64
 * hex digits); one trailing newline (or CR LF) is allowed in the file, nothing else. */
#define TOKEN_MIN 32
#define TOKEN_ALPHABET "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"

/* Reads DB.token (refused, naming the file, when weaker than TOKEN_MIN characters of
 * TOKEN_ALPHABET), or makes it (32 random bytes as hex, mode 0600) and prints it. */
static int load_token(const char *db, char *tok, size_t cap, int *made, scv_err *err)
{
    char path[1100];
    snprintf(path, sizeof path, "%s.token", db);
    *made = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        struct stat st;
        char buf[256];
        ssize_t n = fstat(fd, &st) == 0 ? read(fd, buf, sizeof buf - 1) : -1;
        close(fd);
        if (n < 0) return scv_err_set(err, SCV_EIO, "%s: cannot read: %s", path, strerror(errno));
        if (st.st_mode & 077)
            return scv_err_set(err, SCV_EINVAL, "%s: readable by others (mode %03o): chmod 600 it", path,
                               (unsigned)(st.st_mode & 0777));
        buf[n] = 0;
        if (n && buf[n - 1] == '\n') buf[--n] = 0;
        if (n && buf[n - 1] == '\r') buf[--n] = 0;
        size_t good = strspn(buf, TOKEN_ALPHABET);
        if ((size_t)n != good || n < TOKEN_MIN || (size_t)n >= cap)
            return scv_err_set(err, SCV_ECORRUPT,
                               "%s: not a token: expected %d to %zu characters of A-Z a-z 0-9 - . _ ~ and nothing else "
                               "(%s); remove it to make a new one", path, TOKEN_MIN, cap - 1,
                               (size_t)n != good ? "a character outside them" : "too short or too long");
        memcpy(tok, buf, (size_t)n + 1);
        return SCV_OK;
    }
    if (errno != ENOENT) return scv_err_set(err, SCV_EIO, "%s: cannot read: %s", path, strerror(errno));
    unsigned char r[32];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) return scv_err_set(err, SCV_EIO, "no random bytes for a token");
    for (size_t i = 0; i < sizeof r && 2 * i + 2 < cap; i++) snprintf(tok + 2 * i, 3, "%02x", r[i]);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return scv_err_set(err, SCV_EIO, "%s: cannot create: %s", path, strerror(errno));
    size_t n = strlen(tok);
    int bad = write(fd, tok, n) != (ssize_t)n || write(fd, "\n", 1) != 1;
    bad |= fsync(fd) != 0;
    bad |= close(fd) != 0;
    if (bad) {
        unlink(path);
        return scv_err_set(err, SCV_EIO, "%s: write failed", path);
    }
    *made = 1;
    return SCV_OK;
}

static int parse_int(const char *v, long lo, long hi, long *out)
{
    char *e = NULL;
    errno = 0;
    long x = strtol(v, &e, 10);
    if (!*v || *e || errno || x < lo || x > hi) return -1;
    *out = x;
    return 0;
}

int cmd_serve(int argc, char **argv)
{
    svc_state *s = calloc(1, sizeof *s);
    if (!s) return EXIT_FAIL;
    svc_config *c = &s->cfg;
    snprintf(c->listen_addr, sizeof c->listen_addr, "127.0.0.1");
    c->port = 8080, c->max_runs = 1, c->max_queue = 64, c->max_body = 1 << 20, c->http_nice = 10;
    c->lim = (svc_limits)SVC_LIMITS_DEFAULT;
    const char *db = NULL, *data_dir = NULL, *port_file = NULL;
    int rc = EXIT_FAIL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long x;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help();
            rc = EXIT_OK;
            goto out;
        }
        const scv_option *o = !strncmp(a, "--", 2) ? cli_opt_find(SERVE_OPTIONS, a + 2) : NULL;
        if (o && !o->arg) { /* the flags */
            if (o->id == V_ALLOW_PATHS) c->allow_paths = 1;
            else if (o->id == V_ALLOW_EXEC) c->allow_exec = 1;
            else c->quiet = 1;
            continue;
        }
        if (!strncmp(a, "--", 2) && !v) {
            rc = usage("%s needs a value", a);
            goto out;
        }
        if (!o) {
            rc = usage("unknown option '%s'", a);
            goto out;
        }
        i++;
        switch (o->id) {
        case V_LISTEN: {
            const char *colon = strrchr(v, ':');
            if (!colon || colon == v || (size_t)(colon - v) >= sizeof c->listen_addr || parse_int(colon + 1, 0, 65535, &x)) {
                rc = usage("--listen '%s': expected ADDR:PORT (127.0.0.1:8080)", v);
                goto out;
            }
            snprintf(c->listen_addr, sizeof c->listen_addr, "%.*s", (int)(colon - v), v);
            c->port = (int)x;
            break;
        }
        case V_ALLOW_HOST:
            if (!*v || strlen(v) >= sizeof c->allow_hosts || strstr(v, ",,") || *v == ',' ||
                v[strlen(v) - 1] == ',' ||
                strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-,") != strlen(v)) {
                rc = usage("--allow-host '%s': expected host names separated by commas (scavenger.example.com)", v);
                goto out;
            }
            snprintf(c->allow_hosts, sizeof c->allow_hosts, "%s", v);
            break;
        case V_HOST_LIMITS: {
            scv_host_limits hl = scv_host_limits_default();
            scv_err he = {0};
            if (strlen(v) >= sizeof c->host_limits || scv_host_limits_parse(v, &hl, &he)) {
                rc = usage("%s", he.code ? he.msg : "--host-limits: too long");
                goto out;
            }
            snprintf(c->host_limits, sizeof c->host_limits, "%s", v);
            break;
        }
        case V_DB: db = v; break;
        case V_DATA_DIR: data_dir = v; break;
        case V_PORT_FILE: port_file = v; break;
        default: { /* --max-runs, --max-queue, --max-body, the connection and plan limits */
            long hi = o->id == V_MAX_BODY ? 1L << 30
                    : o->id == V_MAX_CONNS || o->id == V_MAX_CONNS_IP || o->id == V_MAX_STREAMS || o->id == V_MAX_STREAMS_RUN
                        ? 65536
                    : o->id == V_CONN_TIMEOUT || o->id == V_REQUEST_TIMEOUT ? 3600 : o->id == V_MAX_PLAN_POINTS ? 100000000 : 1024;
            if (parse_int(v, 1, hi, &x)) {
                char m[96];
                snprintf(m, sizeof m, "%s '%%s': expected an integer from 1 to %ld", a, hi);
                rc = usage(m, v);
                goto out;
            }
            if (o->id == V_MAX_RUNS) c->max_runs = (int)x;
            else if (o->id == V_MAX_QUEUE) c->max_queue = (int)x;
            else if (o->id == V_MAX_CONNS) c->lim.max_conns = (unsigned)x;
            else if (o->id == V_MAX_CONNS_IP) c->lim.max_conns_per_ip = (unsigned)x;
            else if (o->id == V_CONN_TIMEOUT) c->lim.conn_timeout_s = (unsigned)x;
            else if (o->id == V_REQUEST_TIMEOUT) c->lim.request_timeout_s = (unsigned)x;
            else if (o->id == V_MAX_PLAN_POINTS) c->lim.max_plan_points = x;
            else if (o->id == V_MAX_PLANS) c->lim.max_plans = (unsigned)x;
            else if (o->id == V_MAX_STREAMS) c->lim.max_streams = (unsigned)x;
            else if (o->id == V_MAX_STREAMS_RUN) c->lim.max_streams_per_run = (unsigned)x;
            else c->max_body = (size_t)x;
        }
        }
    }
    scv_err err = {0};
    if (db) snprintf(c->db, sizeof c->db, "%s", db);
    else if (cli_default_db(c->db, sizeof c->db, &err)) goto fail;
    char dbdir[1024];
    snprintf(dbdir, sizeof dbdir, "%s", c->db);
    char *sl = strrchr(dbdir, '/');
    if (sl) *sl = 0;
    else snprintf(dbdir, sizeof dbdir, ".");
    if (!realpath(data_dir ? data_dir : dbdir, c->data_dir)) {
        /* the option the user gave: --data-dir, else the directory of --db (the default data
         * directory), never an option that was not passed */
        if (data_dir) scv_err_set(&err, SCV_EINVAL, "--data-dir %s: %s", data_dir, strerror(errno));
        else
            scv_err_set(&err, SCV_EINVAL, "--db %s: its directory %s: %s%s", c->db, dbdir, strerror(errno),
                        errno == ENOENT ? " (create it first, or choose another path)" : "");
        goto fail;
    }
    /* the service's directory and its lock (one service per store) beside the store's file
     * under its canonical name: every symbolic link to one store leads to one lock (a store
     * with hard links is refused when it is opened) */
    char canon[4096];
    if (scv_store_canonical(c->db, canon, sizeof canon, &err)) goto fail;
    if (snprintf(c->work_dir, sizeof c->work_dir, "%s.serve", canon) >= (int)sizeof c->work_dir) {
        scv_err_set(&err, SCV_ERANGE, "--db %s: its path is too long", c->db);
        goto fail;
    }
    ssize_t n = readlink("/proc/self/exe", c->exe, sizeof c->exe - 1);
    if (n <= 0) {
        scv_err_set(&err, SCV_EIO, "cannot find this executable (/proc/self/exe)");
        goto fail;
    }
    c->exe[n] = 0;
    int made = 0;
    if (load_token(c->db, c->token, sizeof c->token, &made, &err)) goto fail;
    /* every thread starts with SIGINT and SIGTERM blocked: this one waits for them */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (svc_start(s, &err)) {
        svc_stop(s);
        goto fail;
    }
    if (made)
        printf("scavenger serve: the token for writes (printed this once; kept in %s.token, mode 0600):\n%s\n", c->db,
               c->token);
    if (port_file) {
        FILE *f = fopen(port_file, "w");
        int bad = !f || fprintf(f, "%d\n", s->bound_port) < 0;
        bad |= f && fclose(f) != 0;
        if (bad) {
            scv_err_set(&err, SCV_EIO, "--port-file %s: cannot write", port_file);
            svc_stop(s);
            goto fail;
        }
    }
    int loopback = svc_is_loopback(c->listen_addr);
    fprintf(stderr, "scavenger serve: listening on http://%s:%d/ (store %s, %d run%s at a time)%s\n", c->listen_addr,
            s->bound_port, c->db, c->max_runs, c->max_runs == 1 ? "" : "s",
            loopback ? "" : "; off loopback: every API call needs the token");
    if (!loopback)
        fprintf(stderr, "scavenger serve: WARNING: listening on %s, off loopback, over plain HTTP: the token and every "
                "request and answer cross the network in clear (anyone on the path can read the token and act with it)."
                " Put the service behind a TLS proxy or an SSH tunnel, or listen on 127.0.0.1.\n", c->listen_addr);
    fflush(stdout);
    int sig = 0;
    sigwait(&set, &sig);
    fprintf(stderr, "scavenger serve: %s: stopping (running runs are interrupted and can be resumed)\n",
            sig == SIGINT ? "SIGINT" : "SIGTERM");
    svc_stop(s);
    rc = EXIT_OK;
    goto out;
fail:
    fprintf(stderr, "scavenger serve: %s\n", err.msg);
    rc = err.code == SCV_EINVAL ? EXIT_USAGE : EXIT_FAIL;
out:
    free(s);
    return rc;
}
