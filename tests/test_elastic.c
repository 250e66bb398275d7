/*
 * test_elastic.c - the trainer's elastic mode (`train --elastic-control DIR`), driven
 * through its command file as the elastic job driver drives it, against the same sequence
 * of configurations done through checkpoint-restart (one `train --resume` per segment):
 *   - K = 1 -> 2 -> 4 -> 2 with B changing in place ends with the same parameters,
 *     optimiser state and data position (every sample seen once per epoch: the position is
 *     the relaunched one's), bit for bit: the same samples in the same order, split the
 *     same way, summed by the same collectives;
 *   - a grow spawns processes (the job had fewer) and a later grow reuses parked ones;
 *   - a bad command is refused with a reply and the job goes on; a stop ends every process;
 *   - a preemption notice shrinks the job in place and a restore grows it back, within a
 *     segment, with an uninterrupted run's position and parameters (within 1e-5);
 *   - a kill without notice, through the elastic driver: the samples lost are stated and
 *     the retry resumes from the checkpoint, none counted twice.
 * Local processes (mpirun --oversubscribe); the emulated cluster is covered by the bench.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "scv_test.h"
#include "train/ckpt.h"

#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define JOB "--model mlp --hidden 32 --dataset synthetic:3000 --seed 5 --lr 0.05 --progress never"

static char tmp[256];

/* the configuration sequence: K, B, iterations in all after the segment */
static const int SEQ[][3] = {{1, 64, 40}, {2, 128, 80}, {4, 96, 130}, {2, 64, 170}};
#define NSEQ ((int)(sizeof SEQ / sizeof SEQ[0]))

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void append(const char *path, const char *line)
{
    FILE *f = fopen(path, "a");
    CHECK(f != NULL);
    if (!f) return;
    fprintf(f, "%s\n", line);
    fclose(f);
}

/* Lines of path that contain needle (0 when unreadable). */
static int count_lines(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    char line[8192];
    int n = 0;
    while (f && fgets(line, sizeof line, f)) n += strstr(line, needle) != NULL;
    if (f) fclose(f);
    return n;
}

/* Lines of path that contain both a and b (0 when unreadable). */
static int count_lines_both(const char *path, const char *a, const char *b)
{
    FILE *f = fopen(path, "r");
    char line[8192];
    int n = 0;
    while (f && fgets(line, sizeof line, f)) n += strstr(line, a) && strstr(line, b);
    if (f) fclose(f);
    return n;
}

/* Waits until path holds n lines with needle (at most 60 s). */
static int wait_lines(const char *path, const char *needle, int n)
{
    struct timespec ts = {0, 20000000L};
    for (int i = 0; i < 3000; i++) {
        if (count_lines(path, needle) >= n) return 1;
        nanosleep(&ts, NULL);
    }
    return 0;
}

static int load(const char *dir, scv_ckpt_state *st, float **p, float **m, size_t *n)
{
    scv_err err = {0};
    int rc = scv_ckpt_load(dir, st, p, m, n, &err);
    CHECK_MSG(rc == SCV_OK, "%s", err.msg);
    return rc;
}

/* An elastic job (`train --elastic-control`) of K workers with its control files in
 * tmp/NAME (cmd, reply: out, 600 bytes each), its checkpoint in dir and its log in
 * tmp/NAME.log; returns once it is ready. */
static void start_elastic(const char *bin, const char *name, int K, const char *dir, char *cmdf, char *reply)
{
    char ctl[512];
    snprintf(ctl, sizeof ctl, "%s/%s", tmp, name);
    snprintf(cmdf, 600, "%s/cmd", ctl);
    snprintf(reply, 600, "%s/reply", ctl);
    mkdir(ctl, 0755);
    fclose(fopen(cmdf, "w"));
    fclose(fopen(reply, "w"));
    CHECK_EQ_INT(sh("%s train " JOB " --workers %d --batch 64 --elastic-control %s --checkpoint %s >%s.log 2>&1 &", bin, K,
                    ctl, dir, ctl), 0);
    CHECK_MSG(wait_lines(reply, "\"ready\"", 1), "the elastic job did not start (%s.log)", ctl);
}

/* Whether no process of the elastic job of tmp/NAME runs. */
static int job_gone(const char *name)
{
    return sh("pgrep -f -- '[-]-elastic-control %s/%s' >/dev/null", tmp, name) != 0; /* [-]: not this shell */
}

/* Stops the elastic job of tmp/NAME and waits (at most 30 s) for every process of it to end. */
static void stop_elastic(const char *name, const char *cmdf)
{
    append(cmdf, "{\"cmd\":\"stop\"}");
    struct timespec ts = {0, 50000000L};
    int gone = 0;
    for (int i = 0; i < 600 && !(gone = job_gone(name)); i++) nanosleep(&ts, NULL);
    CHECK_MSG(gone, "processes of the elastic job survived the stop");
}

/* Waits at most 10 s for process pid to end; whether it did. */
static int ended_within_10s(long pid)
{
    int ended = 0;
    for (int i = 0; i < 500 && !ended; i++) {
        ended = kill((pid_t)pid, 0) != 0;
        if (!ended) nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    return ended;
}

/* Nothing of the elastic job of tmp/NAME is left once its root ended (any process that is,
 * SIGKILLed after the check fails). */
static void check_nothing_left(const char *name)
{
    CHECK_MSG(job_gone(name), "processes of the job were left");
    sh("pkill -9 -f -- '[-]-elastic-control %s/%s'", tmp, name); /* none expected */
}

static void t_same_as_relaunch(void)
{
    const char *bin = getenv("SCV_BIN") ? getenv("SCV_BIN") : "build/scavenger";
    /* checkpoint-restart: one process group per segment */
    char rdir[512], edir[512], cmdf[600], reply[600];
    snprintf(rdir, sizeof rdir, "%s/relaunch", tmp);
    for (int i = 0; i < NSEQ; i++)
        CHECK_EQ_INT(sh("%s train " JOB " --workers %d --batch %d --iterations %d --checkpoint %s %s --no-final-eval "
                        ">/dev/null 2>&1", bin, SEQ[i][0], SEQ[i][1], SEQ[i][2], rdir, i ? "--resume" : ""),
                     0);
    /* elastic: one job, a command per segment */
    snprintf(edir, sizeof edir, "%s/elastic", tmp);
    start_elastic(bin, "ctl", 1, edir, cmdf, reply);
    append(cmdf, "{\"cmd\":\"segment\",\"workers\":2,\"batch\":0}"); /* a bad command: refused, the job goes on */
    CHECK(wait_lines(reply, "\"rc\":", 1));
    CHECK_MSG(count_lines(reply, "\"refused\":true") == 1 && count_lines(reply, "batch") == 1,
              "the refusal names the field");
    append(cmdf, "{\"cmd\":\"segment\",\"workers\":2,\"batch\":64,\"selsync_lssr\":1.5}"); /* not a share */
    CHECK(wait_lines(reply, "\"rc\":", 2));
    CHECK_MSG(count_lines(reply, "\"refused\":true") == 2 && count_lines(reply, "selsync_lssr") == 1,
              "the refusal names selsync_lssr");
    for (int i = 0; i < NSEQ; i++) {
        char line[512];
        snprintf(line, sizeof line,
                 "{\"cmd\":\"segment\",\"workers\":%d,\"batch\":%d,\"until_iterations\":%d,\"metrics\":\"%s/m%d.jsonl\"}",
                 SEQ[i][0], SEQ[i][1], SEQ[i][2], tmp, i);
        append(cmdf, line);
        CHECK_MSG(wait_lines(reply, "\"rc\":0", i + 1), "segment %d: no answer", i);
    }
    /* the K=2 -> 4 grow spawned two processes; back at 2 they are parked; 4 again reuses them */
    append(cmdf, "{\"cmd\":\"segment\",\"workers\":4,\"batch\":96,\"until_iterations\":175}");
    CHECK_MSG(wait_lines(reply, "\"rc\":0", NSEQ + 1), "the regrow did not answer");
    stop_elastic("ctl", cmdf);
    /* the relaunched sequence's state against the elastic one's after its 4th segment:
     * the elastic checkpoint now holds 175 iterations, so compare the 4th segment's (the
     * job checkpoints at every segment end: rerun the relaunch path to 175 as well) */
    CHECK_EQ_INT(sh("%s train " JOB " --workers 4 --batch 96 --iterations 175 --checkpoint %s --resume --no-final-eval "
                    ">/dev/null 2>&1", bin, rdir), 0);
    scv_ckpt_state a, b;
    float *pa = NULL, *ma = NULL, *pb = NULL, *mb = NULL;
    size_t na = 0, nb = 0;
    if (load(rdir, &a, &pa, &ma, &na) == SCV_OK && load(edir, &b, &pb, &mb, &nb) == SCV_OK) {
        CHECK_EQ_INT(a.iteration, 175);
        CHECK_EQ_INT(b.iteration, a.iteration);
        CHECK_EQ_INT(b.samples_seen, a.samples_seen);
        CHECK_EQ_INT(b.epoch, a.epoch);
        CHECK_EQ_INT(b.pos, a.pos);
        CHECK_EQ_INT((long long)nb, (long long)na);
        size_t diff = 0;
        for (size_t i = 0; i < na && i < nb; i++) diff += pa[i] != pb[i] || ma[i] != mb[i];
        CHECK_MSG(diff == 0, "%zu of %zu parameters or momenta differ", diff, na);
    }
    free(pa), free(ma), free(pb), free(mb);
    /* the resize times the job reported: a B change or a shrink is fast; grows include the spawn */
    CHECK(count_lines(reply, "\"resize_s\":") == NSEQ + 1);
}

/* Top-k in two consecutive segments of one elastic job: the second goes on with the first
 * one's exchange (its residual, the unsent gradient, is kept), so it starts compressed; the
 * first starts with the exchange's dense steps (20). */
static void t_exchange_carried(void)
{
    const char *bin = getenv("SCV_BIN") ? getenv("SCV_BIN") : "build/scavenger";
    char cmdf[600], reply[600], dir[512], m[2][600];
    snprintf(dir, sizeof dir, "%s/elasticx", tmp);
    start_elastic(bin, "ctlx", 2, dir, cmdf, reply);
    for (int i = 0; i < 2; i++) {
        char line[2048];
        snprintf(m[i], sizeof m[i], "%s/mx%d.jsonl", tmp, i);
        snprintf(line, sizeof line,
                 "{\"cmd\":\"segment\",\"workers\":2,\"batch\":64,\"until_iterations\":%d,\"compress_cf\":10,"
                 "\"collective\":\"allgather\",\"metrics\":\"%s\"}", 40 * (i + 1), m[i]);
        append(cmdf, line);
        CHECK_MSG(wait_lines(reply, "\"rc\":0", i + 1), "segment %d: no answer", i);
    }
    stop_elastic("ctlx", cmdf);
    CHECK_EQ_INT(count_lines(m[0], "\"cf\":1,"), 20);  /* the dense start */
    CHECK_EQ_INT(count_lines(m[0], "\"cf\":10,"), 20);
    CHECK_EQ_INT(count_lines(m[1], "\"cf\":1,"), 0);   /* carried on: compressed from its first step */
    CHECK_EQ_INT(count_lines(m[1], "\"cf\":10,"), 40);
}

/* Field key (a count) of the last iteration line in the files matching glob pattern pat
 * (-1: none). */
static long long last_iter(const char *pat, const char *key)
{
    char cmd[800], out[64] = "";
    snprintf(cmd, sizeof cmd,
             "cat %s 2>/dev/null | grep '\"type\":\"iter\"' | tail -1 | sed 's/.*\"%s\":\\([0-9]*\\).*/\\1/'", pat,
             key);
    FILE *f = popen(cmd, "r");
    if (f && !fgets(out, sizeof out, f)) out[0] = 0;
    if (f) pclose(f);
    return out[0] ? atoll(out) : -1;
}

/* Waits until path holds a line with needle or other holds one with stop (at most 60 s):
 * 1 for the first. */
static int wait_line_or(const char *path, const char *needle, const char *other, const char *stop)
{
    struct timespec ts = {0, 5000000L};
    for (int i = 0; i < 12000; i++) {
        if (count_lines(path, needle) >= 1) return 1;
        if (count_lines(other, stop) >= 1) return count_lines(path, needle) >= 1;
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* Whether the last iteration of a segment's metrics file ran at K = 2 (the job grew back). */
static int last_iter_at_k2(const char *metrics)
{
    int last_k2 = 0;
    FILE *mf = fopen(metrics, "r");
    char buf[8192];
    while (mf && fgets(buf, sizeof buf, mf))
        if (strstr(buf, "\"type\":\"iter\"")) last_k2 = strstr(buf, "\"workers\":2,") != NULL;
    if (mf) fclose(mf);
    return last_k2;
}

/* The job's checkpoint in dir against an uninterrupted K = 1 run of N iterations (written
 * to udir): the same data position and parameters within 1e-5. */
static void same_as_uninterrupted(const char *bin, const char *udir, const char *dir, int N)
{
    CHECK_EQ_INT(sh("%s train " JOB " --workers 1 --batch 64 --iterations %d --checkpoint %s --no-final-eval "
                    ">/dev/null 2>&1", bin, N, udir), 0);
    scv_ckpt_state a, b;
    float *pa = NULL, *ma = NULL, *pb = NULL, *mb = NULL;
    size_t na = 0, nb = 0;
    if (load(udir, &a, &pa, &ma, &na) == SCV_OK && load(dir, &b, &pb, &mb, &nb) == SCV_OK) {
        CHECK_EQ_INT(b.iteration, N);
        CHECK_EQ_INT(a.iteration, N);
        CHECK_EQ_INT(b.samples_seen, a.samples_seen);
        CHECK_EQ_INT(b.epoch, a.epoch);
        CHECK_EQ_INT(b.pos, a.pos);
        CHECK_EQ_INT((long long)nb, (long long)na);
        double worst = 0;
        for (size_t i = 0; i < na && i < nb; i++) {
            double d = fabs((double)pa[i] - (double)pb[i]);
            if (d > worst) worst = d;
        }
        CHECK_MSG(worst <= 1e-5, "parameters differ from the uninterrupted run's by up to %.3g", worst);
    }
    free(pa), free(ma), free(pb), free(mb);
}

/* A preemption notice for worker 1's process (CONTROL/preempt-notice.1) while a segment
 * runs at K = 2: the job shrinks in place to K = 1 at the same B (no checkpoint read), goes
 * on, and grows back to 2 once the process is back, within the segment (a second segment
 * follows at K = 2). It is back only when neither its
 * own notice nor its VM's marks are there: the job runs as if on VMs 10.213.77.1-2 of an
 * emulated cluster (the host list and the root's $SCV_PREEMPT_NOTICE_FILE a cluster gives),
 * and VM 2's "preempted" mark, made before the notice is removed, keeps it out until it is
 * removed too (a restore); VM 1's notice (process 0, which runs the job) is reported and
 * the job goes on. Its parameters are those of an uninterrupted run with the same
 * sample order (K = 1, B = 64: the order does not depend on K) within 1e-5 (summed over
 * other splits), its data position exactly the same (no sample skipped or seen twice). */
static void t_notice_shrink_regrow(void)
{
    const char *bin = getenv("SCV_BIN") ? getenv("SCV_BIN") : "build/scavenger";
    char cmdf[600], reply[600], dir[512], udir[512], m[600], m2[600], notice[600], line[1024];
    /* (N1 long enough that the restore lands within it under a loaded suite: at 800, CI's
     * four binaries at a time once let K = 1 reach the segment's end first) */
    const int N1 = 4000, N = 4100;
    snprintf(dir, sizeof dir, "%s/elasticp", tmp);
    snprintf(udir, sizeof udir, "%s/uninterrupted", tmp);
    snprintf(m, sizeof m, "%s/mp.jsonl", tmp);
    snprintf(m2, sizeof m2, "%s/mp2.jsonl", tmp);
    snprintf(notice, sizeof notice, "%s/ctlp/preempt-notice.1", tmp);
    char vmdir[600], own[700], mark[700];
    snprintf(vmdir, sizeof vmdir, "%s/clusters/t.d", tmp);
    CHECK_EQ_INT(sh("mkdir -p %s/1 %s/2", vmdir, vmdir), 0);
    snprintf(own, sizeof own, "%s/1/preempt-notice", vmdir);
    snprintf(mark, sizeof mark, "%s/2/preempted", vmdir);
    setenv("SCV_PREEMPT_NOTICE_FILE", own, 1);
    setenv("SCV_ELASTIC_HOSTS", "10.213.77.1,10.213.77.2", 1);
    start_elastic(bin, "ctlp", 2, dir, cmdf, reply);
    unsetenv("SCV_PREEMPT_NOTICE_FILE");
    unsetenv("SCV_ELASTIC_HOSTS");
    snprintf(line, sizeof line,
             "{\"cmd\":\"segment\",\"workers\":2,\"batch\":64,\"until_iterations\":%d,\"metrics\":\"%s\"}", N1, m);
    append(cmdf, line);
    CHECK_MSG(wait_line_or(m, "\"iter\":3,", reply, "\"rc\":"), "the segment did not start");
    FILE *f = fopen(notice, "w"); /* the notice, as `cluster preempt` writes it */
    CHECK(f != NULL);
    if (f) fputs("{\"vm\":\"local-1\",\"at\":0,\"notice_s\":30}\n", f), fclose(f);
    CHECK_MSG(wait_line_or(m, "\"workers\":1,", reply, "\"rc\":"), "no iteration at K=1 after the notice");
    f = fopen(mark, "w"); /* the take-down's mark: out until restored */
    CHECK(f != NULL);
    if (f) fclose(f);
    unlink(notice);
    struct timespec pause = {0, 30000000L};
    nanosleep(&pause, NULL);
    long long marked_until = last_iter(m, "iter");
    unlink(mark); /* restored: the job grows back within the segment */
    snprintf(line, sizeof line,
             "{\"cmd\":\"segment\",\"workers\":2,\"batch\":64,\"until_iterations\":%d,\"metrics\":\"%s\"}", N, m2);
    append(cmdf, line);
    f = fopen(own, "w"); /* VM 1's notice: process 0 runs the job and stays (its state written) */
    CHECK(f != NULL);
    if (f) fclose(f);
    CHECK_MSG(wait_lines(reply, "\"rc\":0", 2), "the segments did not answer");
    unlink(own);
    CHECK_EQ_INT(count_lines(reply, "\"process\":0,\"event\":\"notice\""), 1);
    long long back = -1;
    const char *r = NULL;
    FILE *rf = fopen(reply, "r");
    char rl[8192];
    while (rf && fgets(rl, sizeof rl, rf))
        if ((r = strstr(rl, "\"event\":\"restored\"")) != NULL) {
            while (r > rl && strncmp(r, "{\"iteration\":", 13)) r--;
            back = atoll(r + 13);
            break;
        }
    if (rf) fclose(rf);
    CHECK_MSG(back >= marked_until, "back at iteration %lld while VM 2 was marked preempted until %lld", back,
              marked_until);
    CHECK_MSG(back > 0 && back < N1, "back at iteration %lld: not within the segment (1-%d)", back, N1 - 1);
    stop_elastic("ctlp", cmdf);
    CHECK_EQ_INT(count_lines(reply, "\"event\":\"notice\",\"workers\":1"), 1);
    CHECK_EQ_INT(count_lines(reply, "\"event\":\"restored\",\"workers\":2"), 1);
    CHECK_MSG(count_lines(reply, "\"iteration\":0,\"process\":1") == 0, "the notice was taken within the segment");
    /* the last iteration ran at K = 2 again */
    CHECK_MSG(last_iter_at_k2(m2), "the job did not grow back to K=2");
    same_as_uninterrupted(bin, udir, dir, N);
}

/* A job restarted while a VM is down (issue 25 item 2): the launch starts it on the VMs up
 * (here 1 process, as if on VM 1 of 2) and lists the preempted VM last in its hosts; the
 * command asks K = 2. The job runs at K = 1 while VM 2 is marked preempted (no process is
 * spawned on it), and grows onto it once it is restored, within the segment, reporting it
 * ("restored"). It is started as a cluster's launch starts it, one process (mpirun -np 1)
 * for --workers 2. The hosts are 127.0.0.1-2 (VMs 1-2 of the cluster's file layout under tmp,
 * read through the root's $SCV_PREEMPT_NOTICE_FILE as on a cluster), and Open MPI starts the
 * daemon for 127.0.0.2 through an rsh agent that runs it on this machine. */
static void t_start_short_grow(void)
{
    const char *bin = getenv("SCV_BIN") ? getenv("SCV_BIN") : "build/scavenger";
    char cmdf[600], reply[600], dir[512], m[600], line[1024], vmdir[600], own[700], mark[700], agent[600];
    snprintf(dir, sizeof dir, "%s/elastics", tmp);
    snprintf(m, sizeof m, "%s/ms.jsonl", tmp);
    snprintf(vmdir, sizeof vmdir, "%s/clusters/s.d", tmp);
    CHECK_EQ_INT(sh("mkdir -p %s/1 %s/2", vmdir, vmdir), 0);
    snprintf(own, sizeof own, "%s/1/preempt-notice", vmdir);
    snprintf(mark, sizeof mark, "%s/2/preempted", vmdir);
    snprintf(agent, sizeof agent, "%s/agent.sh", tmp);
    FILE *f = fopen(agent, "w");
    CHECK(f != NULL);
    if (f) fputs("#!/bin/sh\nwhile [ \"${1#-}\" != \"$1\" ]; do shift; done\nshift\nexec sh -c \"$*\"\n", f), fclose(f);
    chmod(agent, 0755);
    f = fopen(mark, "w"); /* VM 2 taken down before the job's start */
    CHECK(f != NULL);
    if (f) fclose(f);
    setenv("SCV_PREEMPT_NOTICE_FILE", own, 1);
    setenv("SCV_ELASTIC_HOSTS", "127.0.0.1,127.0.0.2", 1);
    setenv("OMPI_MCA_plm_rsh_agent", agent, 1);
    /* as a cluster's launch starts it: mpirun -np 1 (the VMs up) for --workers 2 */
    char ctl[512];
    snprintf(ctl, sizeof ctl, "%s/ctls", tmp);
    snprintf(cmdf, sizeof cmdf, "%s/cmd", ctl);
    snprintf(reply, sizeof reply, "%s/reply", ctl);
    mkdir(ctl, 0755);
    fclose(fopen(cmdf, "w"));
    fclose(fopen(reply, "w"));
    CHECK_EQ_INT(sh("mpirun --oversubscribe -q -x SCV_PREEMPT_NOTICE_FILE -x SCV_ELASTIC_HOSTS -x SCV_COMM_POLL_SLEEP_US=50 -np 1 %s train " JOB
                    " --workers 2 --batch 64 --elastic-control %s --checkpoint %s >%s.log 2>&1 &",
                    bin, ctl, dir, ctl), 0);
    int ready = wait_lines(reply, "\"ready\"", 1);
    unsetenv("SCV_PREEMPT_NOTICE_FILE");
    unsetenv("SCV_ELASTIC_HOSTS");
    unsetenv("OMPI_MCA_plm_rsh_agent");
    CHECK_MSG(ready, "the elastic job did not start (%s.log)", ctl);
    if (!ready) return;
    snprintf(line, sizeof line,
             "{\"cmd\":\"segment\",\"workers\":2,\"batch\":64,\"until_iterations\":600,\"metrics\":\"%s\"}", m);
    append(cmdf, line);
    CHECK_MSG(wait_line_or(m, "\"iter\":30,", reply, "\"rc\":"), "the segment did not start");
    CHECK_MSG(count_lines(m, "\"workers\":2,") == 0 && count_lines(m, "\"workers\":1,") >= 30,
              "K=2 while VM 2 was preempted (%d lines at K=2)", count_lines(m, "\"workers\":2,"));
    long long marked_until = last_iter(m, "iter");
    unlink(mark); /* restored: the job grows onto it */
    CHECK_MSG(wait_line_or(m, "\"workers\":2,", reply, "\"rc\":"), "the job did not grow onto the restored VM");
    CHECK_MSG(wait_lines(reply, "\"rc\":0", 1), "the segment did not answer");
    CHECK_EQ_INT(count_lines(reply, "\"process\":1,\"event\":\"restored\",\"workers\":2"), 1);
    long long first_k2 = -1;
    FILE *mf = fopen(m, "r");
    char buf[8192];
    while (mf && fgets(buf, sizeof buf, mf) && first_k2 < 0)
        if (strstr(buf, "\"type\":\"iter\"") && strstr(buf, "\"workers\":2,")) first_k2 = atoll(strstr(buf, "\"iter\":") + 7);
    if (mf) fclose(mf);
    CHECK_MSG(first_k2 > marked_until && first_k2 < 600, "K=2 from iteration %lld (VM 2 marked until %lld)", first_k2,
              marked_until);
    stop_elastic("ctls", cmdf);
}

/* A kill without notice mid-segment, through the elastic driver on the real trainer: the
 * segment fails (the loop retries it) stating the samples lost, which are those reported
 * after the checkpoint it resumes from; no process of the job is left once it has failed
 * (the driver ends what the job's own process left, and reads the job's lines only then:
 * rank 0 may write a line after that process is gone); the retry resumes from that
 * checkpoint and ends with an uninterrupted run's data position (no sample counted twice)
 * and parameters (within 1e-5; K = 1, the same sample order). `all`: every process of the
 * job SIGKILLed, as a VM taken without notice takes its worker, and without ULFM the MPI
 * job with it; else only the job's own process (the one the driver started). */
static void kill_case(const char *name, int all)
{
    const char *bin = getenv("SCV_BIN") ? getenv("SCV_BIN") : "build/scavenger";
    const char *opts[] = {"--model", "mlp", "--hidden", "32", "--dataset", "synthetic:3000", "--seed", "5",
                          "--lr", "0.05", "--progress", "never", NULL};
    char run[512], udir[512], ck[600], pat[700];
    const int N = 300;
    snprintf(run, sizeof run, "%s/%s", tmp, name);
    snprintf(udir, sizeof udir, "%s/uninterrupted-%s", tmp, name);
    snprintf(ck, sizeof ck, "%s/ckpt", run);
    snprintf(pat, sizeof pat, "%s/seg-*-train-k2-b64.jsonl", run);
    mkdir(run, 0755);
    scv_relaunch_opts o = {.exe = bin, .train_opts = opts, .vm_type = "c5.xlarge"};
    scv_job_driver *d = NULL;
    scv_err err = {0};
    CHECK_EQ_INT(scv_elastic_driver_new(&o, &d, &err), SCV_OK);
    if (!d) return;
    scv_job_info job;
    CHECK_MSG(d->open(d->ctx, run, &job, &err) == SCV_OK, "%s", err.msg);
    CHECK_MSG(d->configure(d->ctx, 2, 64, NULL, &err) == SCV_OK, "%s", err.msg);
    /* the kill: once iteration 50 is reported (checkpoints every 40), within 10 s */
    CHECK_EQ_INT(sh("(for i in $(seq 1000); do grep -qs '\"iter\":50,' %s && break; sleep 0.01; done; "
                    "kill -9 $(pgrep %s -f -- '[-]-elastic-control %s/elastic')) >/dev/null 2>&1 &",
                    pat, all ? "" : "-o", run),
                 0);
    scv_segment_spec spec = {.phase = "train", .until_iterations = N, .checkpoint_every = 40};
    scv_segment_result res;
    CHECK_EQ_INT(d->train(d->ctx, &spec, NULL, &res, &err), SCV_EMPI);
    CHECK_MSG(sh("ps -eo pid,args | grep -- '[-]-elastic-control %s/elastic' >&2", run) == 1,
              "processes of the failed job are left (above)");
    long long lost = -1, a = -1, b = -1;
    const char *l = strstr(err.msg, "; lost ");
    if (l && !strncmp(l, "; lost no samples", 17)) /* the kill came right after a checkpoint */
        lost = 0, sscanf(l, "; lost no samples (the checkpoint holds iteration %lld", &b), a = b + 1;
    else
        CHECK_MSG(l && sscanf(l, "; lost %lld samples (iterations %lld-%lld", &lost, &a, &b) == 3, "no loss stated: %s",
                  err.msg);
    scv_ckpt_state st;
    float *pa = NULL, *ma = NULL, *pb = NULL, *mb = NULL;
    size_t na = 0, nb = 0;
    if (load(ck, &st, &pa, &ma, &na) == SCV_OK) { /* what the retry resumes from */
        CHECK_EQ_INT(a, (long long)st.iteration + 1);
        CHECK_EQ_INT(b, last_iter(pat, "iter")); /* the last iteration reported */
        CHECK_EQ_INT(lost, last_iter(pat, "samples_seen") - (long long)st.samples_seen);
        CHECK_MSG(b >= 50, "the kill came at iteration %lld", b);
    }
    free(pa), free(ma), pa = ma = NULL;
    CHECK_MSG(d->train(d->ctx, &spec, NULL, &res, &err) == SCV_OK, "the retry: %s", err.msg);
    CHECK_EQ_INT(res.total_iterations, N);
    d->destroy(d->ctx);
    CHECK_EQ_INT(sh("%s train " JOB " --workers 1 --batch 64 --iterations %d --checkpoint %s --no-final-eval "
                    ">/dev/null 2>&1", bin, N, udir), 0);
    scv_ckpt_state u;
    if (load(udir, &u, &pa, &ma, &na) == SCV_OK && load(ck, &st, &pb, &mb, &nb) == SCV_OK) {
        CHECK_EQ_INT(st.iteration, N);
        CHECK_EQ_INT(st.samples_seen, u.samples_seen); /* none counted twice */
        CHECK_EQ_INT(st.epoch, u.epoch);
        CHECK_EQ_INT(st.pos, u.pos);
        double worst = 0;
        for (size_t i = 0; i < na && i < nb; i++) {
            double dd = fabs((double)pa[i] - (double)pb[i]);
            if (dd > worst) worst = dd;
        }
        CHECK_MSG(na == nb && worst <= 1e-5, "parameters differ from the uninterrupted run's by up to %.3g", worst);
    }
    free(pa), free(ma), free(pb), free(mb);
}

static void t_kill_resumes(void) { kill_case("killall", 1); }
static void t_kill_root_resumes(void) { kill_case("killroot", 0); }

/* A slow worker the model says to drop (issue 25 item 5): a segment at K = 3 whose straggler
 * rule (by_model, drop under speed 1, replace never) flags the first worker under 0.999 of
 * the median's throughput (the timing noise of local processes finds one at once): a
 * worker other than 0 is dropped, not replaced, and the segment goes on in place at K = 2
 * with the same B to its end (no second drop: the speed was the model's for K = 3), with an
 * uninterrupted run's data position (no sample skipped or seen twice). */
static void t_slow_dropped(void)
{
    const char *bin = getenv("SCV_BIN") ? getenv("SCV_BIN") : "build/scavenger";
    char cmdf[600], reply[600], dir[512], m[600], line[2048];
    const int N = 300, B = 96;
    snprintf(dir, sizeof dir, "%s/elasticd", tmp);
    snprintf(m, sizeof m, "%s/md.jsonl", tmp);
    start_elastic(bin, "ctld", 3, dir, cmdf, reply);
    snprintf(line, sizeof line,
             "{\"cmd\":\"segment\",\"workers\":3,\"batch\":%d,\"until_iterations\":%d,\"metrics\":\"%s\","
             "\"straggler\":{\"fraction\":0.999,\"alpha\":1,\"window_s\":0,\"min_iterations\":1,\"by_model\":1,"
             "\"drop_below\":1,\"replace_below\":0}}",
             B, N, m);
    append(cmdf, line);
    CHECK_MSG(wait_lines(reply, "\"rc\":", 1), "the segment did not answer");
    stop_elastic("ctld", cmdf);
    CHECK_MSG(count_lines(reply, "\"dropped\":true") == 1 && count_lines(reply, "\"replaced\":true") == 0 &&
                  count_lines(reply, "the model's choice: drop") == 1,
              "no worker dropped (%s)", reply);
    CHECK_EQ_INT(count_lines(reply, "\"rc\":0"), 1);
    int last_k2 = 0, k3 = 0;
    FILE *mf = fopen(m, "r");
    char buf[8192];
    while (mf && fgets(buf, sizeof buf, mf))
        if (strstr(buf, "\"type\":\"iter\"")) last_k2 = strstr(buf, "\"workers\":2,") != NULL, k3 += strstr(buf, "\"workers\":3,") != NULL;
    if (mf) fclose(mf);
    CHECK_MSG(last_k2 && k3 > 0, "the job did not go on at K=2 after K=3 (%d iterations at K=3)", k3);
    char udir[512];
    snprintf(udir, sizeof udir, "%s/uninterrupted-d", tmp);
    CHECK_EQ_INT(sh("%s train " JOB " --workers 1 --batch %d --iterations %d --checkpoint %s --no-final-eval "
                    ">/dev/null 2>&1", bin, B, N, udir), 0);
    scv_ckpt_state a, st;
    float *p = NULL, *mo = NULL, *pa = NULL, *ma = NULL;
    size_t n = 0, na = 0;
    if (load(dir, &st, &p, &mo, &n) == SCV_OK && load(udir, &a, &pa, &ma, &na) == SCV_OK) {
        CHECK_EQ_INT(st.iteration, N);
        CHECK_EQ_INT(st.samples_seen, a.samples_seen);
        CHECK_EQ_INT(st.epoch, a.epoch);
        CHECK_EQ_INT(st.pos, a.pos);
    }
    free(p), free(mo), free(pa), free(ma);
}

/* The elastic job of tmp/NAME's processes other than its root's mpirun (pid root_mpirun) and
 * root rank (that mpirun's oldest child), as a space-separated list ("" when none); with
 * kill9, SIGKILLed. */
static void other_pids(const char *name, long root_mpirun, int kill9, char *out, size_t cap)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "r=$(pgrep -o -P %ld); for p in $(pgrep -f -- '[-]-elastic-control %s/%s'); do "
             "[ $p = %ld ] || [ $p = \"$r\" ] || { printf '%%s ' $p; %s; }; done",
             root_mpirun, tmp, name, root_mpirun, kill9 ? "kill -9 $p" : "true");
    out[0] = 0;
    FILE *f = popen(cmd, "r");
    if (f && !fgets(out, (int)cap, f)) out[0] = 0;
    if (f) pclose(f);
}

/* An elastic job in join mode (comm_mpi.c) of tmp/NAME, as the cluster's launch starts it
 * but on this machine: an ompi-server (its pid in *srv), the root alone under mpirun (its
 * pid in *root), every other process its own `mpirun -np 1` started through the join
 * script tmp/NAME.join. Returns once it is ready (0: it did not start, and its ompi-server is
 * ended). */
static int start_join(const char *bin, const char *name, const char *dir, char *cmdf, char *reply, long *root, long *srv)
{
    char ctl[512], uri[600], script[600], port[600], pidf[600];
    snprintf(ctl, sizeof ctl, "%s/%s", tmp, name);
    snprintf(cmdf, 600, "%s/cmd", ctl);
    snprintf(reply, 600, "%s/reply", ctl);
    snprintf(uri, sizeof uri, "%s.uri", ctl);
    snprintf(script, sizeof script, "%s.join", ctl);
    snprintf(port, sizeof port, "%s.port", ctl);
    snprintf(pidf, sizeof pidf, "%s.pids", ctl);
    mkdir(ctl, 0755);
    fclose(fopen(cmdf, "w"));
    fclose(fopen(reply, "w"));
    FILE *f = fopen(script, "w"); /* SCRIPT HOST EXE ARGS... */
    CHECK(f != NULL);
    if (f)
        fprintf(f, "#!/bin/sh\nshift\nexec mpirun -q --bind-to none --ompi-server file:%s -x SCV_JOIN_CONNECT=1 "
                   "-x SCV_JOIN_PORT_FILE -np 1 \"$@\"\n", uri), fclose(f);
    CHECK_EQ_INT(sh("ompi-server --no-daemonize -r %s >/dev/null 2>&1 & echo $! > %s", uri, pidf), 0);
    for (int i = 0; i < 500 && count_lines(uri, ":") < 1; i++) nanosleep(&(struct timespec){0, 10000000L}, NULL);
    CHECK_MSG(count_lines(uri, ":") >= 1, "ompi-server did not start");
    CHECK_EQ_INT(sh("SCV_JOIN_SCRIPT=%s SCV_JOIN_PORT_FILE=%s mpirun -q --bind-to none --ompi-server file:%s -np 1 %s train " JOB
                    " --workers 2 --batch 64 --elastic-control %s --checkpoint %s >%s.log 2>&1 & echo $! >> %s",
                    script, port, uri, bin, ctl, dir, ctl, pidf), 0);
    int ready = wait_lines(reply, "\"ready\"", 1);
    CHECK_MSG(ready, "the elastic job did not start (%s.log)", ctl);
    *root = *srv = 0;
    f = fopen(pidf, "r");
    if (f && fscanf(f, "%ld %ld", srv, root) != 2) *root = 0;
    if (f) fclose(f);
    if (ready && *root > 0) return 1;
    if (*srv > 0) kill((pid_t)*srv, SIGTERM); /* not started: its ompi-server is ended here */
    return 0;
}

/* A VM's take-down after a notice-shrink (issue 25 item 2), as on the emulated cluster: the
 * job in join mode (the root its mpirun's only process, an ompi-server for the rendezvous,
 * every other worker its own `mpirun -np 1` started through $SCV_JOIN_SCRIPT, joining by
 * MPI_Comm_connect). Worker 1 joins at the K = 2 segment; its notice shrinks the job to
 * K = 1 and it leaves the MPI job and exits; then every process of it that is left, and its
 * mpirun, are SIGKILLed (the take-down). The job goes on without a restart: the next segment
 * (the notice gone: a restore) joins a new process in its place, K = 2 again, and ends with
 * an uninterrupted run's position and parameters (within 1e-5). With the spawned (parked)
 * process of before, the kill ends the MPI job: no second answer. */
static void t_join_takedown(void)
{
    const char *bin = getenv("SCV_BIN") ? getenv("SCV_BIN") : "build/scavenger";
    char cmdf[600], reply[600], dir[512], udir[512], m[600], m2[600], notice[600], line[1024];
    const int N1 = 800, N = 900;
    snprintf(dir, sizeof dir, "%s/elasticj", tmp);
    snprintf(udir, sizeof udir, "%s/uninterrupted-j", tmp);
    snprintf(m, sizeof m, "%s/mj.jsonl", tmp);
    snprintf(m2, sizeof m2, "%s/mj2.jsonl", tmp);
    snprintf(notice, sizeof notice, "%s/ctlj/preempt-notice.1", tmp);
    long root = 0, srv = 0;
    if (!start_join(bin, "ctlj", dir, cmdf, reply, &root, &srv)) return;
    FILE *f;
    snprintf(line, sizeof line,
             "{\"cmd\":\"segment\",\"workers\":2,\"batch\":64,\"until_iterations\":%d,\"metrics\":\"%s\"}", N1, m);
    append(cmdf, line);
    CHECK_MSG(wait_line_or(m, "\"iter\":3,", reply, "\"rc\":"), "the segment did not start");
    CHECK_MSG(count_lines(m, "\"workers\":2,") >= 3, "not at K=2");
    f = fopen(notice, "w");
    CHECK(f != NULL);
    if (f) fputs("{\"vm\":\"local-2\",\"at\":0,\"notice_s\":30}\n", f), fclose(f);
    CHECK_MSG(wait_lines(reply, "\"rc\":0", 1), "the segment did not answer");
    CHECK_EQ_INT(count_lines(reply, "\"process\":1,\"event\":\"notice\",\"workers\":1"), 1);
    /* the worker left the job: its process and mpirun end by themselves (join mode) */
    char pids[512] = "x";
    for (int i = 0; i < 200 && pids[0]; i++) {
        other_pids("ctlj", root, 0, pids, sizeof pids);
        if (pids[0]) nanosleep(&(struct timespec){0, 10000000L}, NULL);
    }
    if (pids[0]) fprintf(stderr, "join_takedown: left after the notice, SIGKILLed: %s\n", pids);
    /* the take-down: whatever of the worker is left, SIGKILLed */
    other_pids("ctlj", root, 1, pids, sizeof pids);
    nanosleep(&(struct timespec){0, 300000000L}, NULL);
    unlink(notice); /* restored: the next segment has a process join in its place */
    snprintf(line, sizeof line,
             "{\"cmd\":\"segment\",\"workers\":2,\"batch\":64,\"until_iterations\":%d,\"metrics\":\"%s\"}", N, m2);
    append(cmdf, line);
    int answered = 0; /* or the job ended (its mpirun gone) */
    for (int i = 0; i < 1500 && !answered && (root <= 0 || kill((pid_t)root, 0) == 0); i++) {
        answered = count_lines(reply, "\"rc\":0") >= 2;
        if (!answered) nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    answered = answered || count_lines(reply, "\"rc\":0") >= 2;
    CHECK_MSG(answered, "no answer after the take-down (the job ended: %s/ctlj.log)", tmp);
    if (answered) {
        CHECK_EQ_INT(count_lines(reply, "\"process\":1,\"event\":\"restored\",\"workers\":2"), 1);
        CHECK_MSG(last_iter_at_k2(m2), "the job did not grow back to K=2");
    }
    stop_elastic("ctlj", cmdf);
    kill((pid_t)srv, SIGTERM);
    if (!answered) return;
    same_as_uninterrupted(bin, udir, dir, N);
}

/* A kill without notice of a joined worker (its process and its mpirun SIGKILLed while it
 * trains), in join mode: no mpirun ends the root's job for it, so the root, which started
 * the worker's mpirun, sees it end and ends the job at once (as mpirun ends a job that lost
 * a process; the driver then resumes from the checkpoint: kill_resumes) instead of waiting
 * in the allreduce until the driver's stall watchdog (120 s); nothing of the job is left. */
static void t_join_kill_ends(void)
{
    const char *bin = getenv("SCV_BIN") ? getenv("SCV_BIN") : "build/scavenger";
    char cmdf[600], reply[600], dir[512], m[600], line[1024], pids[512];
    snprintf(dir, sizeof dir, "%s/elastick", tmp);
    snprintf(m, sizeof m, "%s/mk.jsonl", tmp);
    long root = 0, srv = 0;
    if (!start_join(bin, "ctlk", dir, cmdf, reply, &root, &srv)) return;
    snprintf(line, sizeof line,
             "{\"cmd\":\"segment\",\"workers\":2,\"batch\":64,\"until_iterations\":100000000,\"metrics\":\"%s\"}", m);
    append(cmdf, line);
    CHECK_MSG(wait_line_or(m, "\"iter\":3,", reply, "\"rc\":"), "the segment did not start");
    CHECK_MSG(count_lines(m, "\"workers\":2,") >= 3, "not at K=2");
    other_pids("ctlk", root, 1, pids, sizeof pids); /* the worker's process and its mpirun */
    CHECK_MSG(pids[0] != 0, "no worker process to kill");
    double t0 = 0;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    t0 = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    int ended = ended_within_10s(root);
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double took = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec - t0;
    CHECK_MSG(ended, "the root's job still runs 10 s after the worker's kill");
    if (ended) printf("# the job ended %.2f s after the kill\n", took);
    CHECK_EQ_INT(count_lines(reply, "\"rc\":0"), 0);
    char log[600];
    snprintf(log, sizeof log, "%s/ctlk.log", tmp);
    CHECK_MSG(count_lines(log, "a kill without notice") == 1, "the root did not say why (%s)", log);
    if (!ended) sh("kill -9 %ld", root);
    nanosleep(&(struct timespec){0, 300000000L}, NULL);
    check_nothing_left("ctlk");
    kill((pid_t)srv, SIGTERM);
}

/* A join that fails (the joining process's launcher ends before it connects: its VM refused
 * it, its mpirun failed): the processes of the job wait in MPI_Comm_accept, which cannot be
 * left, so the root ends the job as soon as the launcher ends (the driver resumes it),
 * instead of hanging until the driver's watchdog (up to 600 s before a segment's first line). */
static void t_join_fails_ends(void)
{
    const char *bin = getenv("SCV_BIN") ? getenv("SCV_BIN") : "build/scavenger";
    char cmdf[600], reply[600], dir[512], m[600], line[1024], script[600], log[600];
    snprintf(dir, sizeof dir, "%s/elasticf", tmp);
    snprintf(m, sizeof m, "%s/mf.jsonl", tmp);
    snprintf(script, sizeof script, "%s/ctlf.join", tmp);
    snprintf(log, sizeof log, "%s/ctlf.log", tmp);
    long root = 0, srv = 0;
    if (!start_join(bin, "ctlf", dir, cmdf, reply, &root, &srv)) return;
    FILE *f = fopen(script, "w"); /* the joiner's launcher fails */
    CHECK(f != NULL);
    if (f) fputs("#!/bin/sh\necho 'join: no such VM' >&2\nexit 3\n", f), fclose(f);
    snprintf(line, sizeof line,
             "{\"cmd\":\"segment\",\"workers\":2,\"batch\":64,\"until_iterations\":100,\"metrics\":\"%s\"}", m);
    append(cmdf, line);
    int ended = ended_within_10s(root);
    CHECK_MSG(ended, "the job still runs 10 s after its join failed (%s)", log);
    CHECK_MSG(count_lines(log, "before it joined") == 1, "the root did not say why (%s)", log);
    /* the launcher's output is in its own log, which the root names with its last line */
    char jlog[700], named[800];
    snprintf(jlog, sizeof jlog, "%s-1.log", script);
    snprintf(named, sizeof named, "its log: %s, last line: join: no such VM", jlog);
    CHECK_MSG(count_lines(log, named) == 1, "the root did not name the joiner's log (%s)", log);
    CHECK_EQ_INT(count_lines(jlog, "process 1 joins from"), 1);
    if (!ended) sh("kill -9 %ld", root);
    nanosleep(&(struct timespec){0, 200000000L}, NULL);
    check_nothing_left("ctlf");
    kill((pid_t)srv, SIGTERM);
}

/* A parked process under notice, in join mode: K = 2, then K = 1 (worker 1's process parked,
 * still in the job); its notice stops the segment and the process leaves the job and exits
 * (the segment goes on at K = 1), so its VM's take-down would end nothing. */
static void t_join_parked_leaves(void)
{
    const char *bin = getenv("SCV_BIN") ? getenv("SCV_BIN") : "build/scavenger";
    char cmdf[600], reply[600], dir[512], m[600], line[1024], notice[600], pids[512] = "";
    snprintf(dir, sizeof dir, "%s/elasticpk", tmp);
    snprintf(m, sizeof m, "%s/mpk.jsonl", tmp);
    snprintf(notice, sizeof notice, "%s/ctlpk/preempt-notice.1", tmp);
    long root = 0, srv = 0;
    if (!start_join(bin, "ctlpk", dir, cmdf, reply, &root, &srv)) return;
    append(cmdf, "{\"cmd\":\"segment\",\"workers\":2,\"batch\":64,\"until_iterations\":20}");
    CHECK_MSG(wait_lines(reply, "\"rc\":0", 1), "the K=2 segment did not answer");
    snprintf(line, sizeof line,
             "{\"cmd\":\"segment\",\"workers\":1,\"batch\":64,\"until_iterations\":3000,\"metrics\":\"%s\"}", m);
    append(cmdf, line);
    CHECK_MSG(wait_line_or(m, "\"iter\":25,", reply, "\"rc\":0,\"error\":\"\",\"resize_s\":0.0"), "the K=1 segment did not start");
    other_pids("ctlpk", root, 0, pids, sizeof pids);
    CHECK_MSG(pids[0] != 0, "worker 1's process is not parked in the job");
    FILE *f = fopen(notice, "w");
    CHECK(f != NULL);
    if (f) fputs("{}\n", f), fclose(f);
    CHECK_MSG(wait_lines(reply, "\"rc\":0", 2), "the K=1 segment did not answer");
    CHECK_EQ_INT(count_lines(reply, "\"process\":1,\"event\":\"notice\",\"workers\":1"), 1);
    for (int i = 0; i < 200 && pids[0]; i++) { /* it left and exits by itself */
        other_pids("ctlpk", root, 0, pids, sizeof pids);
        if (pids[0]) nanosleep(&(struct timespec){0, 10000000L}, NULL);
    }
    CHECK_MSG(!pids[0], "the parked process did not leave: %s", pids);
    unlink(notice);
    stop_elastic("ctlpk", cmdf);
    kill((pid_t)srv, SIGTERM);
}

/* A join-mode job's start at K = 3 (the root alone, then two processes joining one after
 * another, as on a cluster of three VMs): the second join's accept is collective over the
 * root and the first joiner, so the first joiner must take part in it (it learns of the join
 * from the command, sent again after each join). Before, the root started the second join
 * while the first joiner waited for the command: the first joiner's command broadcast and the
 * root's accept crossed on the job's communicator (here the job hung; on cluster spot the
 * first joiner got the accept's bytes as its command, stopped and its mpirun ended, and the
 * root waited in the accept until the start-up watchdog). The segment must train at K = 3. */
static void t_join_start_k3(void)
{
    const char *bin = getenv("SCV_BIN") ? getenv("SCV_BIN") : "build/scavenger";
    char cmdf[600], reply[600], dir[512], m[600], line[1024], log[600];
    snprintf(dir, sizeof dir, "%s/elastict", tmp);
    snprintf(m, sizeof m, "%s/mt.jsonl", tmp);
    snprintf(log, sizeof log, "%s/ctlt.log", tmp);
    long root = 0, srv = 0;
    if (!start_join(bin, "ctlt", dir, cmdf, reply, &root, &srv)) return;
    snprintf(line, sizeof line,
             "{\"cmd\":\"segment\",\"workers\":3,\"batch\":96,\"until_iterations\":30,\"metrics\":\"%s\"}", m);
    append(cmdf, line);
    int answered = 0; /* or the job ended */
    for (int i = 0; i < 1000 && !answered && kill((pid_t)root, 0) == 0; i++) {
        answered = count_lines(reply, "\"rc\":") >= 1;
        if (!answered) nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    answered = answered || count_lines(reply, "\"rc\":") >= 1;
    CHECK_MSG(answered, "the K=3 start did not answer within 20 s (%s)", log);
    CHECK_EQ_INT(count_lines(reply, "\"rc\":0"), 1);
    CHECK_EQ_INT(count_lines(m, "\"type\":\"iter\""), 30);
    CHECK_EQ_INT(count_lines_both(m, "\"type\":\"iter\"", "\"workers\":3,\"batch\":96,"), 30); /* all at K = 3 */
    if (answered) stop_elastic("ctlt", cmdf);
    else sh("kill -9 %ld", root);
    nanosleep(&(struct timespec){0, 200000000L}, NULL);
    check_nothing_left("ctlt");
    kill((pid_t)srv, SIGTERM);
}

/* A process of the job whose mpirun ends while the job waits in the next process's join (the
 * accept, which cannot be left and which that process takes part in): the root, whose
 * check_joiners does not run meanwhile, must end the job within seconds, naming the ended
 * launcher's log. K = 2 trains; then K = 3, whose joiner's launcher only waits (its VM slow
 * to start it), and worker 1 is SIGKILLed with its mpirun during that join. Before, only the
 * joiner's own launcher was watched: the job waited until that launcher ended (20 s here;
 * on cluster spot, for ever). */
static void t_join_member_ends(void)
{
    const char *bin = getenv("SCV_BIN") ? getenv("SCV_BIN") : "build/scavenger";
    char cmdf[600], reply[600], dir[512], line[1024], script[600], log[600], jlog[700], pids[512] = "";
    snprintf(dir, sizeof dir, "%s/elasticm", tmp);
    snprintf(script, sizeof script, "%s/ctlm.join", tmp);
    snprintf(log, sizeof log, "%s/ctlm.log", tmp);
    snprintf(jlog, sizeof jlog, "%s-2.log", script);
    long root = 0, srv = 0;
    if (!start_join(bin, "ctlm", dir, cmdf, reply, &root, &srv)) return;
    append(cmdf, "{\"cmd\":\"segment\",\"workers\":2,\"batch\":64,\"until_iterations\":20}");
    CHECK_MSG(wait_lines(reply, "\"rc\":0", 1), "the K=2 segment did not answer");
    FILE *f = fopen(script, "w"); /* the next joiner's launcher: slow, it never starts the process */
    CHECK(f != NULL);
    if (f) fprintf(f, "#!/bin/sh\necho $$ > %s.pid\necho 'join: waiting for the VM' >&2\nexec sleep 20\n", script), fclose(f);
    snprintf(line, sizeof line, "{\"cmd\":\"segment\",\"workers\":3,\"batch\":96,\"until_iterations\":40}");
    append(cmdf, line);
    CHECK_MSG(wait_lines(jlog, "join: waiting for the VM", 1), "process 2's join did not start (%s)", jlog);
    other_pids("ctlm", root, 1, pids, sizeof pids); /* worker 1's process and its mpirun */
    CHECK_MSG(pids[0] != 0, "no worker process to kill");
    int ended = ended_within_10s(root);
    CHECK_MSG(ended, "the job still runs 10 s after worker 1's kill during process 2's join (%s)", log);
    char named[800];
    snprintf(named, sizeof named, "while the job waited for process 2 to join: the job ends (its log: %s/ctlm.join-1.log", tmp);
    CHECK_MSG(count_lines(log, named) == 1, "the root did not say why, naming the log (%s)", log);
    if (!ended) sh("kill -9 %ld", root);
    nanosleep(&(struct timespec){0, 300000000L}, NULL);
    check_nothing_left("ctlm");
    /* the waiting launcher ends with the root (its parent-death signal, not blocked) */
    long lp = 0;
    char pidf[700];
    snprintf(pidf, sizeof pidf, "%s.pid", script);
    f = fopen(pidf, "r");
    if (f && fscanf(f, "%ld", &lp) != 1) lp = 0;
    if (f) fclose(f);
    int gone = 0; /* ended (a zombie left for init to reap counts as ended) */
    for (int i = 0; i < 100 && lp > 0 && !gone; i++) {
        char stat[64], st[600] = "";
        snprintf(stat, sizeof stat, "/proc/%ld/stat", lp);
        FILE *sf = fopen(stat, "r");
        if (sf && !fgets(st, sizeof st, sf)) st[0] = 0;
        if (sf) fclose(sf);
        const char *rp = strrchr(st, ')');
        gone = !sf || (rp && rp[1] == ' ' && rp[2] == 'Z');
        if (!gone) nanosleep(&(struct timespec){0, 20000000L}, NULL);
    }
    CHECK_MSG(lp > 0 && gone, "process 2's launcher (pid %ld) outlived the job", lp);
    if (lp > 0) kill((pid_t)lp, SIGKILL);
    kill((pid_t)srv, SIGTERM);
}

static const scv_test tests[] = {
    {"same_as_relaunch", t_same_as_relaunch},
    {"exchange_carried", t_exchange_carried},
    {"notice_shrink_regrow", t_notice_shrink_regrow},
    {"kill_resumes", t_kill_resumes},
    {"kill_root_resumes", t_kill_root_resumes},
    {"start_short_grow", t_start_short_grow},
    {"slow_dropped", t_slow_dropped},
    {"join_takedown", t_join_takedown},
    {"join_kill_ends", t_join_kill_ends},
    {"join_fails_ends", t_join_fails_ends},
    {"join_parked_leaves", t_join_parked_leaves},
    {"join_start_k3", t_join_start_k3},
    {"join_member_ends", t_join_member_ends},
};

int main(int argc, char **argv)
{
    snprintf(tmp, sizeof tmp, "/tmp/scv-test-elastic-XXXXXX");
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    int rc = scv_test_main(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (rc == 0 && !getenv("SCV_TEST_KEEP") && system(cmd) != 0) rc = 1;
    return rc;
}
