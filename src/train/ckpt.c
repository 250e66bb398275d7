/*
 * ckpt.c - checkpoint writing and strict reading (see ckpt.h for the format).
 */
#define _POSIX_C_SOURCE 200809L
#include "ckpt.h"
#include "../core/util.h"

#include <errno.h>
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
    if (count == 0 || count > ((uint64_t)1 << 32)) {
        rc = scv_err_set(err, SCV_ECORRUPT, "%s: implausible parameter count %llu", path,
                         (unsigned long long)count);
        goto done;
    }
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
