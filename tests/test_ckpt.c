/*
 * test_ckpt.c - checkpoint round trip, atomic replacement, and refusal of damaged files.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "scv_test.h"
#include "train/ckpt.h"

#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256], path[512];

static void save_sample(size_t n)
{
    scv_ckpt_state st = {.seed = 42, .n_train = 6000, .iteration = 17, .epoch = 2, .pos = 320,
                         .samples_seen = 12320, .workers = 3, .batch = 96, .wall_seconds = 1.5};
    snprintf(st.arch, sizeof st.arch, "mlp:784-8-10");
    float *p = malloc(n * sizeof(float)), *m = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) p[i] = (float)i * 0.5f, m[i] = -(float)i;
    scv_err err = {0};
    CHECK_MSG(scv_ckpt_save(dir, &st, p, m, n, &err) == SCV_OK, "%s", err.msg);
    free(p);
    free(m);
}

static void t_round_trip(void)
{
    save_sample(1000);
    scv_ckpt_state st;
    float *p = NULL, *m = NULL;
    size_t n = 0;
    scv_err err = {0};
    CHECK_MSG(scv_ckpt_load(dir, &st, &p, &m, &n, &err) == SCV_OK, "%s", err.msg);
    CHECK_EQ_INT(n, 1000);
    CHECK(strcmp(st.arch, "mlp:784-8-10") == 0);
    CHECK_EQ_INT(st.seed, 42);
    CHECK_EQ_INT(st.pos, 320);
    CHECK_EQ_INT(st.epoch, 2);
    CHECK_EQ_INT(st.samples_seen, 12320);
    CHECK_EQ_INT(st.batch, 96);
    CHECK(st.wall_seconds == 1.5);
    CHECK(p && m && p[999] == 499.5f && m[3] == -3.0f);
    free(p);
    free(m);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    CHECK(access(tmp, F_OK) != 0); /* no temp file left behind */
}

static int load_rc(scv_err *err)
{
    scv_ckpt_state st;
    float *p = NULL, *m = NULL;
    size_t n = 0;
    int rc = scv_ckpt_load(dir, &st, &p, &m, &n, err);
    CHECK((rc == SCV_OK) == (p != NULL));
    free(p);
    free(m);
    return rc;
}

static void t_flipped_byte(void)
{
    save_sample(100);
    FILE *f = fopen(path, "r+b");
    fseek(f, 300, SEEK_SET);
    int c = fgetc(f);
    fseek(f, 300, SEEK_SET);
    fputc(c ^ 0x10, f);
    fclose(f);
    scv_err err = {0};
    CHECK(load_rc(&err) == SCV_ECORRUPT);
    CHECK_MSG(strstr(err.msg, "checksum mismatch") != NULL, "%s", err.msg);
}

static void t_truncated_and_garbage(void)
{
    save_sample(100);
    struct stat sb;
    stat(path, &sb);
    CHECK(truncate(path, sb.st_size - 9) == 0);
    scv_err err = {0};
    CHECK(load_rc(&err) == SCV_ECORRUPT);
    CHECK_MSG(strstr(err.msg, "truncated") != NULL, "%s", err.msg);
    FILE *f = fopen(path, "wb");
    fputs("hello, not a checkpoint", f);
    fclose(f);
    CHECK(load_rc(&err) == SCV_ECORRUPT);
    CHECK_MSG(strstr(err.msg, "bad magic") != NULL, "%s", err.msg);
    save_sample(100);
    f = fopen(path, "r+b");
    fseek(f, 8, SEEK_SET);
    fputc(9, f); /* version 9 */
    fclose(f);
    CHECK(load_rc(&err) == SCV_ECORRUPT);
    CHECK_MSG(strstr(err.msg, "version 9") != NULL, "%s", err.msg);
    unlink(path);
    CHECK(load_rc(&err) == SCV_ENOTFOUND);
}


static scv_ckpt_state good_state(void)
{
    scv_ckpt_state st = {.seed = 42, .n_train = 6000, .iteration = 17, .epoch = 2, .pos = 320,
                         .samples_seen = 12320, .workers = 3, .batch = 96, .wall_seconds = 1.5};
    snprintf(st.arch, sizeof st.arch, "mlp:784-8-10");
    return st;
}

/* Header fields out of range are refused even with a valid CRC: epoch 2^64-1 (it collided
 * with the trainer's "no order yet" sentinel and crashed on resume), NaN wall time, ... */
static void t_header_ranges(void)
{
    float p[4] = {1, 2, 3, 4}, m[4] = {0};
    static const char *const field[] = {"epoch", "wall_seconds", "samples_seen", "pos", "n_train",
                                        "workers", "batch", "iteration", "arch"};
    for (size_t i = 0; i < sizeof field / sizeof field[0]; i++) {
        scv_ckpt_state st = good_state();
        switch (i) {
        case 0: st.epoch = UINT64_MAX, st.samples_seen = st.epoch * st.n_train + st.pos; break;
        case 1: st.wall_seconds = NAN; break;
        case 2: st.samples_seen++; break;
        case 3: st.pos = st.n_train + 1; break;
        case 4: st.n_train = 0; break;
        case 5: st.workers = -1; break;
        case 6: st.batch = 0; break;
        case 7: st.iteration = st.samples_seen + 1; break;
        case 8: st.arch[3] = '\n'; break;
        }
        scv_err err = {0};
        CHECK(scv_ckpt_save(dir, &st, p, m, 4, &err) == SCV_OK);
        CHECK(load_rc(&err) == SCV_ECORRUPT);
        CHECK_MSG(strstr(err.msg, field[i]) != NULL, "%s: %s", field[i], err.msg);
    }
    scv_ckpt_state st = good_state();
    scv_err err = {0};
    CHECK(scv_ckpt_save(dir, &st, p, m, 4, &err) == SCV_OK);
    CHECK_MSG(load_rc(&err) == SCV_OK, "%s", err.msg);
}

/* The parameter count is checked against the cap and the file's length before allocating
 * (2^32 parameters asked for 32 GiB). */
static void t_count_vs_size(void)
{
    static const uint64_t counts[] = {(uint64_t)1 << 32, (uint64_t)1 << 27, 101, 99};
    static const char *const says[] = {"implausible parameter count", "truncated", "truncated",
                                       "trailing bytes"};
    for (int i = 0; i < 4; i++) {
        save_sample(100);
        FILE *f = fopen(path, "r+b");
        fseek(f, 16 + 192, SEEK_SET); /* the count, after magic, version, length, header */
        for (int b = 0; b < 8; b++) fputc((int)(counts[i] >> (8 * b)) & 0xff, f);
        fclose(f);
        scv_err err = {0};
        CHECK(load_rc(&err) == SCV_ECORRUPT);
        CHECK_MSG(strstr(err.msg, says[i]) != NULL, "%s", err.msg);
    }
}

static const scv_test tests[] = {
    {"header_ranges", t_header_ranges},
    {"count_vs_size", t_count_vs_size},
    {"round_trip", t_round_trip},
    {"flipped_byte", t_flipped_byte},
    {"truncated_and_garbage", t_truncated_and_garbage},
};

int main(int argc, char **argv)
{
    snprintf(dir, sizeof dir, "/tmp/scv-test-ckpt-%ld", (long)getpid());
    snprintf(path, sizeof path, "%s/%s", dir, SCV_CKPT_FILE);
    int rc = scv_test_main(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
    unlink(path);
    rmdir(dir);
    return rc;
}
