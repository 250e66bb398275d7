/*
 * fuzz_intset.c - the one parser of K and B specs (scv_parse_int_set, src/core/util.c):
 * lists, ranges, steps, doubling ranges. The first two bytes pick pow2 and the bounds
 * (hi up to 2^24, as --batch's), the rest is the spec. An accepted spec's values lie in
 * the bounds, each once, as many as the count says; a refused one names the spec.
 */
#include "fuzz_util.h"
#include "scv.h"
#include "core/util.h"

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)fuzz_write; /* fuzz_util.h's file helper: unused here */
    if (size < 2) return 0;
    int pow2 = data[0] & 1;
    long lo = (data[0] >> 1) & 3, hi = (data[1] & 1) ? 1L << 24 : 1024;
    char *s = malloc(size - 1);
    if (!s) return 0;
    memcpy(s, data + 2, size - 2);
    s[size - 2] = 0;
    int *v = NULL;
    scv_err err = {0};
    long n = scv_parse_int_set(s, pow2, lo, hi, &v, &err);
    if (n < 0) {
        if (v || !err.msg[0]) abort();
    } else {
        if (n == 0 || n > SCV_INT_SET_MAX || !v) abort();
        for (long i = 0; i < n; i++)
            if (v[i] < lo || v[i] > hi) abort();
        qsort(v, (size_t)n, sizeof *v, cmp_int);
        for (long i = 1; i < n; i++)
            if (v[i] == v[i - 1]) abort();
    }
    free(v);
    free(s);
    return 0;
}
