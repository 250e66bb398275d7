/*
 * util.c - clock, PRNG, atomic file writes and strict number parsing (see util.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double scv_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double scv_wall_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

uint64_t scv_hash64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

void scv_rng_seed(scv_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) {
        seed = scv_hash64(seed + (uint64_t)i);
        r->s[i] = seed;
    }
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t scv_rng_next(scv_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double scv_rng_uniform(scv_rng *r) { return (double)(scv_rng_next(r) >> 11) * 0x1.0p-53; }

double scv_rng_normal(scv_rng *r)
{
    double u1 = scv_rng_uniform(r), u2 = scv_rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

uint64_t scv_rng_below(scv_rng *r, uint64_t n)
{
    uint64_t lim = UINT64_MAX - UINT64_MAX % n, v;
    do v = scv_rng_next(r);
    while (v >= lim);
    return v % n;
}

int scv_write_atomic(const char *path, const scv_iov *parts, int n_parts, scv_err *err)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return scv_err_set(err, SCV_EINVAL, "%s: path too long", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return scv_err_set(err, SCV_EIO, "%s: cannot create (its temporary file %s): %s", path, tmp, strerror(errno));
    for (int i = 0; i < n_parts; i++) {
        const char *p = parts[i].p;
        size_t left = parts[i].n;
        while (left > 0) {
            ssize_t w = write(fd, p, left);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) {
                int e = errno;
                close(fd);
                unlink(tmp);
                return scv_err_set(err, SCV_EIO, "%s: write failed (its temporary file %s): %s", path, tmp, strerror(e));
            }
            p += w;
            left -= (size_t)w;
        }
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        return scv_err_set(err, SCV_EIO, "%s: fsync failed (its temporary file %s): %s", path, tmp, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return scv_err_set(err, SCV_EIO, "%s: rename failed: %s", path, strerror(e));
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return SCV_OK;
}

int scv_parse_i64(const char *s, int64_t *out)
{
    if (!s || !*s) return SCV_EINVAL;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end) return SCV_EINVAL;
    *out = v;
    return SCV_OK;
}

int scv_is_decimal(const char *s)
{
    /* strtod also reads hex ("0x10"), "inf", "nan" and "infinity": not what a person means
     * by a number, and "0x10" read as 16 once set a budget of $16 */
    return s && *s && strspn(s, "0123456789+-.eE") == strlen(s) && strpbrk(s, "0123456789");
}

int scv_parse_f64(const char *s, double *out)
{
    if (!scv_is_decimal(s)) return SCV_EINVAL;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v)) return SCV_EINVAL;
    *out = v;
    return SCV_OK;
}

/* ---- option values: integer sets and durations ---- */

static int push_int(int **v, long *n, long *cap, long x)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        int *nv = realloc(*v, sizeof(int) * (size_t)*cap);
        if (!nv) return -1;
        *v = nv;
    }
    (*v)[(*n)++] = (int)x;
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* 1 with *rep the smallest value v[] holds twice (a sorted copy's neighbours), 0 when all
 * are distinct, -1 when the copy cannot be made. */
static int find_repeat(const int *v, long n, long *rep)
{
    int *c = malloc(sizeof(int) * (size_t)n);
    if (!c) return -1;
    memcpy(c, v, sizeof(int) * (size_t)n);
    qsort(c, (size_t)n, sizeof *c, cmp_int);
    int found = 0;
    for (long i = 1; i < n && !found; i++)
        if (c[i] == c[i - 1]) found = 1, *rep = c[i];
    free(c);
    return found;
}

long scv_parse_int_set(const char *s, int pow2, long lo, long hi, int **out, scv_err *err)
{
    *out = NULL;
    long n = 0, vcap = 0, rep = 0;
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        long a = strtol(p, &end, 10);
        if (end == p || errno) goto bad;
        if (end[0] == '.' && end[1] == '.') {
            const char *q = end + 2;
            errno = 0;
            long b = strtol(q, &end, 10), step = 0;
            if (end == q || errno) goto bad;
            if (*end == ':') {
                q = end + 1;
                step = strtol(q, &end, 10);
                if (end == q || errno || step < 1) goto bad;
            }
            if (a < lo || b > hi || a > b) goto range;
            /* no overflow past b (a step of LONG_MAX), and a bounded number of values */
            if (step || !pow2) {
                long st = step ? step : 1;
                for (long x = a;; x += st) {
                    if (n >= SCV_INT_SET_MAX) goto toomany;
                    if (push_int(out, &n, &vcap, x)) goto oom;
                    if (b - x < st) break;
                }
            } else {
                for (long x = a;; x *= 2) {
                    if (n >= SCV_INT_SET_MAX) goto toomany;
                    if (push_int(out, &n, &vcap, x)) goto oom;
                    if (x < 1 || x > b / 2) break;
                }
            }
        } else {
            if (a < lo || a > hi) goto range;
            if (n >= SCV_INT_SET_MAX) goto toomany;
            if (push_int(out, &n, &vcap, a)) goto oom;
        }
        if (*end == ',' && (!end[1] || end[1] == ',')) goto empty; /* "1,", "1,,2" */
        if (*end == ',') end++;
        else if (*end) goto bad;
        p = end;
    }
    if (n == 0) goto bad;
    /* a value given twice ("8,8", "1..8,4") would be one configuration planned, trained
     * and drawn twice: refused here, for every command and the service alike */
    int found = find_repeat(*out, n, &rep);
    if (found < 0) goto oom;
    if (found) {
        scv_err_set(err, SCV_EINVAL, "'%s': the value %ld is repeated (each value once)", s, rep);
        goto fail;
    }
    return n;
bad:
    scv_err_set(err, SCV_EINVAL, "'%s': expected a list (1,2,8) or a range (1..64, 64..1024:64)", s);
    goto fail;
empty:
    scv_err_set(err, SCV_EINVAL, "'%s': expected a list (1,2,8) or a range (1..64, 64..1024:64) (an empty item after "
                "a comma)", s);
    goto fail;
range:
    scv_err_set(err, SCV_ERANGE, "'%s': values must lie in %ld..%ld", s, lo, hi);
    goto fail;
toomany:
    scv_err_set(err, SCV_ERANGE, "'%s': more than %d values", s, (int)SCV_INT_SET_MAX);
    goto fail;
oom:
    scv_err_set(err, SCV_ENOMEM, "out of memory");
fail:
    free(*out);
    *out = NULL;
    return -1;
}

double scv_parse_duration(const char *s)
{
    char num[64];
    size_t n = s ? strlen(s) : 0;
    double mul = 1;
    if (n && strchr("smh", s[n - 1])) mul = s[n - 1] == 's' ? 1 : s[n - 1] == 'm' ? 60 : 3600, n--;
    if (!n || n >= sizeof num) return -1;
    memcpy(num, s, n);
    num[n] = 0;
    double v;
    if (scv_parse_f64(num, &v) || v <= 0) return -1; /* a decimal number: not "0x10s" */
    return !isfinite(v * mul) ? -1 : v * mul;        /* "1e308h" is not a duration */
}

int scv_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double scv_quantile_sorted(const double *v, size_t n, double q)
{
    double h = q * (double)(n - 1);
    size_t i = (size_t)floor(h);
    if (i >= n - 1) return v[n - 1];
    double lo = v[i], hi = v[i + 1];
    if (isinf(lo) || isinf(hi)) return h == (double)i ? lo : INFINITY;
    return lo + (h - (double)i) * (hi - lo);
}

double scv_lr_scale_factor(scv_lr_scaling rule, double batch, double base_batch)
{
    double ratio = base_batch > 0 ? batch / base_batch : 1;
    return rule == SCV_LR_SCALE_LINEAR ? ratio : rule == SCV_LR_SCALE_SQRT ? sqrt(ratio) : 1;
}

double scv_median(double *x, size_t n)
{
    if (n == 0) return NAN;
    qsort(x, n, sizeof *x, scv_cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* ---- "did you mean" ---- */

int scv_edit_distance(const char *a, const char *b)
{
    enum { MAXL = 128 };
    size_t n = strlen(a), m = strlen(b);
    if (n > MAXL || m > MAXL) return (int)(n > m ? n : m); /* not a mistyped name */
    int rows[3][MAXL + 1], *pp = rows[0], *p = rows[1], *d = rows[2]; /* rows i-2, i-1, i */
    for (size_t j = 0; j <= m; j++) p[j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        d[0] = (int)i;
        for (size_t j = 1; j <= m; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            int v = p[j - 1] + (ca != cb);
            if (p[j] + 1 < v) v = p[j] + 1;
            if (d[j - 1] + 1 < v) v = d[j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) && tolower((unsigned char)a[i - 2]) == cb &&
                pp[j - 2] + 1 < v)
                v = pp[j - 2] + 1;
            d[j] = v;
        }
        int *t = pp;
        pp = p, p = d, d = t;
    }
    return p[m];
}

const char *scv_nearest_name(const char *word, const char *const *names, size_t n)
{
    const char *best = NULL;
    int bd = SCV_NEAR_MAX + 1;
    size_t len = word ? strlen(word) : 0;
    for (size_t i = 0; len && i < n; i++) {
        if (!names[i]) continue;
        int dd = scv_edit_distance(word, names[i]);
        if (dd > 0 && dd < bd && 2 * (size_t)dd < len) best = names[i], bd = dd;
    }
    return best;
}

const char *scv_nearest_in_list(const char *word, const char *list, char *out, size_t cap)
{
    char buf[1024], *save = NULL;
    const char *names[128];
    size_t n = 0;
    snprintf(buf, sizeof buf, "%s", list ? list : "");
    for (char *t = strtok_r(buf, "|, ", &save); t && n < 128; t = strtok_r(NULL, "|, ", &save)) names[n++] = t;
    const char *b = scv_nearest_name(word, names, n);
    if (!b || !cap) return NULL;
    snprintf(out, cap, "%s", b);
    return out;
}
