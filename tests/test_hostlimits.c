/*
 * test_hostlimits.c - what one run may take of the host it runs on (src/drivers/hostlimits.c):
 * the policy's defaults from this host and its override parsed (bad ones named); a job's
 * use estimated from its settings (a synthetic data set's bytes per rank exactly, the
 * space's largest K counted locally, none on a cluster, a hostfile's slots filled in order
 * with this host's counted); the job setup (the one check of `scavenger run`, job files and
 * the service) refusing the jobs - K = 1024, threads 256, synthetic:570471 x 1024
 * ranks - as bad settings naming the limit, and lifting them for a hostfile with enough
 * slots elsewhere; `scavenger run --workers 2,1024` exiting 2 naming max_local_threads
 * before anything is stored or started.
 */
#define _GNU_SOURCE
#include "scv.h"
#include "job/hostlimits.h"
#include "train/train.h"
#include "scv_test.h"
#include "scv_test_proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *bin;
static char tmp[256], db[400];
static scv_store *store;

static void t_policy(void)
{
    scv_host_limits l = scv_host_limits_default();
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    CHECK(l.cores >= 1 && l.cores <= cores);
    CHECK(l.mem_bytes > 64.0 * 1024 * 1024);
    CHECK_EQ_INT(l.max_threads, (long)(l.threads_per_core * l.cores));
    CHECK_NEAR(l.max_mem_bytes, l.mem_share * l.mem_bytes, 1e-12, 0);
    scv_err err = {0};
    CHECK_EQ_INT(scv_host_limits_parse("threads=64,memory=16G", &l, &err), SCV_OK);
    CHECK_EQ_INT(l.max_threads, 64);
    CHECK_NEAR(l.max_mem_bytes, 16.0 * (1 << 30), 0, 0);
    CHECK_EQ_INT(scv_host_limits_parse("memory=512MiB", &l, &err), SCV_OK);
    CHECK_NEAR(l.max_mem_bytes, 512.0 * (1 << 20), 0, 0);
    CHECK_EQ_INT(l.max_threads, 64); /* the part not given is kept */
    static const char *const bad[] = {"", "threads=", "threads=0", "threads=1.5", "memory=12Q", "memory=-1",
                                      "foo=1", "threads=4,", ",threads=4", "memory=G"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        scv_err e = {0};
        CHECK_MSG(scv_host_limits_parse(bad[i], &l, &e) == SCV_EINVAL && strstr(e.msg, "--host-limits"), "'%s': %s",
                  bad[i], e.msg);
    }
}

/* The job setup on settings (name, value pairs, NULL-ended): its code, err and bad_setting. */
static int setup(scv_err *err, int *bad_setting, const char *const *kv)
{
    char *names[32], *values[32];
    int n = 0;
    for (; kv[2 * n] && n < 32; n++) names[n] = (char *)kv[2 * n], values[n] = (char *)kv[2 * n + 1];
    char state[500];
    snprintf(state, sizeof state, "%s.runs", db);
    scv_job_setup js;
    int rc = scv_job_setup_init(&js, names, values, n, store, state, err);
    *bad_setting = js.bad_setting;
    scv_job_setup_free(&js);
    return rc;
}

/* The jobs refused by the run's own setup, the limit named; a bad setting (exit 2). */
static void t_setup_refuses(void)
{
    scv_err err = {0};
    int bad = 0;
    const char *k1024[] = {"model", "mlp", "dataset", "synthetic:570471", "workers", "2,1024", "batch", "64,256",
                           "target-accuracy", "0.999", "host-limits", "threads=64", NULL};
    CHECK_EQ_INT(setup(&err, &bad, k1024), SCV_EINVAL);
    CHECK_MSG(bad && strstr(err.msg, "max_local_threads = 64") && !strncmp(err.msg, "--workers 2,1024:", 17) &&
                  strstr(err.msg, "1024 ranks here"), "%s", err.msg);
    /* threads: 2 ranks x 256 */
    const char *t256[] = {"model", "mlp", "threads", "256", "workers", "1,2", "target-accuracy", "0.9",
                          "host-limits", "threads=64", NULL};
    err = (scv_err){0};
    CHECK_EQ_INT(setup(&err, &bad, t256), SCV_EINVAL);
    CHECK_MSG(bad && !strncmp(err.msg, "--threads 256", 13) && strstr(err.msg, "512 rank-threads"), "%s", err.msg);
    /* the rank count within the threads' bound, but every rank holds synthetic:570471 (2 GiB) */
    const char *mem[] = {"model", "mlp", "dataset", "synthetic:570471", "workers", "2,1024", "target-accuracy",
                         "0.9", "host-limits", "threads=4096,memory=64G", NULL};
    err = (scv_err){0};
    CHECK_EQ_INT(setup(&err, &bad, mem), SCV_EINVAL);
    CHECK_MSG(bad && strstr(err.msg, "max_local_memory = 64 GiB") && strstr(err.msg, "--workers 2,1024") &&
                  strstr(err.msg, "data 2.0 GiB"), "%s", err.msg);
    /* within both: accepted */
    const char *ok[] = {"model", "mlp", "dataset", "synthetic:570471", "workers", "2,16", "target-accuracy", "0.9",
                        "host-limits", "threads=16,memory=40G", NULL};
    err = (scv_err){0};
    CHECK_MSG(setup(&err, &bad, ok) == SCV_OK, "%s", err.msg);
    /* a bad override is a bad setting too */
    const char *badspec[] = {"model", "mlp", "workers", "1,2", "target-accuracy", "0.9", "host-limits", "cores=2", NULL};
    err = (scv_err){0};
    CHECK_EQ_INT(setup(&err, &bad, badspec), SCV_EINVAL);
    CHECK_MSG(bad && strstr(err.msg, "--host-limits 'cores=2'"), "%s", err.msg);
}

/* Ranks elsewhere do not count: a hostfile's other machines with enough slots lift the
 * bound; this host's lines count, and ranks beyond every slot are spread as the slots are. */
static void t_hostfile(void)
{
    char hf[400], hf2[400];
    snprintf(hf, sizeof hf, "%s/far.hosts", tmp);
    snprintf(hf2, sizeof hf2, "%s/mixed.hosts", tmp);
    FILE *f = fopen(hf, "w");
    CHECK(f && fputs("# other machines\n10.255.0.1 slots=512\n10.255.0.2 slots=512 max_slots=512\n", f) >= 0);
    if (f) fclose(f);
    f = fopen(hf2, "w");
    CHECK(f && fputs("localhost slots=4\n10.255.0.1 slots=4\n", f) >= 0);
    if (f) fclose(f);
    scv_err err = {0};
    int bad = 0;
    const char *far[] = {"model", "mlp", "workers", "2,1024", "target-accuracy", "0.9", "hosts", hf, "host-limits",
                         "threads=64", NULL};
    CHECK_MSG(setup(&err, &bad, far) == SCV_OK, "%s", err.msg);
    /* 16 ranks over 4 slots here and 4 there: 4 + 4 in order, the 8 beyond spread half here */
    const char *mixed[] = {"model", "mlp", "workers", "2,16", "target-accuracy", "0.9", "hosts", hf2, "host-limits",
                           "threads=7", NULL};
    err = (scv_err){0};
    CHECK_EQ_INT(setup(&err, &bad, mixed), SCV_EINVAL);
    CHECK_MSG(strstr(err.msg, " 8 ranks here (hostfile") && strstr(err.msg, "8 slots, 4 here"), "%s", err.msg);
    const char *mixed_ok[] = {"model", "mlp", "workers", "2,16", "target-accuracy", "0.9", "hosts", hf2, "host-limits",
                              "threads=8", NULL};
    err = (scv_err){0};
    CHECK_MSG(setup(&err, &bad, mixed_ok) == SCV_OK, "%s", err.msg);
}

/* The estimate itself: a synthetic set's bytes per rank exactly, none on a cluster, the
 * shared cache of the built-in set counted once. */
static void t_use(void)
{
    scv_host_limits lim = scv_host_limits_default();
    scv_job_setup js;
    memset(&js, 0, sizeof js);
    js.params = scv_run_params_default();
    js.params.workers[0] = 2, js.params.workers[1] = 64, js.params.n_workers = 2;
    char *names[] = {"model", "dataset", "threads"}, *values[] = {"logreg", "synthetic:1000", "3"};
    scv_host_use u;
    scv_err err = {0};
    CHECK_EQ_INT(scv_host_use_of(&js, names, values, 3, &lim, &u, &err), SCV_OK);
    CHECK_EQ_INT(u.ranks, 64);
    CHECK_EQ_INT(u.local_ranks, 64);
    CHECK_EQ_INT(u.threads, 3);
    CHECK_NEAR(u.data_bytes, 1200.0 * SCV_SYNTHETIC_SAMPLE_BYTES, 0, 0);
    CHECK_NEAR(u.model_bytes, 16.0 * 7850, 0, 0); /* logreg 784 x 10 + 10 */
    CHECK_NEAR(u.total_bytes, 64 * u.rank_bytes + 256 * u.act_bytes, 1e-12, 0);
    char *cn[] = {"model", "cluster"}, *cv[] = {"mlp", "c1"};
    CHECK_EQ_INT(scv_host_use_of(&js, cn, cv, 2, &lim, &u, &err), SCV_OK);
    CHECK_MSG(u.local_ranks == 0 && u.total_bytes == 0 && strstr(u.where, "cluster c1"), "%d %s", u.local_ranks, u.where);
    char limit[32] = "x";
    CHECK_EQ_INT(scv_host_limits_eval(&lim, &u, "2,64", limit, sizeof limit, &err), SCV_OK);
    CHECK(limit[0] == 0);
}

/* `scavenger run` exits 2 naming the limit, before a run is stored or a rank started (1024 x 256
 * rank-threads: over the default of any host). */
static void t_cli(void)
{
    char out[8192];
    int rc = run(out, sizeof out, "timeout 60 %s run --db %s --model mlp --hidden 32 --dataset synthetic:2000 "
                 "--workers 2,1024 --threads 256 --batch 64,256 --target-accuracy 0.999 --search none --max-epochs 0.01", bin,
                 db);
    CHECK_MSG(rc == 2 && strstr(out, "max_local_threads") && strstr(out, "--workers 2,1024"), "rc %d: %s", rc, out);
    scv_run_summary *rs = NULL;
    size_t n = 0;
    long long total = -1;
    scv_err err = {0};
    CHECK_EQ_INT(scv_store_runs_page(store, NULL, NULL, 10, 0, &rs, &n, &total, &err), SCV_OK);
    CHECK_EQ_INT(total, 0);
    free(rs);
    rc = run(out, sizeof out, "%s run --db %s --model mlp --workers 1,2 --target-accuracy 0.9 --host-limits threads=x",
             bin, db);
    CHECK_MSG(rc == 2 && strstr(out, "--host-limits 'threads=x'"), "rc %d: %s", rc, out);
}

static const scv_test tests[] = {
    {"policy", t_policy}, {"setup_refuses", t_setup_refuses}, {"hostfile", t_hostfile}, {"use", t_use}, {"cli", t_cli},
};

int main(int argc, char **argv)
{
    bin = getenv("SCV_BIN") ? getenv("SCV_BIN") : "build/scavenger";
    snprintf(tmp, sizeof tmp, "/tmp/scv-test-hostlimits-%ld", (long)getpid());
    mkdir(tmp, 0755);
    snprintf(db, sizeof db, "%s/runs.db", tmp);
    scv_err err = {0};
    if (scv_store_open(db, &store, &err)) {
        printf("not ok - store: %s\n0 passed, 1 failed\n", err.msg);
        return 1;
    }
    int rc = scv_test_main(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
    scv_store_close(store);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (system(cmd) != 0) rc = 1;
    (void)spawn_group; /* scv_test_proc.h's other helper */
    return rc;
}
