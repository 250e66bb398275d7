/*
 * option.c - the one reader of option values (option.h): the text of a command-line
 * option, a job file's setting, a service request's field or a segment's variable read
 * as its row's scv_value says (the type, the range, the destination), each refusal in the
 * same words: the option, the text as given, what it takes and why the text is not that.
 * A number is decimal (scv_parse_f64: never hex, inf or nan); a list has no empty item.
 */
#define _POSIX_C_SOURCE 200809L
#include "core/option.h"
#include "core/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AT(base, v, type) ((type *)((char *)(base) + (v)->off))

static int integral(const scv_value *v)
{
    return v->type == SCV_VT_INT || v->type == SCV_VT_I64 || v->type == SCV_VT_U64 || v->type == SCV_VT_INTS;
}

int scv_value_in_range(const scv_value *v, double x)
{
    if (x == 0 && (v->bounds & SCV_VB_ZERO)) return 1;
    int lo = v->bounds & SCV_VB_OPEN_LO ? x > v->lo : x >= v->lo;
    int hi = v->bounds & SCV_VB_OPEN_HI ? x < v->hi : x <= v->hi;
    return lo && hi && (!integral(v) || x == floor(x));
}

/* "none, linear or sqrt" from "none|linear|sqrt" */
static void words_text(const char *words, char *buf, size_t cap)
{
    size_t len = 0, n = 1;
    buf[0] = 0;
    for (const char *w = words; w && *w; w++) n += *w == '|';
    for (size_t i = 0; words && i < n && len < cap; i++) {
        size_t k = strcspn(words, "|");
        len += (size_t)snprintf(buf + len, cap - len, "%s%.*s", !i ? "" : i + 1 < n ? ", " : " or ", (int)k, words);
        words += k + (words[k] == '|');
    }
}

/* "in 1..1024", ">= 1", "in (0, 1]", "> 0", "" (any) */
static void range_text(const scv_value *v, char *buf, size_t cap)
{
    int has_lo = isfinite(v->lo), has_hi = isfinite(v->hi) && v->hi < 9e18;
    const char *zero = v->bounds & SCV_VB_ZERO ? " (or 0: off)" : "";
    if (integral(v) && has_lo && has_hi) snprintf(buf, cap, " in %.17g..%.17g%s", v->lo, v->hi, zero);
    else if (integral(v) && has_lo) snprintf(buf, cap, " >= %.17g%s", v->lo, zero);
    else if (has_lo && has_hi)
        snprintf(buf, cap, " in %s%g, %g%s%s", v->bounds & SCV_VB_OPEN_LO ? "(" : "[", v->lo, v->hi,
                 v->bounds & SCV_VB_OPEN_HI ? ")" : "]", zero);
    else if (has_lo) snprintf(buf, cap, " %s %g%s", v->bounds & SCV_VB_OPEN_LO ? ">" : ">=", v->lo, zero);
    else buf[0] = 0;
}

void scv_value_expect(const scv_value *v, const char *words, char *buf, size_t cap)
{
    char r[96];
    range_text(v, r, sizeof r);
    int positive = v->lo == 0 && (v->bounds & SCV_VB_OPEN_LO) && !(v->bounds & SCV_VB_OPEN_HI);
    int bounded = isfinite(v->hi) && v->hi < 9e18;
    switch (v->type) {
    case SCV_VT_INT: case SCV_VT_I64: case SCV_VT_U64: snprintf(buf, cap, "an integer%s", r); break;
    case SCV_VT_DBL:
        if (positive && bounded) snprintf(buf, cap, "a positive number, at most %g%s", v->hi, v->bounds & SCV_VB_ZERO ? " (or 0: off)" : "");
        else if (positive) snprintf(buf, cap, "a positive number%s", v->bounds & SCV_VB_ZERO ? " (or 0: off)" : "");
        else snprintf(buf, cap, "a number%s", r);
        break;
    case SCV_VT_DUR: snprintf(buf, cap, "a duration%s: seconds, or a number with s, m or h (30s, 2m, 1.5h)", r); break;
    case SCV_VT_INTS: snprintf(buf, cap, "a list (1,2,8) or a range (1..64, 64..1024:64) of integers%s", r); break;
    case SCV_VT_DBLS: snprintf(buf, cap, "numbers%s separated by commas (at most %zu)", r, v->cap); break;
    case SCV_VT_ENUM: words_text(words, buf, cap); break;
    case SCV_VT_STR: case SCV_VT_BUF:
        snprintf(buf, cap, "%s", v->lo >= 1 ? "a value that is not empty" : "a value");
        if (v->type == SCV_VT_BUF) snprintf(buf + strlen(buf), cap - strlen(buf), " of at most %zu bytes", v->cap - 1);
        break;
    default: snprintf(buf, cap, "no value"); break;
    }
}

/* err: "LABEL 'TEXT': expected WHAT (WHY)" (WHY "" leaves the parenthesis out) */
static int refuse(const scv_value *v, const char *words, const char *label, const char *text, const char *why,
                  scv_err *err)
{
    char what[200];
    scv_value_expect(v, words, what, sizeof what);
    return scv_err_set(err, SCV_EINVAL, "%s '%.300s': expected %s%s%s%s", label, text, what, why[0] ? " (" : "", why,
                       why[0] ? ")" : "");
}

/* WHY the number x (text) is out of v's range, into why */
static void out_of_range(const scv_value *v, double x, char *why, size_t cap)
{
    if (integral(v) && x != floor(x)) snprintf(why, cap, "%g is not an integer", x);
    else if (v->bounds & SCV_VB_OPEN_LO ? !(x > v->lo) : !(x >= v->lo))
        snprintf(why, cap, v->bounds & SCV_VB_OPEN_LO ? "%g is not above %g" : "%g is below the minimum %g", x, v->lo);
    else snprintf(why, cap, v->bounds & SCV_VB_OPEN_HI ? "%g is not below %g" : "%g is above the maximum %g", x, v->hi);
}

/* A number of v's type from text into *x (integers exactly into *i or *u); a WHY when not. */
static int number(const scv_value *v, const char *text, double *x, int64_t *i, uint64_t *u, char *why, size_t cap)
{
    char *end = NULL;
    errno = 0;
    if (v->type == SCV_VT_U64) {
        *u = strtoull(text, &end, 10);
        if (!*text || *end || errno || strchr(text, '-')) return snprintf(why, cap, "not an integer"), -1;
        *x = (double)*u;
        return 0;
    }
    if (integral(v)) {
        if (scv_parse_i64(text, i) == SCV_OK) return *x = (double)*i, 0;
        double d;
        if (scv_parse_f64(text, &d) == SCV_OK && d != floor(d)) return snprintf(why, cap, "%s is not an integer", text), -1;
        if (scv_parse_f64(text, &d) == SCV_OK && fabs(d) >= 9.2e18) return out_of_range(v, d, why, cap), -1;
        if (scv_parse_f64(text, &d) == SCV_OK) return snprintf(why, cap, "an integer is written in digits"), -1;
        return snprintf(why, cap, "not an integer"), -1;
    }
    if (scv_parse_f64(text, x) == SCV_OK) return 0;
    double d = strtod(text, &end);
    (void)d;
    if (*text && end != text && !*end) /* strtod reads it, but not as a decimal number */
        return snprintf(why, cap, "not a decimal number: no hex, inf or nan"), -1;
    return snprintf(why, cap, "not a number"), -1;
}

/* numbers separated by commas into the list of v */
static int read_list(const scv_value *v, const char *label, void *base, const char *text, scv_err *err)
{
    double *out = AT(base, v, double);
    double tmp[1024];
    size_t cap = v->cap < sizeof tmp / sizeof tmp[0] ? v->cap : sizeof tmp / sizeof tmp[0];
    size_t n = 0;
    char why[320], sub[96], item[64];
    for (const char *s = text; *s || (s > text && s[-1] == ','); n++) {
        size_t k = strcspn(s, ",");
        scv_value one = *v;
        one.type = SCV_VT_DBL;
        double x;
        int64_t i;
        uint64_t u;
        snprintf(item, sizeof item, "%.*s", (int)(k < sizeof item ? k : sizeof item - 1), s);
        if (n == cap) {
            snprintf(why, sizeof why, "more than %zu", cap);
            return refuse(v, NULL, label, text, why, err);
        }
        if (!k) snprintf(why, sizeof why, "%s[%zu] is empty", label, n);
        else if (k >= sizeof item || number(&one, item, &x, &i, &u, sub, sizeof sub))
            snprintf(why, sizeof why, "%s[%zu] '%s': %s", label, n, item, k >= sizeof item ? "too long" : sub);
        else if (!scv_value_in_range(&one, x)) {
            out_of_range(&one, x, sub, sizeof sub);
            snprintf(why, sizeof why, "%s[%zu]: %s", label, n, sub);
        } else {
            tmp[n] = x;
            s += k + (s[k] == ',');
            continue;
        }
        return refuse(v, NULL, label, text, why, err);
    }
    memcpy(out, tmp, n * sizeof *out);
    *(int *)((char *)base + v->n_off) = (int)n;
    return SCV_OK;
}

/* a set of integers into the list of v (ascending, at most cap) */
static int read_ints(const scv_value *v, const char *label, void *base, const char *text, scv_err *err)
{
    int *vals = NULL;
    scv_err e = {0};
    long k = scv_parse_int_set(text, !!(v->bounds & SCV_VB_POW2), (long)v->lo, (long)v->hi, &vals, &e);
    if (k < 0) return scv_err_set(err, e.code == SCV_ENOMEM ? SCV_ENOMEM : SCV_EINVAL, "%s %s", label, e.msg);
    int rc = SCV_OK;
    if ((size_t)k > v->cap) rc = scv_err_set(err, SCV_EINVAL, "%s '%s': at most %zu values", label, text, v->cap);
    for (long i = 1; !rc && i < k; i++)
        if (vals[i] <= vals[i - 1])
            rc = scv_err_set(err, SCV_EINVAL, "%s '%s': values must be distinct and ascending", label, text);
    if (!rc) {
        memcpy(AT(base, v, int), vals, sizeof(int) * (size_t)k);
        *(size_t *)((char *)base + v->n_off) = (size_t)k;
    }
    free(vals);
    return rc;
}

/* the index of text among words ('|'-separated), -1 */
static int word_index(const char *words, const char *text)
{
    size_t n = strlen(text);
    for (int i = 0; words && *words; i++) {
        size_t k = strcspn(words, "|");
        if (k == n && !strncmp(words, text, n)) return i;
        words += k + (words[k] == '|');
    }
    return -1;
}

int scv_value_read(const scv_value *v, const char *words, const char *label, void *base, const char *text,
                   scv_err *err)
{
    char why[320] = "";
    if (!text && v->type != SCV_VT_FLAG && v->type != SCV_VT_SET) return scv_err_set(err, SCV_EINVAL, "%s needs a value", label);
    switch (v->type) {
    case SCV_VT_FLAG: *AT(base, v, int) = 1; return SCV_OK;
    case SCV_VT_SET: return v->set(base, text, label, err);
    case SCV_VT_INTS: return read_ints(v, label, base, text, err);
    case SCV_VT_DBLS: return read_list(v, label, base, text, err);
    case SCV_VT_ENUM: {
        int i = word_index(words, text);
        if (i < 0) return refuse(v, words, label, text, "", err);
        *AT(base, v, int) = i;
        return SCV_OK;
    }
    case SCV_VT_STR: case SCV_VT_BUF: {
        size_t n = strlen(text);
        if ((double)n < v->lo) return refuse(v, words, label, text, "it is empty", err);
        if (v->type == SCV_VT_STR) *AT(base, v, const char *) = text;
        else if (n >= v->cap) return refuse(v, words, label, text, "too long", err);
        else memcpy(AT(base, v, char), text, n + 1);
        return SCV_OK;
    }
    case SCV_VT_DUR: {
        double x = scv_parse_duration(text);
        if (!(x > 0)) {
            double d;
            snprintf(why, sizeof why, "%s", !scv_parse_f64(text, &d) && d <= 0 ? "not above 0" : "not a duration");
            return refuse(v, words, label, text, why, err);
        }
        if (!scv_value_in_range(v, x)) {
            out_of_range(v, x, why, sizeof why);
            return refuse(v, words, label, text, why, err);
        }
        *AT(base, v, double) = x;
        return SCV_OK;
    }
    case SCV_VT_INT: case SCV_VT_I64: case SCV_VT_U64: case SCV_VT_DBL: {
        double x;
        int64_t i = 0;
        uint64_t u = 0;
        if (number(v, text, &x, &i, &u, why, sizeof why)) return refuse(v, words, label, text, why, err);
        if (!scv_value_in_range(v, x) && !(v->type == SCV_VT_U64 && u >= (uint64_t)v->lo && (double)u <= v->hi)) {
            out_of_range(v, x, why, sizeof why);
            return refuse(v, words, label, text, why, err);
        }
        if (v->type == SCV_VT_INT) *AT(base, v, int) = (int)i;
        else if (v->type == SCV_VT_I64) *AT(base, v, int64_t) = i;
        else if (v->type == SCV_VT_U64) *AT(base, v, uint64_t) = u;
        else *AT(base, v, double) = x;
        return SCV_OK;
    }
    default: return scv_err_set(err, SCV_EINVAL, "%s: takes no value here", label);
    }
}

int scv_option_read(const scv_option *o, void *base, const char *text, scv_err *err)
{
    char label[96];
    snprintf(label, sizeof label, "--%s", o->name ? o->name : "?");
    return scv_value_read(&o->v, o->values, label, base, text, err);
}
