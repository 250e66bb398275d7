/*
 * metrics_line.c - see metrics_line.h. Each line type has a table of its numbers (name,
 * place in the typed struct, range, integral or not, required or not) and of its strings;
 * parsing a line is one loop over its type's tables, so a field's name and range are
 * written once for every reader of the metrics.
 */
#define _POSIX_C_SOURCE 200809L
#include "metrics_line.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

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

/* One number: NaN when absent or null (*lacking names a required one that is lacking);
 * an error naming the field when of another type or out of range (1e400 reads as inf). */
static int read_num(const cJSON *o, const num_field *f, double *v, const char **lacking, const char *path,
                    int lineno, scv_err *err)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, f->name);
    int integral = (f->flags & INTEGRAL) != 0;
    *v = NAN;
    if (!x || cJSON_IsNull(x)) {
        if (!*lacking && ((!x && (f->flags & PRESENT)) || (f->flags & VALUE))) *lacking = f->name;
        return SCV_OK;
    }
    if (!cJSON_IsNumber(x))
        return scv_err_set(err, SCV_EPARSE, "%s:%d: field '%s' is not a number (%s%g..%g, or null)", path, lineno,
                           f->name, integral ? "an integer in " : "", f->lo, f->hi);
    double d = x->valuedouble;
    if (!(d >= f->lo && d <= f->hi) || (integral && d != floor(d)))
        return scv_err_set(err, SCV_EPARSE, "%s:%d: field '%s' = %g is out of range (%s%g..%g)", path, lineno, f->name,
                           d, integral ? "an integer in " : "", f->lo, f->hi);
    *v = d;
    return SCV_OK;
}

int scv_metrics_line_parse(const char *text, const char *path, int lineno, scv_metrics_line *out, scv_err *err)
{
    memset(out, 0, sizeof *out);
    if (strspn(text, " \t\r\n") == strlen(text)) return SCV_OK; /* SCV_ML_BLANK */
    out->type = SCV_ML_OTHER;
    cJSON *o = cJSON_Parse(text);
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
        int r = read_num(o, f, (double *)(base + f->off), &lacking, path, lineno, rc ? NULL : err);
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
