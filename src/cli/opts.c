/*
 * opts.c - option-value parsing (see opts.h).
 */
#include "opts.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int push(int **v, long *n, long *cap, long x)
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

long scv_parse_int_set(const char *s, int pow2, long lo, long hi, int **out, char *msg, size_t cap)
{
    *out = NULL;
    long n = 0, vcap = 0;
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        long a = strtol(p, &end, 10);
        if (end == p || errno) goto bad;
        if (end[0] == '.' && end[1] == '.') {
            const char *q = end + 2;
            long b = strtol(q, &end, 10), step = 0;
            if (end == q) goto bad;
            if (*end == ':') {
                q = end + 1;
                step = strtol(q, &end, 10);
                if (end == q || step < 1) goto bad;
            }
            if (a < lo || b > hi || a > b) goto range;
            if (step || !pow2) {
                for (long x = a; x <= b; x += step ? step : 1)
                    if (push(out, &n, &vcap, x)) goto oom;
            } else {
                for (long x = a; x <= b; x *= 2)
                    if (push(out, &n, &vcap, x)) goto oom;
            }
        } else {
            if (a < lo || a > hi) goto range;
            if (push(out, &n, &vcap, a)) goto oom;
        }
        if (*end == ',') end++;
        else if (*end) goto bad;
        p = end;
    }
    if (n == 0) goto bad;
    return n;
bad:
    snprintf(msg, cap, "'%s': expected a list (1,2,8) or a range (1..64, 64..1024:64)", s);
    goto fail;
range:
    snprintf(msg, cap, "'%s': values must lie in %ld..%ld", s, lo, hi);
    goto fail;
oom:
    snprintf(msg, cap, "out of memory");
fail:
    free(*out);
    *out = NULL;
    return -1;
}

double scv_parse_duration(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v) || v <= 0) return -1;
    double mul = 1;
    if (*end == 's') end++;
    else if (*end == 'm') mul = 60, end++;
    else if (*end == 'h') mul = 3600, end++;
    return *end ? -1 : v * mul;
}
