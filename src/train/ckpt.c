/*
 * ckpt.c - checkpoint writing and strict reading (see ckpt.h for the format).
 */
#define _POSIX_C_SOURCE 200809L
#include "ckpt.h"
#include "../core/util.h"
#include "train.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

static const char MAGIC[8] = {'S', 'C', 'V', 'C', 'K', 'P', 'T', '\n'};
#define HDR_LEN (128 + 6 * 8 + 2 * 4 + 8)

static void put_u32(unsigned char *b, uint32_t v)
{
    for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char *b, uint64_t v)
{
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_u32(const unsigned char *b)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)b[i] << (8 * i);
    return v;
}
static uint64_t get_u64(const unsigned char *b)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)b[i] << (8 * i);
    return v;
}

static void encode_header(const scv_ckpt_state *st, unsigned char *h)
{
    memset(h, 0, HDR_LEN);
    memcpy(h, st->arch, strnlen(st->arch, 127));
    unsigned char *p = h + 128;
    uint64_t v[6] = {st->seed, st->n_train, st->iteration, st->epoch, st->pos, st->samples_seen};
    for (int i = 0; i < 6; i++, p += 8) put_u64(p, v[i]);
    put_u32(p, (uint32_t)st->workers);
    put_u32(p + 4, (uint32_t)st->batch);
    uint64_t w;
    memcpy(&w, &st->wall_seconds, 8);
    put_u64(p + 8, w);
}

static void decode_header(const unsigned char *h, scv_ckpt_state *st)
{
    memset(st, 0, sizeof *st);
    memcpy(st->arch, h, 127);
    const unsigned char *p = h + 128;
    uint64_t *v[6] = {&st->seed, &st->n_train, &st->iteration, &st->epoch, &st->pos,
                      &st->samples_seen};
    for (int i = 0; i < 6; i++, p += 8) *v[i] = get_u64(p);
    st->workers = (int32_t)get_u32(p);
    st->batch = (int32_t)get_u32(p + 4);
    uint64_t w = get_u64(p + 8);
    memcpy(&st->wall_seconds, &w, 8);
}

int scv_ckpt_save(const char *dir, const scv_ckpt_state *st, const float *params,
                  const float *momentum, size_t n, scv_err *err)
{
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return scv_err_set(err, SCV_EIO, "%s: cannot create checkpoint directory: %s", dir,
                           strerror(errno));
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, SCV_CKPT_FILE);
    unsigned char pre[8 + 4 + 4 + HDR_LEN + 8], tail[4];
    memcpy(pre, MAGIC, 8);
    put_u32(pre + 8, SCV_CKPT_VERSION);
    put_u32(pre + 12, HDR_LEN);
    encode_header(st, pre + 16);
    put_u64(pre + 16 + HDR_LEN, (uint64_t)n);
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32_z(crc, pre, sizeof pre);
    crc = crc32_z(crc, (const Bytef *)params, n * sizeof(float));
    crc = crc32_z(crc, (const Bytef *)momentum, n * sizeof(float));
    put_u32(tail, (uint32_t)crc);
    scv_iov parts[4] = {{pre, sizeof pre},
                        {params, n * sizeof(float)},
                        {momentum, n * sizeof(float)},
                        {tail, 4}};
    return scv_write_atomic(path, parts, 4, err);
}

/* Every header field in its sane range, and the position consistent: samples_seen =
 * epoch * n_train + pos with pos <= n_train, so the epoch and position a trainer resumes
 * at are ones it could have written. */
static int check_state(const scv_ckpt_state *st, const char *path, scv_err *err)
{
    size_t alen = strnlen(st->arch, sizeof st->arch);
    if (alen == 0 || alen >= sizeof st->arch)
        return scv_err_set(err, SCV_ECORRUPT, "%s: header field arch is empty or unterminated", path);
    for (size_t i = 0; i < alen; i++)
        if (st->arch[i] < 0x21 || st->arch[i] > 0x7e)
            return scv_err_set(err, SCV_ECORRUPT, "%s: header field arch has a non-printable byte",
                               path);
#define BAD(field, fmt, v) \
    scv_err_set(err, SCV_ECORRUPT, "%s: header field " field " = " fmt " is out of range", path, v)
    if (st->n_train < 1 || st->n_train > SCV_CKPT_MAX_SAMPLES)
        return BAD("n_train", "%llu", (unsigned long long)st->n_train);
    if (st->pos > st->n_train) return BAD("pos", "%llu", (unsigned long long)st->pos);
    if (st->epoch > SCV_CKPT_MAX_EPOCHS) return BAD("epoch", "%llu", (unsigned long long)st->epoch);
    if (st->samples_seen != st->epoch * st->n_train + st->pos) /* no overflow: both capped */
        return scv_err_set(err, SCV_ECORRUPT,
                           "%s: header field samples_seen = %llu does not match epoch %llu x "
                           "n_train %llu + pos %llu", path, (unsigned long long)st->samples_seen,
                           (unsigned long long)st->epoch, (unsigned long long)st->n_train,
                           (unsigned long long)st->pos);
    if (st->iteration > st->samples_seen)
        return BAD("iteration", "%llu", (unsigned long long)st->iteration);
    if (st->workers < 1 || st->workers > 1024) return BAD("workers", "%d", (int)st->workers);
    if (st->batch < 1 || st->batch > (1 << 30)) return BAD("batch", "%d", (int)st->batch);
    if (!isfinite(st->wall_seconds) || st->wall_seconds < 0 || st->wall_seconds > 1e10)
        return BAD("wall_seconds", "%g", st->wall_seconds);
#undef BAD
    return SCV_OK;
}

int scv_ckpt_load(const char *dir, scv_ckpt_state *st, float **params, float **momentum,
                  size_t *n, scv_err *err)
{
    *params = *momentum = NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, SCV_CKPT_FILE);
    FILE *f = fopen(path, "rb");
    if (!f) return scv_err_set(err, SCV_ENOTFOUND, "%s: cannot open: %s", path, strerror(errno));
    unsigned char pre[8 + 4 + 4 + HDR_LEN + 8], tail[4];
    int rc = SCV_OK;
    float *p = NULL, *m = NULL;
    if (fread(pre, 1, 16, f) != 16 || memcmp(pre, MAGIC, 8) != 0) {
        rc = scv_err_set(err, SCV_ECORRUPT, "%s: not a Scavenger checkpoint (bad magic)", path);
        goto done;
    }
    uint32_t ver = get_u32(pre + 8), hl = get_u32(pre + 12);
    if (ver != SCV_CKPT_VERSION || hl != HDR_LEN) {
        rc = scv_err_set(err, SCV_ECORRUPT,
                         "%s: checkpoint format version %u (header %u bytes); this build reads "
                         "version %u", path, ver, hl, SCV_CKPT_VERSION);
        goto done;
    }
    if (fread(pre + 16, 1, HDR_LEN + 8, f) != HDR_LEN + 8) {
        rc = scv_err_set(err, SCV_ECORRUPT, "%s: truncated header", path);
        goto done;
    }
    uint64_t count = get_u64(pre + 16 + HDR_LEN);
    if (count == 0 || count > SCV_NET_MAX_PARAMS) {
        rc = scv_err_set(err, SCV_ECORRUPT, "%s: implausible parameter count %llu (at most %llu)",
                         path, (unsigned long long)count, (unsigned long long)SCV_NET_MAX_PARAMS);
        goto done;
    }
    /* the file's length must be what the count implies, before anything is allocated */
    struct stat sb;
    uint64_t want = sizeof pre + 2 * 4 * count + 4;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size != want) {
        rc = scv_err_set(err, SCV_ECORRUPT,
                         (uint64_t)sb.st_size < want
                             ? "%s: truncated (expected %llu parameters: %llu bytes, the file has %llu)"
                             : "%s: trailing bytes (expected %llu parameters: %llu bytes, the file has %llu)",
                         path, (unsigned long long)count, (unsigned long long)want,
                         (unsigned long long)sb.st_size);
        goto done;
    }
    scv_ckpt_state hs;
    decode_header(pre + 16, &hs);
    if ((rc = check_state(&hs, path, err))) goto done;
    p = malloc(count * sizeof(float));
    m = malloc(count * sizeof(float));
    if (!p || !m) {
        rc = scv_err_set(err, SCV_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    if (fread(p, sizeof(float), count, f) != count || fread(m, sizeof(float), count, f) != count ||
        fread(tail, 1, 4, f) != 4) {
        rc = scv_err_set(err, SCV_ECORRUPT, "%s: truncated (expected %llu parameters)", path,
                         (unsigned long long)count);
        goto done;
    }
    if (fgetc(f) != EOF) {
        rc = scv_err_set(err, SCV_ECORRUPT, "%s: trailing bytes after the checksum", path);
        goto done;
    }
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32_z(crc, pre, sizeof pre);
    crc = crc32_z(crc, (const Bytef *)p, count * sizeof(float));
    crc = crc32_z(crc, (const Bytef *)m, count * sizeof(float));
    if ((uint32_t)crc != get_u32(tail)) {
        rc = scv_err_set(err, SCV_ECORRUPT, "%s: checksum mismatch (file damaged)", path);
        goto done;
    }
    decode_header(pre + 16, st);
    *n = (size_t)count;
done:
    fclose(f);
    if (rc) {
        free(p);
        free(m);
    } else {
        *params = p;
        *momentum = m;
    }
    return rc;
}
