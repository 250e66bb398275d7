/*
 * test_stream.c - streaming mode (ScaDLES): the arrival model and the stream buffers of
 * src/train/stream.c (batches follow the rates, the bounds hold, the wait is the exact
 * arrival time, a rate trace switches rates at its times, truncation against persistence,
 * bad rates and traces named with file:line), the trainer's checks of the options, and
 * `scavenger train --stream-rate` end to end through mpirun (K = 2; the binary is $SCV_BIN,
 * default build/scavenger).
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "scv_test.h"
#include "scv_test_proc.h"
#include "train/stream.h"

#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *bin;
static char tmp[256];

static scv_stream_rates *rates(const char *spec, int K)
{
    scv_stream_rates *r = NULL;
    scv_err err = {0};
    int rc = scv_stream_rates_parse(spec, K, &r, &err);
    CHECK_MSG(rc == SCV_OK, "%s: %s", spec, err.msg);
    return r;
}

static scv_stream_policy policy(int64_t lo, int64_t hi, scv_stream_buffer mode)
{
    scv_stream_policy p = scv_stream_policy_default();
    p.b_min = lo, p.b_max = hi, p.buffer = mode;
    return p;
}

/* A path under the test's directory holding text. */
static const char *write_tmp(const char *name, const char *text)
{
    static char path[8][512];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, 512, "%s/%s", tmp, name);
    FILE *f = fopen(p, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return p;
}

static scv_stream_state st; /* 32 KiB: not on the stack */

/* Steps of 7 ms of work for 3 workers at 1000, 250 and 40 samples/s (the last waits for
 * b_min = 1 most steps): after 2000 steps every worker has taken what arrived, so the
 * consumed counts are in the rates' proportions within a sample or two. */
static void t_batches_follow_rates(void)
{
    scv_stream_rates *r = rates("1000,250,40", 3);
    if (!r) return;
    scv_stream_policy pol = policy(1, 1 << 20, SCV_STREAM_PERSIST);
    scv_stream_init(&st, r, &pol, 0);
    double tau = 0;
    int64_t b[3], waits = 0;
    for (int i = 0; i < 2000; i++) {
        double start = scv_stream_plan(&st, tau, b);
        CHECK(start >= tau);
        waits += start > tau;
        for (int k = 0; k < 3; k++) CHECK(b[k] >= 1);
        scv_stream_consume(&st, start, b);
        for (int k = 0; k < 3; k++) CHECK_EQ_INT(scv_stream_level(&st, k, start, NULL), 0); /* took it all */
        tau = start + 0.007;
    }
    CHECK(waits > 1000); /* 40/s: a sample every 25 ms, a step every 7 */
    const double rate[3] = {1000, 250, 40};
    for (int k = 0; k < 3; k++) {
        CHECK_EQ_INT(st.consumed[k], (int64_t)floor(scv_stream_arrived(r, k, st.tau)));
        CHECK_EQ_INT(st.dropped[k], 0);
        CHECK_NEAR((double)st.consumed[k], rate[k] / rate[0] * (double)st.consumed[0], 0, 2);
    }
    scv_stream_rates_free(r);
}

/* Fast streams against b_max = 64: no batch over 64; truncated buffers never over 64, with
 * arrived = consumed + dropped + buffer; persisted buffers grow, dropping nothing. */
static void t_bounds(void)
{
    scv_stream_rates *r = rates("100000,3000", 2);
    if (!r) return;
    for (int mode = 0; mode < 2; mode++) {
        scv_stream_policy pol = policy(8, 64, mode ? SCV_STREAM_PERSIST : SCV_STREAM_TRUNCATE);
        scv_stream_init(&st, r, &pol, 0);
        double tau = 0;
        int64_t b[2];
        for (int i = 0; i < 500; i++) {
            double start = scv_stream_plan(&st, tau, b);
            for (int k = 0; k < 2; k++) {
                CHECK(b[k] >= 8 && b[k] <= 64);
                int64_t lvl = scv_stream_level(&st, k, start, NULL);
                if (!mode) CHECK(lvl <= 64);
            }
            scv_stream_consume(&st, start, b);
            for (int k = 0; k < 2; k++) {
                int64_t lvl = scv_stream_level(&st, k, start, NULL);
                CHECK_EQ_INT(st.consumed[k] + st.dropped[k] + lvl, (int64_t)floor(scv_stream_arrived(r, k, start)));
                if (mode) CHECK_EQ_INT(st.dropped[k], 0);
            }
            tau = start + 0.01; /* 1000 and 30 samples arrive per step */
        }
        int64_t lvl0 = scv_stream_level(&st, 0, st.tau, NULL);
        if (!mode) CHECK(st.dropped[0] > 400000 && lvl0 == 0);
        else CHECK(lvl0 > 400000); /* persistence: O(S T) kept */
        CHECK_EQ_INT(st.consumed[0], 500 * 64);
    }
    scv_stream_rates_free(r);
}

/* A stream under b_min: the step starts exactly when the slowest buffer reaches b_min. */
static void t_wait_is_arrival_time(void)
{
    scv_stream_rates *r = rates("500,2000", 2);
    if (!r) return;
    scv_stream_policy pol = policy(8, 1024, SCV_STREAM_TRUNCATE);
    scv_stream_init(&st, r, &pol, 0);
    int64_t b[2];
    double start = scv_stream_plan(&st, 0, b);
    CHECK_NEAR(start, 8.0 / 500, 1e-12, 0); /* 16 ms: worker 0's 8th sample */
    CHECK_EQ_INT(b[0], 8);
    CHECK_EQ_INT(b[1], 32);
    scv_stream_consume(&st, start, b);
    /* 4 ms of work: worker 0 has 2 of 8, so the next step waits for the 16th sample */
    start = scv_stream_plan(&st, 0.020, b);
    CHECK_NEAR(start, 16.0 / 500, 1e-12, 0);
    CHECK_EQ_INT(b[0], 8);
    CHECK_EQ_INT(b[1], 32);
    CHECK(floor(scv_stream_arrived(r, 0, start)) >= 16); /* exact to the bit: the sample is there */
    scv_stream_consume(&st, start, b);
    /* no wait when both hold b_min: the start is the clock itself */
    start = scv_stream_plan(&st, 0.060, b);
    CHECK(start == 0.060);
    CHECK_EQ_INT(b[0], 14);
    CHECK_EQ_INT(b[1], 56);
    /* the exact-to-the-bit rule on awkward rates: reach() gives the first double that delivers */
    scv_stream_rates *q = rates("3,7.1", 2);
    for (int n = 1; q && n < 2000; n++) {
        double t = scv_stream_reach(q, 1, 0, n);
        CHECK(scv_stream_arrived(q, 1, t) >= n && scv_stream_arrived(q, 1, nextafter(t, 0)) < n);
    }
    scv_stream_rates_free(q);
    scv_stream_rates_free(r);
}

/* A trace: the rates change at the stated times (comments and blank lines skipped). */
static void t_rate_trace(void)
{
    const char *path = write_tmp("trace.txt", "# time  w0  w1\n"
                                              "0   100 100\n"
                                              "\n"
                                              "1   0   300   # worker 0 pauses\n"
                                              "2.5 50  50\n");
    scv_stream_rates *r = rates(path, 2);
    if (!r) return;
    CHECK_EQ_INT(scv_stream_rates_workers(r), 2);
    CHECK(scv_stream_rate(r, 0, 0.5) == 100 && scv_stream_rate(r, 0, 1.0) == 0 && scv_stream_rate(r, 0, 2.5) == 50);
    CHECK(scv_stream_rate(r, 1, 0.99) == 100 && scv_stream_rate(r, 1, 2) == 300 && scv_stream_rate(r, 1, 1e6) == 50);
    CHECK_NEAR(scv_stream_arrived(r, 0, 0.5), 50, 1e-12, 0);
    CHECK_NEAR(scv_stream_arrived(r, 0, 2.0), 100, 1e-12, 0);
    CHECK_NEAR(scv_stream_arrived(r, 1, 2.0), 400, 1e-12, 0);
    CHECK_NEAR(scv_stream_arrived(r, 0, 3.0), 125, 1e-12, 0);
    CHECK_NEAR(scv_stream_arrived(r, 1, 3.0), 575, 1e-12, 0);
    CHECK_NEAR(scv_stream_reach(r, 0, 1.2, 110), 2.7, 1e-12, 0); /* through the pause */
    CHECK_NEAR(scv_stream_reach(r, 1, 0, 250), 1.5, 1e-12, 0);
    /* a step at 1.0 after taking everything: worker 0 sends nothing until 2.5, then 50/s */
    scv_stream_policy pol = policy(8, 1 << 20, SCV_STREAM_PERSIST);
    scv_stream_init(&st, r, &pol, 0);
    int64_t b[2], all[2] = {1 << 20, 1 << 20};
    scv_stream_consume(&st, 1.0, all);
    CHECK_EQ_INT(st.consumed[0], 100);
    double start = scv_stream_plan(&st, 1.0, b);
    CHECK_NEAR(start, 2.5 + 8.0 / 50, 1e-12, 0);
    CHECK_EQ_INT(b[0], 8);
    CHECK_EQ_INT(b[1], (int64_t)floor(1.5 * 300 + 0.16 * 50)); /* 458 */
    scv_stream_rates_free(r);
}

/* 20 steps every 1/8 s at 800 and 80 samples/s, b_max 50: truncation keeps 50 and drops
 * 50 a step from worker 0; persistence keeps them (a buffer of 50 per step so far). */
static void t_truncate_vs_persist(void)
{
    scv_stream_rates *r = rates("800,80", 2);
    if (!r) return;
    for (int mode = 0; mode < 2; mode++) {
        scv_stream_policy pol = policy(1, 50, mode ? SCV_STREAM_PERSIST : SCV_STREAM_TRUNCATE);
        scv_stream_init(&st, r, &pol, 0);
        int64_t b[2];
        for (int i = 1; i <= 20; i++) {
            double start = scv_stream_plan(&st, i / 8.0, b);
            CHECK(start == i / 8.0);
            CHECK_EQ_INT(b[0], 50);
            CHECK_EQ_INT(b[1], 10);
            scv_stream_consume(&st, start, b);
        }
        CHECK_EQ_INT(st.consumed[0], 1000);
        CHECK_EQ_INT(st.consumed[1], 200);
        CHECK_EQ_INT(st.dropped[0], mode ? 0 : 1000);
        CHECK_EQ_INT(st.dropped[1], 0);
        CHECK_EQ_INT(scv_stream_level(&st, 0, 2.5, NULL), mode ? 1000 : 0);
    }
    /* the full-batch baseline: b_min = b_max = the even share of B = 64, whatever streams */
    scv_stream_policy full = scv_stream_policy_default();
    full.full_batch = 1;
    scv_stream_init(&st, r, &full, 64);
    int64_t b[2];
    double start = scv_stream_plan(&st, 0, b);
    CHECK_NEAR(start, 32.0 / 80, 1e-12, 0); /* the slow worker's 32nd sample */
    CHECK_EQ_INT(b[0], 32);
    CHECK_EQ_INT(b[1], 32);
    scv_stream_consume(&st, start, b);
    CHECK_EQ_INT(st.dropped[0], 320 - 32); /* a full share kept, the rest dropped */
    scv_stream_rates_free(r);
}

static void expect_error(const char *spec, int K, const char *needle)
{
    scv_stream_rates *r = NULL;
    scv_err err = {0};
    int rc = scv_stream_rates_parse(spec, K, &r, &err);
    CHECK_MSG(rc != SCV_OK && r == NULL, "%s was accepted", spec);
    CHECK_MSG(strstr(err.msg, needle) != NULL, "'%s': expected '%s' in: %s", spec, needle, err.msg);
    scv_stream_rates_free(r);
}

static void t_bad_rates(void)
{
    expect_error("-5,100", 2, "rate 1 ('-5') must be a positive number");
    expect_error("100,0", 2, "rate 2 ('0') must be a positive");
    expect_error("100,,3", 3, "rate 2 ('')");
    expect_error("100,200,300", 2, "3 rates for --workers 2");
    expect_error("100", 2, "1 rate for --workers 2");
    expect_error("1e999,5", 2, "rate 1");
    expect_error("5,2e9", 2, "rate 2 ('2e9') must be a positive number of samples/s, at most 1e+09");
    expect_error("", 1, "--stream-rate: expected");
    expect_error("/no/such/trace", 2, "/no/such/trace': neither rates");
    char want[600];
    const char *p = write_tmp("bad1.txt", "0 100 100\n# fine\n1 x 5\n");
    snprintf(want, sizeof want, "%s:3: 'x' is not a number", p);
    expect_error(p, 2, want);
    p = write_tmp("bad2.txt", "0 100 100\n1 100\n");
    snprintf(want, sizeof want, "%s:2: 1 rate, expected 2 (one per worker: --workers 2", p);
    expect_error(p, 2, want);
    p = write_tmp("bad3.txt", "0 100 100 100\n");
    snprintf(want, sizeof want, "%s:1: 3 rates, expected 2", p);
    expect_error(p, 2, want);
    p = write_tmp("bad4.txt", "0 100 100\n2 50 50\n2 60 60\n");
    snprintf(want, sizeof want, "%s:3: time 2 s is not after the previous line's 2 s", p);
    expect_error(p, 2, want);
    p = write_tmp("bad5.txt", "\n# starts late\n1 100 100\n");
    snprintf(want, sizeof want, "%s:3: the first time is 1 s", p);
    expect_error(p, 2, want);
    p = write_tmp("bad6.txt", "0 100 100\n5 100 -1\n");
    snprintf(want, sizeof want, "%s:2: rate 2 ('-1') must be in [0, 1e+09]", p);
    expect_error(p, 2, want);
    p = write_tmp("bad7.txt", "0 100 100\n5 100 0\n\n# the end\n");
    snprintf(want, sizeof want, "%s:2: worker 1's rate is 0 on the last line", p);
    expect_error(p, 2, want);
    p = write_tmp("bad8.txt", "# nothing\n\n");
    snprintf(want, sizeof want, "%s: no rate lines", p);
    expect_error(p, 2, want);
    p = write_tmp("bad9.txt", "0\n");
    snprintf(want, sizeof want, "%s:1: a time and no rates", p);
    expect_error(p, 1, want);
    /* K = 0: any count, the same on every line */
    p = write_tmp("any.txt", "0 1 2 3\n");
    scv_stream_rates *r = rates(p, 0);
    CHECK_EQ_INT(scv_stream_rates_workers(r), 3);
    scv_stream_rates_free(r);
}

/* The trainer's checks: streaming excludes dynamic batching, --batch-split and elastic
 * mode; the rates must match K; the bounds must be ordered. */
static void t_params_check(void)
{
    scv_stream_rates *r = rates("100,200", 2);
    if (!r) return;
    scv_train_params p = scv_train_params_default();
    p.workers = 2, p.iterations = 1, p.stream = r;
    scv_err err = {0};
    CHECK_EQ_INT(scv_train_params_check(&p, &err), SCV_OK);
    p.dynamic_batching = 1;
    CHECK(scv_train_params_check(&p, &err) == SCV_EINVAL && strstr(err.msg, "not with --dynamic-batching"));
    p.dynamic_batching = 0;
    double w[2] = {1, 2};
    p.rank_weights = w;
    CHECK(scv_train_params_check(&p, &err) == SCV_EINVAL && strstr(err.msg, "not with --batch-split"));
    p.rank_weights = NULL;
    p.workers = 3, p.batch = 64;
    CHECK(scv_train_params_check(&p, &err) == SCV_EINVAL && strstr(err.msg, "2 rates for --workers 3"));
    p.workers = 2;
    p.stream_policy.b_min = 100, p.stream_policy.b_max = 10;
    CHECK(scv_train_params_check(&p, &err) == SCV_EINVAL && strstr(err.msg, "--stream-bounds 100,10"));
    p.stream_policy.full_batch = 1; /* the bounds are then the shares of B */
    CHECK_EQ_INT(scv_train_params_check(&p, &err), SCV_OK);
    scv_stream_rates_free(r);
}

/* The local batches of every iteration line of a metrics file: sums and the checks. */
static int read_batches(const char *path, int64_t sum[2], int *max_b, int *all_32, double *wait, int64_t *drop0,
                        double *clock)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    int n = 0;
    sum[0] = sum[1] = 0, *max_b = 0, *all_32 = 1, *wait = 0, *drop0 = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (!strstr(line, "\"type\":\"iter\"")) continue;
        const char *lb = strstr(line, "\"local_batches\":["), *w = strstr(line, "\"stream_wait\":"),
                   *d = strstr(line, "\"stream_dropped\":["), *ck = strstr(line, "\"stream_clock\":");
        long long a = -1, b = -1, d0 = -1;
        double wt = -1;
        CHECK_MSG(lb && sscanf(lb, "\"local_batches\":[%lld,%lld]", &a, &b) == 2, "%s", line);
        CHECK_MSG(w && sscanf(w, "\"stream_wait\":%lf", &wt) == 1 && wt >= 0, "%s", line);
        CHECK_MSG(d && sscanf(d, "\"stream_dropped\":[%lld", &d0) == 1, "%s", line);
        CHECK(strstr(line, "\"stream_buffers\":[") != NULL);
        CHECK_MSG(ck && sscanf(ck, "\"stream_clock\":%lf", clock) == 1, "%s", line);
        sum[0] += a, sum[1] += b, *wait += wt, *drop0 = d0;
        if (a > *max_b) *max_b = (int)a;
        if (b > *max_b) *max_b = (int)b;
        *all_32 &= a == 32 && b == 32;
        n++;
    }
    if (f) fclose(f);
    return n;
}

#define JOB "--model mlp --hidden 32 --dataset synthetic:2000 --seed 3 --progress never --workers 2"

/* K = 2 at 2000 and 500 samples/s: the local batches are 4:1 and within the bounds; the
 * full-batch baseline takes 32 + 32 every step and waits for the slow stream. */
static void t_train_end_to_end(void)
{
    char out[8192], m[600];
    snprintf(m, sizeof m, "%s/s.jsonl", tmp);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --stream-rate 2000,500 --stream-bounds 8,256 --lr 0.02 --lr-scaling linear "
                                      "--iterations 60 --metrics %s --json", bin, m), 0);
    int64_t sum[2];
    int max_b, all_32;
    double wait, clock;
    int64_t drop0;
    CHECK_EQ_INT(read_batches(m, sum, &max_b, &all_32, &wait, &drop0, &clock), 60);
    double ratio = sum[1] > 0 ? (double)sum[0] / (double)sum[1] : 0;
    CHECK_MSG(ratio > 3.6 && ratio < 4.4, "local batches %lld:%lld, ratio %.3f (rates 4:1)", (long long)sum[0],
              (long long)sum[1], ratio);
    CHECK_MSG(max_b <= 256, "a local batch of %d over --stream-bounds' 256", max_b);
    CHECK(wait > 0);
    const char *last = strrchr(out, '{');
    CHECK_MSG(last && strstr(last, "\"stream_wait_seconds\":") && strstr(last, "\"iterations\":60"), "%s", out);
    /* the baseline */
    snprintf(m, sizeof m, "%s/f.jsonl", tmp);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --stream-rate 2000,500 --stream-full-batch --batch 64 "
                                      "--iterations 15 --metrics %s", bin, m), 0);
    CHECK_MSG(strstr(out, "streaming: waited"), "%s", out);
    CHECK_EQ_INT(read_batches(m, sum, &max_b, &all_32, &wait, &drop0, &clock), 15);
    CHECK(all_32);
    CHECK(wait > 0);
    /* the slow stream delivers its 15 x 32 samples at 500/s by 0.96 s, not before */
    CHECK_MSG(clock >= 0.96 - 1e-9, "the last step took its data at %.6f s", clock);
    /* worker 0 received >= 1920 by then, took 480 and keeps at most 32 */
    CHECK_MSG(drop0 >= 1920 - 480 - 32, "worker 0 dropped %lld", (long long)drop0);
}

/* Usage errors: exit 2, naming the option (and the file and line of a trace). */
static void t_train_usage_errors(void)
{
    char out[8192];
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --stream-rate 100 --iterations 1", bin), 2);
    CHECK_MSG(strstr(out, "--stream-rate '100': 1 rate for --workers 2"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --stream-rate 100,-3 --iterations 1", bin), 2);
    CHECK_MSG(strstr(out, "rate 2 ('-3') must be a positive"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --stream-rate 100,100 --dynamic-batching --iterations 1", bin), 2);
    CHECK_MSG(strstr(out, "not with --dynamic-batching"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --stream-rate 100,100 --batch-split 1,2 --iterations 1", bin), 2);
    CHECK_MSG(strstr(out, "not with --batch-split"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --stream-rate 100,100 --stream-bounds 9,3 --iterations 1", bin), 2);
    CHECK_MSG(strstr(out, "--stream-bounds '9,3'"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --stream-rate 100,100 --stream-buffer keep --iterations 1", bin), 2);
    CHECK_MSG(strstr(out, "--stream-buffer 'keep'"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --stream-bounds 8,64 --iterations 1", bin), 2);
    CHECK_MSG(strstr(out, "--stream-bounds needs --stream-rate"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --stream-rate 1,1 --stream-full-batch --stream-bounds 8,64 "
                                      "--iterations 1", bin), 2);
    CHECK_MSG(strstr(out, "not with --stream-full-batch"), "%s", out);
    const char *p = write_tmp("cli.txt", "0 100 100\n0.5 100 1OO\n");
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --stream-rate %s --iterations 1", bin, p), 2);
    char want[600];
    snprintf(want, sizeof want, "%s:2: '1OO' is not a number", p);
    CHECK_MSG(strstr(out, want), "%s", out);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Ctrl-C while the workers wait 8 s for a 1 sample/s stream: the wait is cut short, the
 * step ends and the job exits 130 at once. */
static void t_interrupt_during_wait(void)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s train " JOB " --stream-rate 1,1 --iterations 5 >%s/int.log 2>&1", bin, tmp);
    pid_t pid = spawn_group(cmd);
    struct timespec t = {1, 500000000};
    nanosleep(&t, NULL);
    double t0 = now();
    kill(-pid, SIGINT); /* as a terminal's Ctrl-C: the whole process group */
    int st = 0;
    waitpid(pid, &st, 0);
    double dt = now() - t0;
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    CHECK_MSG(code == 130, "exit %d", code);
    CHECK_MSG(dt < 4, "%.2f s from Ctrl-C to the end (the wait was 8 s)", dt);
}

static const scv_test tests[] = {
    {"batches_follow_rates", t_batches_follow_rates},
    {"bounds", t_bounds},
    {"wait_is_arrival_time", t_wait_is_arrival_time},
    {"rate_trace", t_rate_trace},
    {"truncate_vs_persist", t_truncate_vs_persist},
    {"bad_rates", t_bad_rates},
    {"params_check", t_params_check},
    {"train_usage_errors", t_train_usage_errors},
    {"train_end_to_end", t_train_end_to_end},
    {"interrupt_during_wait", t_interrupt_during_wait},
};

int main(int argc, char **argv)
{
    bin = getenv("SCV_BIN") ? getenv("SCV_BIN") : "build/scavenger";
    snprintf(tmp, sizeof tmp, "/tmp/scv-test-stream-%ld", (long)getpid());
    mkdir(tmp, 0755);
    int rc = scv_test_main(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (rc == 0 && system(cmd) != 0) rc = 1;
    return rc;
}
