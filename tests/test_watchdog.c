/*
 * test_watchdog.c - the drivers' watchdog and a stop (src/drivers/trainjob.c, child.c,
 * elastic.c; issue 24 items 7 and 9, as reviewed): a job asked to stop (SIGINT/SIGTERM to
 * the coordinator, passed on) is writing its checkpoint and is not ended by the watchdog,
 * however quiet its metrics; and the elastic job's start reports the status its job exited
 * with. The jobs are shell scripts standing in for `scavenger train` (the drivers' `exe`):
 * the probe writes a job line, the elastic job answers on its control files.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "scv_test.h"
#include "../src/drivers/child.h"
#include "../src/drivers/trainjob.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char tmp[256];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* the relaunch driver's wait (scv_run_self_err with tj_watch_tick): the first tick sends
 * this process SIGTERM, as `kill PID` of `scavenger run` does */
static int term_sent;
static void tick_term_first(void *ctx)
{
    if (term_sent++ == 0) kill(getpid(), SIGTERM);
    tj_watch_tick(ctx);
}

static void t_relaunch_stop(void)
{
    for (int stop = 0; stop < 2; stop++) {
        trainjob t;
        memset(&t, 0, sizeof t);
        t.wd = (tj_watchdog)TJ_WATCHDOG_DEFAULT;
        t.wd.startup_s = t.wd.stall_min_s = 0.3;
        scv_segment_result res;
        memset(&res, 0, sizeof res);
        char path[400];
        snprintf(path, sizeof path, "%s/quiet.jsonl", tmp); /* never written: no line */
        tj_tail_start(&t, path, NULL, &res);
        /* the child ignores SIGTERM (a trainer saving its checkpoint) and is quiet for 1.2 s */
        char *argv[] = {"sh", "-c", "trap '' TERM; sleep 1.2; echo '{\"saved\":1}'", NULL};
        char json[256], why[256];
        int st = -1, intr = 0;
        scv_err err = {0};
        term_sent = stop ? 0 : 1;
        double t0 = now_s();
        CHECK_EQ_INT(scv_run_self_err("/bin/sh", argv, json, sizeof json, why, sizeof why, &st, &intr,
                                      tick_term_first, &t, 100, &err), SCV_OK);
        double s = now_s() - t0;
        tj_tail_stop(&t);
        if (stop) { /* stopping: left to finish, its summary read */
            CHECK_MSG(intr == 1 && st == 0 && t.wd_fired == 0 && strstr(json, "saved"),
                      "intr %d, status %d, watchdog %s, json '%s' after %.2f s", intr, st,
                      t.wd_fired ? t.wd_why : "quiet", json, s);
        } else { /* not stopping: the watchdog ends the quiet child (the test's control) */
            CHECK_MSG(intr == 0 && st == 128 + SIGKILL && t.wd_fired != 0 && s < 1.1,
                      "intr %d, status %d, watchdog %s after %.2f s", intr, st, t.wd_fired ? "fired" : "quiet", s);
        }
    }
}

/* A stand-in for `scavenger train`: the probe (no --elastic-control) writes a job line; the
 * elastic job acts by FAKE_ELASTIC: "stop" is ready, sends the coordinator SIGTERM, stays
 * quiet 1.5 s (saving), then answers interrupted; "exit2" stops the coordinator, exits 2
 * (a usage error) and has it continued 0.3 s later, so that the coordinator first looks
 * after the start-up timeout and after the exit. */
static const char *write_fake(void)
{
    static char path[400];
    snprintf(path, sizeof path, "%s/fake-scavenger", tmp);
    FILE *f = fopen(path, "w");
    if (!f) return path;
    fprintf(f,
            "#!/bin/sh\n"
            "metrics= ctl=\n"
            "while [ $# -gt 0 ]; do\n"
            "  case \"$1\" in --metrics) metrics=$2; shift ;; --elastic-control) ctl=$2; shift ;; esac\n"
            "  shift\n"
            "done\n"
            "if [ -z \"$ctl\" ]; then\n"
            "  echo '{\"type\":\"job\",\"model\":\"mlp\",\"arch\":\"mlp\",\"params\":10,\"act_bytes\":0,"
            "\"input_floats\":4,\"n_train\":640,\"vm\":\"c5.xlarge\",\"threads\":1}' > \"$metrics\"\n"
            "  echo '{}'; exit 0\n"
            "fi\n"
            "case \"$FAKE_ELASTIC\" in\n"
            "exit2) (sleep 0.3; kill -CONT $PPID) & kill -STOP $PPID; exit 2 ;;\n"
            "stop) trap 'echo asked >> \"$ctl/seen\"' TERM INT\n"
            "  echo '{\"type\":\"ready\"}' >> \"$ctl/reply\"\n"
            "  sleep 0.2; kill -TERM $PPID; sleep 1.5\n"
            "  echo saved >> \"$ctl/seen\"\n"
            "  echo '{\"type\":\"segment\",\"rc\":%d,\"error\":\"interrupted\"}' >> \"$ctl/reply\"; exit 130 ;;\n"
            "esac\n"
            "exit 1\n",
            SCV_EINTR);
    fclose(f);
    chmod(path, 0755);
    return path;
}

static int elastic_segment(const char *mode, double stall_s, const char *run, scv_err *err)
{
    setenv("FAKE_ELASTIC", mode, 1);
    scv_relaunch_opts o = {.exe = write_fake(), .vm_type = "c5.xlarge", .stall_timeout_s = stall_s};
    scv_job_driver *d = NULL;
    int rc = scv_elastic_driver_new(&o, &d, err);
    if (rc) return rc;
    char dir[400];
    snprintf(dir, sizeof dir, "%s/%s", tmp, run);
    mkdir(dir, 0755);
    scv_job_info job;
    if ((rc = d->open(d->ctx, dir, &job, err)) == SCV_OK && (rc = d->configure(d->ctx, 2, 64, NULL, err)) == SCV_OK) {
        scv_segment_spec spec = {.phase = "train", .until_iterations = 100};
        scv_segment_result res;
        rc = d->train(d->ctx, &spec, NULL, &res, err);
    }
    d->destroy(d->ctx);
    return rc;
}

static void t_elastic_stop(void)
{
    scv_err err = {0};
    double t0 = now_s();
    int rc = elastic_segment("stop", 0.5, "stop", &err);
    double s = now_s() - t0;
    char path[400], seen[256] = "";
    snprintf(path, sizeof path, "%s/stop/elastic/seen", tmp);
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(seen, 1, sizeof seen - 1, f);
        seen[n] = 0;
        fclose(f);
    }
    CHECK_MSG(rc == SCV_EINTR, "%s: %s", scv_errname(rc), err.msg);
    /* the job was left to save and answer: not ended by the watchdog's 0.5 s */
    CHECK_MSG(strstr(seen, "saved"), "the job was ended before it saved (seen: '%s', %.2f s): %s", seen, s, err.msg);
    CHECK_MSG(s < 10, "took %.2f s", s);
}

static void t_elastic_start_status(void)
{
    scv_err err = {0};
    int rc = elastic_segment("exit2", 0.1, "exit2", &err);
    CHECK_MSG(rc == SCV_EINVAL && strstr(err.msg, "scavenger train exited 2"), "%s: %s", scv_errname(rc), err.msg);
}

static const scv_test tests[] = {
    {"relaunch_stop", t_relaunch_stop},
    {"elastic_stop", t_elastic_stop},
    {"elastic_start_status", t_elastic_start_status},
};

int main(int argc, char **argv)
{
    snprintf(tmp, sizeof tmp, "/tmp/scv-test-watchdog-%ld", (long)getpid());
    mkdir(tmp, 0755);
    int rc = scv_test_main(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (rc == 0 && system(cmd) != 0) rc = 1;
    return rc;
}
