/*
 * test_store.c - the run store under concurrency: several processes (as concurrent
 * `scavenger run`s) and several threads open one new database at the same moment, set up
 * its schema and write at once, while others read; every one must succeed (no "database is
 * locked"). And under faults (issue 38): damaged pages, a truncated file, a hard link, a
 * symbolic link, a read-only store and another program's database, each through the API
 * and `scavenger runs` ($SCV_BIN, default build/scavenger): an error naming the path and exit
 * 1, never an empty answer, a changed foreign file or a store under two names; and how each
 * run ended, stored with its reason.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "store/store.h"
#include "io/json_out.h"
#include "scv_test.h"
#include "scv_test_proc.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N 8
#define WRITES 40
#define REOPENS 10

static char tmp[256];
static const char *bin;

/* Opens path, adds a run and writes to it WRITES times, reading the run list in between;
 * 0 on success, else prints the error and returns 1. */
static int worker(const char *path, int who)
{
    scv_err err = {0};
    scv_store *s = NULL;
    long long id = 0;
    int rc = 0;
    /* reopening: every open sets up (or checks) the schema while the others write */
    for (int i = 0; !rc && i < REOPENS; i++) {
        rc = scv_store_open(path, &s, &err);
        if (!rc && i + 1 < REOPENS) scv_store_close(s), s = NULL;
    }
    if (!rc) rc = scv_store_run_new(s, "model=test", "{\"model\":\"test\"}", &id, &err);
    for (int i = 0; !rc && i < WRITES; i++) {
        char json[64];
        snprintf(json, sizeof json, "{\"who\":%d,\"i\":%d}", who, i);
        rc = scv_store_model(s, id, "test", json, &err);
        if (!rc) rc = scv_store_run_state(s, id, i % 2 ? "warmup" : "profile", &err);
        if (!rc && i % 8 == 0) {
            scv_run_summary *runs = NULL;
            size_t n = 0;
            rc = scv_store_runs(s, &runs, &n, &err);
            free(runs);
        }
    }
    if (!rc) rc = scv_store_run_status(s, id, "done", &err);
    scv_store_close(s);
    if (rc) printf("#   worker %d: %s\n", who, err.msg);
    return rc ? 1 : 0;
}

/* N processes released together through a pipe */
static void t_processes(void)
{
    char path[400];
    snprintf(path, sizeof path, "%s/proc.db", tmp);
    int go[2];
    CHECK(pipe(go) == 0);
    pid_t pids[N];
    for (int i = 0; i < N; i++) {
        fflush(stdout);
        pids[i] = fork();
        if (pids[i] == 0) {
            close(go[1]);
            char c;
            ssize_t r = read(go[0], &c, 1); /* returns 0 when the parent closes its end */
            (void)r;
            _exit(worker(path, i));
        }
    }
    close(go[0]);
    close(go[1]);
    int ok = 0;
    for (int i = 0; i < N; i++) {
        int st = 0;
        waitpid(pids[i], &st, 0);
        ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    CHECK_EQ_INT(ok, N);
    scv_store *s = NULL;
    scv_err err = {0};
    CHECK(scv_store_open(path, &s, &err) == SCV_OK);
    scv_run_summary *runs = NULL;
    size_t n = 0;
    if (s) CHECK(scv_store_runs(s, &runs, &n, &err) == SCV_OK);
    CHECK_EQ_INT(n, N);
    for (size_t i = 0; i < n; i++) CHECK(!strcmp(runs[i].status, "done"));
    free(runs);
    scv_store_close(s);
}

typedef struct {
    const char *path;
    int who, rc;
    pthread_barrier_t *bar;
} targ;

static void *thread_main(void *p)
{
    targ *a = p;
    pthread_barrier_wait(a->bar);
    a->rc = worker(a->path, a->who);
    return NULL;
}

/* N threads, each with its own connection, released by a barrier */
static void t_threads(void)
{
    char path[400];
    snprintf(path, sizeof path, "%s/thr.db", tmp);
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, N);
    pthread_t th[N];
    targ a[N];
    for (int i = 0; i < N; i++) {
        a[i] = (targ){.path = path, .who = i, .rc = -1, .bar = &bar};
        pthread_create(&th[i], NULL, thread_main, &a[i]);
    }
    int ok = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        ok += a[i].rc == 0;
    }
    pthread_barrier_destroy(&bar);
    CHECK_EQ_INT(ok, N);
}

/* a file that is not a database is still refused clearly */
static void t_not_a_db(void)
{
    char path[400];
    snprintf(path, sizeof path, "%s/junk.db", tmp);
    FILE *f = fopen(path, "w");
    fputs("this is not an SQLite database, just some text that is long enough to matter....\n", f);
    fclose(f);
    scv_store *s = NULL;
    scv_err err = {0};
    CHECK(scv_store_open(path, &s, &err) == SCV_ECORRUPT);
    CHECK_MSG(strstr(err.msg, "not a Scavenger database") != NULL, "%s", err.msg);
    CHECK(s == NULL);
}

/* a database in a directory that does not exist (or under a file): the path and the
 * directory named, not SQLite's "unable to open database file" */
static void t_missing_dir(void)
{
    char path[400], file[400];
    snprintf(path, sizeof path, "%s/no/such/dir/runs.db", tmp);
    scv_store *s = NULL;
    scv_err err = {0};
    CHECK_EQ_INT(scv_store_open(path, &s, &err), SCV_EIO);
    CHECK(s == NULL);
    CHECK_MSG(strstr(err.msg, path) && strstr(err.msg, "its directory") && strstr(err.msg, "/no/such/dir:") &&
              strstr(err.msg, "No such file") && !strstr(err.msg, "unable to open"), "%s", err.msg);
    snprintf(file, sizeof file, "%s/plain", tmp);
    FILE *f = fopen(file, "w");
    if (f) fclose(f);
    snprintf(path, sizeof path, "%s/plain/runs.db", tmp);
    memset(&err, 0, sizeof err);
    CHECK_EQ_INT(scv_store_open(path, &s, &err), SCV_EIO);
    CHECK_MSG(strstr(err.msg, "plain is not a directory"), "%s", err.msg);
    snprintf(path, sizeof path, "%s/fresh.db", tmp); /* an existing directory: created */
    CHECK_EQ_INT(scv_store_open(path, &s, &err), SCV_OK);
    scv_store_close(s);
}

/* a schema-2 database (tests/data/store-v2.db, made by make-store-v2.py) migrates to 3: its
 * accuracy target is still learnt, loss targets are kept apart, old evaluations read back
 * with no training loss */
static void t_migrate_v2(void)
{
    char path[400], cmd[900];
    snprintf(path, sizeof path, "%s/v2.db", tmp);
    snprintf(cmd, sizeof cmd, "cp tests/data/store-v2.db %s", path);
    CHECK_EQ_INT(system(cmd), 0);
    scv_store *s = NULL;
    scv_err err = {0};
    CHECK_EQ_INT(scv_store_open(path, &s, &err), SCV_OK);
    if (!s) return;
    double e = 0;
    int b = 0;
    CHECK_EQ_INT(scv_store_learnt_target(s, "job-v2", SCV_METRIC_ACCURACY, 0.86, &e, &b, &err), SCV_OK);
    CHECK_NEAR(e, 2.5, 0, 1e-12);
    CHECK_EQ_INT(b, 64);
    CHECK_EQ_INT(scv_store_learnt_target(s, "job-v2", SCV_METRIC_ACCURACY, 0.88, &e, &b, NULL), SCV_ENOTFOUND);
    CHECK_EQ_INT(scv_store_learnt_target(s, "job-v2", SCV_METRIC_LOSS, 0.87, &e, &b, NULL), SCV_ENOTFOUND);
    /* a loss target: the nearest at least as low */
    CHECK_EQ_INT(scv_store_set_target(s, 1, SCV_METRIC_LOSS, 0.30, 4.0, 64, &err), SCV_OK);
    CHECK_EQ_INT(scv_store_set_target(s, 1, SCV_METRIC_LOSS, 0.40, 3.0, 64, &err), SCV_OK);
    CHECK_EQ_INT(scv_store_learnt_target(s, "job-v2", SCV_METRIC_LOSS, 0.35, &e, &b, &err), SCV_OK);
    CHECK_NEAR(e, 4.0, 0, 1e-12);
    CHECK_EQ_INT(scv_store_learnt_target(s, "job-v2", SCV_METRIC_LOSS, 0.25, &e, &b, NULL), SCV_ENOTFOUND);
    /* every stored target of the job in a metric, newest first (the loop carries them to
     * another target value): the loss targets apart from the accuracy one; a run excluded */
    scv_stored_target tg[8];
    size_t nt = 0;
    CHECK_EQ_INT(scv_store_targets(s, "job-v2", SCV_METRIC_LOSS, 0, tg, 8, &nt, &err), SCV_OK);
    CHECK_EQ_INT((int)nt, 2);
    if (nt == 2) CHECK(tg[0].run == 1 && tg[0].value == 0.40 && tg[0].epochs == 3.0 && tg[1].value == 0.30 && tg[1].batch == 64);
    CHECK_EQ_INT(scv_store_targets(s, "job-v2", SCV_METRIC_LOSS, 0, tg, 1, &nt, &err), SCV_OK);
    CHECK_EQ_INT((int)nt, 1);
    CHECK_EQ_INT(scv_store_targets(s, "job-v2", SCV_METRIC_ACCURACY, 0, tg, 8, &nt, &err), SCV_OK);
    CHECK_EQ_INT((int)nt, 1);
    if (nt == 1) CHECK(tg[0].value >= 0.86 && tg[0].value < 0.88 && tg[0].epochs == 2.5 && tg[0].batch == 64);
    CHECK_EQ_INT(scv_store_targets(s, "job-v2", SCV_METRIC_LOSS, 1, tg, 8, &nt, &err), SCV_OK);
    CHECK_EQ_INT((int)nt, 0);
    scv_eval_sample *ev = NULL;
    size_t n = 0;
    CHECK_EQ_INT(scv_store_load_evals(s, 1, &ev, &n, &err), SCV_OK);
    CHECK_EQ_INT((int)n, 1);
    if (n == 1) CHECK(isnan(ev[0].train_loss) && fabs(ev[0].accuracy - 0.71) < 1e-12);
    free(ev);
    scv_eval_sample ne = {.iteration = 200, .samples_seen = 12800, .epoch = 0.21, .accuracy = 0.75, .loss = 0.7,
                          .train_loss = 0.65};
    CHECK_EQ_INT(scv_store_eval(s, 1, 2, 64, &ne, &err), SCV_OK);
    CHECK_EQ_INT(scv_store_load_evals(s, 1, &ev, &n, &err), SCV_OK);
    CHECK_EQ_INT((int)n, 2);
    if (n == 2) CHECK_NEAR(ev[1].train_loss, 0.65, 0, 1e-12);
    free(ev);
    scv_store_close(s);
    /* reopened: already schema 3, nothing migrates twice */
    CHECK_EQ_INT(scv_store_open(path, &s, &err), SCV_OK);
    scv_store_close(s);
}

/* A schema-3 store (tests/data/store-v3.db: one logreg run made by the schema-3 binary,
 * its target learnt) opens as schema 6: the run and its target survive, the stragglers
 * table exists, measurements keep their latency probe. */
static void t_migrate_v3(void)
{
    char path[400], cmd[900];
    snprintf(path, sizeof path, "%s/v3.db", tmp);
    snprintf(cmd, sizeof cmd, "cp tests/data/store-v3.db %s", path);
    CHECK_EQ_INT(system(cmd), 0);
    scv_store *s = NULL;
    scv_err err = {0};
    CHECK_MSG(scv_store_open(path, &s, &err) == SCV_OK, "%s", err.msg);
    if (!s) return;
    double e = 0;
    int b = 0;
    CHECK_EQ_INT(scv_store_learnt_target(s, "model=logreg;hidden=-;dataset=synthetic:2000", SCV_METRIC_ACCURACY, 0.8,
                                         &e, &b, &err), SCV_OK);
    CHECK(e > 0 && b == 32);
    scv_straggler_event ev = {.iteration = 7, .worker = 1, .ratio = 0.4, .replaced = 1, .idle_s = 0.5}, *got = NULL;
    snprintf(ev.host, sizeof ev.host, "10.0.0.2");
    snprintf(ev.by_host, sizeof ev.by_host, "10.0.0.3");
    CHECK_EQ_INT(scv_store_straggler(s, 1, &ev, &err), SCV_OK);
    size_t n = 0;
    CHECK_EQ_INT(scv_store_load_stragglers(s, 1, &got, &n, &err), SCV_OK);
    CHECK_EQ_INT((int)n, 1);
    if (n == 1)
        CHECK(got[0].iteration == 7 && got[0].worker == 1 && got[0].replaced && !strcmp(got[0].by_host, "10.0.0.3") &&
              fabs(got[0].ratio - 0.4) < 1e-12);
    free(got);
    /* schema 5: a measurement keeps its latency probe (older rows read 0: not probed) */
    scv_config_stats m = {.workers = 2, .batch = 64, .n_iters = 10, .t_compute = 0.01, .t_comm = 0.02, .t_iter = 0.03,
                          .t_latency = 4.5e-4};
    snprintf(m.vm, sizeof m.vm, "c5.xlarge");
    CHECK_EQ_INT(scv_store_measurement(s, 1, "train", &m, &err), SCV_OK);
    scv_config_stats *ms = NULL;
    CHECK_EQ_INT(scv_store_run_measurements(s, 1, &ms, &n, &err), SCV_OK);
    int probed = 0, unprobed = 0;
    for (size_t i = 0; i < n; i++) probed += ms[i].t_latency == 4.5e-4, unprobed += ms[i].t_latency == 0;
    CHECK_MSG(probed == 1 && unprobed == (int)n - 1, "%zu rows: %d probed, %d not", n, probed, unprobed);
    free(ms);
    scv_store_close(s);
    CHECK_EQ_INT(scv_store_open(path, &s, &err), SCV_OK); /* and again, now at schema 6 */
    scv_store_close(s);
}

/* A run at a glance as JSON, the one writer `scavenger runs --json` and GET /api/runs share:
 * the struct's field names, created exact to the microsecond (not %g's 6 digits), NaN as
 * null, strings escaped. */
static void t_summary_json(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/summary.db", tmp);
    scv_err err = {0};
    scv_store *s = NULL;
    long long id = 0;
    CHECK_EQ_INT(scv_store_open(path, &s, &err), SCV_OK);
    if (!s) return;
    CHECK_EQ_INT(scv_store_run_new(s, "model=a\"b", "{}", &id, &err), SCV_OK);
    scv_run_summary r;
    CHECK_EQ_INT(scv_store_run_summary(s, id, &r, &err), SCV_OK);
    scv_store_close(s);
    CHECK_MSG(r.created > 1.5e9, "created %f", r.created);
    r.created = 1795630123.456789; /* as the store keeps it: seconds with a fraction */
    r.workers = 4, r.batch = 256, r.accuracy = 0.8123456789012, r.n_steps = 3, r.reached = 1;
    r.actual_cost = NAN;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f != NULL);
    if (!f) return;
    scv_run_summary_json(f, &r);
    fclose(f);
    CHECK_MSG(strstr(buf, "\"created\":1795630123.456789,") != NULL, "%s", buf);
    cJSON *o = cJSON_Parse(buf);
    CHECK_MSG(cJSON_IsObject(o), "not JSON: %s", buf);
    const char *names[] = {"id", "created", "job_key", "status", "state", "workers", "batch", "predicted_time_s",
                           "predicted_cost", "actual_time_s", "actual_cost", "accuracy", "reached", "n_steps", "why",
                           "reason", "nominal", "nominal_epochs", "eta"};
    CHECK_EQ_INT(cJSON_GetArraySize(o), (int)(sizeof names / sizeof names[0]));
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        CHECK_MSG(cJSON_GetObjectItemCaseSensitive(o, names[i]) != NULL, "no \"%s\": %s", names[i], buf);
    CHECK_MSG(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(o, "job_key")), "model=a\"b"), "%s", buf);
    CHECK_NEAR(cJSON_GetObjectItem(o, "created")->valuedouble, 1795630123.456789, 0, 1e-6);
    CHECK_NEAR(cJSON_GetObjectItem(o, "accuracy")->valuedouble, 0.8123456789012, 0, 1e-13);
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(o, "actual_cost")));
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(o, "reached")));
    CHECK_EQ_INT(cJSON_GetObjectItem(o, "n_steps")->valueint, 3);
    /* a run without a plan: not nominal, no epochs assumed */
    CHECK(cJSON_IsFalse(cJSON_GetObjectItem(o, "nominal")) && cJSON_IsNull(cJSON_GetObjectItem(o, "nominal_epochs")));
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(o, "eta"))); /* no forecast written */
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(o, "reason"))); /* running: no reason */
    cJSON_Delete(o);
    free(buf);
}

/* A run stored as running whose process is gone (killed, or its disk filled before the end
 * was written) is not shown as running: the summaries, the list and scv_store_run_get say
 * SCV_RUN_GONE; a run of a live process stays running (issue 24, item 9). */
static void t_stale_running(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/stale.db", tmp);
    scv_store *s = NULL;
    scv_err err = {0};
    CHECK_EQ_INT(scv_store_open(path, &s, &err), SCV_OK);
    long long mine = 0, gone = 0;
    CHECK_EQ_INT(scv_store_run_new(s, "job-live", "{}", &mine, &err), SCV_OK);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) { /* a coordinator that stores its run, then dies without a word */
        scv_store *c = NULL;
        long long id = 0;
        _exit(scv_store_open(path, &c, NULL) || scv_store_run_new(c, "job-dead", "{}", &id, NULL) ? 1 : 0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    gone = mine + 1;
    scv_run_summary r;
    CHECK_EQ_INT(scv_store_run_summary(s, mine, &r, &err), SCV_OK);
    CHECK_MSG(!strcmp(r.status, "running"), "a live run shows '%s'", r.status);
    CHECK_EQ_INT(scv_store_run_summary(s, gone, &r, &err), SCV_OK);
    CHECK_MSG(!strcmp(r.status, SCV_RUN_GONE), "a dead run shows '%s'", r.status);
    scv_run_summary *all = NULL;
    size_t n = 0;
    CHECK_EQ_INT(scv_store_runs(s, &all, &n, &err), SCV_OK);
    CHECK(n == 2 && !strcmp(all[0].status, "running") && !strcmp(all[1].status, SCV_RUN_GONE));
    free(all);
    char job[256], status[64];
    CHECK_EQ_INT(scv_store_run_get(s, gone, job, sizeof job, status, sizeof status, &err), SCV_OK);
    CHECK_MSG(!strcmp(status, SCV_RUN_GONE), "%s", status);
    /* resumed by this process: running again, owned by it */
    CHECK_EQ_INT(scv_store_run_status(s, gone, "running", &err), SCV_OK);
    CHECK_EQ_INT(scv_store_run_summary(s, gone, &r, &err), SCV_OK);
    CHECK_MSG(!strcmp(r.status, "running"), "%s", r.status);
    /* an owner on another host, or none (a run stored before schema 6): not judged */
    CHECK(!scv_store_owner_gone("another-host-xyz:1:1") && !scv_store_owner_gone(NULL));
    scv_store_close(s);
}

/* The summary as JSON (scv_run_summary_json) parsed; NULL when not JSON. */
static cJSON *summary_cjson(const scv_run_summary *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    scv_run_summary_json(f, r);
    fclose(f);
    cJSON *o = cJSON_Parse(buf);
    free(buf);
    return o;
}

/* A running run's latest forecast (scv_store_run_eta, schema 7): read back by the summaries
 * and written by the one JSON writer; rewritten in place; cleared when the run stops (status,
 * outcome) and not written once it has stopped; a store of an older schema (tests/data/
 * store-v3.db) migrates and keeps forecasts too. */
static void t_run_eta(void)
{
    char path[400], cmd[900];
    snprintf(path, sizeof path, "%s/eta.db", tmp);
    scv_store *s = NULL;
    scv_err err = {0};
    CHECK_EQ_INT(scv_store_open(path, &s, &err), SCV_OK);
    if (!s) return;
    long long id = 0;
    CHECK_EQ_INT(scv_store_run_new(s, "job-eta", "{}", &id, &err), SCV_OK);
    scv_run_summary r;
    CHECK_EQ_INT(scv_store_run_summary(s, id, &r, &err), SCV_OK);
    CHECK(r.eta.written == 0 && isnan(r.eta.remaining_s)); /* none yet */
    struct scv_run_eta e = {.remaining_s = 192, .remaining_lo_s = 126, .remaining_hi_s = 300, .p_reach = 0.91};
    double t0 = (double)time(NULL);
    CHECK_MSG(scv_store_run_eta(s, id, &e, &err) == SCV_OK, "%s", err.msg);
    CHECK_EQ_INT(scv_store_run_summary(s, id, &r, &err), SCV_OK);
    CHECK_MSG(r.eta.written >= t0 - 1 && r.eta.written <= t0 + 5, "written %f", r.eta.written);
    CHECK(r.eta.remaining_s == 192 && r.eta.remaining_lo_s == 126 && r.eta.remaining_hi_s == 300 &&
          r.eta.p_reach == 0.91 && !r.eta.overdue && !r.eta.nominal);
    cJSON *o = summary_cjson(&r), *j = cJSON_GetObjectItem(o, "eta");
    CHECK(cJSON_IsObject(j));
    const char *names[] = {"written", "remaining_s", "remaining_lo_s", "remaining_hi_s", "p_reach", "overdue", "nominal"};
    CHECK_EQ_INT(cJSON_GetArraySize(j), (int)(sizeof names / sizeof names[0]));
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        CHECK_MSG(cJSON_GetObjectItemCaseSensitive(j, names[i]) != NULL, "no eta.%s", names[i]);
    CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "remaining_s")), 192, 0, 1e-9);
    CHECK(cJSON_IsFalse(cJSON_GetObjectItem(j, "overdue")));
    cJSON_Delete(o);
    /* rewritten: overdue, no band, no P (NaN: NULL, null in JSON) */
    e = (struct scv_run_eta){.remaining_s = 40, .remaining_lo_s = NAN, .remaining_hi_s = NAN, .p_reach = NAN,
                             .overdue = 1, .nominal = 1};
    CHECK_EQ_INT(scv_store_run_eta(s, id, &e, &err), SCV_OK);
    scv_run_summary *all = NULL;
    size_t n = 0;
    CHECK_EQ_INT(scv_store_runs(s, &all, &n, &err), SCV_OK);
    CHECK(n == 1 && all[0].eta.remaining_s == 40 && isnan(all[0].eta.remaining_lo_s) && isnan(all[0].eta.p_reach) &&
          all[0].eta.overdue && all[0].eta.nominal);
    if (n == 1) {
        o = summary_cjson(&all[0]);
        j = cJSON_GetObjectItem(o, "eta");
        CHECK(cJSON_IsNull(cJSON_GetObjectItem(j, "remaining_lo_s")) && cJSON_IsNull(cJSON_GetObjectItem(j, "p_reach")) &&
              cJSON_IsTrue(cJSON_GetObjectItem(j, "overdue")) && cJSON_IsTrue(cJSON_GetObjectItem(j, "nominal")));
        cJSON_Delete(o);
    }
    free(all);
    /* stopped (interrupted): no forecast, and none comes back when it is resumed */
    CHECK_EQ_INT(scv_store_run_status(s, id, "interrupted", &err), SCV_OK);
    CHECK_EQ_INT(scv_store_run_summary(s, id, &r, &err), SCV_OK);
    CHECK(r.eta.written == 0);
    CHECK_EQ_INT(scv_store_run_status(s, id, "running", &err), SCV_OK);
    CHECK_EQ_INT(scv_store_run_summary(s, id, &r, &err), SCV_OK);
    CHECK_MSG(r.eta.written == 0, "a resumed run shows its interrupted forecast");
    /* done (the outcome): cleared; a late write after it changes nothing */
    CHECK_EQ_INT(scv_store_run_eta(s, id, &e, &err), SCV_OK);
    CHECK_EQ_INT(scv_store_outcome(s, id, 100, 0.01, 0.9, 1, &err), SCV_OK);
    CHECK_EQ_INT(scv_store_run_eta(s, id, &e, &err), SCV_OK);
    CHECK_EQ_INT(scv_store_run_status(s, id, "running", &err), SCV_OK);
    CHECK_EQ_INT(scv_store_run_summary(s, id, &r, &err), SCV_OK);
    CHECK_MSG(r.eta.written == 0, "a finished run kept or took a forecast");
    CHECK_EQ_INT(scv_store_run_eta(s, id, &e, &err), SCV_OK);
    CHECK_EQ_INT(scv_store_run_eta(s, id, NULL, &err), SCV_OK); /* NULL clears */
    CHECK_EQ_INT(scv_store_run_summary(s, id, &r, &err), SCV_OK);
    CHECK(r.eta.written == 0);
    scv_store_close(s);
    /* an older schema migrates: its run resumed takes a forecast */
    snprintf(path, sizeof path, "%s/eta-v3.db", tmp);
    snprintf(cmd, sizeof cmd, "cp tests/data/store-v3.db %s", path);
    CHECK_EQ_INT(system(cmd), 0);
    CHECK_MSG(scv_store_open(path, &s, &err) == SCV_OK, "%s", err.msg);
    if (!s) return;
    CHECK_EQ_INT(scv_store_run_summary(s, 1, &r, &err), SCV_OK);
    CHECK(r.eta.written == 0);
    CHECK_EQ_INT(scv_store_run_status(s, 1, "running", &err), SCV_OK);
    e = (struct scv_run_eta){.remaining_s = 5, .remaining_lo_s = NAN, .remaining_hi_s = 9, .p_reach = 0.5};
    CHECK_MSG(scv_store_run_eta(s, 1, &e, &err) == SCV_OK, "%s", err.msg);
    CHECK_EQ_INT(scv_store_run_summary(s, 1, &r, &err), SCV_OK);
    CHECK(r.eta.remaining_s == 5 && r.eta.remaining_hi_s == 9 && isnan(r.eta.remaining_lo_s));
    scv_store_close(s);
}

/* ---- faults (issue 38): damaged pages, a truncated file, a hard link, a symbolic link, a
 * read-only store, another program's database ---- */

/* A store of n runs of job "job-f" at path, each with a step, evaluations, a measurement, a
 * plan decision, a parallel model, a target and a straggler (every table has rows); closed,
 * so the file holds everything (no -wal left). 0 when made. */
static int make_store(const char *path, int n)
{
    scv_store *s = NULL;
    scv_err err = {0};
    unlink(path);
    if (scv_store_open(path, &s, &err)) return printf("#   %s\n", err.msg), 1;
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        long long id = 0;
        scv_run_step t = {.workers = 2, .batch = 64, .iterations = 100, .t_iter = 0.01, .accuracy = 0.5};
        snprintf(t.phase, sizeof t.phase, "warmup");
        scv_config_stats m = {.workers = 2, .batch = 64, .n_iters = 100, .t_compute = 0.01, .t_iter = 0.012};
        snprintf(m.vm, sizeof m.vm, "c5.xlarge");
        scv_straggler_event st = {.iteration = 5, .worker = 1, .ratio = 0.5};
        rc = scv_store_run_new(s, "job-f", "{\"model\":\"mlp\",\"report\":\"r\"}", &id, &err) ||
             scv_store_step(s, id, 0, &t, &err) || scv_store_measurement(s, id, "warmup", &m, &err) ||
             scv_store_decision(s, id, "plan", 2, 64, "c5.xlarge", 10, 0.01, "cheapest", &err) ||
             scv_store_model(s, id, "perf", "{\"c0\":1,\"c1\":2,\"alpha\":0.1,\"beta\":0.2,\"mare\":0.05}", &err) ||
             scv_store_straggler(s, id, &st, &err) ||
             scv_store_outcome(s, id, 10, 0.01, 0.9, 1, &err) ||
             scv_store_set_target(s, id, SCV_METRIC_ACCURACY, 0.9, 2.5, 64, &err);
        for (int k = 0; k < 20 && !rc; k++) {
            scv_eval_sample e = {.iteration = k, .epoch = 0.1 * k, .accuracy = 0.5};
            rc = scv_store_eval(s, id, 2, 64, &e, &err);
        }
    }
    if (rc) printf("#   %s\n", err.msg);
    scv_store_close(s);
    return rc;
}

/* The file's page size (its header's bytes 16-17) and page count; 0 when unreadable. */
static long page_size(const char *path, long *pages)
{
    unsigned char h[18];
    struct stat st;
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(h, 1, sizeof h, f) : 0;
    if (f) fclose(f);
    if (got != sizeof h || stat(path, &st)) return 0;
    long ps = h[16] << 8 | h[17];
    if (ps == 1) ps = 65536;
    *pages = ps ? (long)(st.st_size / ps) : 0;
    return ps;
}

/* Overwrites len bytes at offset off of pages first..last (1-based) with 0xA5. */
static void damage(const char *path, long first, long last, long off, long len)
{
    long pages = 0, ps = page_size(path, &pages);
    CHECK(ps > 0 && last <= pages);
    int fd = open(path, O_WRONLY);
    CHECK(fd >= 0);
    char junk[65536];
    memset(junk, 0xA5, sizeof junk);
    for (long p = first; fd >= 0 && p <= last; p++)
        CHECK(pwrite(fd, junk, (size_t)(len > 0 ? len : ps), (off_t)((p - 1) * ps + off)) == (ssize_t)(len > 0 ? len : ps));
    if (fd >= 0) close(fd);
}

/* A whole file (malloc'ed, *n bytes); NULL when unreadable. */
static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *b = malloc(1 << 20);
    *n = b ? fread(b, 1, 1 << 20, f) : 0;
    fclose(f);
    return b;
}

/* An error that names the store (path) and is no absence: a damaged or unreadable store. */
#define CHECK_STORE_ERR(call, path)                                                                                  \
    do {                                                                                                             \
        int rc_ = (call);                                                                                            \
        CHECK_MSG((rc_ == SCV_ECORRUPT || rc_ == SCV_EIO) && strstr(err.msg, path), "%s: rc %d: %s", #call, rc_,      \
                  err.msg);                                                                                          \
        memset(&err, 0, sizeof err);                                                                                 \
    } while (0)

/* Every read of a store whose pages past the first are damaged: an error naming it, never an
 * empty list, "no run 1" or "not found" (each of these read as the end of the rows before). */
static void check_reads_fail(scv_store *s, const char *path)
{
    scv_err err = {0};
    scv_run_summary *rs = NULL, one;
    scv_run_step *steps = NULL;
    scv_eval_sample *ev = NULL;
    scv_straggler_event *sg = NULL;
    scv_config_stats *cs = NULL;
    scv_perf_model *pm = NULL;
    scv_stored_target tg[4];
    size_t n = 0;
    long long total = 0, from = 0, id = 0;
    char job[256], status[64], *json = NULL;
    double ep = 0;
    int k = 0, b = 0;
    CHECK_STORE_ERR(scv_store_runs(s, &rs, &n, &err), path);
    CHECK_STORE_ERR(scv_store_runs_page(s, NULL, NULL, 50, 0, &rs, &n, &total, &err), path);
    CHECK_STORE_ERR(scv_store_runs_page(s, "job-f", "done", 50, 0, &rs, &n, &total, &err), path);
    CHECK_STORE_ERR(scv_store_run_summary(s, 1, &one, &err), path);
    CHECK_STORE_ERR(scv_store_run_get(s, 1, job, sizeof job, status, sizeof status, &err), path);
    CHECK_STORE_ERR(scv_store_load_steps(s, 1, &steps, &n, &err), path);
    CHECK_STORE_ERR(scv_store_load_evals(s, 1, &ev, &n, &err), path);
    CHECK_STORE_ERR(scv_store_load_stragglers(s, 1, &sg, &n, &err), path);
    CHECK_STORE_ERR(scv_store_run_measurements(s, 1, &cs, &n, &err), path);
    CHECK_STORE_ERR(scv_store_load_measurements(s, "job-f", 0, &cs, &n, &from, &err), path);
    CHECK_STORE_ERR(scv_store_perf_models(s, "c5.xlarge", "other-job", &pm, &n, &err), path);
    CHECK_STORE_ERR(scv_store_targets(s, "job-f", SCV_METRIC_ACCURACY, 0, tg, 4, &n, &err), path);
    CHECK_STORE_ERR(scv_store_learnt_target(s, "job-f", SCV_METRIC_ACCURACY, 0.9, &ep, &b, &err), path);
    CHECK_STORE_ERR(scv_store_last_decision(s, 1, &k, &b, NULL, 0, &err), path);
    CHECK_STORE_ERR(scv_store_run_rows_json(s, 1, "evals", &json, &err), path);
    CHECK_STORE_ERR(scv_store_run_by_job_field(s, "report", "r", &id, &err), path);
    CHECK(!rs && !steps && !ev && !sg && !cs && !pm && !json);
}

/* `scavenger runs` on a store it cannot read: exit 1 and the path on stderr for the list,
 * --json (nothing on stdout: no "[]") and `show 1` (no "no run 1"). */
static void check_cli_fails(const char *path, const char *needle)
{
    char out[8192];
    CHECK_EQ_INT(run(out, sizeof out, "%s runs --db %s", bin, path), 1);
    CHECK_MSG(strstr(out, path) && strstr(out, needle) && !strstr(out, "no runs stored"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "{ %s runs --json --db %s 2>/dev/null; }", bin, path), 1);
    CHECK_MSG(!out[0], "stdout: %s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s runs show 1 --db %s", bin, path), 1);
    CHECK_MSG(strstr(out, path) && strstr(out, needle) && !strstr(out, "no run 1"), "%s", out);
}

/* Damaged pages: every page but the first (the header and the schema) overwritten, then only
 * the cell pointers of the runs table's page (page 2, the first table a store creates), where
 * SQLite's lookup of run 1 finds no row and says nothing: every read is an error naming the
 * file (SCV_ECORRUPT), `runs` exits 1 (before: "no runs stored yet", [] and "no run 1", exit 0). */
static void t_damaged(void)
{
    char path[400];
    snprintf(path, sizeof path, "%s/damaged.db", tmp);
    CHECK(make_store(path, 7) == 0);
    long pages = 0;
    CHECK(page_size(path, &pages) == 4096 && pages > 10);
    damage(path, 2, pages, 0, 0);
    scv_store *s = NULL;
    scv_err err = {0};
    CHECK_MSG(scv_store_open_read(path, &s, &err) == SCV_OK, "%s", err.msg); /* the schema page is sound */
    if (s) check_reads_fail(s, path);
    scv_store_close(s);
    CHECK_MSG(scv_store_open(path, &s, &err) == SCV_OK, "%s", err.msg);
    if (s) check_reads_fail(s, path);
    scv_store_close(s);
    check_cli_fails(path, "damaged");
    /* the runs table's cell pointers only: run 1 "not there" */
    CHECK(make_store(path, 7) == 0);
    damage(path, 2, 2, 8, 24);
    CHECK_MSG(scv_store_open_read(path, &s, &err) == SCV_OK, "%s", err.msg);
    if (s) {
        scv_run_summary one;
        char job[256], status[64];
        CHECK_STORE_ERR(scv_store_run_summary(s, 1, &one, &err), path);
        CHECK_STORE_ERR(scv_store_run_get(s, 1, job, sizeof job, status, sizeof status, &err), path);
        scv_store_close(s);
    }
    check_cli_fails(path, "damaged");
}

/* A truncated file (its first two pages left): an error naming it, exit 1. */
static void t_truncated(void)
{
    char path[400];
    snprintf(path, sizeof path, "%s/truncated.db", tmp);
    CHECK(make_store(path, 7) == 0);
    CHECK(truncate(path, 2 * 4096) == 0);
    scv_store *s = NULL;
    scv_err err = {0};
    int rc = scv_store_open_read(path, &s, &err);
    if (!rc) check_reads_fail(s, path); /* opened: every read fails */
    else CHECK_MSG(rc == SCV_ECORRUPT && strstr(err.msg, path), "rc %d: %s", rc, err.msg);
    scv_store_close(s);
    check_cli_fails(path, "damaged");
}

/* A store with two names (a hard link): each name would keep its own write-ahead log (two of
 * four concurrent runs were lost): every open through either name is refused naming the
 * links; one name again, it opens with its runs. */
static void t_hard_link(void)
{
    char path[400], other[420], out[8192];
    snprintf(path, sizeof path, "%s/linked.db", tmp);
    snprintf(other, sizeof other, "%s/linked-too.db", tmp);
    CHECK(make_store(path, 2) == 0);
    unlink(other);
    CHECK(link(path, other) == 0);
    const char *names[] = {path, other};
    for (int i = 0; i < 2; i++) {
        scv_store *s = NULL;
        scv_err err = {0};
        CHECK_EQ_INT(scv_store_open(names[i], &s, &err), SCV_EINVAL);
        CHECK_MSG(strstr(err.msg, names[i]) && strstr(err.msg, "2 names (hard links)"), "%s", err.msg);
        CHECK(s == NULL);
        CHECK_EQ_INT(scv_store_open_read(names[i], &s, &err), SCV_EINVAL);
        CHECK_EQ_INT(run(out, sizeof out, "%s runs --db %s", bin, names[i]), 1);
        CHECK_MSG(strstr(out, "hard links"), "%s", out);
    }
    CHECK(unlink(other) == 0);
    scv_store *s = NULL;
    scv_err err = {0};
    scv_run_summary *rs = NULL;
    size_t n = 0;
    CHECK_MSG(scv_store_open(path, &s, &err) == SCV_OK, "%s", err.msg);
    if (s) CHECK(scv_store_runs(s, &rs, &n, &err) == SCV_OK && n == 2);
    free(rs);
    scv_store_close(s);
}

/* A symbolic link (to the file, or to its directory) is one store: a run written through it
 * is read through the real path, and its canonical path is the real one (the service's lock). */
static void t_symlink(void)
{
    char real[400], link1[420], dir[420], link2[460], c1[4096], c2[4096], c3[4096];
    snprintf(real, sizeof real, "%s/real.db", tmp);
    snprintf(link1, sizeof link1, "%s/alias.db", tmp);
    snprintf(dir, sizeof dir, "%s/dirlink", tmp);
    snprintf(link2, sizeof link2, "%s/real.db", dir);
    CHECK(make_store(real, 1) == 0);
    unlink(link1);
    unlink(dir);
    CHECK(symlink(real, link1) == 0 && symlink(tmp, dir) == 0);
    scv_store *s = NULL;
    scv_err err = {0};
    long long id = 0;
    CHECK_MSG(scv_store_open(link1, &s, &err) == SCV_OK, "%s", err.msg);
    if (s) CHECK(scv_store_run_new(s, "job-alias", "{}", &id, &err) == SCV_OK && id == 2);
    scv_store_close(s);
    scv_run_summary r;
    CHECK_MSG(scv_store_open_read(link2, &s, &err) == SCV_OK, "%s", err.msg);
    if (s) CHECK(scv_store_run_summary(s, 2, &r, &err) == SCV_OK && !strcmp(r.job_key, "job-alias"));
    scv_store_close(s);
    CHECK(scv_store_canonical(real, c1, sizeof c1, &err) == SCV_OK && scv_store_canonical(link1, c2, sizeof c2, &err) == SCV_OK &&
          scv_store_canonical(link2, c3, sizeof c3, &err) == SCV_OK);
    CHECK_MSG(!strcmp(c1, c2) && !strcmp(c1, c3) && c1[0] == '/', "%s %s %s", c1, c2, c3);
}

/* A read-only store (the file 0444 in a 0555 directory, read by another user than its
 * owner: root drops to nobody, since root ignores the modes): `runs` and the read API list it
 * (before: every open set WAL and took a write lock: "attempt to write a readonly database");
 * a write open is refused naming the file, and the file is unchanged. */
static void t_read_only(void)
{
    char dir[400], path[420], out[8192];
    snprintf(dir, sizeof dir, "%s/ro", tmp);
    snprintf(path, sizeof path, "%s/r.db", dir);
    mkdir(dir, 0755);
    CHECK(make_store(path, 2) == 0);
    size_t n0 = 0, n1 = 0;
    char *before = slurp(path, &n0);
    CHECK(chmod(tmp, 0755) == 0 && chmod(path, 0444) == 0 && chmod(dir, 0555) == 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) || setuid(65534))) _exit(3);
        scv_store *s = NULL;
        scv_err err = {0};
        scv_run_summary *rs = NULL;
        size_t n = 0;
        if (scv_store_open_read(path, &s, &err) || scv_store_runs(s, &rs, &n, &err) || n != 2) {
            printf("#   read-only: %s (n %zu)\n", err.msg, n);
            _exit(4);
        }
        free(rs);
        scv_store_close(s);
        if (scv_store_open(path, &s, &err) == SCV_OK || !strstr(err.msg, path)) _exit(5);
        if (run(out, sizeof out, "%s runs --db %s", bin, path) != 0 || !strstr(out, "job-f")) {
            printf("#   runs: %s\n", out);
            _exit(6);
        }
        if (run(out, sizeof out, "%s runs show 2 --json --db %s", bin, path) != 0 || !strstr(out, "\"id\":2")) {
            printf("#   runs show: %s\n", out);
            _exit(7);
        }
        _exit(0);
    }
    int st = -1;
    waitpid(pid, &st, 0);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the read-only reader failed at step %d",
              WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    char *after = slurp(path, &n1);
    CHECK(before && after && n0 == n1 && !memcmp(before, after, n0));
    free(before);
    free(after);
    chmod(dir, 0755);
    chmod(path, 0644);
    chmod(tmp, 0700);
}

/* Another program's SQLite database with a `runs` table (tests/data/foreign-runs.db, made by
 * make-store-fixtures.py), and one with another application id: refused naming the file and
 * what it is, and left byte for byte as it was (before: switched to WAL for good, then "no
 * such column"). */
static void t_foreign(void)
{
    char path[400], cmd[900], out[8192];
    snprintf(path, sizeof path, "%s/foreign.db", tmp);
    for (int app = 0; app < 2; app++) {
        snprintf(cmd, sizeof cmd, "cp tests/data/foreign-runs.db %s", path);
        CHECK_EQ_INT(system(cmd), 0);
        if (app) { /* application id 0x0f055112 (Fossil's): header bytes 68-71 */
            int fd = open(path, O_WRONLY);
            CHECK(fd >= 0 && pwrite(fd, "\x0f\x05\x51\x12", 4, 68) == 4);
            if (fd >= 0) close(fd);
        }
        size_t n0 = 0, n1 = 0;
        char *before = slurp(path, &n0);
        scv_store *s = NULL;
        scv_err err = {0};
        CHECK_EQ_INT(scv_store_open(path, &s, &err), SCV_EINVAL);
        CHECK_MSG(strstr(err.msg, path) && strstr(err.msg, "not a Scavenger database") &&
                      strstr(err.msg, app ? "application id 0x0f055112" : "tables laps, runs"), "%s", err.msg);
        CHECK_EQ_INT(scv_store_open_read(path, &s, &err), SCV_EINVAL);
        CHECK(s == NULL);
        CHECK_EQ_INT(run(out, sizeof out, "%s runs --db %s", bin, path), 1);
        CHECK_MSG(strstr(out, "not a Scavenger database") && !strstr(out, "no such column"), "%s", out);
        char *after = slurp(path, &n1);
        CHECK_MSG(before && after && n0 == n1 && !memcmp(before, after, n0), "case %d: the file was changed", app);
        snprintf(cmd, sizeof cmd, "%s-wal", path);
        CHECK_MSG(access(cmd, F_OK) != 0, "case %d: a write-ahead log was made", app);
        free(before);
        free(after);
    }
}

/* How each run ended, stored with its reason (issue 38, item 10): a failure's error and an
 * interruption's cause (scv_store_run_end, one UPDATE), shown by the summaries, their JSON and
 * `runs` / `runs show` / --json; gone when the run is resumed or finishes; a run whose
 * process is gone says so; a store of schema 5 with a run left running (no owner kept) is
 * stored interrupted with its reason by the move to 9; a run that starts makes the reserve. */
static void t_run_end(void)
{
    char path[400], res[420], out[16384], cmd[900];
    snprintf(path, sizeof path, "%s/end.db", tmp);
    unlink(path);
    scv_store *s = NULL;
    scv_err err = {0};
    long long a = 0, b = 0;
    CHECK_EQ_INT(scv_store_open(path, &s, &err), SCV_OK);
    if (!s) return;
    CHECK_EQ_INT(scv_store_run_new(s, "job-end", "{}", &a, &err), SCV_OK);
    CHECK_EQ_INT(scv_store_run_new(s, "job-end", "{}", &b, &err), SCV_OK);
    struct stat st;
    snprintf(res, sizeof res, "%s.reserve", path);
    CHECK_MSG(stat(res, &st) == 0 && st.st_blocks * 512 >= 4096, "no reserve beside the store: %s", res);
    CHECK_EQ_INT(scv_store_run_state(s, a, "warmup", &err), SCV_OK);
    CHECK_EQ_INT(scv_store_run_end(s, a, "failed", NULL, "/data/x: No space left on device", &err), SCV_OK);
    CHECK_EQ_INT(scv_store_run_end(s, b, "interrupted", "interrupted", "interrupted (SIGINT)", &err), SCV_OK);
    scv_run_summary r;
    CHECK_EQ_INT(scv_store_run_summary(s, a, &r, &err), SCV_OK);
    CHECK_MSG(!strcmp(r.status, "failed") && !strcmp(r.state, "warmup") &&
              !strcmp(r.reason, "/data/x: No space left on device"), "%s %s %s", r.status, r.state, r.reason);
    cJSON *o = summary_cjson(&r);
    const char *jr = cJSON_GetStringValue(cJSON_GetObjectItem(o, "reason"));
    CHECK_MSG(jr && !strcmp(jr, "/data/x: No space left on device"), "reason %s", jr ? jr : "(none)");
    cJSON_Delete(o);
    scv_store_close(s);
    CHECK_EQ_INT(run(out, sizeof out, "%s runs --db %s", bin, path), 0);
    CHECK_MSG(strstr(out, "reason: /data/x: No space left on device") && strstr(out, "reason: interrupted (SIGINT)"),
              "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s runs show %lld --db %s", bin, a, path), 0);
    CHECK_MSG(strstr(out, "failed (state warmup)\njob job-end\nreason: /data/x: No space left on device") &&
              strstr(out, "no step stored"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s runs show %lld --json --db %s", bin, b, path), 0);
    CHECK_MSG(strstr(out, "\"reason\":\"interrupted (SIGINT)\""), "%s", out);
    /* resumed, then finished: no reason left */
    CHECK_EQ_INT(scv_store_open(path, &s, &err), SCV_OK);
    if (!s) return;
    CHECK_EQ_INT(scv_store_run_status(s, b, "running", &err), SCV_OK);
    CHECK_EQ_INT(scv_store_run_summary(s, b, &r, &err), SCV_OK);
    CHECK_MSG(!strcmp(r.status, "running") && !r.reason[0], "%s: %s", r.status, r.reason);
    CHECK_EQ_INT(scv_store_run_end(s, b, "failed", NULL, "x", &err), SCV_OK);
    CHECK_EQ_INT(scv_store_outcome(s, b, 10, 0.1, 0.9, 1, &err), SCV_OK);
    CHECK_EQ_INT(scv_store_run_summary(s, b, &r, &err), SCV_OK);
    CHECK_MSG(!strcmp(r.status, "done") && !r.reason[0], "%s: %s", r.status, r.reason);
    scv_store_close(s);
    /* a run whose process is gone: why it is not running */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        scv_store *c = NULL;
        long long id = 0;
        _exit(scv_store_open(path, &c, NULL) || scv_store_run_new(c, "job-dead", "{}", &id, NULL) ? 1 : 0);
    }
    int wst = 0;
    waitpid(pid, &wst, 0);
    CHECK_EQ_INT(scv_store_open_read(path, &s, &err), SCV_OK);
    if (s) {
        CHECK_EQ_INT(scv_store_run_summary(s, 3, &r, &err), SCV_OK);
        CHECK_MSG(!strcmp(r.status, SCV_RUN_GONE) && strstr(r.reason, "ended without storing how the run ended"),
                  "%s: %s", r.status, r.reason);
        scv_store_close(s);
    }
    /* schema 5 with a run left running: interrupted, with its reason, by the move to 9 */
    snprintf(path, sizeof path, "%s/v5-running.db", tmp);
    snprintf(cmd, sizeof cmd, "cp tests/data/store-v5-running.db %s", path);
    CHECK_EQ_INT(system(cmd), 0);
    CHECK_MSG(scv_store_open(path, &s, &err) == SCV_OK, "%s", err.msg);
    if (!s) return;
    CHECK_EQ_INT(scv_store_run_summary(s, 1, &r, &err), SCV_OK);
    CHECK_MSG(!strcmp(r.status, "interrupted") && strstr(r.reason, "before schema 6"), "%s: %s", r.status, r.reason);
    CHECK_EQ_INT(scv_store_run_summary(s, 2, &r, &err), SCV_OK);
    CHECK_MSG(!strcmp(r.status, "done") && !r.reason[0], "%s: %s", r.status, r.reason);
    scv_store_close(s);
}

/* A full disk under the store (a 128 KiB tmpfs: root only, as tests/faults.sh's mounts): a run
 * writes evaluations until SQLite says the disk is full, then its state until even its row
 * cannot be written; its end is still stored, with the reason, by scv_store_run_end giving up
 * the reserve (PATH.reserve) made when the run started (before: the row stayed running/warmup
 * and showed "interrupted (process gone)"). */
static void t_full_disk(void)
{
    if (geteuid() != 0) {
        printf("# full_disk: not run: mounting a tmpfs needs root (tests/faults.sh has the same through the CLI)\n");
        return;
    }
    char dir[400], path[420], cmd[900];
    snprintf(dir, sizeof dir, "%s/full", tmp);
    snprintf(path, sizeof path, "%s/r.db", dir);
    mkdir(dir, 0755);
    snprintf(cmd, sizeof cmd, "mount -t tmpfs -o size=128k tmpfs %s", dir);
    CHECK_MSG(system(cmd) == 0, "cannot mount a tmpfs on %s", dir);
    scv_store *s = NULL;
    scv_err err = {0};
    long long id = 0;
    CHECK_EQ_INT(scv_store_open(path, &s, &err), SCV_OK);
    if (s) CHECK_EQ_INT(scv_store_run_new(s, "job-full", "{}", &id, &err), SCV_OK);
    int rc = SCV_OK, k;
    for (k = 0; s && k < 10000 && !rc; k++) {
        scv_eval_sample e = {.iteration = k, .epoch = 0.01 * k, .accuracy = 0.5};
        rc = scv_store_eval(s, id, 2, 64, &e, &err);
    }
    CHECK_MSG(rc == SCV_EIO && strstr(err.msg, "disk is full"), "after %d evaluations: rc %d: %s", k, rc, err.msg);
    char why[SCV_ERR_LEN];
    snprintf(why, sizeof why, "%s", err.msg);
    /* what a failed write left allocated is used up too: even the run's row is not written */
    scv_err e2 = {0};
    for (k = 0; s && k < 1000 && scv_store_run_state(s, id, k % 2 ? "train" : "search", &e2) == SCV_OK; k++) {}
    CHECK_MSG(strstr(e2.msg, "disk is full"), "%d state writes: %s", k, e2.msg);
    if (s) CHECK_MSG(scv_store_run_end(s, id, "failed", NULL, why, &err) == SCV_OK, "%s", err.msg);
    scv_store_close(s);
    scv_run_summary r;
    CHECK_EQ_INT(scv_store_open_read(path, &s, &err), SCV_OK);
    if (s) {
        CHECK_EQ_INT(scv_store_run_summary(s, id, &r, &err), SCV_OK);
        CHECK_MSG(!strcmp(r.status, "failed") && strstr(r.reason, "disk is full"), "%s: %s", r.status, r.reason);
        scv_store_close(s);
    }
    snprintf(cmd, sizeof cmd, "umount -l %s", dir);
    CHECK(system(cmd) == 0);
}

static const scv_test tests[] = {
    {"stale_running", t_stale_running},
    {"migrate_v3", t_migrate_v3},
    {"processes", t_processes},
    {"migrate_v2", t_migrate_v2},
    {"threads", t_threads},
    {"not_a_db", t_not_a_db},
    {"missing_dir", t_missing_dir},
    {"summary_json", t_summary_json},
    {"run_eta", t_run_eta},
    {"damaged", t_damaged},
    {"truncated", t_truncated},
    {"hard_link", t_hard_link},
    {"symlink", t_symlink},
    {"read_only", t_read_only},
    {"foreign", t_foreign},
    {"run_end", t_run_end},
    {"full_disk", t_full_disk},
};

int main(int argc, char **argv)
{
    bin = getenv("SCV_BIN") ? getenv("SCV_BIN") : "build/scavenger";
    (void)spawn_group; /* scv_test_proc.h's, not needed here */
    snprintf(tmp, sizeof tmp, "/tmp/scv-test-store-XXXXXX");
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    int rc = scv_test_main(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (rc == 0 && system(cmd) != 0) rc = 1;
    return rc;
}
