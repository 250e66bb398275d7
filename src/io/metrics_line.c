/*
 * metrics_line.c - see metrics_line.h. Each line type has a table of its numbers (name,
 * place in the typed struct, range, integral or not, required or not) and of its strings;
 * parsing a line is one loop over its type's tables, so a field's name and range are
 * written once for every reader of the metrics. A line cJSON refuses is read again with its
 * bare NaN/Infinity tokens quoted, so that a diverged value is named as such; the reader
 * state's checks across lines (monotonic counters, the segment's K) follow at the end.
 */
#define _POSIX_C_SOURCE 200809L
#include "metrics_line.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A bare non-finite token (not JSON, so cJSON refuses the line) is read as this string
 * followed by the token, and then named as a non-finite value. */
#define NONFINITE_MARK "#scv-nonfinite:"

/* Ranges of the metrics' numbers (anything beyond is a damaged or hostile file). */
#define MAX_WORKERS 65536.0
#define MAX_BATCH 1073741824.0  /* 2^30 */
#define MAX_SECONDS 1e7         /* one iteration or evaluation */
#define MAX_COUNT 1e15          /* parameters, bytes, samples, iterations */
#define MAX_SQNORM 1e300        /* squared norms, losses */
#define MAX_EPOCHS 1e9
#define MAX_TS 1e11             /* a wall-clock stamp (Unix seconds) */
#define MAX_CF 1e12
#define MAX_THREADS 4096

#define INTEGRAL 0x1u /* an integer */
#define PRESENT 0x2u  /* required: must be there (null allowed) */
#define VALUE 0x4u    /* required: must be a number (neither absent nor null) */

typedef struct {
    const char *name;
    size_t off;
    double lo, hi;
    unsigned flags;
} num_field;

typedef struct {
    const char *name;
    size_t off, cap;
} str_field;

#define N(T, json, m, lo, hi, fl) {json, offsetof(T, m), lo, hi, fl}
#define S(T, json, m) {json, offsetof(T, m), sizeof(((T *)0)->m)}

/* In the order profile.c has always checked them (the first bad one is named). */
static const num_field iter_nums[] = {
    N(scv_ml_iter, "iter", iter, 0, MAX_COUNT, INTEGRAL),
    N(scv_ml_iter, "workers", workers, 1, MAX_WORKERS, INTEGRAL | PRESENT | VALUE),
    N(scv_ml_iter, "batch", batch, 1, MAX_BATCH, INTEGRAL | PRESENT | VALUE),
    N(scv_ml_iter, "t_compute", t_compute, 0, MAX_SECONDS, PRESENT | VALUE),
    N(scv_ml_iter, "t_comm", t_comm, 0, MAX_SECONDS, PRESENT | VALUE),
    N(scv_ml_iter, "t_iter", t_iter, 0, MAX_SECONDS, PRESENT | VALUE),
    N(scv_ml_iter, "grad_sqnorm_local_mean", g_local, 0, MAX_SQNORM, PRESENT),
    N(scv_ml_iter, "grad_sqnorm_global", g_global, 0, MAX_SQNORM, PRESENT),
    N(scv_ml_iter, "epoch_progress", epoch_progress, 0, MAX_EPOCHS, PRESENT),
    N(scv_ml_iter, "cf", cf, 0, MAX_CF, 0),
    N(scv_ml_iter, "t_compress", t_compress, 0, MAX_SECONDS, 0),
    N(scv_ml_iter, "loss", loss, -MAX_SQNORM, MAX_SQNORM, 0),
    N(scv_ml_iter, "samples_seen", samples_seen, 0, MAX_COUNT, 0),
    N(scv_ml_iter, "ts", ts, 0, MAX_TS, 0),
};

static const num_field eval_nums[] = {
    N(scv_ml_eval, "iter", iter, 0, MAX_COUNT, INTEGRAL),
    N(scv_ml_eval, "test_accuracy", test_accuracy, 0, 1, 0),
    N(scv_ml_eval, "epoch_progress", epoch_progress, 0, MAX_EPOCHS, 0),
    N(scv_ml_eval, "test_loss", test_loss, 0, MAX_SQNORM, 0),
    N(scv_ml_eval, "train_loss", train_loss, -MAX_SQNORM, MAX_SQNORM, 0),
    N(scv_ml_eval, "train_loss_samples", train_loss_samples, 0, MAX_COUNT, 0),
    N(scv_ml_eval, "eval_seconds", eval_seconds, 0, MAX_SECONDS, 0),
};
static const str_field eval_strs[] = {S(scv_ml_eval, "role", role), S(scv_ml_eval, "set", set)};

static const num_field job_nums[] = {
    N(scv_ml_job, "params", params, 1, MAX_COUNT, PRESENT | VALUE),
    N(scv_ml_job, "act_bytes", act_bytes, 0, MAX_COUNT, PRESENT),
    N(scv_ml_job, "n_train", n_train, 1, MAX_COUNT, PRESENT | VALUE),
    N(scv_ml_job, "input_floats", input_floats, 0, MAX_COUNT, PRESENT),
    N(scv_ml_job, "threads", threads, 0, MAX_THREADS, INTEGRAL),
};
static const str_field job_strs[] = {S(scv_ml_job, "model", model), S(scv_ml_job, "arch", arch),
                                     S(scv_ml_job, "vm", vm), S(scv_ml_job, "dataset", dataset)};

static const num_field latency_nums[] = {
    N(scv_ml_latency, "workers", workers, 1, MAX_WORKERS, INTEGRAL | PRESENT),
    N(scv_ml_latency, "seconds", seconds, 0, MAX_SECONDS, PRESENT),
};

/* The line types: their name, tables and what a lacking required field is called. */
static const struct {
    const char *name;
    scv_ml_type type;
    const num_field *nums;
    size_t n_nums;
    const str_field *strs;
    size_t n_strs;
    const char *lacks;  /* printf: path, line, field */
} types[] = {
    {"iter", SCV_ML_ITER, iter_nums, sizeof iter_nums / sizeof iter_nums[0], NULL, 0,
     "%s:%d: iteration line lacks field '%s' (required: workers, batch, t_compute, t_comm, t_iter; "
     "grad_sqnorm_local_mean, grad_sqnorm_global and epoch_progress may be null)"},
    {"eval", SCV_ML_EVAL, eval_nums, sizeof eval_nums / sizeof eval_nums[0], eval_strs,
     sizeof eval_strs / sizeof eval_strs[0], NULL},
    {"job", SCV_ML_JOB, job_nums, sizeof job_nums / sizeof job_nums[0], job_strs, sizeof job_strs / sizeof job_strs[0],
     "%s:%d: job line lacks params, act_bytes or n_train%.0s"},
    {"latency", SCV_ML_LATENCY, latency_nums, sizeof latency_nums / sizeof latency_nums[0], NULL, 0,
     "%s:%d: latency line lacks field '%s' (required: workers, seconds)"},
};

/* The bare tokens a diverged value is written as (Python's json.dumps, C's printf). */
static const char *const nonfinite_tokens[] = {"-Infinity", "Infinity", "-NaN", "NaN", "-nan", "nan", "-inf", "inf"};

/* A copy of text with each bare non-finite token outside strings quoted as NONFINITE_MARK
 * + token (malloc'd), or NULL when there is none (or no memory). */
static char *quote_nonfinite(const char *text)
{
    size_t len = strlen(text), o = 0;
    char *q = malloc(len * 9 + 1); /* a token of 3 characters grows to at most 3 + 20 */
    int in_str = 0, found = 0;
    if (!q) return NULL;
    for (size_t i = 0; i < len;) {
        char ch = text[i];
        if (in_str) {
            q[o++] = ch, i++;
            if (ch == '\\' && i < len) q[o++] = text[i++];
            else if (ch == '"') in_str = 0;
            continue;
        }
        if (ch == '"') in_str = 1;
        size_t t = 0, n = 0;
        int starts = i == 0 || !(isalnum((unsigned char)text[i - 1]) || text[i - 1] == '.');
        while (starts && t < sizeof nonfinite_tokens / sizeof nonfinite_tokens[0]) {
            n = strlen(nonfinite_tokens[t]);
            if (!strncmp(text + i, nonfinite_tokens[t], n) && !isalnum((unsigned char)text[i + n])) break;
            t++;
        }
        if (starts && t < sizeof nonfinite_tokens / sizeof nonfinite_tokens[0]) {
            o += (size_t)sprintf(q + o, "\"" NONFINITE_MARK "%s\"", nonfinite_tokens[t]);
            i += n, found = 1;
            continue;
        }
        q[o++] = ch, i++;
    }
    q[o] = 0;
    if (!found) free(q), q = NULL;
    return q;
}

/* Names field f of out as non-finite (the first one, or the loss), written as `as`. */
static void mark_nonfinite(scv_metrics_line *out, const num_field *f, const char *as)
{
    if (out->nonfinite && strcmp(f->name, "loss")) return; /* the loss first: it is what diverges */
    out->nonfinite = f->name;
    snprintf(out->nonfinite_as, sizeof out->nonfinite_as, "%s", as);
}

/* One number: NaN when absent or null (*lacking names a required one that is lacking);
 * an error naming the field when of another type, not finite or out of range (1e400 reads
 * as inf). */
static int read_num(const cJSON *o, const num_field *f, double *v, const char **lacking, int quoted,
                    scv_metrics_line *out, const char *path, int lineno, scv_err *err)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, f->name);
    int integral = (f->flags & INTEGRAL) != 0;
    *v = NAN;
    if (!x || cJSON_IsNull(x)) {
        if (!*lacking && ((!x && (f->flags & PRESENT)) || (f->flags & VALUE))) *lacking = f->name;
        return SCV_OK;
    }
    if (quoted && cJSON_IsString(x) && !strncmp(x->valuestring, NONFINITE_MARK, strlen(NONFINITE_MARK))) {
        const char *as = x->valuestring + strlen(NONFINITE_MARK);
        mark_nonfinite(out, f, as);
        return scv_err_set(err, SCV_EPARSE, "%s:%d: field '%s' = %s is not a finite number", path, lineno, f->name,
                           as);
    }
    if (!cJSON_IsNumber(x))
        return scv_err_set(err, SCV_EPARSE, "%s:%d: field '%s' is not a number (%s%g..%g, or null)", path, lineno,
                           f->name, integral ? "an integer in " : "", f->lo, f->hi);
    double d = x->valuedouble;
    if (!isfinite(d)) mark_nonfinite(out, f, d > 0 ? "inf" : d < 0 ? "-inf" : "nan");
    if (!(d >= f->lo && d <= f->hi) || (integral && d != floor(d)))
        return scv_err_set(err, SCV_EPARSE, "%s:%d: field '%s' = %g is out of range (%s%g..%g)%s", path, lineno,
                           f->name, d, integral ? "an integer in " : "", f->lo, f->hi,
                           f->hi == 1 && d > 1 && d <= 100 ? ": a fraction, not a percentage" : "");
    *v = d;
    return SCV_OK;
}

int scv_metrics_line_parse(const char *text, const char *path, int lineno, scv_metrics_line *out, scv_err *err)
{
    memset(out, 0, sizeof *out);
    if (strspn(text, " \t\r\n") == strlen(text)) return SCV_OK; /* SCV_ML_BLANK */
    out->type = SCV_ML_OTHER;
    cJSON *o = cJSON_Parse(text);
    int quoted = 0; /* bare tokens quoted (only then is NONFINITE_MARK one) */
    if (!o) { /* NaN or Infinity written bare: read them to name them */
        char *q = quote_nonfinite(text);
        if (q) o = cJSON_Parse(q), quoted = 1;
        free(q);
    }
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return scv_err_set(err, SCV_EPARSE, "%s:%d: not a JSON object", path, lineno);
    }
    const cJSON *ty = cJSON_GetObjectItemCaseSensitive(o, "type");
    size_t t = 0;
    while (t < sizeof types / sizeof types[0] && !(cJSON_IsString(ty) && !strcmp(ty->valuestring, types[t].name))) t++;
    if (t == sizeof types / sizeof types[0]) { /* the contract: unknown types are skipped */
        cJSON_Delete(o);
        return SCV_OK;
    }
    out->type = types[t].type;
    char *base = (char *)&out->u;
    int rc = SCV_OK;
    const char *lacking = NULL;
    for (size_t i = 0; i < types[t].n_nums; i++) { /* every field is read; the first error is kept */
        const num_field *f = &types[t].nums[i];
        int r = read_num(o, f, (double *)(base + f->off), &lacking, quoted, out, path, lineno, rc ? NULL : err);
        if (!rc) rc = r;
    }
    for (size_t i = 0; i < types[t].n_strs; i++) {
        const str_field *f = &types[t].strs[i];
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, f->name);
        if (cJSON_IsString(x)) snprintf(base + f->off, f->cap, "%s", x->valuestring);
        else if (x && !cJSON_IsNull(x) && !rc)
            rc = scv_err_set(err, SCV_EPARSE, "%s:%d: field '%s' is not a string", path, lineno, f->name);
    }
    if (!rc && lacking && types[t].lacks) rc = scv_err_set(err, SCV_EPARSE, types[t].lacks, path, lineno, lacking);
    cJSON_Delete(o);
    return rc;
}

void scv_ml_reader_init(scv_ml_reader *r, int workers)
{
    memset(r, 0, sizeof *r);
    r->workers = workers;
    r->iter = r->samples_seen = r->ts = NAN;
}

int scv_metrics_line_next(scv_ml_reader *r, const char *text, const char *path, int lineno, scv_metrics_line *out,
                          scv_err *err)
{
    int rc = scv_metrics_line_parse(text, path, lineno, out, err);
    if (rc) return rc;
    if (out->type == SCV_ML_JOB) { /* a new stream (a profile's files one after the other) */
        scv_ml_reader_init(r, r->workers);
        return SCV_OK;
    }
    if (out->type != SCV_ML_ITER) return SCV_OK;
    const scv_ml_iter *x = &out->u.iter;
    if (r->workers > 0 && x->workers != r->workers)
        return scv_err_set(err, SCV_EPARSE, "%s:%d: field 'workers' = %.0f is not the segment's K = %d", path, lineno,
                           x->workers, r->workers);
    if (!isnan(x->iter) && x->iter <= r->iter) /* false while r->iter is NaN */
        return scv_err_set(err, SCV_EPARSE,
                           "%s:%d: field 'iter' = %.0f does not follow line %d's %.0f (iterations must increase)", path,
                           lineno, x->iter, r->iter_line, r->iter);
    if (!isnan(x->samples_seen) && x->samples_seen < r->samples_seen)
        return scv_err_set(err, SCV_EPARSE, "%s:%d: field 'samples_seen' = %.0f is below line %d's %.0f (it must not "
                           "decrease)", path, lineno, x->samples_seen, r->samples_line, r->samples_seen);
    if (!isnan(x->ts) && x->ts < r->ts - SCV_ML_TS_SLACK_S)
        return scv_err_set(err, SCV_EPARSE, "%s:%d: field 'ts' = %.3f is before line %d's %.3f (it must not decrease)",
                           path, lineno, x->ts, r->ts_line, r->ts);
    if (!isnan(x->iter)) r->iter = x->iter, r->iter_line = lineno;
    if (!isnan(x->samples_seen)) r->samples_seen = x->samples_seen, r->samples_line = lineno;
    if (!isnan(x->ts) && !(x->ts < r->ts)) r->ts = x->ts, r->ts_line = lineno; /* the latest stamp */
    return SCV_OK;
}
