/*
 * test_procs.c - a job's processes (src/runtime/procs.c, launch.c; issue 38 items 4 and
 * 17): the launch's tag finds exactly its own processes; scv_launch_mpirun, told to stop,
 * ends a job whose ranks ignore the stop and SIGTERM within its policy's bound (it waited
 * forever), and leaves no rank mpirun abandoned (one in a session of its own outlived
 * mpirun). The ranks are copies of sleep under the test's directory, found by that path.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "scv_test.h"
#include "../src/runtime/launch.h"
#include "../src/runtime/procs.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char tmp[256], sleeper[300];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Up to cap live processes whose command line starts with the sleeper's path and arg. */
static int sleepers(const char *arg, pid_t *pids, int cap)
{
    char cmd[700], line[64];
    snprintf(cmd, sizeof cmd, "pgrep -f -- '^%s %s'", sleeper, arg);
    FILE *p = popen(cmd, "r");
    int n = 0;
    while (p && fgets(line, sizeof line, p))
        if (n < cap) pids[n++] = (pid_t)atol(line);
    if (p) pclose(p);
    return n;
}

static int count_sleepers(const char *arg)
{
    pid_t pids[64];
    return sleepers(arg, pids, 64);
}

/* Waits up to ms for count_sleepers(arg) to reach want (or more; want 0: none); returns it. */
static int wait_sleepers(const char *arg, int want, int ms)
{
    int n = 0;
    for (int t = 0; t <= ms; t += 50) {
        n = count_sleepers(arg);
        if (want ? n >= want : n == 0) break;
        nap_ms(50);
    }
    return n;
}

/* Kills what a test left of its sleepers (each by its pid). */
static void reap_sleepers(void)
{
    pid_t pids[64];
    int n = sleepers("", pids, 64);
    for (int i = 0; i < n; i++) kill(pids[i], SIGKILL);
}

/* The tag SCV_JOB_<launcher>=<child> matches that child's value only, not a longer one. */
static void t_tag_exact(void)
{
    char cmd[1200];
    pid_t me = getpid();
    snprintf(cmd, sizeof cmd, "env SCV_JOB_%ld=12345 %s 41 & env SCV_JOB_%ld=123456 %s 41 & "
             "env SCV_JOB_%ld=1234 %s 41 &", (long)me, sleeper, (long)me, sleeper, (long)me, sleeper);
    CHECK(system(cmd) == 0);
    CHECK_EQ_INT(wait_sleepers("41", 3, 5000), 3);
    pid_t found[8];
    int n = scv_proc_tagged(me, 12345, found, 8);
    CHECK_EQ_INT(n, 1);
    char what[300] = "";
    if (n == 1) scv_proc_describe(found[0], what, sizeof what);
    CHECK_MSG(strstr(what, "lingers 41`") != NULL, "%s", what);
    CHECK_EQ_INT(scv_proc_tagged(me, 999, found, 8), 0);
    reap_sleepers();
}

/* scv_launch_mpirun in a child of the test, which gets SIGTERM once the ranks run; returns
 * the child's pid (its exit: scv_launch_mpirun's exit status, 100 + its code on an error). */
static pid_t launch_child(const char *script, const scv_launch_policy *pol)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        char *argv[] = {"-c", (char *)script, NULL};
        scv_launch l = {.workers = 2, .threads = 1, .program = "/bin/sh", .argv = argv, .argc = 2, .policy = pol};
        int st = 0;
        scv_err err = {0};
        int rc = scv_launch_mpirun(&l, &st, &err);
        if (rc) fprintf(stderr, "launch: %s\n", err.msg);
        _exit(rc ? 100 + rc : st & 0x7f);
    }
    return pid;
}

/* Waits up to s seconds for pid; its status (-1: still running, then killed). */
static int wait_child(pid_t pid, double s)
{
    int st;
    for (double t0 = now_s(); now_s() - t0 < s; nap_ms(20))
        if (waitpid(pid, &st, WNOHANG) == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

/* Issue 38 item 17: the stop is bounded. Ranks that ignore SIGUSR1 and SIGTERM (a stop that
 * never comes: a rank slow to its checkpoint under load, or one blocked in a collective)
 * are ended stop_grace_s + term_grace_s after the SIGTERM, and the launcher returns only
 * once none is left. Before, it waited for mpirun without a bound. */
static void t_stop_bounded(void)
{
    char script[700];
    snprintf(script, sizeof script, "trap '' USR1 TERM; exec %s 42", sleeper);
    scv_launch_policy pol = {.stop_grace_s = 0.5, .term_grace_s = 0.5};
    pid_t pid = launch_child(script, &pol);
    int n = wait_sleepers("42", 2, 30000);
    CHECK_MSG(n == 2, "%d ranks started", n);
    nap_ms(200);
    double t0 = now_s();
    kill(pid, SIGTERM);
    int st = wait_child(pid, 15);
    double s = now_s() - t0;
    CHECK_MSG(st >= 0 && st < 100 && s < 8, "launcher: status %d after %.2f s", st, s);
    n = count_sleepers("42");
    CHECK_MSG(n == 0, "%d ranks left when the launcher returned", n);
    reap_sleepers();
}

/* A rank that leaves a process in a session of its own (its output closed: mpirun does not
 * wait for it) and exits: once mpirun has exited, the launcher ends it (by the launch's
 * tag) before it returns. */
static void t_abandoned(void)
{
    char script[700];
    snprintf(script, sizeof script, "setsid %s 43 </dev/null >/dev/null 2>&1 & exit 0", sleeper);
    pid_t pid = launch_child(script, NULL);
    int st = wait_child(pid, 30);
    CHECK_EQ_INT(st, 0);
    int n = count_sleepers("43");
    CHECK_MSG(n == 0, "%d processes left when the launcher returned", n);
    reap_sleepers();
}

/* Open MPI's words of a failed launch, as they appeared before its hangs and exits; a
 * warning or a trainer's own line is none. */
static void t_error_lines(void)
{
    const char *fail[] = {
        "[vm:29851] [[6245,0],0] ORTE_ERROR_LOG: The system limit on number of pipes a process can open was reached",
        "[vm:14935] *** Process received signal ***", "mpirun: abort is already in progress...hit ctrl-c again",
        "There are not enough slots available in the system to satisfy the 4 slots",
        "mpirun was unable to launch the specified application as it could not access"};
    const char *fine[] = {"WARNING: There was an error initializing an OpenFabrics device.",
                          "epoch 1 loss 0.3", "Traceback (most recent call last):", ""};
    for (size_t i = 0; i < sizeof fail / sizeof fail[0]; i++) CHECK_MSG(scv_launch_error_line(fail[i]), "%s", fail[i]);
    for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) CHECK_MSG(!scv_launch_error_line(fine[i]), "%s", fine[i]);
}

static const scv_test tests[] = {
    {"tag_exact", t_tag_exact},
    {"stop_bounded", t_stop_bounded},
    {"abandoned", t_abandoned},
    {"error_lines", t_error_lines},
};

int main(int argc, char **argv)
{
    snprintf(tmp, sizeof tmp, "/tmp/scv-test-procs-XXXXXX");
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(sleeper, sizeof sleeper, "%s/lingers", tmp);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "cp /bin/sleep %s", sleeper);
    if (system(cmd) != 0) return 1;
    int rc = scv_test_main(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
    reap_sleepers();
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (rc == 0 && system(cmd) != 0) rc = 1;
    return rc;
}
