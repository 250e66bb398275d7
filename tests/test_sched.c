/*
 * test_sched.c - batch split over ranks, epoch order, the learning-rate schedule and the
 * straggler rule.
 */
#include "scv.h"
#include "train/train.h"
#include "scv_test.h"
#include "train/sched.h"
#include "train/straggler.h"
#include "train/dynbatch.h"
#include "core/util.h"

static void t_split_even_and_weighted(void)
{
    int64_t c[8], o[8];
    scv_split_batch(10, 3, NULL, c, o);
    CHECK_EQ_INT(c[0], 4);
    CHECK_EQ_INT(c[1], 3);
    CHECK_EQ_INT(c[2], 3);
    CHECK_EQ_INT(o[2], 7);
    double w[3] = {1, 3, 0.5};
    scv_split_batch(90, 3, w, c, o);
    CHECK_EQ_INT(c[0], 20);
    CHECK_EQ_INT(c[1], 60);
    CHECK_EQ_INT(c[2], 10);
    for (int B = 1; B < 200; B += 7)
        for (int K = 1; K <= 8; K++) {
            double ww[8] = {1, 2, 3, 1, 1, 5, 0.25, 1};
            scv_split_batch(B, K, ww, c, o);
            int64_t sum = 0;
            for (int k = 0; k < K; k++) {
                CHECK(c[k] >= 0);
                CHECK_EQ_INT(o[k], sum);
                sum += c[k];
            }
            CHECK_EQ_INT(sum, B);
        }
}

static void t_epoch_order_is_permutation(void)
{
    enum { N = 1000 };
    int32_t a[N], b[N], seen[N] = {0};
    scv_epoch_order(1, 0, N, a);
    scv_epoch_order(1, 1, N, b);
    int same = 0;
    for (int i = 0; i < N; i++) {
        CHECK(a[i] >= 0 && a[i] < N);
        if (a[i] >= 0 && a[i] < N) seen[a[i]]++;
        same += a[i] == b[i];
    }
    for (int i = 0; i < N; i++) CHECK(seen[i] == 1);
    CHECK(same < 20); /* epochs are shuffled differently */
    scv_epoch_order(1, 0, N, b);
    CHECK(memcmp(a, b, sizeof a) == 0); /* and reproducibly */
}

/* Walks one epoch as the trainer does, changing K and B part-way (a resume with another
 * configuration): every sample must be consumed exactly once. */
static void t_each_sample_once_per_epoch_whatever_k(void)
{
    enum { N = 997 };
    int32_t perm[N];
    int hits[N] = {0};
    scv_epoch_order(9, 3, N, perm);
    int64_t pos = 0, c[8], o[8];
    int Ks[] = {1, 3, 2, 5}, Bs[] = {64, 30, 17, 100};
    for (int phase = 0; pos < N; phase = (phase + 1) % 4) {
        for (int step = 0; step < 3 && pos < N; step++) {
            int64_t Bcur = N - pos < Bs[phase] ? N - pos : Bs[phase];
            scv_split_batch(Bcur, Ks[phase], NULL, c, o);
            for (int k = 0; k < Ks[phase]; k++)
                for (int64_t i = 0; i < c[k]; i++) hits[perm[pos + o[k] + i]]++;
            pos += Bcur;
        }
    }
    CHECK_EQ_INT(pos, N);
    for (int i = 0; i < N; i++) CHECK_MSG(hits[i] == 1, "sample %d seen %d times", i, hits[i]);
}

static void t_lr_schedule(void)
{
    scv_train_params p = scv_train_params_default();
    p.lr = 0.1;
    p.base_batch = 64;
    CHECK_NEAR(scv_lr_at(&p, 256, 0, 1000), 0.1, 1e-12, 0);
    p.lr_scaling = SCV_LR_SCALE_LINEAR;
    CHECK_NEAR(scv_lr_at(&p, 256, 0, 1000), 0.4, 1e-12, 0);
    p.lr_scaling = SCV_LR_SCALE_SQRT;
    CHECK_NEAR(scv_lr_at(&p, 256, 0, 1000), 0.2, 1e-12, 0);
    p.lr_scaling = SCV_LR_SCALE_NONE;
    p.warmup_epochs = 1;
    CHECK_NEAR(scv_lr_at(&p, 100, 0, 1000), 0.01, 1e-12, 0);    /* (0+100)/1000 */
    CHECK_NEAR(scv_lr_at(&p, 100, 400, 1000), 0.05, 1e-12, 0);
    CHECK_NEAR(scv_lr_at(&p, 100, 2000, 1000), 0.1, 1e-12, 0);
    p.warmup_epochs = 0;
    p.lr_decay = SCV_LR_STEP;
    p.lr_step_epochs = 2;
    p.lr_gamma = 0.5;
    CHECK_NEAR(scv_lr_at(&p, 10, 1999, 1000), 0.1, 1e-12, 0);
    CHECK_NEAR(scv_lr_at(&p, 10, 2000, 1000), 0.05, 1e-12, 0);
    CHECK_NEAR(scv_lr_at(&p, 10, 4500, 1000), 0.025, 1e-12, 0);
    p.lr_decay = SCV_LR_COSINE;
    p.epochs = 4;
    CHECK_NEAR(scv_lr_at(&p, 10, 0, 1000), 0.1, 1e-12, 0);
    CHECK_NEAR(scv_lr_at(&p, 10, 2000, 1000), 0.05, 1e-9, 0);
    CHECK_NEAR(scv_lr_at(&p, 10, 4000, 1000), 0.0, 0, 1e-12);
}

static void t_params_check(void)
{
    scv_train_params p = scv_train_params_default();
    scv_err err = {0};
    CHECK(scv_train_params_check(&p, &err) == SCV_EINVAL); /* no stopping rule */
    CHECK(strstr(err.msg, "stopping") != NULL);
    p.epochs = 1;
    CHECK(scv_train_params_check(&p, &err) == SCV_OK);
    p.workers = 8;
    p.batch = 4;
    CHECK(scv_train_params_check(&p, &err) == SCV_EINVAL);
    CHECK(strstr(err.msg, "--batch 4 is smaller than --workers 8") != NULL);
    p.batch = 64;
    p.target_accuracy = 1.5;
    CHECK(scv_train_params_check(&p, &err) == SCV_EINVAL);
    p.target_accuracy = 0;
    p.resume = 1;
    CHECK(scv_train_params_check(&p, &err) == SCV_EINVAL);
}

/* Integer sets from option and job-file text: ranges, steps, doubling; a step that
 * overflows (fuzzing found "1..6553424:5222...2" overflowing x += step) and sets too large
 * to hold are refused, never undefined. */
static void t_int_sets(void)
{
    int *v = NULL;
    scv_err err = {0};
    CHECK_EQ_INT(scv_parse_int_set("3..10:3", 0, 1, 100, &v, &err), 3);
    CHECK(v && v[0] == 3 && v[1] == 6 && v[2] == 9);
    free(v);
    CHECK_EQ_INT(scv_parse_int_set("1..64", 1, 1, 100, &v, &err), 7);
    CHECK(v && v[6] == 64);
    free(v);
    CHECK_EQ_INT(scv_parse_int_set("1..16777216:9223372036854775807", 1, 1, 1 << 24, &v, &err), 1);
    CHECK(v && v[0] == 1);
    free(v);
    CHECK_EQ_INT(scv_parse_int_set("1..6553424:52222222222222222222222222", 1, 1, 1 << 24, &v, &err), -1);
    CHECK(v == NULL);
    CHECK_EQ_INT(scv_parse_int_set("1..99999999999999999999", 1, 1, 1 << 24, &v, &err), -1);
    CHECK_EQ_INT(scv_parse_int_set("1..16777216", 0, 1, 1 << 24, &v, &err), -1);
    CHECK_MSG(strstr(err.msg, "more than 1048576 values") != NULL, "%s", err.msg);
    CHECK_EQ_INT(scv_parse_int_set("1..2147483647", 1, 1, 2147483647, &v, &err), 31);
    free(v);
}

/* A value given twice, in a list or where ranges overlap, is refused naming it (sweep once
 * trained "--workers 4,4,4" three times and overflowed its figure's buffer on "--batch
 * 8,8"); distinct lists in any order and ranges are fine. */
static void t_int_set_repeats(void)
{
    int *v = NULL;
    scv_err err = {0};
    const char *bad[] = {"8,8", "4,4,4", "1..8,4", "1,2..4,2", "1..64,32", "2..8:2,6", "1..8,8..16"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&err, 0, sizeof err);
        CHECK_EQ_INT(scv_parse_int_set(bad[i], i == 4, 1, 100, &v, &err), -1);
        CHECK(v == NULL);
        CHECK_EQ_INT(err.code, SCV_EINVAL);
        CHECK_MSG(strstr(err.msg, "is repeated") != NULL, "%s: %s", bad[i], err.msg);
    }
    CHECK_MSG(strstr(err.msg, "the value 8 is repeated") != NULL, "%s", err.msg);
    CHECK_EQ_INT(scv_parse_int_set("4,4,4", 0, 1, 100, &v, &err), -1);
    CHECK_MSG(strstr(err.msg, "'4,4,4'") && strstr(err.msg, "value 4 "), "%s", err.msg);
    const char *good[] = {"1..64", "32..4096:32", "1,2,4", "8,4,2", "1..4,8..16", "7"};
    const long n_good[] = {64, 128, 3, 3, 13, 1};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        CHECK_EQ_INT(scv_parse_int_set(good[i], 0, 1, 4096, &v, &err), n_good[i]);
        free(v);
    }
    CHECK_EQ_INT(scv_parse_int_set("1..64", 1, 1, 4096, &v, &err), 7); /* doubling */
    free(v);
}

/* Feeds n iterations of scripted compute times: worker k takes base * slow[k] s for b[k]
 * samples; returns the first worker found and the iteration (1-based) it was found at. */
static int feed(scv_straggler_state *s, int K, const double *slow, const int64_t *b, int n, double dt, int *at)
{
    double t[8];
    for (int i = 1; i <= n; i++) {
        for (int k = 0; k < K; k++) t[k] = 0.01 * slow[k] * (double)b[k] / 64.0;
        int f = scv_straggler_update(s, t, b, dt);
        if (f >= 0) {
            *at = i;
            return f;
        }
    }
    *at = 0;
    return -1;
}

static void t_straggler_rule(void)
{
    scv_straggler_rule r = scv_straggler_rule_default(); /* 0.8, alpha 0.1, 5 s, 10 iterations */
    scv_straggler_state s;
    int64_t b[4] = {64, 64, 64, 64};
    int at = 0;
    /* worker 2 at half speed, iterations of 0.1 s: x = 0.5 from the start (the median of
     * {1,1,1,0.5} is 1), so it is below 0.8 from iteration 1 and found once 5 s (50
     * iterations) have passed; never again */
    double half[4] = {1, 1, 2, 1};
    scv_straggler_init(&s, &r, 4);
    CHECK_EQ_INT(feed(&s, 4, half, b, 200, 0.1, &at), 2);
    CHECK_EQ_INT(at, 50);
    CHECK_NEAR(s.ratio[2], 0.5, 1e-9, 0);
    CHECK_EQ_INT(feed(&s, 4, half, b, 100, 0.1, &at), -1);
    /* long iterations: the iteration count binds (10), not the 5 s */
    scv_straggler_init(&s, &r, 4);
    CHECK_EQ_INT(feed(&s, 4, half, b, 100, 2.0, &at), 2);
    CHECK_EQ_INT(at, 10);
    /* 0.9 of the others' speed: never a straggler */
    double slight[4] = {1, 1, 1.0 / 0.9, 1};
    scv_straggler_init(&s, &r, 4);
    CHECK_EQ_INT(feed(&s, 4, slight, b, 500, 0.1, &at), -1);
    /* a worker given half the samples that takes half the time is as fast as the others */
    int64_t uneven[4] = {64, 64, 32, 64};
    double same[4] = {1, 1, 1, 1};
    scv_straggler_init(&s, &r, 4);
    CHECK_EQ_INT(feed(&s, 4, same, uneven, 500, 0.1, &at), -1);
    /* a slow spell shorter than the window is forgiven: 3 s slow, then fast, then slow
     * again from scratch (the smoothed ratio climbs back above 0.8 in a few iterations) */
    scv_straggler_init(&s, &r, 4);
    CHECK_EQ_INT(feed(&s, 4, half, b, 30, 0.1, &at), -1);
    double fast[4] = {1, 1, 1, 1};
    CHECK_EQ_INT(feed(&s, 4, fast, b, 30, 0.1, &at), -1);
    CHECK(s.below_n[2] == 0 && s.ratio[2] > 0.8);
    CHECK_EQ_INT(feed(&s, 4, half, b, 200, 0.1, &at), 2);
    CHECK_MSG(at > 50, "found %d iterations into the second spell: the first one's time counted", at);
    /* two workers: the median is their mean; 1/3 speed gives x = 0.5 (below), 0.9 does not */
    double two[2] = {1, 3};
    scv_straggler_init(&s, &r, 2);
    CHECK_EQ_INT(feed(&s, 2, two, b, 100, 0.1, &at), 1);
    /* off, and a single worker: never */
    r.fraction = 0;
    scv_straggler_init(&s, &r, 4);
    CHECK_EQ_INT(feed(&s, 4, half, b, 200, 0.1, &at), -1);
    r = scv_straggler_rule_default();
    scv_straggler_init(&s, &r, 1);
    CHECK_EQ_INT(feed(&s, 1, half, b, 200, 0.1, &at), -1);
}

/* One controller iteration on scripted speeds: worker k computes a sample in tau[k] s plus
 * a fixed 1 ms; the batches are the controller's shares of B split as the trainer does. */
static int dyn_step(scv_dynbatch_state *s, const double *tau, int K, int64_t B)
{
    int64_t c[8], o[8];
    scv_split_batch(B, K, s->share, c, o);
    double t[8];
    for (int k = 0; k < K; k++) t[k] = 1e-3 + tau[k] * (double)c[k];
    return scv_dynbatch_update(s, t, c);
}

/* dyn_step for up to 64 workers; returns 1 when the step found a worker unabsorbable. */
static int dyn_step60(scv_dynbatch_state *s, const double *tau, int K, int64_t B)
{
    int64_t c[64], o[64];
    scv_split_batch(B, K, s->share, c, o);
    double t[64];
    for (int k = 0; k < K; k++) t[k] = 1e-3 + tau[k] * (double)c[k];
    scv_dynbatch_update(s, t, c);
    return s->unabsorbed >= 0;
}

/* Dynamic batching: from even shares, workers 1x, 2x and 4x as fast converge to shares
 * proportional to throughput (1/7, 2/7, 4/7) within three adjustments (the target),
 * B stays whole, then the controller holds still (dead-band); a speed change mid-run is
 * followed within three; the bounds hold; a worker too slow for the floor share is found
 * once, one that is merely slow never. */
static void t_dynbatch_controller(void)
{
    scv_dynbatch_policy pol = scv_dynbatch_policy_default();
    scv_dynbatch_state s;
    const int64_t B = 700;
    double tau[3] = {4e-3, 2e-3, 1e-3};
    scv_dynbatch_init(&s, &pol, 3, B, NULL);
    CHECK_NEAR(s.share[0], 1.0 / 3, 1e-12, 0);
    int changes = 0, last_change = 0;
    for (int i = 1; i <= 400; i++)
        if (dyn_step(&s, tau, 3, B)) changes++, last_change = i;
    const double want[3] = {1.0 / 7, 2.0 / 7, 4.0 / 7};
    for (int k = 0; k < 3; k++) CHECK_MSG(fabs(s.share[k] / want[k] - 1) < 0.08, "share %d: %.4f, want %.4f", k, s.share[k], want[k]);
    CHECK_MSG(changes >= 1 && changes <= 3, "%d adjustments", changes);
    CHECK_MSG(last_change <= 80, "still adjusting at iteration %d", last_change); /* then holds still */
    for (int k = 0; k < 3; k++) CHECK_MSG(fabs(s.balanced[k] / want[k] - 1) < 0.08, "balanced share %d: %.4f", k, s.balanced[k]);
    CHECK_NEAR(s.share[0] + s.share[1] + s.share[2], 1, 1e-9, 0);
    /* the iteration times are now within the dead-band of each other */
    int64_t c[3], o[3];
    scv_split_batch(B, 3, s.share, c, o);
    double t0 = tau[0] * c[0], t2 = tau[2] * c[2];
    CHECK_MSG(fabs(t0 / t2 - 1) < 0.12, "times %.4f vs %.4f", t0, t2);
    /* worker 2 slows to worker 0's speed: its share falls to about a third */
    tau[2] = 4e-3;
    changes = 0;
    for (int i = 0; i < 300; i++) {
        changes += dyn_step(&s, tau, 3, B);
        CHECK(s.unabsorbed < 0); /* 4x slower is absorbed */
    }
    CHECK_MSG(fabs(s.share[2] / (1.0 / 4.0) - 1) < 0.1, "share 2 after the slow-down %.4f (want 0.25)", s.share[2]);
    CHECK_MSG(changes >= 1 && changes <= 3, "%d adjustments after the slow-down", changes);
    /* equal speeds from even shares: never adjusts */
    double same[3] = {2e-3, 2e-3, 2e-3};
    scv_dynbatch_init(&s, &pol, 3, B, NULL);
    for (int i = 0; i < 200; i++) CHECK(!dyn_step(&s, same, 3, B));
    CHECK_EQ_INT(s.adjustments, 0);
    /* bounds: a worker 1000x slower keeps min_share, and is found unabsorbable once, after
     * absorb_windows windows whose balanced share is under the floor (the first window is
     * not used), with its slowdown at the floor */
    double slow[2] = {1.0, 1e-3};
    scv_dynbatch_init(&s, &pol, 2, 1000, NULL);
    int found = 0, found_at = 0;
    for (int i = 1; i <= 300; i++) {
        dyn_step(&s, slow, 2, 1000);
        if (s.unabsorbed >= 0) {
            CHECK_EQ_INT(s.unabsorbed, 0);
            found++, found_at = i;
            /* 1 s x 20 samples against 1 ms x 980 + 1 ms */
            CHECK_MSG(fabs(s.floor_slowdown / (20.0 / (0.98 + 1e-3)) - 1) < 0.05, "slowdown %.3f", s.floor_slowdown);
        }
    }
    CHECK_EQ_INT(found, 1);
    CHECK_EQ_INT(found_at, (1 + pol.absorb_windows) * pol.every);
    /* K = 60: the default floor (0.02) is more than an even share (1/60); the controller caps
     * it at 0.9 / K, so equal workers are never reported, and a worker 100x slower is, once */
    {
        enum { KK = 60 };
        static double tau60[KK];
        for (int k = 0; k < KK; k++) tau60[k] = 1e-3;
        static scv_dynbatch_state s60;
        scv_dynbatch_init(&s60, &pol, KK, 6000, NULL);
        CHECK_NEAR(s60.pol.min_share, 0.9 / KK, 1e-12, 0);
        int reports = 0;
        for (int i = 0; i < 200; i++) reports += dyn_step60(&s60, tau60, KK, 6000);
        CHECK_EQ_INT(reports, 0);
        tau60[7] = 0.1;
        for (int i = 0; i < 200; i++) reports += dyn_step60(&s60, tau60, KK, 6000);
        CHECK_EQ_INT(reports, 1);
        double sum = 0;
        for (int k = 0; k < KK; k++) sum += s60.share[k];
        CHECK_NEAR(sum, 1, 1e-9, 0);
    }
    CHECK_NEAR(s.share[0], pol.min_share, 1e-9, 0);
    CHECK_NEAR(s.share[1], 1 - pol.min_share, 1e-9, 0);
    /* both bounds at once (the slow worker's target under the floor, the other's over the
     * cap): the shares stay inside [min_share, max_share] and sum to 1 (the clamp once
     * rescaled [0.4, 0.98] to [0.29, 0.71], under the floor; seen in CI) */
    scv_dynbatch_policy tight = pol;
    tight.min_share = 0.4, tight.max_share = 0.55;
    scv_dynbatch_init(&s, &tight, 2, 1000, NULL);
    double tenx[2] = {1e-2, 1e-3};
    changes = 0;
    for (int i = 0; i < 200; i++) {
        changes += dyn_step(&s, tenx, 2, 1000);
        CHECK_MSG(s.share[0] >= 0.45 - 1e-9 && s.share[1] <= 0.55 + 1e-9, "shares %.4f %.4f", s.share[0], s.share[1]);
        CHECK_NEAR(s.share[0] + s.share[1], 1, 1e-9, 0);
    }
    CHECK_EQ_INT(changes, 1);
}

/* AdaScale's gain (sched.h): 1 before any statistics and at B = B0; from exact statistics
 * of a gradient with noise tr(Sigma) and signal |G|^2 (a slice of b samples: |G|^2 + tr / b)
 * the noise scale tr / |G|^2 and the gain (1 + Bn/B0) / (1 + Bn/B), within [1, B/B0]; all
 * noise gives B/B0, no noise 1; a step's statistics that cannot tell (b >= B, NaN) change
 * nothing; the schedule's rate is not scaled by the batch under it. */
static void t_adascale_gain(void)
{
    scv_adascale a = {0};
    CHECK_NEAR(scv_adascale_gain(&a, 256, 64), 1, 0, 0);
    CHECK(isnan(scv_adascale_noise_scale(&a)));
    const double tr = 50.0, g2 = 0.5; /* Bn = 100 */
    for (int i = 0; i < 200; i++) scv_adascale_observe(&a, g2 + tr / 32, 32, g2 + tr / 256, 256);
    CHECK_NEAR(scv_adascale_noise_scale(&a), 100, 1e-9, 0);
    CHECK_NEAR(scv_adascale_gain(&a, 256, 64), (1 + 100.0 / 64) / (1 + 100.0 / 256), 1e-9, 0);
    CHECK_NEAR(scv_adascale_gain(&a, 64, 64), 1, 1e-12, 0);
    CHECK(scv_adascale_gain(&a, 32, 64) < 1 && scv_adascale_gain(&a, 32, 64) >= 0.5); /* below B0: in [S, 1] */
    scv_adascale b = a;
    scv_adascale_observe(&b, NAN, 32, 1, 256), scv_adascale_observe(&b, 1, 256, 1, 256);
    CHECK(!memcmp(&a, &b, sizeof a));
    scv_adascale noise = {0}, clean = {0};
    for (int i = 0; i < 50; i++)
        scv_adascale_observe(&noise, tr / 32, 32, tr / 256, 256), scv_adascale_observe(&clean, g2, 32, g2, 256);
    CHECK_NEAR(scv_adascale_gain(&noise, 256, 64), 4, 1e-9, 0);
    CHECK_NEAR(scv_adascale_gain(&clean, 256, 64), 1, 1e-9, 0);
    scv_train_params p = scv_train_params_default();
    p.lr = 0.1, p.base_batch = 64, p.lr_scaling = SCV_LR_SCALE_ADASCALE;
    CHECK_NEAR(scv_lr_at(&p, 256, 0, 1000), 0.1, 1e-12, 0);
}

static const scv_test tests[] = {
    {"dynbatch_controller", t_dynbatch_controller},
    {"straggler_rule", t_straggler_rule},
    {"int_sets", t_int_sets},
    {"int_set_repeats", t_int_set_repeats},
    {"split_even_and_weighted", t_split_even_and_weighted},
    {"epoch_order_is_permutation", t_epoch_order_is_permutation},
    {"each_sample_once_per_epoch_whatever_k", t_each_sample_once_per_epoch_whatever_k},
    {"lr_schedule", t_lr_schedule},
    {"adascale_gain", t_adascale_gain},
    {"params_check", t_params_check},
};
SCV_TEST_MAIN(tests)
