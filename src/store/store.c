/*
 * store.c - the run database on SQLite (declared in scv.h and store.h); the only file that
 * includes <sqlite3.h>. What a file is (application_id, user_version, its tables) is read
 * before anything is changed, so another program's database is refused as it was; writes are
 * transactions, the schema has a version in user_version; a store opened for reading is
 * opened read-only (no journal mode set, no lock taken). Every read steps to SQLITE_DONE: any
 * other result (a damaged page, an i/o error) is an error naming the path, never the end of
 * the rows. The file-level checks (one name, the reserve kept for a run's end) are in
 * storefile.c.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "store.h"
#include "schema.h"
#include "storefile.h"

#include <sqlite3.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct scv_store {
    sqlite3 *db;
    sqlite3_stmt *data_version; /* prepared once: readers ask it on every request */
    int readonly;               /* opened by scv_store_open_read */
    int last_rc;                /* the SQLite code of the last failed write (exec_bind) */
    int checked;                /* checked_absent found it sound at data_version checked_version */
    long long checked_version;
    char path[1024];            /* as given: every message names it */
    char canon[4096];           /* its canonical path (the reserve beside it) */
};

/* a run that stops running keeps no forecast (with its status, in the same UPDATE) */
#define ETA_CLEAR ", eta_written=NULL, eta_s=NULL, eta_lo_s=NULL, eta_hi_s=NULL, eta_p_reach=NULL, eta_overdue=NULL," \
                  " eta_nominal=NULL"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* The error of a failed SQLite call on s (rc its code), naming the path and what was done: a
 * damaged file (SQLITE_CORRUPT, SQLITE_NOTADB) is SCV_ECORRUPT and said so; a read-only store
 * said so; the rest SCV_EIO with SQLite's words and the system's (a full disk, an i/o error). */
static int db_error(scv_store *s, scv_err *err, int rc, const char *what)
{
    int e = sqlite3_system_errno(s->db);
    const char *m = sqlite3_errmsg(s->db);
    char sys[160] = "";
    if (e && (rc & 0xff) != SQLITE_CORRUPT) snprintf(sys, sizeof sys, " (%s)", strerror(e));
    switch (rc & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        return scv_err_set(err, SCV_ECORRUPT, "%s: %s: the database is damaged (%s): restore it from a backup "
                           "(`sqlite3 FILE 'PRAGMA integrity_check'` lists the damage)", s->path, what, m);
    case SQLITE_NOMEM: return scv_err_set(err, SCV_ENOMEM, "%s: %s: out of memory", s->path, what);
    case SQLITE_READONLY:
        return scv_err_set(err, SCV_EIO, "%s: %s: the store is read-only here (%s)%s", s->path, what, m, sys);
    default: return scv_err_set(err, SCV_EIO, "%s: %s: %s%s", s->path, what, m, sys);
    }
}

/* A read: a prepared statement stepped row by row. Any step result but a row or the end (a
 * damaged page, an i/o error, a lock never released) is an error naming the path and what
 * was read: never taken as the end of the rows. */
typedef struct query {
    scv_store *s;
    sqlite3_stmt *st;
    const char *what;
    scv_err *err;
    int rc; /* SCV_OK, or the error (err set) */
} query;

static int q_open(query *q, scv_store *s, const char *sql, const char *what, scv_err *err)
{
    *q = (query){.s = s, .what = what, .err = err};
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &q->st, NULL);
    if (rc != SQLITE_OK) q->rc = db_error(s, err, rc, what);
    return q->rc;
}

/* 1 with a row in q->st; 0 at the end, or on an error (q->rc). */
static int q_row(query *q)
{
    if (q->rc || !q->st) return 0;
    int rc = sqlite3_step(q->st);
    if (rc == SQLITE_ROW) return 1;
    if (rc != SQLITE_DONE) q->rc = db_error(q->s, q->err, rc, q->what);
    return 0;
}

/* Ends q (finalized); its status. */
static int q_close(query *q)
{
    sqlite3_finalize(q->st);
    q->st = NULL;
    return q->rc;
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

/* "Nothing there" is said only of a store that checks out: SQLite reads some damage (a
 * garbled cell) as a row that is not there, so an absence (rc: SCV_ENOTFOUND, or SCV_OK with
 * no rows) is confirmed by PRAGMA quick_check, once per change of the store by another
 * connection (data_version); a damaged store is SCV_ECORRUPT naming the path. */
static int checked_absent(scv_store *s, int rc, scv_err *err)
{
    long long v = -1;
    if (scv_store_data_version(s, &v, NULL) == SCV_OK && s->checked && v == s->checked_version) return rc;
    query q;
    char line[300] = "";
    if (q_open(&q, s, "PRAGMA quick_check(2)", "checking the store", err)) return q.rc;
    if (q_row(&q)) col_text(q.st, 0, line, sizeof line); /* "ok", or its findings on lines */
    if (q_close(&q)) return q.rc;
    char *found = !strncmp(line, "***", 3) && strchr(line, '\n') ? strchr(line, '\n') + 1 : line, *nl;
    while ((nl = strchr(found, '\n'))) *nl = ';'; /* one line */
    if (strcmp(found, "ok"))
        return scv_err_set(err, SCV_ECORRUPT, "%s: the database is damaged (%s): restore it from a backup", s->path,
                           found);
    s->checked = 1, s->checked_version = v;
    return rc;
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

/* What the file is, read in one statement before anything changes it (SCV_STORE_IDENTITY_SQL,
 * judged by scv_store_foreign: schema.c): its user_version, whether it is another program's
 * database (*foreign, described in why), and whether it is in WAL mode (*wal). Returns the
 * SQLite code of a failed step (SQLITE_OK when read). */
static int identify(scv_store *s, int *version, int *foreign, int *wal, char *why, size_t cap)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(s->db, SCV_STORE_IDENTITY_SQL, -1, &st, NULL);
    if (rc != SQLITE_OK) return rc;
    if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *tables = (const char *)sqlite3_column_text(st, 5), *mode = (const char *)sqlite3_column_text(st, 6);
        *version = sqlite3_column_int(st, 1);
        *wal = mode && !strcmp(mode, "wal");
        *foreign = scv_store_foreign((unsigned)sqlite3_column_int64(st, 0), *version, sqlite3_column_int(st, 2),
                                     sqlite3_column_int(st, 3), sqlite3_column_int(st, 4), tables, why, cap);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return rc;
}

/* The migrations from version to SCV_STORE_SCHEMA_VERSION (schema.c), in the open
 * transaction; the version and the application id stamped last. */
static int migrate(scv_store *s, int version)
{
    char stamp[96];
    snprintf(stamp, sizeof stamp, "PRAGMA application_id=%d; PRAGMA user_version=%d;", SCV_STORE_APPLICATION_ID,
             SCV_STORE_SCHEMA_VERSION);
    int rc = sqlite3_exec(s->db, SCV_STORE_SCHEMA1_RUNS, NULL, NULL, NULL);
    for (const scv_store_migration *m = SCV_STORE_MIGRATIONS; m->sql && rc == SQLITE_OK; m++)
        if (version >= m->from_lo && version <= m->from_hi) rc = sqlite3_exec(s->db, m->sql, NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_exec(s->db, SCV_STORE_SCHEMA, NULL, NULL, NULL);
    return rc == SQLITE_OK ? sqlite3_exec(s->db, stamp, NULL, NULL, NULL) : rc;
}

/* One attempt at the schema. First what the file is (identify: another program's database
 * is left as it was, *foreign set); then, writable, WAL where it is not, and where the
 * version is older one IMMEDIATE transaction (the write lock taken up front, so the busy
 * timeout applies; a deferred transaction upgrading from read to write gets SQLITE_BUSY at
 * once) that reads the version again and creates or migrates; a current store takes no write
 * lock. Returns the SQLite code of the step that failed (SQLITE_OK when done), *what names
 * it; a newer schema is reported as SQLITE_OK with *version set above SCV_STORE_SCHEMA_VERSION. */
static int schema_setup(scv_store *s, int fresh, int *version, int *foreign, const char **what, char *msg, size_t cap)
{
    int rc, wal = 0;
    /* a file that was empty or not there is no other program's: WAL first, as concurrent
     * creators each would (fewer lock changes than reading it first) */
    *what = "journal mode";
    if (fresh && !s->readonly && (rc = sqlite3_exec(s->db, "PRAGMA journal_mode=WAL;", NULL, NULL, NULL)) != SQLITE_OK)
        goto out;
    *what = "reading what the file is";
    if ((rc = identify(s, version, foreign, &wal, msg, cap)) != SQLITE_OK) goto out;
    if (*foreign || *version >= SCV_STORE_SCHEMA_VERSION || s->readonly) return SQLITE_OK;
    *what = "journal mode";
    if (!wal && (rc = sqlite3_exec(s->db, "PRAGMA journal_mode=WAL;", NULL, NULL, NULL)) != SQLITE_OK) goto out;
    *what = "begin";
    if ((rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE;", NULL, NULL, NULL)) != SQLITE_OK) goto out;
    sqlite3_stmt *st;
    *what = "schema version";
    if ((rc = sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL)) != SQLITE_OK) goto fail;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *version = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) goto fail;
    if (*version > SCV_STORE_SCHEMA_VERSION) {
        sqlite3_exec(s->db, "ROLLBACK;", NULL, NULL, NULL);
        return SQLITE_OK;
    }
    *what = "schema";
    if (*version < SCV_STORE_SCHEMA_VERSION && (rc = migrate(s, *version)) != SQLITE_OK) goto fail;
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

/* s->db on path: read-write (created where missing) or read-only; immutable: a read-only
 * file SQLite reads without locks or shared memory (file:PATH?immutable=1). */
static int connect_db(scv_store *s, const char *path, int readonly, int immutable, scv_err *err)
{
    char uri[3 * sizeof s->path + 32];
    int flags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    if (immutable) scv_store_immutable_uri(path, uri, sizeof uri), flags |= SQLITE_OPEN_URI;
    int rc = sqlite3_open_v2(immutable ? uri : path, &s->db, flags, NULL);
    if (rc != SQLITE_OK)
        return scv_err_set(err, SCV_EIO, "%s: cannot open the database: %s", path,
                           s->db ? sqlite3_errmsg(s->db) : "out of memory");
    /* before anything touches the file: the journal mode and the schema wait too */
    sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
    sqlite3_extended_result_codes(s->db, 1);
    /* each page's cells checked as it is read: a garbled cell pointer is SQLITE_CORRUPT, not
     * rows of garbage or none (a connection setting; nothing is written) */
    sqlite3_exec(s->db, "PRAGMA cell_size_check=ON;", NULL, NULL, NULL);
    return SCV_OK;
}

/* Opens path (SQLite's flags: read-write and create, or read-only) and sets the schema up,
 * retrying a busy database until the deadline; *version: the file's schema. */
static int open_db(const char *path, int readonly, scv_store **out, int *version, scv_err *err)
{
    *out = NULL;
    int exists = 0;
    int rc = scv_store_file_check(path, !readonly, &exists, err);
    if (rc) return rc;
    struct stat fst;
    int fresh = !exists || (stat(path, &fst) == 0 && fst.st_size == 0);
    scv_store *s = calloc(1, sizeof *s);
    if (!s) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    snprintf(s->path, sizeof s->path, "%s", path);
    s->readonly = readonly;
    if ((rc = scv_store_canonical(path, s->canon, sizeof s->canon, err))) {
        free(s);
        return rc;
    }
    if ((rc = connect_db(s, path, readonly, 0, err))) {
        scv_store_close(s);
        return rc;
    }
    /* Some lock conflicts return SQLITE_BUSY without waiting (WAL recovery, a journal mode
     * change racing another opener); retry those until the same deadline. */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int foreign = 0, immutable = 0;
    const char *what = "";
    char msg[512] = "";
    for (int attempt = 0;; attempt++) {
        rc = schema_setup(s, fresh, version, &foreign, &what, msg, sizeof msg);
        /* read-only where SQLite cannot make the WAL's shared-memory file (a read-only
         * directory): with no log there is nothing but the file to read, opened immutable */
        if (readonly && !immutable && ((rc & 0xff) == SQLITE_READONLY || (rc & 0xff) == SQLITE_CANTOPEN) &&
            !scv_store_wal_has_frames(s->canon)) {
            sqlite3_close(s->db);
            s->db = NULL;
            if ((rc = connect_db(s, path, 1, immutable = 1, err))) {
                scv_store_close(s);
                return rc;
            }
            continue;
        }
        if (!is_busy(rc)) break;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 > BUSY_TIMEOUT_MS) break;
        busy_pause(attempt);
    }
    if (rc != SQLITE_OK) {
        if (readonly && ((rc & 0xff) == SQLITE_READONLY || (rc & 0xff) == SQLITE_CANTOPEN))
            rc = scv_err_set(err, SCV_EIO, "%s: cannot be read read-only here: its write-ahead log holds commits "
                             "that SQLite reads through a shared-memory file (%s-shm) it cannot make here (%s); "
                             "read it once where it can be written", path, s->canon, msg);
        else if ((rc & 0xff) == SQLITE_NOTADB)
            rc = scv_err_set(err, SCV_ECORRUPT, "%s: not a Scavenger database: %s", path, msg);
        else if ((rc & 0xff) == SQLITE_CORRUPT)
            rc = scv_err_set(err, SCV_ECORRUPT, "%s: %s: the database is damaged (%s): restore it from a backup",
                             path, what, msg);
        else
            rc = scv_err_set(err, SCV_EIO, "%s: cannot set up the schema (%s): %s", path, what, msg);
    } else if (foreign) {
        rc = scv_err_set(err, SCV_EINVAL, "%s: not a Scavenger database: %s; left as it was", path, msg);
    } else if (*version > SCV_STORE_SCHEMA_VERSION) {
        rc = scv_err_set(err, SCV_EINVAL, "%s: database schema %d is newer than this build's %d", path, *version,
                         SCV_STORE_SCHEMA_VERSION);
    }
    if (rc) {
        scv_store_close(s);
        return rc;
    }
    *out = s;
    return SCV_OK;
}

int scv_store_open(const char *path, scv_store **out, scv_err *err)
{
    int version = 0;
    return open_db(path, 0, out, &version, err);
}

int scv_store_open_read(const char *path, scv_store **out, scv_err *err)
{
    int version = 0;
    int rc = open_db(path, 1, out, &version, err);
    if (rc || version == SCV_STORE_SCHEMA_VERSION) return rc;
    /* an older schema: the reads need the current one, so it is migrated where it may be
     * written (as any open did before reads opened read-only), else named */
    scv_store_close(*out);
    *out = NULL;
    if (access(path, W_OK) == 0) return scv_store_open(path, out, err);
    return scv_err_set(err, SCV_EINVAL, "%s: database schema %d is older than this build's %d and the file is "
                       "read-only here: open it once where it can be written (any scavenger command on it "
                       "migrates it)", path, version, SCV_STORE_SCHEMA_VERSION);
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
 * a zeroed element of a malloc'ed array (*out, *n; none on an error). */
static int load_rows(scv_store *s, const char *sql, const char *what, long long run, size_t elem,
                     void (*row)(sqlite3_stmt *, void *), void **out, size_t *n, scv_err *err)
{
    *out = NULL;
    *n = 0;
    query q;
    if (q_open(&q, s, sql, what, err)) return q.rc;
    sqlite3_bind_int64(q.st, 1, run);
    size_t cap = 0;
    while (q_row(&q)) {
        if (grow(out, *n, &cap, elem)) {
            q.rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
            break;
        }
        void *e = (char *)*out + elem * (*n)++;
        memset(e, 0, elem);
        row(q.st, e);
    }
    if (q_close(&q)) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return q.rc;
}

/* Prepares sql, binds the arguments described by types ('i' int, 'I' int64, 'd' double,
 * 't' text), steps once, finalizes; s->last_rc keeps the SQLite code of a failure. */
static int exec_bind(scv_store *s, scv_err *err, const char *sql, const char *types, ...)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) return s->last_rc = rc, db_error(s, err, rc, "writing");
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
    rc = sqlite3_step(st);
    for (int attempt = 0; is_busy(rc) && attempt < 40; attempt++) {
        sqlite3_reset(st);
        busy_pause(attempt);
        rc = sqlite3_step(st);
    }
    int out = SCV_OK;
    s->last_rc = rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
    if (s->last_rc) out = db_error(s, err, rc, "writing");
    sqlite3_finalize(st);
    return out;
}

/* A run starts in this process: its owner is this process, and the reserve that lets its
 * end be stored on a full disk is there (storefile.c). */
static void run_starts(scv_store *s, char *owner, size_t cap)
{
    scv_store_owner_self(owner, cap);
    scv_store_reserve_make(s->canon);
}

int scv_store_run_new(scv_store *s, const char *job_key, const char *job_json, long long *id, scv_err *err)
{
    char owner[320];
    run_starts(s, owner, sizeof owner);
    int rc = exec_bind(s, err, "INSERT INTO runs(created, job_key, job, status, owner) VALUES(?,?,?,'running',?)",
                       "dttt", now_s(), job_key, job_json, owner);
    if (!rc) *id = sqlite3_last_insert_rowid(s->db);
    return rc;
}

int scv_store_run_status(scv_store *s, long long id, const char *status, scv_err *err)
{
    /* a status set alone has no reason (scv_store_run_end gives one): an earlier one goes */
    if (strcmp(status, "running"))
        return exec_bind(s, err, "UPDATE runs SET status=?, reason=NULL" ETA_CLEAR " WHERE id=?", "tI", status, id);
    char owner[320]; /* a resumed run lives in this process now */
    run_starts(s, owner, sizeof owner);
    return exec_bind(s, err, "UPDATE runs SET status=?, owner=?, reason=NULL WHERE id=?", "ttI", status, owner, id);
}

int scv_store_run_end(scv_store *s, long long run, const char *status, const char *state, const char *reason,
                      scv_err *err)
{
    static const char *sql = "UPDATE runs SET status=?, state=coalesce(?, state), reason=?" ETA_CLEAR " WHERE id=?";
    int rc = exec_bind(s, err, sql, "tttI", status, state, reason && reason[0] ? reason : NULL, run);
    /* a full disk: the reserve made when the run started is given up for this one write */
    if (rc && (s->last_rc & 0xff) == SQLITE_FULL && !scv_store_reserve_release(s->canon))
        rc = exec_bind(s, err, sql, "tttI", status, state, reason && reason[0] ? reason : NULL, run);
    return rc;
}

int scv_store_run_get(scv_store *s, long long id, char *job, size_t cap, char *status, size_t scap,
                      scv_err *err)
{
    query q;
    if (q_open(&q, s, "SELECT job, status, owner FROM runs WHERE id=?", "reading a run", err)) return q.rc;
    sqlite3_bind_int64(q.st, 1, id);
    if (q_row(&q)) {
        const char *j = (const char *)sqlite3_column_text(q.st, 0), *st = (const char *)sqlite3_column_text(q.st, 1);
        snprintf(job, cap, "%s", j ? j : "");
        snprintf(status, scap, "%s", st ? st : "");
        if (!strcmp(status, "running") && scv_store_owner_gone((const char *)sqlite3_column_text(q.st, 2)))
            snprintf(status, scap, "%s", SCV_RUN_GONE);
    } else if (!q.rc) {
        q.rc = scv_err_set(err, SCV_ENOTFOUND, "%s: no run %lld", s->path, id);
    }
    int rc = q_close(&q);
    return rc == SCV_ENOTFOUND ? checked_absent(s, rc, err) : rc;
}

int scv_store_measurement(scv_store *s, long long run, const char *phase, const scv_config_stats *c,
                          scv_err *err)
{
    return exec_bind(s, err,
                     "INSERT INTO measurements VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)", "Ittiiiddddddd", run, phase, c->vm,
                     c->workers, c->batch, c->n_iters, c->t_compute, c->t_comm, c->t_iter, c->g_local, c->g_global,
                     c->epoch_progress, c->t_latency);
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

int scv_store_load_measurements(scv_store *s, const char *job_key, long long exclude,
                                scv_config_stats **out, size_t *n, long long *from_run, scv_err *err)
{
    *out = NULL;
    *n = 0;
    *from_run = -1;
    /* newest first; the first row of each (vm, K, B) wins */
    const char *sql = "SELECT m.vm, m.workers, m.batch, m.iterations, m.t_compute, m.t_comm, m.t_iter, m.g_local,"
                      " m.g_global, m.epoch_progress, m.t_latency, m.run FROM measurements m JOIN runs r ON m.run = r.id"
                      " WHERE r.job_key=? AND r.id<>? ORDER BY m.rowid DESC";
    query q;
    if (q_open(&q, s, sql, "reading the stored measurements", err)) return q.rc;
    sqlite3_bind_text(q.st, 1, job_key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(q.st, 2, exclude);
    size_t cap = 0;
    while (q_row(&q)) {
        scv_config_stats c;
        measurement_row(q.st, &c);
        int dup = 0;
        for (size_t i = 0; i < *n && !dup; i++)
            dup = (*out)[i].workers == c.workers && (*out)[i].batch == c.batch && !strcmp((*out)[i].vm, c.vm);
        if (dup) continue;
        if (*from_run < 0) *from_run = sqlite3_column_int64(q.st, 11);
        if (grow((void **)out, *n, &cap, sizeof **out)) {
            q.rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
            break;
        }
        (*out)[(*n)++] = c;
    }
    int rc = q_close(&q);
    if (!rc && !*n) rc = checked_absent(s, SCV_OK, err);
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
                        "WHERE run=? ORDER BY rowid", "reading a run's stragglers", run, sizeof **out, straggler_row,
                     (void **)out, n, err);
}

int scv_store_outcome(scv_store *s, long long run, double actual_time, double actual_cost,
                      double accuracy, int reached, scv_err *err)
{
    return exec_bind(s, err,
                     "UPDATE runs SET actual_time=?, actual_cost=?, accuracy=?, reached=?, status=?, reason=NULL"
                     ETA_CLEAR " WHERE id=?", "dddItI", actual_time, actual_cost, accuracy, (long long)reached,
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
    query q;
    if (q_open(&q, s, "SELECT workers, batch, vm FROM decisions WHERE run=? ORDER BY rowid DESC LIMIT 1",
               "reading a run's decisions", err))
        return q.rc;
    sqlite3_bind_int64(q.st, 1, run);
    int found = q_row(&q);
    if (found) {
        *workers = sqlite3_column_int(q.st, 0);
        *batch = sqlite3_column_int(q.st, 1);
        if (vm && vm_cap) col_text(q.st, 2, vm, vm_cap);
    }
    int rc = q_close(&q);
    return rc ? rc : found ? SCV_OK : SCV_ENOTFOUND;
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
    const char *sql = metric == SCV_METRIC_LOSS
                          ? "SELECT epochs, batch FROM targets WHERE job_key=? AND metric='loss' AND accuracy<=? "
                            "AND epochs IS NOT NULL ORDER BY accuracy DESC, rowid DESC LIMIT 1"
                          : "SELECT epochs, batch FROM targets WHERE job_key=? AND metric='accuracy' AND accuracy>=? "
                            "AND epochs IS NOT NULL ORDER BY accuracy ASC, rowid DESC LIMIT 1";
    query q;
    if (q_open(&q, s, sql, "reading the stored targets", err)) return q.rc;
    sqlite3_bind_text(q.st, 1, job_key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(q.st, 2, metric == SCV_METRIC_LOSS ? value + 1e-9 : value - 1e-9);
    int found = q_row(&q);
    if (found) {
        *epochs = sqlite3_column_double(q.st, 0);
        *batch = sqlite3_column_int(q.st, 1);
    }
    int rc = q_close(&q);
    return rc ? rc : found ? SCV_OK : SCV_ENOTFOUND;
}

/* Every stored target of job_key in this metric, newest first (at most max rows); epochs
 * NaN where the run did not reach it. */
int scv_store_targets(scv_store *s, const char *job_key, scv_metric metric, long long exclude, scv_stored_target *out,
                      size_t max, size_t *n, scv_err *err)
{
    *n = 0;
    query q;
    if (q_open(&q, s, "SELECT run, accuracy, epochs, batch FROM targets WHERE job_key=? AND metric=? AND run<>? "
                      "ORDER BY rowid DESC", "reading the stored targets", err))
        return q.rc;
    sqlite3_bind_text(q.st, 1, job_key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(q.st, 2, metric == SCV_METRIC_LOSS ? "loss" : "accuracy", -1, SQLITE_STATIC);
    sqlite3_bind_int64(q.st, 3, exclude);
    while (*n < max && q_row(&q)) {
        scv_stored_target *t = &out[(*n)++];
        t->run = sqlite3_column_int64(q.st, 0);
        t->value = col_d(q.st, 1);
        t->epochs = col_d(q.st, 2);
        t->batch = sqlite3_column_int(q.st, 3);
    }
    if (q_close(&q)) *n = 0;
    return q.rc;
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
                        "reached, vm FROM steps WHERE run=? ORDER BY idx", "reading a run's steps", run, sizeof **out,
                     step_row, (void **)out, n, err);
}

int scv_store_run_measurements(scv_store *s, long long run, scv_config_stats **out, size_t *n, scv_err *err)
{
    return load_rows(s, "SELECT vm, workers, batch, iterations, t_compute, t_comm, t_iter, g_local, g_global, "
                        "epoch_progress, t_latency FROM measurements WHERE run=?", "reading a run's measurements", run,
                     sizeof **out, measurement_row, (void **)out, n, err);
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
    col_text(st, 24, r->reason, sizeof r->reason);
    /* a run stored as running whose process is gone (killed, or its store's disk filled
     * before the end was written) is not running */
    const char *owner = (const char *)sqlite3_column_text(st, 16);
    if (!strcmp(r->status, "running") && scv_store_owner_gone(owner)) {
        snprintf(r->status, sizeof r->status, "%s", SCV_RUN_GONE);
        if (!r->reason[0]) scv_store_gone_reason(owner, r->reason, sizeof r->reason);
    }
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
    " r.owner, r.eta_written, r.eta_s, r.eta_lo_s, r.eta_hi_s, r.eta_p_reach, r.eta_overdue, r.eta_nominal," \
    " r.reason FROM runs r LEFT JOIN decisions d ON d.rowid ="                                             \
    " (SELECT rowid FROM decisions WHERE run=r.id AND kind='plan' ORDER BY rowid LIMIT 1) "

/* The summaries sql selects (SUMMARY_SQL ...; its parameters bound by bind), malloc'ed. */
static int load_summaries(scv_store *s, const char *sql, const char *job, const char *status, long long limit,
                          long long offset, scv_run_summary **out, size_t *n, scv_err *err)
{
    *out = NULL;
    *n = 0;
    query q;
    if (q_open(&q, s, sql, "reading the runs", err)) return q.rc;
    if (job) { /* a page: ?1 job, ?2 status, ?3 limit, ?4 offset */
        sqlite3_bind_text(q.st, 1, job, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(q.st, 2, status, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(q.st, 3, limit);
        sqlite3_bind_int64(q.st, 4, offset);
    }
    size_t cap = 0;
    while (q_row(&q)) {
        if (grow((void **)out, *n, &cap, sizeof **out)) {
            q.rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
            break;
        }
        summary_row(q.st, &(*out)[(*n)++]);
    }
    if (!q_close(&q) && !*n) q.rc = checked_absent(s, SCV_OK, err);
    if (q.rc) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return q.rc;
}

int scv_store_runs(scv_store *s, scv_run_summary **out, size_t *n, scv_err *err)
{
    return load_summaries(s, SUMMARY_SQL "ORDER BY r.id", NULL, NULL, 0, 0, out, n, err);
}

int scv_store_data_version(scv_store *s, long long *version, scv_err *err)
{
    int rc;
    if (!s->data_version &&
        (rc = sqlite3_prepare_v2(s->db, "PRAGMA data_version", -1, &s->data_version, NULL)) != SQLITE_OK)
        return db_error(s, err, rc, "data_version");
    rc = sqlite3_step(s->data_version);
    *version = rc == SQLITE_ROW ? sqlite3_column_int64(s->data_version, 0) : -1;
    int out = rc == SQLITE_ROW ? SCV_OK : db_error(s, err, rc, "data_version");
    sqlite3_reset(s->data_version);
    return out;
}

int scv_store_run_summary(scv_store *s, long long run, scv_run_summary *out, scv_err *err)
{
    query q;
    if (q_open(&q, s, SUMMARY_SQL "WHERE r.id=?", "reading a run", err)) return q.rc;
    sqlite3_bind_int64(q.st, 1, run);
    if (q_row(&q)) summary_row(q.st, out);
    else if (!q.rc) q.rc = scv_err_set(err, SCV_ENOTFOUND, "%s: no run %lld", s->path, run);
    int rc = q_close(&q);
    return rc == SCV_ENOTFOUND ? checked_absent(s, rc, err) : rc;
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
                        "WHERE run=? ORDER BY rowid", "reading a run's evaluations", run, sizeof **out, eval_row,
                     (void **)out, n, err);
}

int scv_store_perf_models(scv_store *s, const char *vm, const char *exclude_job, scv_perf_model **out,
                          size_t *n, scv_err *err)
{
    *out = NULL;
    *n = 0;
    const char *sql = "SELECT m.json FROM models m JOIN runs r ON m.run = r.id WHERE m.kind='perf' AND r.job_key<>?"
                      " AND m.rowid = (SELECT MAX(rowid) FROM models WHERE run = r.id AND kind='perf')"
                      " AND EXISTS (SELECT 1 FROM measurements x WHERE x.run = r.id AND x.vm = ?)";
    query q;
    if (q_open(&q, s, sql, "reading the stored parallel models", err)) return q.rc;
    sqlite3_bind_text(q.st, 1, exclude_job, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(q.st, 2, vm, -1, SQLITE_TRANSIENT);
    size_t cap = 0;
    while (q_row(&q)) {
        const char *j = (const char *)sqlite3_column_text(q.st, 0);
        scv_perf_model m;
        memset(&m, 0, sizeof m);
        /* the loop's own format (loop.c store_models) */
        if (!j || sscanf(j, "{\"c0\":%lg,\"c1\":%lg,\"alpha\":%lg,\"beta\":%lg,\"mare\":%lg}", &m.c0, &m.c1,
                         &m.alpha, &m.beta, &m.mare) != 5)
            continue;
        if (grow((void **)out, *n, &cap, sizeof **out)) {
            q.rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
            break;
        }
        (*out)[(*n)++] = m;
    }
    if (q_close(&q)) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return q.rc;
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
    query q;
    if (q_open(&q, s, "SELECT COUNT(*) FROM runs r WHERE (?1 = '' OR r.job_key = ?1) AND (?2 = '' OR r.status = ?2)",
               "counting the runs", err))
        return q.rc;
    sqlite3_bind_text(q.st, 1, job, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(q.st, 2, st_, -1, SQLITE_TRANSIENT);
    if (q_row(&q)) *total = sqlite3_column_int64(q.st, 0);
    if (q_close(&q)) return q.rc;
    return load_summaries(s, SUMMARY_SQL "WHERE (?1 = '' OR r.job_key = ?1) AND (?2 = '' OR r.status = ?2)"
                             " ORDER BY r.id DESC LIMIT ?3 OFFSET ?4", job, st_, limit, offset, out, n, err);
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
    query q;
    if (q_open(&q, s, sql, "reading a run's rows", err)) return q.rc;
    sqlite3_bind_int64(q.st, 1, run);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        q_close(&q);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    fputc('[', f);
    int rows = 0;
    while (q_row(&q)) {
        fprintf(f, "%s{", rows++ ? "," : "");
        for (int c = 1; c < sqlite3_column_count(q.st); c++) { /* column 0 is the run */
            fprintf(f, "%s\"%s\":", c > 1 ? "," : "", sqlite3_column_name(q.st, c));
            json_value(f, q.st, c);
        }
        fputc('}', f);
    }
    fputc(']', f);
    int bad = ferror(f), rc = q_close(&q);
    if (fclose(f) || bad || !buf) {
        free(buf);
        return rc ? rc : scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    if (rc) {
        free(buf);
        return rc;
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
    query q;
    if (q_open(&q, s, "SELECT id FROM runs WHERE json_valid(job) AND json_extract(job, ?) = ? ORDER BY id DESC LIMIT 1",
               "finding a run by its job", err))
        return q.rc;
    sqlite3_bind_text(q.st, 1, path, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(q.st, 2, value, -1, SQLITE_TRANSIENT);
    if (q_row(&q)) *id = sqlite3_column_int64(q.st, 0);
    int rc = q_close(&q);
    return rc ? rc : *id ? SCV_OK : SCV_ENOTFOUND;
}

int scv_store_integrity(scv_store *s, char *msg, size_t cap, scv_err *err)
{
    query q;
    if (q_open(&q, s, "PRAGMA integrity_check", "integrity check", err)) return q.rc;
    if (q_row(&q)) {
        col_text(q.st, 0, msg, cap);
        if (strcmp(msg, "ok")) q.rc = scv_err_set(err, SCV_ECORRUPT, "%s: integrity check: %s", s->path, msg);
    } else if (!q.rc) {
        q.rc = scv_err_set(err, SCV_EIO, "%s: integrity check: no answer", s->path);
    }
    return q_close(&q);
}
