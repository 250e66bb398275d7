/*
 * test_data.c - IDX loading (plain and gzip), Debian's Fashion-MNIST, the synthetic set,
 * and every malformed-file case: missing, truncated, wrong magic, bad labels, mismatches.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "train/train.h"
#include "scv_test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static char dir[256];

static void be32(unsigned char *b, uint32_t v)
{
    b[0] = (unsigned char)(v >> 24), b[1] = (unsigned char)(v >> 16);
    b[2] = (unsigned char)(v >> 8), b[3] = (unsigned char)v;
}

/* Writes an IDX file of n images (h x w) or n labels; gz selects compression. */
static void write_idx(const char *name, uint32_t magic, uint32_t n, int h, int w, int gz,
                      size_t cut, uint8_t label_base)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s%s", dir, name, gz ? ".gz" : "");
    unsigned char hdr[16];
    be32(hdr, magic);
    be32(hdr + 4, n);
    size_t hl = 8, body = n;
    if (h) {
        be32(hdr + 8, (uint32_t)h);
        be32(hdr + 12, (uint32_t)w);
        hl = 16;
        body = (size_t)n * h * w;
    }
    unsigned char *buf = malloc(hl + body);
    memcpy(buf, hdr, hl);
    for (size_t i = 0; i < body; i++) buf[hl + i] = h ? (uint8_t)(i * 7) : (uint8_t)(label_base + i % 10);
    size_t len = hl + body - cut;
    if (gz) {
        gzFile f = gzopen(path, "wb");
        gzwrite(f, buf, (unsigned)len);
        gzclose(f);
    } else {
        FILE *f = fopen(path, "wb");
        fwrite(buf, 1, len, f);
        fclose(f);
    }
    free(buf);
}

static void clean(void)
{
    const char *names[] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                           "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
    char path[512];
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
        strcat(path, ".gz");
        unlink(path);
    }
}

static void write_set(int gz)
{
    clean();
    write_idx("train-images-idx3-ubyte", 0x803, 50, 28, 28, gz, 0, 0);
    write_idx("train-labels-idx1-ubyte", 0x801, 50, 0, 0, gz, 0, 0);
    write_idx("t10k-images-idx3-ubyte", 0x803, 20, 28, 28, gz, 0, 0);
    write_idx("t10k-labels-idx1-ubyte", 0x801, 20, 0, 0, gz, 0, 0);
}

static int load_err(scv_err *err)
{
    scv_dataset *ds = NULL;
    int rc = scv_dataset_load(dir, 0, &ds, err);
    CHECK((rc == SCV_OK) == (ds != NULL));
    scv_dataset_free(ds);
    return rc;
}

static void t_plain_and_gzip(void)
{
    for (int gz = 0; gz < 2; gz++) {
        write_set(gz);
        scv_dataset *ds = NULL;
        scv_err err = {0};
        CHECK_MSG(scv_dataset_load(dir, 0, &ds, &err) == SCV_OK, "%s", err.msg);
        if (!ds) continue;
        CHECK_EQ_INT(ds->n, 50);
        CHECK_EQ_INT(ds->h, 28);
        CHECK_EQ_INT(ds->y[13], 3);
        CHECK_NEAR(ds->x[1], ((7.0 / 255.0) - 0.2860) / 0.3530, 1e-5, 0);
        scv_dataset_free(ds);
        CHECK(scv_dataset_load(dir, 1, &ds, &err) == SCV_OK && ds && ds->n == 20);
        scv_dataset_free(ds);
    }
}

static void t_missing_file(void)
{
    write_set(0);
    char path[512];
    snprintf(path, sizeof path, "%s/train-labels-idx1-ubyte", dir);
    unlink(path);
    scv_err err = {0};
    CHECK(load_err(&err) == SCV_ENOTFOUND);
    CHECK(strstr(err.msg, "train-labels-idx1-ubyte") != NULL);
    scv_dataset *ds = NULL;
    CHECK(scv_dataset_load("/nonexistent/dir", 0, &ds, &err) == SCV_ENOTFOUND);
    CHECK(strstr(err.msg, "/nonexistent/dir") != NULL);
}

static void t_truncated(void)
{
    for (int gz = 0; gz < 2; gz++) {
        write_set(gz);
        write_idx("train-images-idx3-ubyte", 0x803, 50, 28, 28, gz, 100, 0);
        scv_err err = {0};
        CHECK(load_err(&err) == SCV_EPARSE);
        CHECK_MSG(strstr(err.msg, "truncated") != NULL, "%s", err.msg);
        write_idx("train-images-idx3-ubyte", 0x803, 50, 28, 28, gz, 50 * 784 + 10, 0); /* header cut */
        CHECK(load_err(&err) == SCV_EPARSE);
        CHECK_MSG(strstr(err.msg, "truncated") != NULL, "%s", err.msg);
    }
}

static void t_wrong_magic(void)
{
    write_set(0);
    write_idx("train-images-idx3-ubyte", 0x0D03, 50, 28, 28, 0, 0, 0); /* float data */
    scv_err err = {0};
    CHECK(load_err(&err) == SCV_EPARSE);
    CHECK_MSG(strstr(err.msg, "wrong IDX magic 0x00000d03") != NULL, "%s", err.msg);
}

static void t_bad_labels_and_counts(void)
{
    write_set(0);
    write_idx("train-labels-idx1-ubyte", 0x801, 50, 0, 0, 0, 0, 5); /* labels up to 14 */
    scv_err err = {0};
    CHECK(load_err(&err) == SCV_EPARSE);
    CHECK_MSG(strstr(err.msg, "not in 0..9") != NULL, "%s", err.msg);
    write_idx("train-labels-idx1-ubyte", 0x801, 49, 0, 0, 0, 0, 0);
    CHECK(load_err(&err) == SCV_EPARSE);
    CHECK_MSG(strstr(err.msg, "49 labels for 50 images") != NULL, "%s", err.msg);
}

static void t_fashion_mnist(void)
{
    scv_dataset *tr = NULL, *te = NULL;
    scv_err err = {0};
    CHECK_MSG(scv_dataset_load("fashion-mnist", 0, &tr, &err) == SCV_OK, "%s", err.msg);
    CHECK_MSG(scv_dataset_load("fashion-mnist", 1, &te, &err) == SCV_OK, "%s", err.msg);
    if (tr && te) {
        CHECK_EQ_INT(tr->n, 60000);
        CHECK_EQ_INT(te->n, 10000);
        int count[10] = {0};
        double mean = 0;
        for (int64_t i = 0; i < tr->n; i++) count[tr->y[i]]++;
        for (int64_t i = 0; i < tr->n * 784; i++) mean += tr->x[i];
        for (int k = 0; k < 10; k++) CHECK_EQ_INT(count[k], 6000); /* balanced classes */
        CHECK_NEAR(mean / (double)(tr->n * 784), 0.0, 0, 0.01); /* standardised */
    }
    scv_dataset_free(tr);
    scv_dataset_free(te);
}

static void t_synthetic(void)
{
    scv_dataset *a = NULL, *b = NULL;
    scv_err err = {0};
    CHECK(scv_dataset_load("synthetic:500", 0, &a, &err) == SCV_OK);
    CHECK(scv_dataset_load("synthetic:500", 1, &b, &err) == SCV_OK);
    if (a && b) {
        CHECK_EQ_INT(a->n, 500);
        CHECK_EQ_INT(b->n, 100);
        CHECK(memcmp(a->x, b->x, 784 * sizeof(float)) != 0);
    }
    scv_dataset_free(a);
    scv_dataset_free(b);
    scv_dataset *c = NULL;
    CHECK(scv_dataset_load("synthetic:abc", 0, &c, &err) == SCV_EINVAL && !c);
    CHECK(scv_dataset_load("synthetic:0", 0, &c, &err) == SCV_EINVAL && !c);
}


/* Writes an images file whose header declares n x h x w (any values) with `body` bytes. */
static void write_raw_images(const char *name, uint32_t n, uint32_t h, uint32_t w, size_t body,
                             int gz)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s%s", dir, name, gz ? ".gz" : "");
    unsigned char *buf = calloc(1, 16 + body);
    be32(buf, 0x803), be32(buf + 4, n), be32(buf + 8, h), be32(buf + 12, w);
    if (gz) {
        gzFile f = gzopen(path, "wb");
        gzwrite(f, buf, (unsigned)(16 + body));
        gzclose(f);
    } else {
        FILE *f = fopen(path, "wb");
        fwrite(buf, 1, 16 + body, f);
        fclose(f);
    }
    free(buf);
}

/* The test set must have the training set's image shape (1x1, 14x14 were read out of
 * bounds in evaluation, 56x56 accepted): refused naming the test file. */
static void t_shape_mismatch(void)
{
    static const int sizes[] = {1, 14, 56};
    for (int gz = 0; gz < 2; gz++)
        for (int i = 0; i < 3; i++) {
            write_set(gz);
            write_idx("t10k-images-idx3-ubyte", 0x803, 20, sizes[i], sizes[i], gz, 0, 0);
            scv_dataset *ds = NULL;
            scv_err err = {0};
            CHECK(scv_dataset_load(dir, 0, &ds, &err) == SCV_OK); /* the training set is fine */
            scv_dataset_free(ds);
            ds = NULL;
            CHECK(scv_dataset_load(dir, 1, &ds, &err) == SCV_EPARSE && !ds);
            CHECK_MSG(strstr(err.msg, "t10k-images-idx3-ubyte") && strstr(err.msg, "28x28"),
                      "%s", err.msg);
        }
}

/* Dimensions multiplying past 2^64 (4096 x 2^26 x 2^26 wrapped to 0) and a header
 * promising 16 GiB in a small file: refused before the payload is allocated. */
static void t_huge_headers(void)
{
    for (int gz = 0; gz < 2; gz++) {
        write_set(gz);
        write_raw_images("train-images-idx3-ubyte", 4096, 1u << 26, 1u << 26, 64, gz);
        scv_err err = {0};
        CHECK(load_err(&err) == SCV_EPARSE);
        CHECK_MSG(strstr(err.msg, "multiply past") != NULL, "%s", err.msg);
        write_raw_images("train-images-idx3-ubyte", 4, 1u << 16, 1u << 16, 1000, gz); /* 16 GiB */
        CHECK(load_err(&err) == SCV_EPARSE);
        CHECK_MSG(strstr(err.msg, "truncated") && strstr(err.msg, "the file has 1000"), "%s",
                  err.msg);
        write_raw_images("train-images-idx3-ubyte", 5, 1u << 16, 1u << 16, 1000, gz); /* 20 GiB */
        CHECK(load_err(&err) == SCV_EPARSE);
        CHECK_MSG(strstr(err.msg, "multiply past") != NULL, "%s", err.msg);
    }
}

/* The decoded-dataset cache of the built-in dataset: a second load maps the first one's
 * decode (the same values), a damaged cache file is not trusted (decoded again and
 * rewritten), and SCV_DATA_CACHE=0 decodes. */
static void t_cache(void)
{
    char path[512], cmd[700];
    snprintf(path, sizeof path, "%s/cache", dir); /* a private cache: the shared one may be mapped */
    mkdir(path, 0700);
    setenv("SCV_DATA_CACHE", path, 1);
    scv_dataset *a = NULL, *b = NULL, *c = NULL;
    scv_err e = {0};
    CHECK_MSG(scv_dataset_load("fashion-mnist", 1, &a, &e) == SCV_OK, "%s", e.msg);
    CHECK_MSG(scv_dataset_load("fashion-mnist", 1, &b, &e) == SCV_OK, "%s", e.msg);
    setenv("SCV_DATA_CACHE", "0", 1);
    CHECK_MSG(scv_dataset_load("fashion-mnist", 1, &c, &e) == SCV_OK, "%s", e.msg);
    setenv("SCV_DATA_CACHE", path, 1);
    if (!a || !b || !c) return;
    CHECK(b->map != NULL && c->map == NULL);
    CHECK(b->n == c->n && b->h == c->h && b->w == c->w);
    size_t d = (size_t)c->h * (size_t)c->w;
    CHECK(!memcmp(b->x, c->x, (size_t)c->n * d * sizeof(float)) && !memcmp(b->y, c->y, (size_t)c->n));
    /* damage the cache file: truncate it by one byte */
    snprintf(cmd, sizeof cmd, "for f in %s/*.ds; do truncate -s -1 \"$f\"; done", path);
    CHECK_EQ_INT(system(cmd), 0);
    scv_dataset *e2 = NULL;
    CHECK(scv_dataset_load("fashion-mnist", 1, &e2, &e) == SCV_OK);
    if (e2) {
        CHECK(e2->map == NULL); /* decoded, not mapped */
        CHECK(!memcmp(e2->x, c->x, (size_t)c->n * d * sizeof(float)));
    }
    scv_dataset *f = NULL;
    CHECK(scv_dataset_load("fashion-mnist", 1, &f, &e) == SCV_OK); /* rewritten: mapped again */
    if (f) CHECK(f->map != NULL);
    scv_dataset_free(a), scv_dataset_free(b), scv_dataset_free(c), scv_dataset_free(e2), scv_dataset_free(f);
    unsetenv("SCV_DATA_CACHE");
    snprintf(cmd, sizeof cmd, "rm -rf %s", path);
    CHECK_EQ_INT(system(cmd), 0);
}

static const scv_test tests[] = {
    {"cache", t_cache},
    {"shape_mismatch", t_shape_mismatch}, {"huge_headers", t_huge_headers},
    {"plain_and_gzip", t_plain_and_gzip}, {"missing_file", t_missing_file},
    {"truncated", t_truncated},           {"wrong_magic", t_wrong_magic},
    {"bad_labels_and_counts", t_bad_labels_and_counts},
    {"fashion_mnist", t_fashion_mnist},   {"synthetic", t_synthetic},
};

int main(int argc, char **argv)
{
    snprintf(dir, sizeof dir, "/tmp/scv-test-data-%ld", (long)getpid());
    mkdir(dir, 0755);
    int rc = scv_test_main(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
    clean();
    rmdir(dir);
    return rc;
}
