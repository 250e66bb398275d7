/*
 * test_stream.c - streaming mode (ScaDLES): the arrival model and the stream buffers of
 * src/train/stream.c (batches follow the rates, the bounds hold, the wait is the exact
 * arrival time, a rate trace switches rates at its times, truncation against persistence,
 * bad rates and traces named with file:line), the trainer's checks of the options, non-IID
 * streams and data injection (src/train/noniid.c: the skewed slices are a permutation of the
 * window, injection keeps every worker's total), and `scavenger train --stream-rate` end to
 * end through mpirun (K = 2; the binary is $SCV_BIN, default build/scavenger).
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "train/train.h"
#include "scv_test.h"
#include "scv_test_proc.h"
#include "train/stream.h"
#include "train/noniid.h"
#include "train/sched.h"

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
    /* non-IID skew in [0, 1], injection's alpha and beta in (0, 1], with or without streaming */
    p.noniid_skew = 1.5;
    CHECK(scv_train_params_check(&p, &err) == SCV_EINVAL && strstr(err.msg, "--stream-noniid 1.5: must be in [0, 1]"));
    p.noniid_skew = 1;
    CHECK_EQ_INT(scv_train_params_check(&p, &err), SCV_OK);
    p.inject_alpha = 0.5, p.inject_beta = 0;
    CHECK(scv_train_params_check(&p, &err) == SCV_EINVAL && strstr(err.msg, "--stream-inject 0.5,0"));
    p.inject_beta = 1, p.stream = NULL;
    CHECK_EQ_INT(scv_train_params_check(&p, &err), SCV_OK);
    scv_stream_rates_free(r);
}

/* ---- non-IID streams and data injection (src/train/noniid.c) ---- */

static uint8_t ni_labels[1000]; /* sample s has class s mod 10 */
static int32_t ni_win[1000], ni_out[1000], ni_out2[1000], ni_scratch[1000];

/* A window of n samples in a seeded order (as the trainer's epoch order): samples 0..n-1
 * (balanced: n/10 of each class when n is a multiple of 10), or the first n of an order of
 * all 1000 (a random mix, as a step's window). */
static void ni_window(int n, uint64_t seed, int balanced)
{
    static int32_t perm[1000];
    for (int s = 0; s < 1000; s++) ni_labels[s] = (uint8_t)(s % 10);
    scv_epoch_order(seed, 0, balanced ? n : 1000, perm);
    memcpy(ni_win, perm, sizeof(int32_t) * (size_t)n);
}

/* 1 when out[0..n) is a permutation of the window (no sample lost, none twice). */
static int is_permutation(const int32_t *out, int n)
{
    static int seen[1000];
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < n; i++) seen[ni_win[i]]++;
    for (int i = 0; i < n; i++)
        if (out[i] < 0 || out[i] >= 1000 || --seen[out[i]] < 0) return 0;
    return 1;
}

static int64_t home_in(const int32_t *slice, int64_t n, int k, int K)
{
    int64_t h = 0;
    for (int64_t i = 0; i < n; i++) h += scv_noniid_home(ni_labels[slice[i]], k, K, 10);
    return h;
}

/* The home classes: round-robin over K <= 10 workers; with K > 10, k mod 10. */
static void t_noniid_home_classes(void)
{
    CHECK(scv_noniid_home(0, 0, 3, 10) && scv_noniid_home(9, 0, 3, 10) && scv_noniid_home(4, 1, 3, 10));
    CHECK(!scv_noniid_home(1, 0, 3, 10) && !scv_noniid_home(9, 2, 3, 10));
    CHECK(scv_noniid_home(3, 13, 16, 10) && scv_noniid_home(3, 3, 16, 10) && !scv_noniid_home(4, 13, 16, 10));
    for (int c = 0; c < 10; c++) { /* every class is home to exactly one of K = 3 workers */
        int n = 0;
        for (int k = 0; k < 3; k++) n += scv_noniid_home(c, k, 3, 10);
        CHECK_EQ_INT(n, 1);
    }
}

/* SKEW = 1 with enough home samples: every slice is all home classes; the result is a
 * permutation of the window and depends on the seed alone. SKEW = 0: the window unchanged. */
static void t_noniid_assign(void)
{
    ni_window(300, 7, 1); /* 30 of each class: groups of K = 3 hold 120, 90, 90 */
    const int64_t counts[3] = {120, 90, 90};
    scv_noniid_assign(ni_win, 300, ni_labels, 10, 3, counts, 1.0, 42, ni_out, ni_scratch);
    CHECK(is_permutation(ni_out, 300));
    CHECK_EQ_INT(home_in(ni_out, 120, 0, 3), 120);
    CHECK_EQ_INT(home_in(ni_out + 120, 90, 1, 3), 90);
    CHECK_EQ_INT(home_in(ni_out + 210, 90, 2, 3), 90);
    /* deterministic for a seed, another seed another order; in place gives the same */
    scv_noniid_assign(ni_win, 300, ni_labels, 10, 3, counts, 1.0, 42, ni_out2, ni_scratch);
    CHECK(!memcmp(ni_out, ni_out2, sizeof(int32_t) * 300));
    scv_noniid_assign(ni_win, 300, ni_labels, 10, 3, counts, 1.0, 43, ni_out2, ni_scratch);
    CHECK(memcmp(ni_out, ni_out2, sizeof(int32_t) * 300) != 0);
    memcpy(ni_out2, ni_win, sizeof(int32_t) * 300);
    scv_noniid_assign(ni_out2, 300, ni_labels, 10, 3, counts, 1.0, 42, ni_out2, ni_scratch);
    CHECK(!memcmp(ni_out, ni_out2, sizeof(int32_t) * 300));
    /* SKEW = 0 (and K = 1): unchanged, IID as without the option */
    scv_noniid_assign(ni_win, 300, ni_labels, 10, 3, counts, 0.0, 42, ni_out, ni_scratch);
    CHECK(!memcmp(ni_out, ni_win, sizeof(int32_t) * 300));
    const int64_t all[1] = {300};
    scv_noniid_assign(ni_win, 300, ni_labels, 10, 1, all, 1.0, 42, ni_out, ni_scratch);
    CHECK(!memcmp(ni_out, ni_win, sizeof(int32_t) * 300));
    /* SKEW = 0.5 over uneven slices: round(0.5 b_k) home samples at least (the rest is drawn
     * from what is left, home classes included) */
    const int64_t uneven[3] = {37, 150, 113};
    scv_noniid_assign(ni_win, 300, ni_labels, 10, 3, uneven, 0.5, 5, ni_out, ni_scratch);
    CHECK(is_permutation(ni_out, 300));
    CHECK(home_in(ni_out, 37, 0, 3) >= 19 && home_in(ni_out + 37, 150, 1, 3) >= 75 &&
          home_in(ni_out + 187, 113, 2, 3) >= 57);
    /* the window is short of home samples: SKEW = 1 takes all it has (90 of group 1 and of
     * group 2), then the rest */
    const int64_t even[3] = {100, 100, 100};
    scv_noniid_assign(ni_win, 300, ni_labels, 10, 3, even, 1.0, 9, ni_out, ni_scratch);
    CHECK(is_permutation(ni_out, 300));
    CHECK_EQ_INT(home_in(ni_out, 100, 0, 3), 100);
    CHECK_EQ_INT(home_in(ni_out + 100, 100, 1, 3), 90);
    CHECK_EQ_INT(home_in(ni_out + 200, 100, 2, 3), 90);
    /* more workers than classes: K = 12, worker k's home class is k mod 10 (workers 0 and 10
     * share class 0's 30 samples: 15 each) */
    int64_t twelve[12];
    for (int k = 0; k < 12; k++) twelve[k] = 25;
    scv_noniid_assign(ni_win, 300, ni_labels, 10, 12, twelve, 1.0, 3, ni_out, ni_scratch);
    CHECK(is_permutation(ni_out, 300));
    CHECK_EQ_INT(home_in(ni_out + 0, 25, 0, 12), 15);
    CHECK_EQ_INT(home_in(ni_out + 250, 25, 10, 12), 15);
    CHECK_EQ_INT(home_in(ni_out + 50, 25, 2, 12), 25);
}

/* Over many random windows at SKEW 0.9, K = 2: the home share is about 0.9 + 0.1/2 (the
 * random rest is half home), against 1/2 without skew. */
static void t_noniid_share(void)
{
    int64_t h = 0, h0 = 0, t = 0;
    const int64_t counts[2] = {100, 100};
    for (uint64_t seed = 1; seed <= 200; seed++) {
        ni_window(200, seed, 0);
        scv_noniid_assign(ni_win, 200, ni_labels, 10, 2, counts, 0.9, seed, ni_out, ni_scratch);
        h += home_in(ni_out, 100, 0, 2) + home_in(ni_out + 100, 100, 1, 2);
        h0 += home_in(ni_win, 100, 0, 2) + home_in(ni_win + 100, 100, 1, 2);
        t += 200;
    }
    double f = (double)h / (double)t, f0 = (double)h0 / (double)t;
    CHECK_MSG(f > 0.92 && f < 0.97, "home share %.4f at skew 0.9", f);
    CHECK_MSG(f0 > 0.45 && f0 < 0.55, "home share %.4f of the unchanged window", f0);
}

/* Injection: b' = round(b / (1 + alpha beta K)) (half up), shares round(beta b'), every
 * worker's total exactly b_k, the copies come from the chosen workers' own slices. */
static void t_inject_plan(void)
{
    static scv_inject_plan pl;
    /* K = 4, b = 60, alpha = beta = 1/2: f = 2, b' = 30, m = 2 chosen share 15 each; the
     * others receive 30 (their room b - b'), the chosen 15 */
    const int64_t b4[4] = {60, 60, 60, 60};
    scv_inject_make(&pl, b4, 4, 0.5, 0.5, 11);
    CHECK_EQ_INT(pl.m, 2);
    CHECK(pl.chosen[0] < pl.chosen[1] && pl.chosen[1] < 4);
    for (int k = 0; k < 4; k++) {
        int ch = k == pl.chosen[0] || k == pl.chosen[1];
        CHECK_EQ_INT(pl.nominal[k], 30);
        CHECK_EQ_INT(pl.share[k], ch ? 15 : 0);
        CHECK_EQ_INT(pl.recv[k], ch ? 15 : 30);
        CHECK_EQ_INT(pl.own[k] + pl.recv[k], 60);
    }
    CHECK_EQ_INT(pl.injected, 90);
    /* the rounding: b = 64, K = 2, 1/2, 1/2: b' = round(42.67) = 43, s = round(21.5) = 22;
     * the other's room is 64 - 43 = 21: it takes 21 copies and 43 of its own */
    const int64_t b2[2] = {64, 64};
    scv_inject_make(&pl, b2, 2, 0.5, 0.5, 3);
    int j = pl.chosen[0], o = 1 - j;
    CHECK_EQ_INT(pl.m, 1);
    CHECK_EQ_INT(pl.nominal[0], 43);
    CHECK_EQ_INT(pl.share[j], 22);
    CHECK_EQ_INT(pl.recv[o], 21);
    CHECK_EQ_INT(pl.own[o], 43);
    CHECK_EQ_INT(pl.recv[j], 0);
    CHECK_EQ_INT(pl.own[j], 64);
    /* uneven streams, alpha = beta = 1: b = 200, 10, f = 3, b' = 67, 3; the slow worker has
     * room for 7 copies only, the fast one takes the 3 the slow one shares */
    const int64_t bu[2] = {200, 10};
    scv_inject_make(&pl, bu, 2, 1, 1, 5);
    CHECK_EQ_INT(pl.m, 2);
    CHECK_EQ_INT(pl.recv[1], 7);
    CHECK_EQ_INT(pl.own[1], 3);
    CHECK_EQ_INT(pl.recv[0], 3);
    CHECK_EQ_INT(pl.own[0], 197);
    /* the same seed chooses the same workers; over seeds every worker is chosen */
    int chosen[5] = {0};
    for (uint64_t seed = 0; seed < 200; seed++) {
        static scv_inject_plan a, c;
        const int64_t b5[5] = {50, 50, 50, 50, 50};
        scv_inject_make(&a, b5, 5, 0.3, 1, seed);
        scv_inject_make(&c, b5, 5, 0.3, 1, seed);
        CHECK(a.m == 2 && c.m == 2 && a.chosen[0] == c.chosen[0] && a.chosen[1] == c.chosen[1]);
        chosen[a.chosen[0]]++, chosen[a.chosen[1]]++;
    }
    for (int k = 0; k < 5; k++) CHECK_MSG(chosen[k] > 50 && chosen[k] < 110, "worker %d chosen %d of 200", k, chosen[k]);
}

/* A step end to end: a skewed window of own samples, then each worker's batch: its own
 * slice plus copies, the copies the first samples of the chosen workers' slices; totals b_k
 * and the own slices a permutation of the window. */
static void t_inject_batches(void)
{
    static scv_inject_plan pl;
    static int32_t idx[1000];
    const int64_t b[3] = {90, 70, 80};
    scv_inject_make(&pl, b, 3, 0.6, 0.8, 21); /* m = 2 */
    CHECK_EQ_INT(pl.m, 2);
    int64_t U = 0, off[3];
    for (int k = 0; k < 3; k++) off[k] = U, U += pl.own[k];
    CHECK_EQ_INT(U + pl.injected, 240);
    ni_window((int)U, 4, 0);
    scv_noniid_assign(ni_win, U, ni_labels, 10, 3, pl.own, 0.9, 8, ni_out, ni_scratch);
    CHECK(is_permutation(ni_out, (int)U));
    for (int k = 0; k < 3; k++) {
        int64_t n = scv_worker_batch(ni_out, pl.own, off, &pl, k, idx), r[3];
        CHECK_EQ_INT(n, b[k]);
        CHECK(!memcmp(idx, ni_out + off[k], sizeof(int32_t) * (size_t)pl.own[k]));
        scv_inject_from(&pl, k, r);
        int64_t at = pl.own[k], got = 0;
        for (int i = 0; i < pl.m; i++) {
            int jj = pl.chosen[i];
            CHECK(r[i] <= pl.share[jj] && (jj != k || r[i] == 0));
            CHECK(!memcmp(idx + at, ni_out + off[jj], sizeof(int32_t) * (size_t)r[i])); /* j's own samples */
            at += r[i], got += r[i];
        }
        CHECK_EQ_INT(got, pl.recv[k]);
    }
}

/* The local batches of every iteration line of a metrics file: sums and the checks. The sums
 * leave out the steps where a local batch reached cap (0: none left out), counted in *capped:
 * a step that came late (a loaded machine) takes the fast stream's cap and the slow one's
 * whole backlog, not the rates' shares. */
static int read_batches(const char *path, int cap, int64_t sum[2], int *capped, int *max_b, int *all_32, double *wait,
                        int64_t *drop0, double *clock)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    int n = 0;
    sum[0] = sum[1] = 0, *capped = 0, *max_b = 0, *all_32 = 1, *wait = 0, *drop0 = 0;
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
        if (cap && (a >= cap || b >= cap)) ++*capped;
        else sum[0] += a, sum[1] += b;
        *wait += wt, *drop0 = d0;
        if (a > *max_b) *max_b = (int)a;
        if (b > *max_b) *max_b = (int)b;
        *all_32 &= a == 32 && b == 32;
        n++;
    }
    if (f) fclose(f);
    return n;
}

#define JOB "--model mlp --hidden 32 --dataset synthetic:2000 --seed 3 --progress never --workers 2"

/* K = 2 at 2000 and 500 samples/s: the local batches are 4:1 (on the steps that no bound
 * cut, most of them) and within the bounds; the full-batch baseline takes 32 + 32 every step
 * and waits for the slow stream. */
static void t_train_end_to_end(void)
{
    char out[8192], m[600];
    snprintf(m, sizeof m, "%s/s.jsonl", tmp);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --stream-rate 2000,500 --stream-bounds 8,256 --lr 0.02 --lr-scaling linear "
                                      "--iterations 60 --metrics %s --json", bin, m), 0);
    int64_t sum[2];
    int capped, max_b, all_32;
    double wait, clock;
    int64_t drop0;
    CHECK_EQ_INT(read_batches(m, 256, sum, &capped, &max_b, &all_32, &wait, &drop0, &clock), 60);
    double ratio = sum[1] > 0 ? (double)sum[0] / (double)sum[1] : 0;
    CHECK_MSG(ratio > 3.6 && ratio < 4.4, "local batches %lld:%lld, ratio %.3f (rates 4:1)", (long long)sum[0],
              (long long)sum[1], ratio);
    CHECK_MSG(capped <= 20, "%d of 60 steps reached the bound 256", capped);
    CHECK_MSG(max_b <= 256, "a local batch of %d over --stream-bounds' 256", max_b);
    CHECK(wait > 0);
    const char *last = strrchr(out, '{');
    CHECK_MSG(last && strstr(last, "\"stream_wait_seconds\":") && strstr(last, "\"iterations\":60"), "%s", out);
    /* the baseline */
    snprintf(m, sizeof m, "%s/f.jsonl", tmp);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --stream-rate 2000,500 --stream-full-batch --batch 64 "
                                      "--iterations 15 --metrics %s", bin, m), 0);
    CHECK_MSG(strstr(out, "streaming: waited"), "%s", out);
    CHECK_EQ_INT(read_batches(m, 0, sum, &capped, &max_b, &all_32, &wait, &drop0, &clock), 15);
    CHECK(all_32);
    CHECK(wait > 0);
    /* the slow stream delivers its 15 x 32 samples at 500/s by 0.96 s, not before */
    CHECK_MSG(clock >= 0.96 - 1e-9, "the last step took its data at %.6f s", clock);
    /* worker 0 received >= 1920 by then, took 480 and keeps at most 32 */
    CHECK_MSG(drop0 >= 1920 - 480 - 32, "worker 0 dropped %lld", (long long)drop0);
}

/* The value of "key": in a JSON text (NaN when absent). */
static double json_num(const char *text, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *at = text ? strstr(text, k) : NULL;
    return at ? strtod(at + strlen(k), NULL) : NAN;
}

/* Non-IID streams end to end, K = 2 (about 1 s a run): at skew 0.9 the workers' batches are
 * mostly their home classes; data injection (0.5, 0.5) mixes them (about 0.8 expected, 0.95
 * without); every iteration's batch is its own samples plus the copies, and the epoch
 * moves by the own samples only. */
static void t_train_noniid(void)
{
    char out[8192], m[600];
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --stream-rate 20000,20000 --stream-bounds 32,64 --stream-noniid 0.9 "
                                      "--iterations 30 --no-final-eval --json", bin), 0);
    const char *last = strrchr(out, '{');
    double skewed = json_num(last, "home_fraction_mean");
    CHECK_MSG(skewed > 0.88, "home share %.4f at --stream-noniid 0.9: %s", skewed, out);
    CHECK_MSG(last && strstr(last, "\"home_fraction\":[") && json_num(last, "injected_samples") == 0, "%s", out);
    snprintf(m, sizeof m, "%s/ni.jsonl", tmp);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --stream-rate 20000,20000 --stream-bounds 32,64 --stream-noniid 0.9 "
                                      "--stream-inject 0.5,0.5 --iterations 30 --no-final-eval --json --metrics %s", bin, m), 0);
    last = strrchr(out, '{');
    double mixed = json_num(last, "home_fraction_mean"), inj = json_num(last, "injected_samples"),
           bytes = json_num(last, "injected_bytes");
    CHECK_MSG(mixed < skewed - 0.06 && mixed > 0.6, "home share %.4f with injection, %.4f without", mixed, skewed);
    CHECK_MSG(inj > 0 && bytes == inj * (784 * 4 + 1), "%s", out); /* synthetic: 28x28 floats and a label */
    FILE *f = fopen(m, "r");
    char line[4096];
    int n = 0;
    int64_t copies = 0, seen = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (!strstr(line, "\"type\":\"iter\"")) continue;
        long long lb[2] = {-1, -1}, ob[2] = {-1, -1}, hs[2] = {-1, -1};
        const char *a = strstr(line, "\"local_batches\":["), *o = strstr(line, "\"own_batches\":["),
                   *h = strstr(line, "\"home_samples\":[");
        CHECK_MSG(a && sscanf(a, "\"local_batches\":[%lld,%lld]", &lb[0], &lb[1]) == 2, "%s", line);
        CHECK_MSG(o && sscanf(o, "\"own_batches\":[%lld,%lld]", &ob[0], &ob[1]) == 2, "%s", line);
        CHECK_MSG(h && sscanf(h, "\"home_samples\":[%lld,%lld]", &hs[0], &hs[1]) == 2, "%s", line);
        double b = json_num(line, "batch"), es = json_num(line, "epoch_samples"), ij = json_num(line, "injected");
        CHECK_MSG(b == lb[0] + lb[1] && es == ob[0] + ob[1] && ij == b - es && hs[0] <= lb[0] && hs[1] <= lb[1],
                  "%s", line);
        copies += (int64_t)ij, seen += (int64_t)es, n++;
    }
    if (f) fclose(f);
    CHECK_EQ_INT(n, 30);
    CHECK_EQ_INT(copies, (int64_t)inj);
    CHECK_MSG(seen == (int64_t)json_num(last, "samples_seen"), "the epoch moved by %lld: %s", (long long)seen, out);
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
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --stream-rate 1,1 --stream-noniid 1.5 --iterations 1", bin), 2);
    CHECK_MSG(strstr(out, "--stream-noniid 1.5: must be in [0, 1]"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --stream-rate 1,1 --stream-inject 0.5 --iterations 1", bin), 2);
    CHECK_MSG(strstr(out, "--stream-inject 0.5: expected ALPHA,BETA"), "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s train " JOB " --stream-inject 0,0.5 --iterations 1", bin), 2);
    CHECK_MSG(strstr(out, "--stream-inject 0,0.5: expected ALPHA,BETA, each in (0, 1]"), "%s", out);
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
    {"noniid_home_classes", t_noniid_home_classes},
    {"noniid_assign", t_noniid_assign},
    {"noniid_share", t_noniid_share},
    {"inject_plan", t_inject_plan},
    {"inject_batches", t_inject_batches},
    {"train_usage_errors", t_train_usage_errors},
    {"train_end_to_end", t_train_end_to_end},
    {"train_noniid", t_train_noniid},
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
