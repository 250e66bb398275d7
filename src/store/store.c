/*
 * store.c - the run database on SQLite (declared in scv.h); the only file that includes
 * <sqlite3.h>. Writes are transactions; the schema has a version in user_version.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "store.h"

#include <sqlite3.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SCHEMA_VERSION 8

struct scv_store {
    sqlite3 *db;
    sqlite3_stmt *data_version; /* prepared once: readers ask it on every request */
    char path[1024];
};

static const char *SCHEMA =
    "CREATE TABLE IF NOT EXISTS measurements(run INTEGER REFERENCES runs(id), phase TEXT, vm TEXT,"
    " workers INTEGER, batch INTEGER, iterations INTEGER, t_compute REAL, t_comm REAL, t_iter REAL,"
    " g_local REAL, g_global REAL, epoch_progress REAL, t_latency REAL);"
    "CREATE TABLE IF NOT EXISTS models(run INTEGER REFERENCES runs(id), kind TEXT, json TEXT, created REAL);"
    "CREATE TABLE IF NOT EXISTS decisions(run INTEGER REFERENCES runs(id), created REAL, kind TEXT,"
    " workers INTEGER, batch INTEGER, vm TEXT, predicted_time REAL, predicted_cost REAL, reason TEXT);"
    "CREATE TABLE IF NOT EXISTS switches(run INTEGER REFERENCES runs(id), created REAL, from_workers INTEGER,"
    " from_batch INTEGER, to_workers INTEGER, to_batch INTEGER, idle_s REAL);"
    "CREATE TABLE IF NOT EXISTS targets(run INTEGER REFERENCES runs(id), job_key TEXT, accuracy REAL,"
    " epochs REAL, batch INTEGER, metric TEXT DEFAULT 'accuracy');"
    "CREATE TABLE IF NOT EXISTS steps(run INTEGER REFERENCES runs(id), idx INTEGER, phase TEXT,"
    " workers INTEGER, batch INTEGER, iterations INTEGER, first_start REAL, last_end REAL,"
    " idle_before REAL, t_iter REAL, accuracy REAL, reached INTEGER, vm TEXT);"
    "CREATE TABLE IF NOT EXISTS evals(run INTEGER REFERENCES runs(id), workers INTEGER, batch INTEGER,"
    " iteration INTEGER, samples REAL, epoch REAL, accuracy REAL, loss REAL, train_loss REAL,"
    " train_loss_samples REAL);"
    "CREATE TABLE IF NOT EXISTS stragglers(run INTEGER REFERENCES runs(id), created REAL, iteration INTEGER,"
    " worker INTEGER, host TEXT, ratio REAL, replaced INTEGER, by_host TEXT, idle_s REAL, note TEXT);"
    "CREATE INDEX IF NOT EXISTS runs_job ON runs(job_key);";
/* schema 1 -> 2: the loop's state and its steps (the tables are created above) */
static const char *MIGRATE_1_2 = "ALTER TABLE runs ADD COLUMN state TEXT;";
/* schema 2 -> 3: loss targets (targets.metric; the value stays in targets.accuracy) and the
 * period-mean training loss of each evaluation (targets exists from schema 1, evals from 2) */
static const char *MIGRATE_TARGETS_3 =
    /* early schema-1 databases have no targets table: create it in its old form first */
    "CREATE TABLE IF NOT EXISTS targets(run INTEGER REFERENCES runs(id), job_key TEXT, accuracy REAL,"
    " epochs REAL, batch INTEGER);"
    "ALTER TABLE targets ADD COLUMN metric TEXT DEFAULT 'accuracy';";
static const char *MIGRATE_EVALS_3 =
    "ALTER TABLE evals ADD COLUMN train_loss REAL; ALTER TABLE evals ADD COLUMN train_loss_samples REAL;";

/* schema 4 -> 5: the latency probe's time of each measurement (measurements exists from 1) */
static const char *MIGRATE_LATENCY_5 = "ALTER TABLE measurements ADD COLUMN t_latency REAL;";
/* 6: the process a running run lives in ("HOST:PID:START", run_owner): a run whose process
 * is gone is not shown as running (summary_row) */
static const char *MIGRATE_OWNER_6 = "ALTER TABLE runs ADD COLUMN owner TEXT;";
/* 7: a running run's latest forecast (scv_store_run_eta; NULL when none): when it was
 * written, the time left, its band, P(reach), overdue, nominal */
static const char *MIGRATE_ETA_7 =
    "ALTER TABLE runs ADD COLUMN eta_written REAL; ALTER TABLE runs ADD COLUMN eta_s REAL;"
    " ALTER TABLE runs ADD COLUMN eta_lo_s REAL; ALTER TABLE runs ADD COLUMN eta_hi_s REAL;"
    " ALTER TABLE runs ADD COLUMN eta_p_reach REAL; ALTER TABLE runs ADD COLUMN eta_overdue INTEGER;"
    " ALTER TABLE runs ADD COLUMN eta_nominal INTEGER;";
/* 8: the VM type each step trained on (steps exists from 2; NULL: the run's own, before 8) */
static const char *MIGRATE_STEP_VM_8 = "ALTER TABLE steps ADD COLUMN vm TEXT;";
/* a run that stops running keeps no forecast (with its status, in the same UPDATE) */
#define ETA_CLEAR ", eta_written=NULL, eta_s=NULL, eta_lo_s=NULL, eta_hi_s=NULL, eta_p_reach=NULL, eta_overdue=NULL," \
                  " eta_nominal=NULL"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int db_fail(scv_store *s, scv_err *err, const char *what)
{
    return scv_err_set(err, SCV_EIO, "%s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

void scv_store_close(scv_store *s)
{
    if (!s) return;
    sqlite3_finalize(s->data_version);
    sqlite3_close(s->db);
    free(s);
}

/* How long opening, setting up and writing wait for another connection's lock in total. */
#define BUSY_TIMEOUT_MS 30000

static int is_busy(int rc) { return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED; }

/* A short, growing, jittered pause before retrying a step that met another writer. */
static void busy_pause(int attempt)
{
    int ms = 5 << (attempt < 5 ? attempt : 5); /* 5 .. 160 ms */
    ms += rand() % (ms + 1);
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* One attempt at the schema: WAL, then one IMMEDIATE transaction (the write lock is taken
 * up front, so the busy timeout applies; a deferred transaction upgrading from read to
 * write gets SQLITE_BUSY at once) that reads the version and creates or migrates. Returns
 * the SQLite code of the step that failed (SQLITE_OK when done), *what names it; a newer
 * schema is reported as SQLITE_OK with *version set above SCHEMA_VERSION. */
static int schema_setup(scv_store *s, int *version, const char **what, char *msg, size_t cap)
{
    /* a new database gets schema 1 and migrates like an old one */
    static const char *schema1_runs =
        "CREATE TABLE IF NOT EXISTS runs(id INTEGER PRIMARY KEY, created REAL, job_key TEXT,"
        " job TEXT, status TEXT, actual_time REAL, actual_cost REAL, accuracy REAL, reached INTEGER);";
    int rc;
    *what = "journal mode";
    if ((rc = sqlite3_exec(s->db, "PRAGMA journal_mode=WAL;", NULL, NULL, NULL)) != SQLITE_OK) goto out;
    *what = "begin";
    if ((rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE;", NULL, NULL, NULL)) != SQLITE_OK) goto out;
    sqlite3_stmt *st;
    *what = "schema version";
    if ((rc = sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL)) != SQLITE_OK) goto fail;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *version = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) goto fail;
    if (*version > SCHEMA_VERSION) {
        sqlite3_exec(s->db, "ROLLBACK;", NULL, NULL, NULL);
        return SQLITE_OK;
    }
    if (*version < SCHEMA_VERSION) {
        *what = "schema";
        if ((rc = sqlite3_exec(s->db, schema1_runs, NULL, NULL, NULL)) != SQLITE_OK ||
            (*version < 2 && (rc = sqlite3_exec(s->db, MIGRATE_1_2, NULL, NULL, NULL)) != SQLITE_OK) ||
            (*version >= 1 && *version < 3 &&
             (rc = sqlite3_exec(s->db, MIGRATE_TARGETS_3, NULL, NULL, NULL)) != SQLITE_OK) ||
            (*version == 2 && (rc = sqlite3_exec(s->db, MIGRATE_EVALS_3, NULL, NULL, NULL)) != SQLITE_OK) ||
            (*version >= 1 && *version < 5 &&
             (rc = sqlite3_exec(s->db, MIGRATE_LATENCY_5, NULL, NULL, NULL)) != SQLITE_OK) ||
            (*version < 6 && (rc = sqlite3_exec(s->db, MIGRATE_OWNER_6, NULL, NULL, NULL)) != SQLITE_OK) ||
            (*version < 7 && (rc = sqlite3_exec(s->db, MIGRATE_ETA_7, NULL, NULL, NULL)) != SQLITE_OK) ||
            (*version >= 2 && *version < 8 &&
             (rc = sqlite3_exec(s->db, MIGRATE_STEP_VM_8, NULL, NULL, NULL)) != SQLITE_OK) ||
            (rc = sqlite3_exec(s->db, SCHEMA, NULL, NULL, NULL)) != SQLITE_OK ||
            (rc = sqlite3_exec(s->db, "PRAGMA user_version=8;", NULL, NULL, NULL)) != SQLITE_OK)
            goto fail;
    }
    *what = "commit";
    if ((rc = sqlite3_exec(s->db, "COMMIT;", NULL, NULL, NULL)) != SQLITE_OK) goto fail;
    return SQLITE_OK;
fail:
    snprintf(msg, cap, "%s", sqlite3_errmsg(s->db));
    sqlite3_exec(s->db, "ROLLBACK;", NULL, NULL, NULL);
    return rc;
out:
    snprintf(msg, cap, "%s", sqlite3_errmsg(s->db));
    return rc;
}

/* A database that does not exist yet is created in its directory: one that is missing (or
 * not a directory) is named, with the path, where SQLite says only "unable to open database
 * file". */
static int check_dir(const char *path, scv_err *err)
{
    struct stat st;
    if (!path[0]) return scv_err_set(err, SCV_EINVAL, "the database path is empty");
    if (stat(path, &st) == 0 || (errno != ENOENT && errno != ENOTDIR)) return SCV_OK; /* there (SQLite reports what else is wrong) */
    char dir[4096];
    const char *sl = strrchr(path, '/');
    if (!sl) return SCV_OK; /* the working directory */
    snprintf(dir, sizeof dir, "%.*s", sl == path ? 1 : (int)(sl - path), path);
    if (stat(dir, &st)) {
        int e = errno;
        return scv_err_set(err, SCV_EIO, "%s: cannot create the database: its directory %s: %s%s", path, dir,
                           strerror(e), e == ENOENT ? " (create it first, or choose another path)" : "");
    }
    if (!S_ISDIR(st.st_mode))
        return scv_err_set(err, SCV_EIO, "%s: cannot create the database: %s is not a directory", path, dir);
    return SCV_OK;
}

int scv_store_open(const char *path, scv_store **out, scv_err *err)
{
    *out = NULL;
    scv_store *s = calloc(1, sizeof *s);
    if (!s) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    snprintf(s->path, sizeof s->path, "%s", path);
    int rc = check_dir(path, err);
    if (rc) {
        free(s);
        return rc;
    }
    rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc != SQLITE_OK) {
        rc = scv_err_set(err, SCV_EIO, "%s: cannot open the database: %s", path,
                         s->db ? sqlite3_errmsg(s->db) : "out of memory");
        scv_store_close(s);
        return rc;
    }
    /* before anything touches the file: the journal mode and the schema wait too */
    sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
    sqlite3_extended_result_codes(s->db, 1);
    /* Some lock conflicts return SQLITE_BUSY without waiting (WAL recovery, a journal mode
     * change racing another opener); retry those until the same deadline. */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int version = 0;
    const char *what = "";
    char msg[512] = "";
    for (int attempt = 0;; attempt++) {
        rc = schema_setup(s, &version, &what, msg, sizeof msg);
        if (!is_busy(rc)) break;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 > BUSY_TIMEOUT_MS) break;
        busy_pause(attempt);
    }
    if (rc != SQLITE_OK) {
        if ((rc & 0xff) == SQLITE_NOTADB)
            rc = scv_err_set(err, SCV_ECORRUPT, "%s: not a Scavenger database: %s", path, msg);
        else
            rc = scv_err_set(err, is_busy(rc) ? SCV_EIO : SCV_ECORRUPT, "%s: cannot set up the schema (%s): %s",
                             path, what, msg);
        scv_store_close(s);
        return rc;
    }
    if (version > SCHEMA_VERSION) {
        rc = scv_err_set(err, SCV_EINVAL, "%s: database schema %d is newer than this build's %d", path,
                         version, SCHEMA_VERSION);
        scv_store_close(s);
        return rc;
    }
    *out = s;
    return SCV_OK;
}

/* Room for element n in the array *arr of capacity *cap (doubling); non-zero when out of memory. */
static int grow(void **arr, size_t n, size_t *cap, size_t elem)
{
    if (n < *cap) return 0;
    size_t c = *cap ? 2 * *cap : 16;
    void *a = realloc(*arr, c * elem);
    if (!a) return 1;
    *arr = a, *cap = c;
    return 0;
}

/* The rows of one run that sql selects (its one parameter: the run), each read by row() into
 * a zeroed element of a malloc'ed array (*out, *n). */
static int load_rows(scv_store *s, const char *sql, long long run, size_t elem, void (*row)(sqlite3_stmt *, void *),
                     void **out, size_t *n, scv_err *err)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) return db_fail(s, err, "prepare");
    sqlite3_bind_int64(st, 1, run);
    size_t cap = 0;
    int rc = SCV_OK;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (grow(out, *n, &cap, elem)) {
            rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
            break;
        }
        void *e = (char *)*out + elem * (*n)++;
        memset(e, 0, elem);
        row(st, e);
    }
    sqlite3_finalize(st);
    return rc;
}

/* Prepares sql, binds the arguments described by types ('i' int, 'I' int64, 'd' double,
 * 't' text), steps once, finalizes. */
static int exec_bind(scv_store *s, scv_err *err, const char *sql, const char *types, ...)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) return db_fail(s, err, "prepare");
    va_list ap;
    va_start(ap, types);
    for (int i = 0; types[i]; i++) {
        switch (types[i]) {
        case 'i': sqlite3_bind_int(st, i + 1, va_arg(ap, int)); break;
        case 'I': sqlite3_bind_int64(st, i + 1, va_arg(ap, long long)); break;
        case 'd': sqlite3_bind_double(st, i + 1, va_arg(ap, double)); break;
        default: sqlite3_bind_text(st, i + 1, va_arg(ap, const char *), -1, SQLITE_TRANSIENT);
        }
    }
    va_end(ap);
    /* an autocommit write takes the write lock up front, so the busy timeout applies; the
     * few conflicts that return SQLITE_BUSY at once are retried a while */
    int rc = sqlite3_step(st);
    for (int attempt = 0; is_busy(rc) && attempt < 40; attempt++) {
        sqlite3_reset(st);
        busy_pause(attempt);
        rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? SCV_OK : db_fail(s, err, "write");
}

/* A process's start time in clock ticks since boot (/proc/PID/stat, field 22; 0 when not
 * readable): with the pid it names the process, a reused pid has another. */
static unsigned long long proc_start(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* after the command name, which may hold spaces */
    unsigned long long start = 0;
    for (int field = 2; p && *p && field < 22; p++)
        if (*p == ' ') field++;
    if (p) start = strtoull(p, NULL, 10);
    return start;
}

/* This process as a run's owner: "HOST:PID:START". */
static void run_owner(char *buf, size_t cap)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    snprintf(buf, cap, "%s:%ld:%llu", host, (long)getpid(), proc_start((long)getpid()));
}

int scv_store_owner_gone(const char *owner)
{
    char host[256] = "", me[256] = "";
    long pid;
    unsigned long long start;
    if (!owner || sscanf(owner, "%255[^:]:%ld:%llu", host, &pid, &start) != 3 || pid < 1) return 0;
    gethostname(me, sizeof me - 1);
    if (strcmp(host, me)) return 0; /* another machine's process: not known here */
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) return 1;
    unsigned long long now = proc_start(pid);
    return start && now && now != start; /* the pid was reused */
}

int scv_store_run_new(scv_store *s, const char *job_key, const char *job_json, long long *id, scv_err *err)
{
    char owner[320];
    run_owner(owner, sizeof owner);
    int rc = exec_bind(s, err, "INSERT INTO runs(created, job_key, job, status, owner) VALUES(?,?,?,'running',?)",
                       "dttt", now_s(), job_key, job_json, owner);
    if (!rc) *id = sqlite3_last_insert_rowid(s->db);
    return rc;
}

int scv_store_run_status(scv_store *s, long long id, const char *status, scv_err *err)
{
    if (strcmp(status, "running"))
        return exec_bind(s, err, "UPDATE runs SET status=?" ETA_CLEAR " WHERE id=?", "tI", status, id);
    char owner[320]; /* a resumed run lives in this process now */
    run_owner(owner, sizeof owner);
    return exec_bind(s, err, "UPDATE runs SET status=?, owner=? WHERE id=?", "ttI", status, owner, id);
}

int scv_store_run_get(scv_store *s, long long id, char *job, size_t cap, char *status, size_t scap,
                      scv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT job, status, owner FROM runs WHERE id=?", -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, err, "prepare");
    sqlite3_bind_int64(st, 1, id);
    int rc = SCV_OK;
    if (sqlite3_step(st) == SQLITE_ROW) {
        snprintf(job, cap, "%s", (const char *)sqlite3_column_text(st, 0));
        snprintf(status, scap, "%s", (const char *)sqlite3_column_text(st, 1));
        if (!strcmp(status, "running") && scv_store_owner_gone((const char *)sqlite3_column_text(st, 2)))
            snprintf(status, scap, "%s", SCV_RUN_GONE);
    } else {
        rc = scv_err_set(err, SCV_ENOTFOUND, "%s: no run %lld", s->path, id);
    }
    sqlite3_finalize(st);
    return rc;
}

int scv_store_measurement(scv_store *s, long long run, const char *phase, const scv_config_stats *c,
                          scv_err *err)
{
    return exec_bind(s, err,
                     "INSERT INTO measurements VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)", "Ittiiiddddddd", run, phase, c->vm,
                     c->workers, c->batch, c->n_iters, c->t_compute, c->t_comm, c->t_iter, c->g_local, c->g_global,
                     c->epoch_progress, c->t_latency);
}

/* NULL columns (NaN was stored) read back as NaN */
static double col_d(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* A text column into buf ("" when NULL). */
static void col_text(sqlite3_stmt *st, int i, char *buf, size_t cap)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    snprintf(buf, cap, "%s", t ? (const char *)t : "");
}

/* A measurements row (vm, workers, batch, iterations, t_compute, t_comm, t_iter, g_local,
 * g_global, epoch_progress, t_latency, in this order) into c (t_latency NULL, from before
 * schema 5: 0, not probed). */
static void measurement_row(sqlite3_stmt *st, void *p)
{
    scv_config_stats *c = p;
    memset(c, 0, sizeof *c);
    col_text(st, 0, c->vm, sizeof c->vm);
    c->workers = sqlite3_column_int(st, 1);
    c->batch = sqlite3_column_int(st, 2);
    c->n_iters = sqlite3_column_int(st, 3);
    c->t_compute = sqlite3_column_double(st, 4);
    c->t_comm = sqlite3_column_double(st, 5);
    c->t_iter = sqlite3_column_double(st, 6);
    c->g_local = sqlite3_column_double(st, 7);
    c->g_global = sqlite3_column_double(st, 8);
    c->epoch_progress = sqlite3_column_double(st, 9);
    c->t_latency = sqlite3_column_double(st, 10);
}

/* Every measurement of one run (malloc'ed). */

int scv_store_load_measurements(scv_store *s, const char *job_key, long long exclude,
                                scv_config_stats **out, size_t *n, long long *from_run, scv_err *err)
{
    *out = NULL;
    *n = 0;
    *from_run = -1;
    sqlite3_stmt *st;
    /* newest first; the first row of each (vm, K, B) wins */
    const char *q = "SELECT m.vm, m.workers, m.batch, m.iterations, m.t_compute, m.t_comm, m.t_iter, m.g_local,"
                    " m.g_global, m.epoch_progress, m.t_latency, m.run FROM measurements m JOIN runs r ON m.run = r.id"
                    " WHERE r.job_key=? AND r.id<>? ORDER BY m.rowid DESC";
    if (sqlite3_prepare_v2(s->db, q, -1, &st, NULL) != SQLITE_OK) return db_fail(s, err, "prepare");
    sqlite3_bind_text(st, 1, job_key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, exclude);
    size_t cap = 0;
    int rc = SCV_OK;
    while (sqlite3_step(st) == SQLITE_ROW) {
        scv_config_stats c;
        measurement_row(st, &c);
        int dup = 0;
        for (size_t i = 0; i < *n && !dup; i++)
            dup = (*out)[i].workers == c.workers && (*out)[i].batch == c.batch && !strcmp((*out)[i].vm, c.vm);
        if (dup) continue;
        if (*from_run < 0) *from_run = sqlite3_column_int64(st, 11);
        if (grow((void **)out, *n, &cap, sizeof **out)) {
            rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
            break;
        }
        (*out)[(*n)++] = c;
    }
    sqlite3_finalize(st);
    if (!rc && !*n)
        rc = scv_err_set(err, SCV_ENOTFOUND,
                         "%s: no stored run of this job (%s) to plan from: run once with --search "
                         "partial or full", s->path, job_key);
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

int scv_store_model(scv_store *s, long long run, const char *kind, const char *json, scv_err *err)
{
    return exec_bind(s, err, "INSERT INTO models VALUES(?,?,?,?)", "Ittd", run, kind, json, now_s());
}

int scv_store_decision(scv_store *s, long long run, const char *kind, int workers, int batch,
                       const char *vm, double predicted_time, double predicted_cost,
                       const char *reason, scv_err *err)
{
    return exec_bind(s, err, "INSERT INTO decisions VALUES(?,?,?,?,?,?,?,?,?)", "Idtiitddt", run, now_s(),
                     kind, workers, batch, vm, predicted_time, predicted_cost, reason);
}

int scv_store_switch(scv_store *s, long long run, int from_k, int from_b, int to_k, int to_b,
                     double idle_s, scv_err *err)
{
    return exec_bind(s, err, "INSERT INTO switches VALUES(?,?,?,?,?,?,?)", "Idiiiid", run, now_s(), from_k,
                     from_b, to_k, to_b, idle_s);
}

int scv_store_straggler(scv_store *s, long long run, const scv_straggler_event *e, scv_err *err)
{
    return exec_bind(s, err, "INSERT INTO stragglers VALUES(?,?,?,?,?,?,?,?,?,?)", "IdIitdItdt", run, now_s(),
                     (long long)e->iteration, e->worker, e->host, e->ratio, (long long)e->replaced, e->by_host,
                     e->idle_s, e->note);
}

static void straggler_row(sqlite3_stmt *st, void *p)
{
    scv_straggler_event *e = p;
    e->iteration = sqlite3_column_int64(st, 0);
    e->worker = sqlite3_column_int(st, 1);
    col_text(st, 2, e->host, sizeof e->host);
    e->ratio = col_d(st, 3);
    e->replaced = sqlite3_column_int(st, 4);
    col_text(st, 5, e->by_host, sizeof e->by_host);
    e->idle_s = col_d(st, 6);
    col_text(st, 7, e->note, sizeof e->note);
}

int scv_store_load_stragglers(scv_store *s, long long run, scv_straggler_event **out, size_t *n, scv_err *err)
{
    return load_rows(s, "SELECT iteration, worker, host, ratio, replaced, by_host, idle_s, note FROM stragglers "
                        "WHERE run=? ORDER BY rowid", run, sizeof **out, straggler_row, (void **)out, n, err);
}

int scv_store_outcome(scv_store *s, long long run, double actual_time, double actual_cost,
                      double accuracy, int reached, scv_err *err)
{
    return exec_bind(s, err,
                     "UPDATE runs SET actual_time=?, actual_cost=?, accuracy=?, reached=?, status=?" ETA_CLEAR " WHERE id=?",
                     "dddItI", actual_time, actual_cost, accuracy, (long long)reached,
                     reached ? "done" : "target not reached", run);
}

int scv_store_run_set_job(scv_store *s, long long run, const char *job_json, scv_err *err)
{
    return exec_bind(s, err, "UPDATE runs SET job=? WHERE id=?", "tI", job_json, run);
}

int scv_store_run_spent(scv_store *s, long long run, double actual_time, double actual_cost, scv_err *err)
{
    return exec_bind(s, err, "UPDATE runs SET actual_time=?, actual_cost=? WHERE id=?", "ddI", actual_time, actual_cost,
                     run);
}

int scv_store_last_decision(scv_store *s, long long run, int *workers, int *batch, char *vm, size_t vm_cap,
                            scv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT workers, batch, vm FROM decisions WHERE run=? ORDER BY rowid DESC LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, err, "prepare");
    sqlite3_bind_int64(st, 1, run);
    int rc = SCV_ENOTFOUND;
    if (sqlite3_step(st) == SQLITE_ROW) {
        *workers = sqlite3_column_int(st, 0);
        *batch = sqlite3_column_int(st, 1);
        if (vm && vm_cap) col_text(st, 2, vm, vm_cap);
        rc = SCV_OK;
    }
    sqlite3_finalize(st);
    return rc;
}

int scv_store_set_target(scv_store *s, long long run, scv_metric metric, double value, double epochs, int batch,
                         scv_err *err)
{
    /* (epochs NaN, not reached: SQLite binds a NaN as NULL) */
    return exec_bind(s, err, "INSERT INTO targets SELECT ?, job_key, ?, ?, ?, ? FROM runs WHERE id=?", "IdditI",
                     run, value, epochs, batch, metric == SCV_METRIC_LOSS ? "loss" : "accuracy", run);
}

/* The nearest target at least as hard: an accuracy >= the asked one (the smallest), a loss
 * <= it (the largest); the latest run among equals. */
int scv_store_learnt_target(scv_store *s, const char *job_key, scv_metric metric, double value, double *epochs,
                            int *batch, scv_err *err)
{
    sqlite3_stmt *st;
    const char *q = metric == SCV_METRIC_LOSS
                        ? "SELECT epochs, batch FROM targets WHERE job_key=? AND metric='loss' AND accuracy<=? "
                          "AND epochs IS NOT NULL ORDER BY accuracy DESC, rowid DESC LIMIT 1"
                        : "SELECT epochs, batch FROM targets WHERE job_key=? AND metric='accuracy' AND accuracy>=? "
                          "AND epochs IS NOT NULL ORDER BY accuracy ASC, rowid DESC LIMIT 1";
    if (sqlite3_prepare_v2(s->db, q, -1, &st, NULL) != SQLITE_OK) return db_fail(s, err, "prepare");
    sqlite3_bind_text(st, 1, job_key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(st, 2, metric == SCV_METRIC_LOSS ? value + 1e-9 : value - 1e-9);
    int rc = SCV_ENOTFOUND;
    if (sqlite3_step(st) == SQLITE_ROW) {
        *epochs = sqlite3_column_double(st, 0);
        *batch = sqlite3_column_int(st, 1);
        rc = SCV_OK;
    }
    sqlite3_finalize(st);
    return rc;
}

/* Every stored target of job_key in this metric, newest first (at most max rows); epochs
 * NaN where the run did not reach it. */
int scv_store_targets(scv_store *s, const char *job_key, scv_metric metric, long long exclude, scv_stored_target *out,
                      size_t max, size_t *n, scv_err *err)
{
    *n = 0;
    sqlite3_stmt *st;
    const char *q = "SELECT run, accuracy, epochs, batch FROM targets WHERE job_key=? AND metric=? AND run<>? "
                    "ORDER BY rowid DESC";
    if (sqlite3_prepare_v2(s->db, q, -1, &st, NULL) != SQLITE_OK) return db_fail(s, err, "prepare");
    sqlite3_bind_text(st, 1, job_key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, metric == SCV_METRIC_LOSS ? "loss" : "accuracy", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, exclude);
    while (*n < max && sqlite3_step(st) == SQLITE_ROW) {
        scv_stored_target *t = &out[(*n)++];
        t->run = sqlite3_column_int64(st, 0);
        t->value = col_d(st, 1);
        t->epochs = col_d(st, 2);
        t->batch = sqlite3_column_int(st, 3);
    }
    sqlite3_finalize(st);
    return SCV_OK;
}

int scv_store_run_eta(scv_store *s, long long run, const struct scv_run_eta *e, scv_err *err)
{
    if (!e) return exec_bind(s, err, "UPDATE runs SET status=status" ETA_CLEAR " WHERE id=?", "I", run);
    /* only a running run has one: a late write after the end changes nothing (NaN binds as NULL) */
    return exec_bind(s, err, "UPDATE runs SET eta_written=?, eta_s=?, eta_lo_s=?, eta_hi_s=?, eta_p_reach=?,"
                             " eta_overdue=?, eta_nominal=? WHERE id=? AND status='running'", "dddddiiI", now_s(),
                     e->remaining_s, e->remaining_lo_s, e->remaining_hi_s, e->p_reach, e->overdue != 0,
                     e->nominal != 0, run);
}

int scv_store_run_state(scv_store *s, long long run, const char *state, scv_err *err)
{
    return exec_bind(s, err, "UPDATE runs SET state=? WHERE id=?", "tI", state, run);
}

int scv_store_step(scv_store *s, long long run, int idx, const scv_run_step *t, scv_err *err)
{
    return exec_bind(s, err, "INSERT INTO steps VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)", "Iitiiidddddit", run, idx,
                     t->phase, t->workers, t->batch, (long long)t->iterations, t->first_start, t->last_end,
                     t->idle_before, t->t_iter, t->accuracy, t->reached, t->vm);
}

static void step_row(sqlite3_stmt *st, void *p)
{
    scv_run_step *t = p;
    col_text(st, 0, t->phase, sizeof t->phase);
    t->workers = sqlite3_column_int(st, 1);
    t->batch = sqlite3_column_int(st, 2);
    t->iterations = sqlite3_column_int64(st, 3);
    t->first_start = col_d(st, 4);
    t->last_end = col_d(st, 5);
    t->idle_before = col_d(st, 6);
    t->t_iter = col_d(st, 7);
    t->accuracy = col_d(st, 8);
    t->reached = sqlite3_column_int(st, 9);
    col_text(st, 10, t->vm, sizeof t->vm); /* NULL (before schema 8): "" */
}

int scv_store_load_steps(scv_store *s, long long run, scv_run_step **out, size_t *n, scv_err *err)
{
    return load_rows(s, "SELECT phase, workers, batch, iterations, first_start, last_end, idle_before, t_iter, accuracy, "
                        "reached, vm FROM steps WHERE run=? ORDER BY idx", run, sizeof **out, step_row, (void **)out, n, err);
}

int scv_store_run_measurements(scv_store *s, long long run, scv_config_stats **out, size_t *n, scv_err *err)
{
    return load_rows(s, "SELECT vm, workers, batch, iterations, t_compute, t_comm, t_iter, g_local, g_global, "
                        "epoch_progress, t_latency FROM measurements WHERE run=?", run, sizeof **out, measurement_row,
                     (void **)out, n, err);
}

int scv_store_eval(scv_store *s, long long run, int workers, int batch, const scv_eval_sample *e, scv_err *err)
{
    return exec_bind(s, err, "INSERT INTO evals VALUES(?,?,?,?,?,?,?,?,?,?)", "IiiIdddddd", run, workers, batch,
                     (long long)e->iteration, e->samples_seen, e->epoch, e->accuracy, e->loss, e->train_loss,
                     e->train_loss_samples);
}

static void summary_row(sqlite3_stmt *st, scv_run_summary *r)
{
    memset(r, 0, sizeof *r);
    r->id = sqlite3_column_int64(st, 0);
    r->created = col_d(st, 1);
    col_text(st, 2, r->job_key, sizeof r->job_key);
    col_text(st, 3, r->status, sizeof r->status);
    col_text(st, 4, r->state, sizeof r->state);
    r->actual_time_s = col_d(st, 5);
    r->actual_cost = col_d(st, 6);
    r->accuracy = col_d(st, 7);
    r->reached = sqlite3_column_int(st, 8);
    r->workers = sqlite3_column_int(st, 9);
    r->batch = sqlite3_column_int(st, 10);
    r->predicted_time_s = col_d(st, 11);
    r->predicted_cost = col_d(st, 12);
    col_text(st, 13, r->why, sizeof r->why);
    r->n_steps = sqlite3_column_int(st, 14);
    /* a run stored as running whose process is gone (killed, or its store's disk filled
     * before the end was written) is not running */
    if (!strcmp(r->status, "running") && scv_store_owner_gone((const char *)sqlite3_column_text(st, 16)))
        snprintf(r->status, sizeof r->status, "%s", SCV_RUN_GONE);
    /* the first plan's row opens {"relative":true,"nominal_epochs":E,"nominal_batch":B when its
     * times were nominal (the loop's store_plan; rows before nominal_epochs: NaN epochs) */
    const char *pj = (const char *)sqlite3_column_text(st, 15), *q;
    static const char REL[] = "{\"relative\":true";
    r->nominal_epochs = NAN;
    r->nominal = pj && !strncmp(pj, REL, sizeof REL - 1);
    if (r->nominal && (q = strstr(pj, "\"nominal_epochs\":"))) r->nominal_epochs = strtod(q + 17, NULL);
    if (r->nominal && (q = strstr(pj, "\"nominal_batch\":"))) r->nominal_batch = atoi(q + 16);
    /* the latest forecast: a running run's only (written 0: none) */
    r->eta.remaining_s = r->eta.remaining_lo_s = r->eta.remaining_hi_s = r->eta.p_reach = NAN;
    if (!strcmp(r->status, "running") && sqlite3_column_type(st, 17) != SQLITE_NULL) {
        r->eta.written = col_d(st, 17);
        r->eta.remaining_s = col_d(st, 18);
        r->eta.remaining_lo_s = col_d(st, 19);
        r->eta.remaining_hi_s = col_d(st, 20);
        r->eta.p_reach = col_d(st, 21);
        r->eta.overdue = sqlite3_column_int(st, 22);
        r->eta.nominal = sqlite3_column_int(st, 23);
    }
}

#define SUMMARY_SQL                                                                                        \
    "SELECT r.id, r.created, r.job_key, r.status, r.state, r.actual_time, r.actual_cost, r.accuracy,"      \
    " r.reached, d.workers, d.batch, d.predicted_time, d.predicted_cost, d.reason,"                       \
    " (SELECT COUNT(*) FROM steps WHERE run=r.id),"                                                         \
    " (SELECT substr(json, 1, 160) FROM models WHERE run=r.id AND kind='plan' ORDER BY rowid LIMIT 1),"     \
    " r.owner, r.eta_written, r.eta_s, r.eta_lo_s, r.eta_hi_s, r.eta_p_reach, r.eta_overdue, r.eta_nominal" \
    " FROM runs r LEFT JOIN decisions d ON d.rowid ="                                                      \
    " (SELECT rowid FROM decisions WHERE run=r.id AND kind='plan' ORDER BY rowid LIMIT 1) "

int scv_store_runs(scv_store *s, scv_run_summary **out, size_t *n, scv_err *err)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, SUMMARY_SQL "ORDER BY r.id", -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, err, "prepare");
    size_t cap = 0;
    int rc = SCV_OK;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (grow((void **)out, *n, &cap, sizeof **out)) {
            rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
            break;
        }
        summary_row(st, &(*out)[(*n)++]);
    }
    sqlite3_finalize(st);
    return rc;
}

int scv_store_data_version(scv_store *s, long long *version, scv_err *err)
{
    if (!s->data_version &&
        sqlite3_prepare_v2(s->db, "PRAGMA data_version", -1, &s->data_version, NULL) != SQLITE_OK)
        return db_fail(s, err, "prepare");
    int rc = sqlite3_step(s->data_version);
    *version = rc == SQLITE_ROW ? sqlite3_column_int64(s->data_version, 0) : -1;
    sqlite3_reset(s->data_version);
    return rc == SQLITE_ROW ? SCV_OK : db_fail(s, err, "data_version");
}

int scv_store_run_summary(scv_store *s, long long run, scv_run_summary *out, scv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, SUMMARY_SQL "WHERE r.id=?", -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, err, "prepare");
    sqlite3_bind_int64(st, 1, run);
    int rc = SCV_OK;
    if (sqlite3_step(st) == SQLITE_ROW) summary_row(st, out);
    else rc = scv_err_set(err, SCV_ENOTFOUND, "%s: no run %lld", s->path, run);
    sqlite3_finalize(st);
    return rc;
}

static void eval_row(sqlite3_stmt *st, void *p)
{
    scv_eval_sample *e = p;
    e->iteration = sqlite3_column_int64(st, 0);
    e->samples_seen = col_d(st, 1);
    e->epoch = col_d(st, 2);
    e->accuracy = col_d(st, 3);
    e->loss = col_d(st, 4);
    e->train_loss = col_d(st, 5);
    e->train_loss_samples = isfinite(col_d(st, 6)) ? col_d(st, 6) : 0;
}

int scv_store_load_evals(scv_store *s, long long run, scv_eval_sample **out, size_t *n, scv_err *err)
{
    return load_rows(s, "SELECT iteration, samples, epoch, accuracy, loss, train_loss, train_loss_samples FROM evals "
                        "WHERE run=? ORDER BY rowid", run, sizeof **out, eval_row, (void **)out, n, err);
}

int scv_store_perf_models(scv_store *s, const char *vm, const char *exclude_job, scv_perf_model **out,
                          size_t *n, scv_err *err)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    const char *q = "SELECT m.json FROM models m JOIN runs r ON m.run = r.id WHERE m.kind='perf' AND r.job_key<>?"
                    " AND m.rowid = (SELECT MAX(rowid) FROM models WHERE run = r.id AND kind='perf')"
                    " AND EXISTS (SELECT 1 FROM measurements x WHERE x.run = r.id AND x.vm = ?)";
    if (sqlite3_prepare_v2(s->db, q, -1, &st, NULL) != SQLITE_OK) return db_fail(s, err, "prepare");
    sqlite3_bind_text(st, 1, exclude_job, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, vm, -1, SQLITE_TRANSIENT);
    size_t cap = 0;
    int rc = SCV_OK;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *j = (const char *)sqlite3_column_text(st, 0);
        scv_perf_model m;
        memset(&m, 0, sizeof m);
        /* the loop's own format (loop.c store_models) */
        if (!j || sscanf(j, "{\"c0\":%lg,\"c1\":%lg,\"alpha\":%lg,\"beta\":%lg,\"mare\":%lg}", &m.c0, &m.c1,
                         &m.alpha, &m.beta, &m.mare) != 5)
            continue;
        if (grow((void **)out, *n, &cap, sizeof **out)) {
            rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
            break;
        }
        (*out)[(*n)++] = m;
    }
    sqlite3_finalize(st);
    return rc;
}

/* ---- read queries for services (scavenger serve): pages, filters and a run's rows as JSON ---- */

int scv_store_runs_page(scv_store *s, const char *job_key, const char *status, long long limit, long long offset,
                        scv_run_summary **out, size_t *n, long long *total, scv_err *err)
{
    *out = NULL;
    *n = 0;
    *total = 0;
    if (limit < 0 || offset < 0) return scv_err_set(err, SCV_EINVAL, "limit and offset must be >= 0");
    const char *job = job_key ? job_key : "", *st_ = status ? status : "";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT COUNT(*) FROM runs r WHERE (?1 = '' OR r.job_key = ?1) AND"
                                  " (?2 = '' OR r.status = ?2)", -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, err, "prepare");
    sqlite3_bind_text(st, 1, job, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, st_, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) == SQLITE_ROW) *total = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(s->db, SUMMARY_SQL "WHERE (?1 = '' OR r.job_key = ?1) AND (?2 = '' OR r.status = ?2)"
                                  " ORDER BY r.id DESC LIMIT ?3 OFFSET ?4", -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, err, "prepare");
    sqlite3_bind_text(st, 1, job, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, st_, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 3, limit);
    sqlite3_bind_int64(st, 4, offset);
    size_t cap = 0;
    int rc = SCV_OK, step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (grow((void **)out, *n, &cap, sizeof **out)) {
            rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
            break;
        }
        summary_row(st, &(*out)[(*n)++]);
    }
    if (!rc && step != SQLITE_DONE) rc = db_fail(s, err, "read");
    sqlite3_finalize(st);
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

/* One value as JSON: numbers (non-finite as null), text escaped, NULL as null. */
static int json_value(FILE *f, sqlite3_stmt *st, int i)
{
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER: return fprintf(f, "%lld", (long long)sqlite3_column_int64(st, i));
    case SQLITE_FLOAT: {
        double v = sqlite3_column_double(st, i);
        return isfinite(v) ? fprintf(f, "%.15g", v) : fprintf(f, "null");
    }
    case SQLITE_NULL: return fprintf(f, "null");
    default: break;
    }
    const unsigned char *t = sqlite3_column_text(st, i);
    fputc('"', f);
    for (; t && *t; t++) {
        if (*t == '"' || *t == '\\') fprintf(f, "\\%c", *t);
        else if (*t < 0x20) fprintf(f, "\\u%04x", *t);
        else fputc(*t, f);
    }
    return fputc('"', f) == EOF ? -1 : 1;
}

int scv_store_run_rows_json(scv_store *s, long long run, const char *table, char **json, scv_err *err)
{
    static const char *const tables[] = {"measurements", "models", "decisions", "switches", "steps",
                                          "evals", "stragglers", "targets", NULL};
    *json = NULL;
    int known = 0;
    for (int i = 0; tables[i] && !known; i++) known = table && !strcmp(table, tables[i]);
    if (!known) return scv_err_set(err, SCV_EINVAL, "table '%s': not a table of a run's rows", table ? table : "");
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE run=? ORDER BY rowid", table);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) return db_fail(s, err, "prepare");
    sqlite3_bind_int64(st, 1, run);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        sqlite3_finalize(st);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    fputc('[', f);
    int rows = 0, step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        fprintf(f, "%s{", rows++ ? "," : "");
        for (int c = 1; c < sqlite3_column_count(st); c++) { /* column 0 is the run */
            fprintf(f, "%s\"%s\":", c > 1 ? "," : "", sqlite3_column_name(st, c));
            json_value(f, st, c);
        }
        fputc('}', f);
    }
    fputc(']', f);
    int bad = ferror(f);
    sqlite3_finalize(st);
    if (fclose(f) || bad || !buf) {
        free(buf);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    if (step != SQLITE_DONE) {
        free(buf);
        return db_fail(s, err, "read");
    }
    *json = buf;
    return SCV_OK;
}

int scv_store_run_by_job_field(scv_store *s, const char *field, const char *value, long long *id, scv_err *err)
{
    *id = 0;
    char path[160];
    if (!field || !*field || strlen(field) > 100 || strspn(field, "abcdefghijklmnopqrstuvwxyz-_") != strlen(field))
        return scv_err_set(err, SCV_EINVAL, "field '%s': expected a job setting's name", field ? field : "");
    snprintf(path, sizeof path, "$.\"%s\"", field);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT id FROM runs WHERE json_valid(job) AND json_extract(job, ?) = ?"
                                  " ORDER BY id DESC LIMIT 1", -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, err, "prepare");
    sqlite3_bind_text(st, 1, path, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, value, -1, SQLITE_TRANSIENT);
    int rc = SCV_ENOTFOUND;
    if (sqlite3_step(st) == SQLITE_ROW) {
        *id = sqlite3_column_int64(st, 0);
        rc = SCV_OK;
    }
    sqlite3_finalize(st);
    return rc;
}

int scv_store_integrity(scv_store *s, char *msg, size_t cap, scv_err *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, err, "prepare");
    int rc = SCV_OK;
    if (sqlite3_step(st) == SQLITE_ROW) {
        col_text(st, 0, msg, cap);
        if (strcmp(msg, "ok")) rc = scv_err_set(err, SCV_ECORRUPT, "%s: integrity check: %s", s->path, msg);
    } else {
        rc = db_fail(s, err, "integrity check");
    }
    sqlite3_finalize(st);
    return rc;
}
