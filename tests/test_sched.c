/*
 * test_sched.c - batch split over ranks, epoch order and the learning-rate schedule.
 */
#include "scv.h"
#include "scv_test.h"
#include "train/sched.h"
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

static const scv_test tests[] = {
    {"int_sets", t_int_sets},
    {"split_even_and_weighted", t_split_even_and_weighted},
    {"epoch_order_is_permutation", t_epoch_order_is_permutation},
    {"each_sample_once_per_epoch_whatever_k", t_each_sample_once_per_epoch_whatever_k},
    {"lr_schedule", t_lr_schedule},
    {"params_check", t_params_check},
};
SCV_TEST_MAIN(tests)
