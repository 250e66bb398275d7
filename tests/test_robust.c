/*
 * test_robust.c - reliability findings of an adversarial review, end to end through the
 * command line ($SCV_BIN, default build/scavenger): no child outlives a killed `run` or
 * `train --workers 2`; names with quotes and markup stay valid JSON and inert SVG; a huge
 * sweep space is refused; no default database under /tmp without HOME.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "scv_test.h"
#include "scv_test_proc.h"
#include "../src/store/store.h"

#include <cjson/cJSON.h>

#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *bin;
static char tmp[256];

static void pause_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int file_has(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strstr(buf, needle) != NULL;
}

/* The pids of processes whose command line contains pattern (pgrep -f); returns how many. */
static int procs(const char *pattern, pid_t *pids, int cap)
{
    char cmd[1024], line[64];
    /* "[/]tmp/..." matches the path but not this shell's own command line */
    snprintf(cmd, sizeof cmd, "pgrep -f -- '[%c]%s'", pattern[0], pattern + 1);
    FILE *p = popen(cmd, "r");
    int n = 0;
    while (p && fgets(line, sizeof line, p))
        if (n < cap) pids[n++] = (pid_t)atol(line);
    if (p) pclose(p);
    return n;
}

/* Waits up to ms for the processes matching pattern to reach at least (want > 0) or to
 * drop to zero (want == 0); returns how many there are at the end. */
static int wait_procs(const char *pattern, int want, int ms)
{
    pid_t pids[64];
    int n = 0;
    for (int t = 0; t <= ms; t += 100) {
        n = procs(pattern, pids, 64);
        if (want ? n >= want : n == 0) break;
        pause_ms(100);
    }
    return n;
}

/* Kills what is left of a job that the test started (by pid, each one found). */
static void reap(const char *pattern)
{
    pid_t pids[64];
    int n = procs(pattern, pids, 64);
    for (int i = 0; i < n; i++) kill(pids[i], SIGKILL);
}

/* Once the job whose command lines name pat has its 4 processes (a train, its mpirun, two
 * ranks), sends sig to pid alone and checks that none of them remains. */
static void kill_and_check(pid_t pid, const char *pat, int sig)
{
    int n = wait_procs(pat, 4, 60000);
    CHECK_MSG(n >= 4, "signal %d: %d processes of the job before the kill", sig, n);
    pause_ms(500);
    kill(pid, sig);
    int st = 0;
    waitpid(pid, &st, 0);
    n = wait_procs(pat, 0, 20000);
    CHECK_MSG(n == 0, "signal %d: %d processes of the job remain", sig, n);
    reap(pat);
}

/* SIGTERM or SIGKILL of `scavenger run` (the top process only, not its group): its
 * `scavenger train`, that one's mpirun and the ranks all end. */
static void t_kill_run(void)
{
    const int sigs[2] = {SIGTERM, SIGKILL};
    for (int i = 0; i < 2; i++) {
        char db[400], pat[420], cmd[2048];
        snprintf(db, sizeof db, "%s/kill%d.db", tmp, i);
        snprintf(pat, sizeof pat, "%s.runs/", db);
        snprintf(cmd, sizeof cmd,
                 "exec %s run --db %s --model lenet --dataset synthetic:20000 --lr 0.01 "
                 "--target-accuracy 0.9999 --max-epochs 50 --workers 2 --batch 64 --eval-subset 0 "
                 "--eval-every-epochs 0.005 >%s.log 2>&1",
                 bin, db, db);
        pid_t pid = spawn_group(cmd);
        /* in the training phase (a long segment, slowed by frequent whole-set evaluations:
         * without the fix it runs on for about a minute), the child train, its mpirun and
         * two ranks */
        char log[420];
        snprintf(log, sizeof log, "%s.log", db);
        for (int t = 0; t < 1200 && !file_has(log, "chosen:"); t++) pause_ms(100);
        CHECK_MSG(file_has(log, "chosen:"), "signal %d: no training phase", sigs[i]);
        kill_and_check(pid, pat, sigs[i]);
    }
}

/* SIGTERM of `scavenger train --workers 2` alone: mpirun and the ranks end too. */
static void t_term_train(void)
{
    const int sigs[2] = {SIGTERM, SIGKILL};
    for (int i = 0; i < 2; i++) {
        char dir[400], cmd[2048];
        snprintf(dir, sizeof dir, "%s/ktrain%d", tmp, i);
        snprintf(cmd, sizeof cmd,
                 "exec %s train --model lenet --dataset synthetic:20000 --workers 2 --batch 64 "
                 "--epochs 50 --checkpoint %s --progress never >%s.log 2>&1", bin, dir, dir);
        kill_and_check(spawn_group(cmd), dir, sigs[i]);
    }
}

/* Issue 38 item 4: the processes an external trainer leaves running (a logging daemon: a
 * background child, a double-forked one, one in a session of its own that ignores SIGTERM
 * and SIGUSR1) neither hold its segment (they kept Open MPI's output pipes of the rank open,
 * and mpirun waited for them: "the trainer does not start" after the start-up timeout, the
 * retries spent) nor outlive it: each is ended when the trainer exits and named. Copies of
 * sleep under tmp make them findable by path. */
static void t_exec_leftovers(void)
{
    char out[32768], cmd[4096], pat[400];
    snprintf(pat, sizeof pat, "%s/lingers", tmp);
    CHECK(run(out, sizeof out, "cp /bin/sleep %s", pat) == 0);
    /* the guard itself: exits as its program did, and ends and names what it left */
    double t0 = mono_s();
    int rc = run(out, sizeof out, "%s rank-guard --report %s/guard.log -- /bin/sh -c \"%s 1001 & (%s 1003 &); "
                 "setsid sh -c 'trap \\\"\\\" TERM USR1; exec %s 1002' & exit 3\"", bin, tmp, pat, pat, pat);
    double s = mono_s() - t0;
    CHECK_MSG(rc == 3 && s < 4.5, "exit %d after %.2f s: %s", rc, s, out);
    CHECK_MSG(wait_procs(pat, 0, 500) == 0, "%d processes left by the guard", wait_procs(pat, 0, 0));
    snprintf(cmd, sizeof cmd, "%s/guard.log", tmp);
    CHECK_MSG(file_has(cmd, "lingers 1001`") && file_has(cmd, "lingers 1003`") &&
                  file_has(cmd, "lingers 1002` (SIGKILL)") && file_has(cmd, "outlived the trainer"), "%s", out);
    reap(pat);
    /* a run whose trainer starts them: it reaches its target, in seconds, and names them */
    t0 = mono_s();
    rc = run(out, sizeof out, "%s run --db %s/left.db --exec \"%s 1001 & (%s 1003 &); setsid sh -c 'trap \\\"\\\" "
             "TERM USR1; exec %s 1002' & exec /usr/bin/python3 tests/fake_trainer.py\" --workers 2 --batch 64 "
             "--target-accuracy 0.6 --max-epochs 2 --stall-timeout 20", bin, tmp, pat, pat, pat);
    s = mono_s() - t0;
    CHECK_MSG(rc == 0 && strstr(out, "target reached") && s < 20, "exit %d after %.1f s: %s", rc, s, out);
    CHECK_MSG(strstr(out, "the start-up probe: the trainer left processes running: worker 0:") &&
                  strstr(out, "lingers 1002` (SIGKILL)"), "%s", out);
    int n = wait_procs(pat, 0, 1000);
    CHECK_MSG(n == 0, "%d processes of the trainer left after the run", n);
    reap(pat);
}

/* How many live processes have a command line that starts with prefix. */
static int count_prefix(const char *prefix)
{
    char cmd[700], line[64];
    snprintf(cmd, sizeof cmd, "pgrep -f -- '^%s'", prefix);
    FILE *p = popen(cmd, "r");
    int n = 0;
    while (p && fgets(line, sizeof line, p)) n++;
    if (p) pclose(p);
    return n;
}

/* Two rank guards ended as Open MPI's mpirun ends a job: SIGTERM to each rank's process
 * group, then SIGKILL to them a second later, or at once when a rank exits meanwhile (the
 * sleep between the two is cut short by the SIGCHLD). Rank 1's guard had nothing left to end
 * and exited at once; rank 0's trainer left a process in a session of its own that ignores
 * SIGTERM, which only its guard can end, 0.4 s after the SIGTERM: mpirun's SIGKILL took the
 * guard first and the process outlived the run (found when the suite ran its binaries side by
 * side: faults.sh "leftovers KILL" at K=2). A guard being ended now waits for mpirun's SIGKILL
 * instead of exiting, so no rank's exit cuts the others' time short. */
static void t_guard_ended_together(void)
{
    char out[4096], pat[400], cmd[2048];
    snprintf(pat, sizeof pat, "%s/outside", tmp);
    CHECK(run(out, sizeof out, "cp /bin/sleep %s", pat) == 0);
    pid_t g[2];
    snprintf(cmd, sizeof cmd,
             "exec %s rank-guard -- /bin/sh -c \"setsid sh -c 'trap \\\"\\\" TERM; exec %s 2002' & "
             "exec sleep 30\" 2>%s/guard0.log",
             bin, pat, tmp);
    g[0] = spawn_group(cmd);
    snprintf(cmd, sizeof cmd, "exec %s rank-guard -- /bin/sh -c 'exec sleep 30' 2>%s/guard1.log", bin, tmp);
    g[1] = spawn_group(cmd);
    char outside[500];
    snprintf(outside, sizeof outside, "%s 2002", pat);
    for (int i = 0; i < 200 && count_prefix(outside) < 1; i++) pause_ms(50);
    CHECK_EQ_INT(count_prefix(outside), 1);
    pause_ms(300); /* the guards in their wait for the trainer */
    kill(-g[0], SIGTERM), kill(-g[1], SIGTERM);
    double t0 = mono_s(), exited = -1;
    int st;
    while (exited < 0 && mono_s() - t0 < 1.0) { /* mpirun's second: until a rank exits */
        pid_t w = waitpid(-1, &st, WNOHANG);
        if (w == g[0] || w == g[1]) exited = mono_s() - t0, g[w == g[0] ? 0 : 1] = 0;
        else pause_ms(5);
    }
    for (int r = 0; r < 2; r++)
        if (g[r] > 0) kill(-g[r], SIGKILL);
    for (int r = 0; r < 2; r++)
        if (g[r] > 0) waitpid(g[r], &st, 0);
    int n = 0;
    for (int i = 0; i < 20 && (n = count_prefix(outside)) > 0; i++) pause_ms(50);
    CHECK_MSG(n == 0,
              "the process outside rank 0's group outlived its guard (a guard exited %.2f s after SIGTERM, "
              "and the SIGKILL followed)",
              exited);
    if (n) run(out, sizeof out, "pkill -9 -f -- '^%s'", outside);
}

/* A catalog VM type named with a quote and markup: plan --json stays valid JSON (parsed
 * back with cJSON, the name intact) and the SVG carries it escaped, never a raw <script>. */
static void t_escape_plan(void)
{
    char out[65536], m1[512], m2[512], svg[512], cat[512], line[8192];
#define EJOB "--model mlp --hidden 32 --dataset synthetic:2000 --seed 3 --progress never"
    snprintf(m1, sizeof m1, "%s/e1.jsonl", tmp);
    snprintf(m2, sizeof m2, "%s/e2.jsonl", tmp);
    snprintf(svg, sizeof svg, "%s/e.svg", tmp);
    snprintf(cat, sizeof cat, "%s/cat.csv", tmp);
    /* the catalog: the header, c5.xlarge, and a cheaper copy of it with the evil name */
    FILE *in = fopen("data/vm-catalog.csv", "r"), *o = fopen(cat, "w");
    CHECK(in && o);
    if (!in || !o) return;
    for (int i = 0; i < 2 && fgets(line, sizeof line, in); i++) {
        fputs(line, o);
        if (i == 1) {
            /* us-east-1,4,8,,0,,PRICE,...: cheaper, so that it is on the front and drawn */
            const char *rest = strstr(line, "c5.xlarge,") + strlen("c5.xlarge,"), *p = rest;
            for (int c = 0; c < 6 && p; c++) p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
            CHECK(p != NULL);
            if (p) fprintf(o, "aws,ev\"il<script>alert(1)</script>,%.*s0.05%s", (int)(p - rest), rest, strchr(p, ','));
        }
    }
    fclose(in);
    fclose(o);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " EJOB " --batch 32 --iterations 40 --metrics %s --vm-type c5.xlarge", bin, m1), 0);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " EJOB " --workers 2 --batch 128 --iterations 40 --metrics %s --vm-type c5.xlarge", bin, m2), 0);
    CHECK_EQ_INT(run(out, sizeof out, "{ %s plan --profile %s,%s --target-epochs 5 --base-batch 32 --workers 1..8 "
                     "--batch 32..512 --catalog %s --vm 'c5.xlarge,ev\"il<script>alert(1)</script>' --svg %s "
                     "--json --all 2>/dev/null; }", bin, m1, m2, cat, svg), 0);
    cJSON *j = cJSON_Parse(out);
    CHECK_MSG(j != NULL, "plan --json is not JSON: %.400s", out);
    int evil = 0;
    const cJSON *pts = cJSON_GetObjectItemCaseSensitive(j, "points"), *pt;
    cJSON_ArrayForEach(pt, pts)
    {
        const cJSON *vm = cJSON_GetObjectItemCaseSensitive(pt, "vm");
        evil += cJSON_IsString(vm) && !strcmp(vm->valuestring, "ev\"il<script>alert(1)</script>");
    }
    CHECK_MSG(evil > 0, "no point names the VM type intact");
    cJSON_Delete(j);
    FILE *f = fopen(svg, "r");
    CHECK(f != NULL);
    size_t n = f ? fread(out, 1, sizeof out - 1, f) : 0;
    if (f) fclose(f);
    out[n] = 0;
    CHECK(n > 0 && strstr(out, "<svg") != NULL);
    CHECK_MSG(strstr(out, "<script") == NULL, "raw <script in the SVG");
    CHECK(strstr(out, "ev&quot;il&lt;script&gt;") != NULL);
}

/* A space of more (K, B) pairs than a sweep trains is refused before any allocation. */
static void t_sweep_cap(void)
{
    char out[8192];
    CHECK_EQ_INT(run(out, sizeof out, "%s sweep --workers 1..1024 --batch 1..16777216 --target-accuracy 0.5 "
                     "--out %s/sw --vm-type c5.xlarge", bin, tmp), 2);
    CHECK_MSG(strstr(out, "a sweep trains at most") != NULL, "%s", out);
}

/* Without HOME and XDG_DATA_HOME there is no default database (not /tmp): a clear error. */
static void t_no_home(void)
{
    char out[8192];
    CHECK_EQ_INT(run(out, sizeof out, "env -u HOME -u XDG_DATA_HOME %s runs", bin), 1);
    CHECK_MSG(strstr(out, "give --db PATH") != NULL, "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "env -u HOME XDG_DATA_HOME=relative %s runs", bin), 1);
    /* the default store is XDG_DATA_HOME/scavenger/scavenger.db: a run stored there is listed
     * (`runs` opens it read-only and creates nothing: a store made there first) */
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "%s/xdg/scavenger", tmp);
    snprintf(path, sizeof path, "%s/scavenger.db", dir);
    CHECK_EQ_INT(run(out, sizeof out, "mkdir -p %s", dir), 0);
    scv_store *s = NULL;
    long long id = 0;
    CHECK_EQ_INT(scv_store_open(path, &s, NULL), SCV_OK);
    if (s) CHECK_EQ_INT(scv_store_run_new(s, "job-xdg-default", "{}", &id, NULL), SCV_OK);
    scv_store_close(s);
    CHECK_EQ_INT(run(out, sizeof out, "env -u HOME XDG_DATA_HOME=%s/xdg %s runs", tmp, bin), 0);
    CHECK_MSG(strstr(out, "job-xdg-default") != NULL, "%s", out);
}

/* No fixed, predictable name under /tmp in the sources: temporary files come from
 * mkstemp/mkdtemp templates ("...XXXXXX"). */
static void t_no_fixed_tmp(void)
{
    char out[16384];
    run(out, sizeof out, "grep -rn '\"/tmp/' src | grep -v XXXXXX");
    CHECK_MSG(out[0] == 0, "fixed /tmp names: %s", out);
}

static const scv_test tests[] = {
    {"kill_run", t_kill_run},
    {"term_train", t_term_train},
    {"escape_plan", t_escape_plan},
    {"sweep_cap", t_sweep_cap},
    {"no_home", t_no_home},
    {"no_fixed_tmp", t_no_fixed_tmp},
    {"exec_leftovers", t_exec_leftovers},
    {"guard_ended_together", t_guard_ended_together},
};

int main(int argc, char **argv)
{
    bin = getenv("SCV_BIN") ? getenv("SCV_BIN") : "build/scavenger";
    snprintf(tmp, sizeof tmp, "/tmp/scv-test-robust-XXXXXX");
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
