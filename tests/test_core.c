/*
 * test_core.c - core/'s small pieces every part leans on: the one builder of a run's paths
 * (core/rundir.h: DB.runs, DB.runs/ID[/NAME], RUN_DIR/NAME; a path that does not fit is an
 * error naming it and an empty buffer, never a truncated path), the drivers refusing a run
 * directory they cannot hold (they truncated it before), and SCV_ASSERT (core/invariant.h:
 * FILE:LINE, the function and the expression on stderr, then abort), with the invariants
 * of scv_split_batch it now guards.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "scv_test.h"
#include "core/rundir.h"
#include "core/invariant.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void t_run_paths(void)
{
    char buf[64];
    scv_err err = {0};
    CHECK_EQ_INT(scv_runs_dir_path("data/x.db", buf, sizeof buf, &err), SCV_OK);
    CHECK(!strcmp(buf, "data/x.db.runs"));
    CHECK_EQ_INT(scv_run_dir_path(buf, 12, NULL, buf + 32, 32, &err), SCV_OK);
    CHECK(!strcmp(buf + 32, "data/x.db.runs/12"));
    char p[64];
    CHECK_EQ_INT(scv_run_dir_path("data/x.db.runs", 3, SCV_RUN_JOB_LOG, p, sizeof p, &err), SCV_OK);
    CHECK_MSG(!strcmp(p, "data/x.db.runs/3/elastic/job.log"), "%s", p);
    CHECK_EQ_INT(scv_run_file_path("data/x.db.runs/3", SCV_RUN_TRAINER_LOG, p, sizeof p, &err), SCV_OK);
    CHECK(!strcmp(p, "data/x.db.runs/3/trainer.log"));
    /* one byte short: refused, named, nothing half-written */
    CHECK_EQ_INT(scv_run_dir_path("data/x.db.runs", 12, NULL, p, strlen("data/x.db.runs/12"), &err), SCV_ERANGE);
    CHECK_MSG(p[0] == 0 && strstr(err.msg, "data/x.db.runs/12: the run's path is over 16 bytes"), "%s", err.msg);
    CHECK_EQ_INT(scv_runs_dir_path("a-long-database-name.db", p, 10, &err), SCV_ERANGE);
    CHECK(p[0] == 0 && strstr(err.msg, "a-long-database-name.db.runs"));
    CHECK_EQ_INT(scv_run_file_path("d", "a-long-file-name", p, 8, &err), SCV_ERANGE);
    CHECK(p[0] == 0 && strstr(err.msg, "d/a-long-file-name"));
    /* not a run: no number, no directory */
    CHECK_EQ_INT(scv_run_dir_path("r", 0, NULL, p, sizeof p, &err), SCV_EINVAL);
    CHECK_EQ_INT(scv_run_dir_path("", 1, NULL, p, sizeof p, &err), SCV_EINVAL);
    CHECK_EQ_INT(scv_runs_dir_path(NULL, p, sizeof p, &err), SCV_EINVAL);
    CHECK_EQ_INT(scv_run_file_path("r", NULL, p, sizeof p, NULL), SCV_EINVAL);
}

/* Every driver refuses a run directory its paths cannot hold (its trainjob's run_dir is 1024
 * bytes: the loop's scv_run_result.run_dir); before, it kept a truncated one and wrote the
 * run's segments and checkpoints under another directory. Nothing starts: the open fails
 * before the probe. */
static void t_driver_long_run_dir(void)
{
    char dir[1100];
    memset(dir, 'd', sizeof dir - 1);
    dir[0] = '/', dir[sizeof dir - 1] = 0;
    const char *model[] = {"--model", "mlp", NULL};
    scv_relaunch_opts o = {.train_opts = model, .vm_type = "c5.xlarge"};
    scv_relaunch_opts x = {.exec = "true", .vm_type = "c5.xlarge"};
    for (int i = 0; i < 3; i++) {
        scv_job_driver *d = NULL;
        scv_err err = {0};
        int rc = i == 0   ? scv_relaunch_driver_new(&o, &d, &err)
                 : i == 1 ? scv_elastic_driver_new(&o, &d, &err)
                          : scv_exec_driver_new(&x, &d, &err);
        CHECK_EQ_INT(rc, SCV_OK);
        if (rc) continue;
        scv_job_info job = {0};
        CHECK_EQ_INT(d->open(d->ctx, dir, &job, &err), SCV_ERANGE);
        CHECK_MSG(strstr(err.msg, "a run directory's path of 1099 bytes (1 to 1023)"), "%s: %s", d->name, err.msg);
        scv_job_driver_free(d);
    }
}

/* Runs fn in a child with stderr into a pipe; its stderr into buf, its wait status returned. */
static int in_child(void (*fn)(void), char *buf, size_t cap)
{
    int fd[2];
    if (pipe(fd)) return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 2);
        close(fd[0]);
        fn();
        _exit(0);
    }
    close(fd[1]);
    size_t len = 0;
    ssize_t n;
    while (len + 1 < cap && (n = read(fd[0], buf + len, cap - 1 - len)) > 0) len += (size_t)n;
    buf[len] = 0;
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return st;
}

static void broken(void)
{
    volatile int two = 2;
    SCV_ASSERT(two == 3);
}
static void holds(void)
{
    volatile int two = 2;
    SCV_ASSERT(two == 2);
}

/* "FILE:LINE: FUNCTION: invariant failed: EXPR" and SIGABRT; a holding one is silent */
static void expect_abort(void (*fn)(void), const char *func, const char *expr)
{
    char msg[512], want[256];
    int st = in_child(fn, msg, sizeof msg);
    CHECK_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "%s: status %d, stderr: %s", func, st, msg);
    const char *at = strstr(msg, ".c:");
    snprintf(want, sizeof want, ": %s: invariant failed: %s\n", func, expr);
    char *end = NULL;
    long line = at ? strtol(at + 3, &end, 10) : 0;
    CHECK_MSG(at && line > 0 && end && !strcmp(end, want), "%s: stderr '%s', want FILE.c:LINE%s", func, msg, want);
}

static void t_assert(void)
{
    expect_abort(broken, "broken", "two == 3");
    char msg[64];
    int st = in_child(holds, msg, sizeof msg);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 && msg[0] == 0);
}

/* scv_split_batch's invariants (its callers check K and the weights where they read them):
 * before, K = 0 handed the batch to a rank that is not there, weights summing to 0 split by
 * NaN, and a K over SCV_MAX_WORKERS silently left ranks out of the remainders */
static void split_k0(void)
{
    int64_t c[4], o[4];
    scv_split_batch(10, 0, NULL, c, o);
}
static void split_zero_weights(void)
{
    int64_t c[2], o[2];
    double w[2] = {0, 0};
    scv_split_batch(10, 2, w, c, o);
}
static void split_too_many(void)
{
    static int64_t c[SCV_MAX_WORKERS + 1], o[SCV_MAX_WORKERS + 1];
    scv_split_batch(10, SCV_MAX_WORKERS + 1, NULL, c, o);
}

static void t_split_invariants(void)
{
    expect_abort(split_k0, "scv_split_batch", "K >= 1 && K <= SCV_MAX_WORKERS && B >= 0");
    expect_abort(split_too_many, "scv_split_batch", "K >= 1 && K <= SCV_MAX_WORKERS && B >= 0");
    expect_abort(split_zero_weights, "scv_split_batch", "wsum > 0 && isfinite(wsum)");
}

static const scv_test tests[] = {
    {"run_paths", t_run_paths},
    {"driver_long_run_dir", t_driver_long_run_dir},
    {"assert", t_assert},
    {"split_invariants", t_split_invariants},
};

int main(int argc, char **argv) { return scv_test_main(tests, sizeof tests / sizeof tests[0], argc, argv); }
