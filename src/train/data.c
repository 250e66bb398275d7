/*
 * data.c - datasets: IDX files (gzip-compressed or plain, read through zlib's gzread,
 * which passes plain files through), Debian's Fashion-MNIST, and a seeded synthetic
 * 10-class problem for tests. Pixels are scaled to [0,1] and standardised with the
 * Fashion-MNIST mean and standard deviation. Every malformed file is reported with its
 * path and what was wrong (magic, dimensions, truncation, label range).
 *
 * Cache: decoding Fashion-MNIST (gunzip, 70000 images to floats) takes about 0.6 s of CPU,
 * 2.4 s on a quarter-core emulated VM, and every process of every job paid it (a relaunch,
 * a process spawned to grow an elastic job). The built-in dataset's decoded arrays are
 * kept in /dev/shm/scavenger-cache-UID/ (a directory of this user, mode 0700, checked), one
 * file per split keyed by the IDX files' device, inode, size and modification time, written
 * once (temp file, rename) and mapped read-only by every later process, which also shares
 * the pages. SCV_DATA_CACHE=0 turns it off (SCV_DATA_CACHE=DIR puts it in DIR); any problem
 * with the cache falls back to decoding.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "train.h"
#include "../core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define FMNIST_MEAN 0.2860f
#define FMNIST_STD 0.3530f

void scv_dataset_free(scv_dataset *ds)
{
    if (!ds) return;
    if (ds->map) {
        munmap(ds->map, ds->map_len);
    } else {
        free(ds->x);
        free(ds->y);
    }
    free(ds);
}

/* ---- the decoded-dataset cache ---- */
typedef struct {
    char magic[8];              /* "SCVDS01" */
    uint64_t key;               /* of the source files */
    int64_t n;
    int32_t c, h, w, n_classes;
} cache_head;

/* FNV-1a over the stat identities of the two IDX files and the split. */
static uint64_t cache_key(const struct stat *a, const struct stat *b, int split)
{
    uint64_t h = 1469598103934665603ull;
    const struct stat *st[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        uint64_t v[5] = {(uint64_t)st[i]->st_dev, (uint64_t)st[i]->st_ino, (uint64_t)st[i]->st_size,
                         (uint64_t)st[i]->st_mtim.tv_sec, (uint64_t)st[i]->st_mtim.tv_nsec};
        for (int j = 0; j < 5; j++)
            for (int k = 0; k < 8; k++) h = (h ^ ((v[j] >> (8 * k)) & 0xff)) * 1099511628211ull;
    }
    return (h ^ (uint64_t)split) * 1099511628211ull;
}

/* The cache directory (SCV_DATA_CACHE when it names one, else /dev/shm/scavenger-cache-UID;
 * created 0700), or 0 when off (SCV_DATA_CACHE=0) or not this user's private directory. */
static int cache_dir(char *dir, size_t cap)
{
    const char *env = getenv("SCV_DATA_CACHE");
    if (env && !strcmp(env, "0")) return 0;
    if (env && *env) snprintf(dir, cap, "%s", env);
    else snprintf(dir, cap, "/dev/shm/scavenger-cache-%lu", (unsigned long)getuid());
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) return 0;
    struct stat st;
    return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() && (st.st_mode & 077) == 0;
}

static size_t cache_len(const cache_head *h)
{
    size_t d = (size_t)h->c * (size_t)h->h * (size_t)h->w;
    return sizeof *h + (size_t)h->n * d * sizeof(float) + (size_t)h->n;
}

/* Maps the cached decode of key: the dataset, or NULL on a miss (or any doubt). */
static scv_dataset *cache_get(const char *path, uint64_t key)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    cache_head h;
    scv_dataset *ds = NULL;
    if (fstat(fd, &st) == 0 && st.st_uid == getuid() && (st.st_mode & 022) == 0 &&
        pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h && !memcmp(h.magic, "SCVDS01", 8) && h.key == key &&
        h.n > 0 && h.n < ((int64_t)1 << 31) && h.c == 1 && h.h > 0 && h.h <= 4096 && h.w > 0 && h.w <= 4096 &&
        h.n_classes == 10 && (uint64_t)st.st_size == cache_len(&h) && (ds = calloc(1, sizeof *ds))) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
            free(ds);
            ds = NULL;
        } else {
            ds->map = m, ds->map_len = (size_t)st.st_size;
            ds->n = h.n, ds->c = h.c, ds->h = h.h, ds->w = h.w, ds->n_classes = h.n_classes;
            ds->x = (float *)((char *)m + sizeof h);
            ds->y = (uint8_t *)((char *)m + sizeof h + (size_t)h.n * (size_t)h.h * (size_t)h.w * sizeof(float));
        }
    }
    close(fd);
    return ds;
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        c += w, n -= (size_t)w;
    }
    return 0;
}

/* Writes ds's decode under path: a unique temp file in the private directory, renamed over
 * it (processes that start together and all miss write their own; a file another process
 * has mapped is never truncated). A failure is only a cache miss next time. */
static void cache_put(const char *dir, const char *path, uint64_t key, const scv_dataset *ds)
{
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s/.tmp-XXXXXX", dir);
    int fd = mkstemp(tmp);
    if (fd < 0) return;
    cache_head h = {.magic = "SCVDS01", .key = key, .n = ds->n, .c = ds->c, .h = ds->h, .w = ds->w,
                    .n_classes = ds->n_classes};
    size_t d = (size_t)ds->c * (size_t)ds->h * (size_t)ds->w;
    int ok = write_all(fd, &h, sizeof h) == 0 && write_all(fd, ds->x, (size_t)ds->n * d * sizeof(float)) == 0 &&
             write_all(fd, ds->y, (size_t)ds->n) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) unlink(tmp);
}

static uint32_t be32(const unsigned char *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* Opens dir/name, or dir/name.gz when the plain file is absent. */
static gzFile open_idx(const char *dir, const char *name, char *path, size_t cap)
{
    struct stat st;
    snprintf(path, cap, "%s/%s", dir, name);
    if (stat(path, &st) != 0) snprintf(path, cap, "%s/%s.gz", dir, name);
    return gzopen(path, "rb");
}

/* Reads exactly n bytes; returns 0 on success. */
static int read_full(gzFile f, void *buf, size_t n)
{
    unsigned char *p = buf;
    while (n > 0) {
        unsigned chunk = n > (1u << 30) ? (1u << 30) : (unsigned)n;
        int r = gzread(f, p, chunk);
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Largest IDX payload accepted (bytes); every dimension is also at most 2^26. */
#define IDX_MAX_BYTES ((size_t)1 << 34)
#define IDX_MAX_DIM (1u << 26)

/* Reads and checks an IDX header of unsigned bytes with ndim dimensions from f: dims[]
 * receives the sizes, *total their product (checked for overflow and IDX_MAX_BYTES). */
static int read_idx_header(gzFile f, const char *path, int ndim, uint32_t dims[3], size_t *total,
                           scv_err *err)
{
    unsigned char hdr[16];
    if (read_full(f, hdr, 4) != 0) return scv_err_set(err, SCV_EPARSE, "%s: truncated IDX header", path);
    uint32_t magic = be32(hdr);
    if (magic != (0x0800u | (uint32_t)ndim))
        return scv_err_set(err, SCV_EPARSE,
                           "%s: wrong IDX magic 0x%08x (expected 0x%08x: unsigned bytes, %d dims)",
                           path, magic, 0x0800u | (uint32_t)ndim, ndim);
    if (read_full(f, hdr + 4, 4 * (size_t)ndim) != 0)
        return scv_err_set(err, SCV_EPARSE, "%s: truncated IDX header", path);
    size_t t = 1;
    for (int i = 0; i < ndim; i++) {
        dims[i] = be32(hdr + 4 + 4 * i);
        if (dims[i] == 0 || dims[i] > IDX_MAX_DIM)
            return scv_err_set(err, SCV_EPARSE, "%s: implausible IDX dimension %d = %u", path, i,
                               dims[i]);
        if (__builtin_mul_overflow(t, (size_t)dims[i], &t) || t > IDX_MAX_BYTES)
            return scv_err_set(err, SCV_EPARSE,
                               "%s: IDX dimensions multiply past %zu bytes (dimension %d = %u)",
                               path, IDX_MAX_BYTES, i, dims[i]);
    }
    *total = t;
    return SCV_OK;
}

/* Reads an IDX file of unsigned bytes with the expected number of dimensions.
 * dims[] receives the sizes; *data the payload (malloc'ed). The header's size is checked
 * against the file's length before anything is allocated (plain files), and a compressed
 * payload is read in growing chunks, so a header cannot make it allocate more than about
 * twice what the stream really delivers. */
static int read_idx(const char *dir, const char *name, int ndim, uint32_t dims[3],
                    unsigned char **data, size_t *n_bytes, scv_err *err)
{
    char path[4096];
    *data = NULL;
    gzFile f = open_idx(dir, name, path, sizeof path);
    if (!f) return scv_err_set(err, SCV_ENOTFOUND, "%s: cannot open: %s", path, strerror(errno));
    size_t total = 0;
    int rc = read_idx_header(f, path, ndim, dims, &total, err);
    if (rc != SCV_OK) goto done;
    struct stat st;
    size_t hl = 4 + 4 * (size_t)ndim;
    if (gzdirect(f) && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
        (size_t)st.st_size - hl != total) {
        rc = scv_err_set(err, SCV_EPARSE,
                         (size_t)st.st_size - hl < total
                             ? "%s: truncated: header promises %zu bytes of data, the file has %zu"
                             : "%s: trailing bytes: header promises %zu bytes of data, the file has %zu",
                         path, total, (size_t)st.st_size - hl);
        goto done;
    }
    size_t have = 0, cap = 0;
    while (have < total) {
        if (have == cap) {
            size_t ncap = cap ? 2 * cap : ((size_t)1 << 20);
            if (ncap > total) ncap = total;
            unsigned char *nd = realloc(*data, ncap);
            if (!nd) {
                rc = scv_err_set(err, SCV_ENOMEM, "%s: cannot allocate %zu bytes", path, ncap);
                goto done;
            }
            *data = nd, cap = ncap;
        }
        size_t want = cap - have;
        int r = gzread(f, *data + have, want > (1u << 30) ? (1u << 30) : (unsigned)want);
        if (r <= 0) {
            rc = scv_err_set(err, SCV_EPARSE,
                             "%s: truncated: header promises %zu bytes of data, the file has %zu",
                             path, total, have);
            goto done;
        }
        have += (size_t)r;
    }
    *n_bytes = total;
    unsigned char extra;
    if (gzread(f, &extra, 1) > 0) {
        rc = scv_err_set(err, SCV_EPARSE, "%s: trailing bytes after the %zu promised", path, total);
        goto done;
    }
    int zerr;
    gzerror(f, &zerr);
    if (zerr != Z_OK && zerr != Z_STREAM_END) {
        rc = scv_err_set(err, SCV_EPARSE, "%s: corrupt gzip stream", path);
        goto done;
    }
done:
    gzclose(f);
    if (rc != SCV_OK) {
        free(*data);
        *data = NULL;
    }
    return rc;
}

/* The image shape (rows, columns) of the training set in dir, from its header only.
 * Returns SCV_ENOTFOUND when there is no training image file. */
static int train_shape(const char *dir, uint32_t *h, uint32_t *w, char *path, size_t cap,
                       scv_err *err)
{
    gzFile f = open_idx(dir, "train-images-idx3-ubyte", path, cap);
    if (!f) return SCV_ENOTFOUND;
    uint32_t d[3];
    size_t total;
    int rc = read_idx_header(f, path, 3, d, &total, err);
    gzclose(f);
    if (rc == SCV_OK) *h = d[1], *w = d[2];
    return rc;
}

static int load_idx_dir(const char *dir, int split, int cache, scv_dataset **out, scv_err *err)
{
    const char *img = split ? "t10k-images-idx3-ubyte" : "train-images-idx3-ubyte";
    const char *lab = split ? "t10k-labels-idx1-ubyte" : "train-labels-idx1-ubyte";
    char cdir[256], cpath[400];
    uint64_t key = 0;
    if (cache && cache_dir(cdir, sizeof cdir)) {
        char pi[4096], pl[4096];
        struct stat si, sl;
        gzFile fi = open_idx(dir, img, pi, sizeof pi), fl = open_idx(dir, lab, pl, sizeof pl);
        if (fi) gzclose(fi);
        if (fl) gzclose(fl);
        if (fi && fl && stat(pi, &si) == 0 && stat(pl, &sl) == 0) {
            key = cache_key(&si, &sl, split);
            snprintf(cpath, sizeof cpath, "%s/%016llx.ds", cdir, (unsigned long long)key);
            if ((*out = cache_get(cpath, key))) return SCV_OK;
        }
    }
    uint32_t di[3], dl[3];
    unsigned char *pix = NULL, *labels = NULL;
    size_t npix, nlab;
    int rc = read_idx(dir, img, 3, di, &pix, &npix, err);
    if (rc == SCV_OK) rc = read_idx(dir, lab, 1, dl, &labels, &nlab, err);
    if (rc != SCV_OK) {
        free(pix);
        return rc;
    }
    if (dl[0] != di[0]) {
        rc = scv_err_set(err, SCV_EPARSE, "%s/%s: %u labels for %u images", dir, lab, dl[0], di[0]);
        goto fail;
    }
    if (split) { /* the test images must have the training images' shape */
        char tpath[4096];
        uint32_t th, tw;
        int trc = train_shape(dir, &th, &tw, tpath, sizeof tpath, err);
        if (trc != SCV_OK && trc != SCV_ENOTFOUND) {
            rc = trc;
            goto fail;
        }
        if (trc == SCV_OK && (th != di[1] || tw != di[2])) {
            rc = scv_err_set(err, SCV_EPARSE,
                             "%s/%s: test images are %ux%u, the training images (%s) are %ux%u",
                             dir, img, di[1], di[2], tpath, th, tw);
            goto fail;
        }
    }
    scv_dataset *ds = calloc(1, sizeof *ds);
    if (!ds) {
        rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
        goto fail;
    }
    ds->n = di[0];
    ds->c = 1;
    ds->h = (int)di[1];
    ds->w = (int)di[2];
    ds->n_classes = 10;
    ds->x = malloc(npix * sizeof(float));
    ds->y = malloc(nlab);
    if (!ds->x || !ds->y) {
        scv_dataset_free(ds);
        rc = scv_err_set(err, SCV_ENOMEM, "out of memory for %zu pixels", npix);
        goto fail;
    }
    for (size_t i = 0; i < npix; i++) ds->x[i] = ((float)pix[i] / 255.0f - FMNIST_MEAN) / FMNIST_STD;
    for (size_t i = 0; i < nlab; i++) {
        if (labels[i] >= 10) {
            rc = scv_err_set(err, SCV_EPARSE, "%s/%s: label %u of sample %zu is not in 0..9", dir,
                             lab, labels[i], i);
            scv_dataset_free(ds);
            goto fail;
        }
        ds->y[i] = labels[i];
    }
    free(pix);
    free(labels);
    if (key) cache_put(cdir, cpath, key, ds);
    *out = ds;
    return SCV_OK;
fail:
    free(pix);
    free(labels);
    return rc;
}

/* Synthetic: 10 class prototypes (smooth random images from a fixed seed) plus per-sample
 * Gaussian noise; the split only changes the sample seed, so train and test share classes. */
static int load_synthetic(int64_t n_train, int split, int (*stop)(void), scv_dataset **out, scv_err *err)
{
    enum { C = 10, H = 28, W = 28, D = H * W };
    int64_t n = split ? (n_train / 5 > 0 ? n_train / 5 : 1) : n_train;
    scv_dataset *ds = calloc(1, sizeof *ds);
    float *proto = malloc(sizeof(float) * C * D);
    if (!ds || !proto) goto oom;
    ds->n = n;
    ds->c = 1;
    ds->h = H;
    ds->w = W;
    ds->n_classes = C;
    ds->x = malloc(sizeof(float) * (size_t)n * D);
    ds->y = malloc((size_t)n);
    if (!ds->x || !ds->y) goto oom;
    scv_rng r;
    scv_rng_seed(&r, 12345);
    for (int c = 0; c < C; c++) {
        /* a sum of a few random blobs, so convolutions have structure to find */
        for (int i = 0; i < D; i++) proto[c * D + i] = 0;
        for (int b = 0; b < 4; b++) {
            double cy = 4 + 20 * scv_rng_uniform(&r), cx = 4 + 20 * scv_rng_uniform(&r);
            double s = 2 + 4 * scv_rng_uniform(&r), a = scv_rng_uniform(&r) > 0.5 ? 0.6 : -0.6;
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++) {
                    double d2 = ((y - cy) * (y - cy) + (x - cx) * (x - cx)) / (s * s);
                    proto[c * D + y * W + x] += (float)(a * exp(-d2));
                }
        }
    }
    scv_rng_seed(&r, 777 + (uint64_t)split);
    for (int64_t i = 0; i < n; i++) {
        if (stop && i % SCV_DATA_STOP_EVERY == 0 && stop()) {
            free(proto);
            scv_dataset_free(ds);
            return scv_err_set(err, SCV_EINTR, "interrupted while generating synthetic data (%lld of %lld samples)",
                               (long long)i, (long long)n);
        }
        int c = (int)scv_rng_below(&r, C);
        ds->y[i] = (uint8_t)c;
        for (int j = 0; j < D; j++)
            ds->x[i * D + j] = proto[c * D + j] + (float)scv_rng_normal(&r);
    }
    free(proto);
    *out = ds;
    return SCV_OK;
oom:
    free(proto);
    scv_dataset_free(ds);
    return scv_err_set(err, SCV_ENOMEM, "out of memory for %lld synthetic samples", (long long)n);
}

int scv_dataset_load(const char *spec, int split, scv_dataset **out, scv_err *err)
{
    return scv_dataset_load_stop(spec, split, NULL, out, err);
}

int scv_dataset_load_stop(const char *spec, int split, int (*stop)(void), scv_dataset **out, scv_err *err)
{
    *out = NULL;
    if (stop && stop()) return scv_err_set(err, SCV_EINTR, "interrupted before loading --dataset %s", spec ? spec : "");
    if (!spec || !*spec) return scv_err_set(err, SCV_EINVAL, "--dataset: empty");
    if (strncmp(spec, "synthetic:", 10) == 0) {
        int64_t n;
        if (scv_parse_i64(spec + 10, &n) != SCV_OK || n < 1 || n > SCV_SYNTHETIC_MAX_N)
            return scv_err_set(err, SCV_EINVAL,
                               "--dataset %s: synthetic:N needs N in 1..%lld (its samples within %lld MiB per rank)",
                               spec, (long long)SCV_SYNTHETIC_MAX_N, (long long)(SCV_SYNTHETIC_MAX_BYTES >> 20));
        return load_synthetic(n, split, stop, out, err);
    }
    const char *dir = strcmp(spec, "fashion-mnist") == 0 ? SCV_FASHION_MNIST_DIR : spec;
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        if (dir != spec)
            return scv_err_set(err, SCV_ENOTFOUND,
                               "%s: not found (install Debian's dataset-fashion-mnist: "
                               "scripts/install-deps.sh)", dir);
        return scv_err_set(err, SCV_ENOTFOUND,
                           "--dataset %s: not a directory, and not fashion-mnist or synthetic:N",
                           spec);
    }
    return load_idx_dir(dir, split, dir != spec, out, err); /* the built-in dataset is cached */
}
