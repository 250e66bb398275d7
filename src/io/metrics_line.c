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
#define KEY 0x2u      /* required: the key must be there (null allowed: "not measured") */
#define VALUE 0x4u    /* required: a number (neither absent nor null) */
#define TRAINER 0x8u  /* required (a number) of a trainer's lines, read strictly (scv_ml_reader.strict: the
                       * exec driver's tail); files given to `plan` may omit it */

typedef struct {
    const char *name;
    size_t off;
    double lo, hi;
    unsigned flags;
    const char *means; /* the contract's words for it (docs/TRAINER-CONTRACT.md's table) */
} num_field;

typedef struct {
    const char *name;
    size_t off, cap;
    const char *values; /* the values allowed, '|'-separated (NULL: any string) */
    const char *means;
} str_field;

#define N(T, json, m, lo, hi, fl, means) {json, offsetof(T, m), lo, hi, fl, means}
#define S(T, json, m, values, means) {json, offsetof(T, m), sizeof(((T *)0)->m), values, means}

/* THE SCHEMA of the contract's metrics lines: each field written once, with its range and
 * whether it is required; the reader checks it and docs/TRAINER-CONTRACT.md lists it
 * (scv_ml_schema_markdown; tests/test_wire.c `line_schema_doc` checks the document against
 * it). In the order profile.c has always checked them (the first bad one is named). */
static const num_field iter_nums[] = {
    N(scv_ml_iter, "iter", iter, 0, MAX_COUNT, INTEGRAL | TRAINER, "total iterations after this one (they increase)"),
    N(scv_ml_iter, "workers", workers, 1, MAX_WORKERS, INTEGRAL | KEY | VALUE, "K, the segment's (SCV_WORKERS)"),
    N(scv_ml_iter, "batch", batch, 1, MAX_BATCH, INTEGRAL | KEY | VALUE,
      "the samples of this iteration (B, or less at an epoch's end)"),
    N(scv_ml_iter, "t_compute", t_compute, 0, MAX_SECONDS, KEY | VALUE, "seconds: forward and backward"),
    N(scv_ml_iter, "t_comm", t_comm, 0, MAX_SECONDS, KEY | VALUE,
      "seconds: the gradient allreduce (with waiting for slower workers)"),
    N(scv_ml_iter, "t_iter", t_iter, 0, MAX_SECONDS, KEY | VALUE, "seconds: the whole iteration"),
    N(scv_ml_iter, "grad_sqnorm_local_mean", g_local, 0, MAX_SQNORM, KEY,
      "mean over workers of \\|g_k\\|^2 (null: not measured)"),
    N(scv_ml_iter, "grad_sqnorm_global", g_global, 0, MAX_SQNORM, KEY,
      "\\|g\\|^2 of the averaged gradient (null: not measured)"),
    N(scv_ml_iter, "epoch_progress", epoch_progress, 0, MAX_EPOCHS, 0, "epochs so far (samples_seen / n_train)"),
    N(scv_ml_iter, "cf", cf, 0, MAX_CF, 0, "a compressed exchange's factor (built-in trainer)"),
    N(scv_ml_iter, "t_compress", t_compress, 0, MAX_SECONDS, 0, "seconds of compression (built-in trainer)"),
    N(scv_ml_iter, "loss", loss, -MAX_SQNORM, MAX_SQNORM, 0, "the iteration's mean training loss"),
    N(scv_ml_iter, "samples_seen", samples_seen, 0, MAX_COUNT, TRAINER,
      "samples trained on in all (it does not decrease)"),
    N(scv_ml_iter, "ts", ts, 0, MAX_TS, TRAINER, "wall clock (Unix seconds) when the iteration ended"),
};

static const num_field eval_nums[] = {
    N(scv_ml_eval, "iter", iter, 0, MAX_COUNT, INTEGRAL | TRAINER, "the iteration it follows"),
    N(scv_ml_eval, "test_accuracy", test_accuracy, 0, 1, 0,
      "a fraction, not a percentage; required for an accuracy target"),
    N(scv_ml_eval, "epoch_progress", epoch_progress, 0, MAX_EPOCHS, TRAINER, "epochs so far"),
    N(scv_ml_eval, "test_loss", test_loss, 0, MAX_SQNORM, 0, "the held-out set's mean loss"),
    N(scv_ml_eval, "train_loss", train_loss, -MAX_SQNORM, MAX_SQNORM, 0,
      "mean minibatch loss since the previous periodic evaluation; required for a loss target"),
    N(scv_ml_eval, "train_loss_samples", train_loss_samples, 0, MAX_COUNT, 0, "the samples train_loss is over"),
    N(scv_ml_eval, "eval_seconds", eval_seconds, 0, MAX_SECONDS, 0, "the evaluation's own seconds"),
    N(scv_ml_eval, "n", n, 0, MAX_COUNT, INTEGRAL, "the held-out samples evaluated"),
    N(scv_ml_eval, "from", from, 0, MAX_COUNT, INTEGRAL,
      "a subset's first test sample (the built-in trainer: its slices in turn)"),
};
static const str_field eval_strs[] = {
    S(scv_ml_eval, "role", role, NULL,
      "periodic (a point of the learning curve; absent: periodic), final or confirm (on the whole set)"),
    S(scv_ml_eval, "set", set, "full|subset",
      "the held-out samples: the whole test set or SCV_EVAL_SUBSET of them (absent: full)"),
};

static const num_field job_nums[] = {
    N(scv_ml_job, "params", params, 1, MAX_COUNT, KEY | VALUE, "trainable parameters (the communication's bytes)"),
    N(scv_ml_job, "act_bytes", act_bytes, 0, MAX_COUNT, 0, "activation bytes per sample (memory model; absent: 0)"),
    N(scv_ml_job, "n_train", n_train, 1, MAX_COUNT, KEY | VALUE, "training-set size (an epoch's samples)"),
    N(scv_ml_job, "input_floats", input_floats, 0, MAX_COUNT, 0, "input floats per sample (absent: 0)"),
    N(scv_ml_job, "threads", threads, 0, MAX_THREADS, INTEGRAL, "compute threads per process"),
};
static const str_field job_strs[] = {
    S(scv_ml_job, "model", model, NULL, "the model's name"), S(scv_ml_job, "arch", arch, NULL, "its architecture"),
    S(scv_ml_job, "vm", vm, NULL, "the VM type"), S(scv_ml_job, "dataset", dataset, NULL, "the data set")};

static const num_field latency_nums[] = {
    N(scv_ml_latency, "workers", workers, 1, MAX_WORKERS, INTEGRAL | KEY | VALUE, "K"),
    N(scv_ml_latency, "seconds", seconds, 0, MAX_SECONDS, KEY | VALUE, "one allreduce of 4 bytes among the K"),
};

/* The line types: their name, tables and what a line of it is called. */
static const struct {
    const char *name;
    scv_ml_type type;
    const num_field *nums;
    size_t n_nums;
    const str_field *strs;
    size_t n_strs;
    const char *called; /* "iteration": "iteration line lacks field ..." */
} types[] = {
    {"job", SCV_ML_JOB, job_nums, sizeof job_nums / sizeof job_nums[0], job_strs, sizeof job_strs / sizeof job_strs[0],
     "job"},
    {"iter", SCV_ML_ITER, iter_nums, sizeof iter_nums / sizeof iter_nums[0], NULL, 0, "iteration"},
    {"eval", SCV_ML_EVAL, eval_nums, sizeof eval_nums / sizeof eval_nums[0], eval_strs,
     sizeof eval_strs / sizeof eval_strs[0], "evaluation"},
    {"latency", SCV_ML_LATENCY, latency_nums, sizeof latency_nums / sizeof latency_nums[0], NULL, 0, "latency"},
};
#define N_TYPES (sizeof types / sizeof types[0])

/* A field's requirement: 2 a number, 1 the key (null allowed), 0 none. */
static int required(const num_field *f, int strict)
{
    return (f->flags & VALUE) || (strict && (f->flags & TRAINER)) ? 2 : (f->flags & KEY) ? 1 : 0;
}

/* "required: a, b; may be null: c, d" for type t. */
static void required_list(size_t t, int strict, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = 0;
    for (int want = 2; want >= 1; want--) {
        int n = 0;
        for (size_t i = 0; i < types[t].n_nums && o < cap; i++)
            if (required(&types[t].nums[i], strict) == want)
                o += (size_t)snprintf(buf + o, cap - o, "%s%s", n++ ? ", " : want == 2 ? "required: " : o ? "; may be null: "
                                                                                                         : "may be null: ",
                                      types[t].nums[i].name);
    }
}

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

/* One number: NaN when absent or null (*lacking names a required one that is absent, or
 * null where a number is required: *was_null); an error naming the field when of another
 * type, not finite or out of range (1e400 reads as inf). */
static int read_num(const cJSON *o, const num_field *f, int strict, double *v, const char **lacking, int *was_null,
                    int quoted, scv_metrics_line *out, const char *path, int lineno, scv_err *err)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, f->name);
    int integral = (f->flags & INTEGRAL) != 0, req = required(f, strict);
    *v = NAN;
    if (!x || cJSON_IsNull(x)) {
        if (!*lacking && ((!x && req) || req == 2)) *lacking = f->name, *was_null = x != NULL;
        return SCV_OK;
    }
    if (quoted && cJSON_IsString(x) && !strncmp(x->valuestring, NONFINITE_MARK, strlen(NONFINITE_MARK))) {
        const char *as = x->valuestring + strlen(NONFINITE_MARK);
        mark_nonfinite(out, f, as);
        return scv_err_set(err, SCV_EPARSE, "%s:%d: field '%s' = %s is not a finite number", path, lineno, f->name,
                           as);
    }
    if (!cJSON_IsNumber(x))
        return scv_err_set(err, SCV_EPARSE, "%s:%d: field '%s' is not a number (%s%g..%g%s): write it as a JSON number",
                           path, lineno, f->name, integral ? "an integer in " : "", f->lo, f->hi,
                           req == 2 ? "" : ", or null");
    double d = x->valuedouble;
    if (!isfinite(d)) mark_nonfinite(out, f, d > 0 ? "inf" : d < 0 ? "-inf" : "nan");
    if (!(d >= f->lo && d <= f->hi) || (integral && d != floor(d)))
        return scv_err_set(err, SCV_EPARSE, "%s:%d: field '%s' = %g is out of range (%s%g..%g)%s", path, lineno,
                           f->name, d, integral ? "an integer in " : "", f->lo, f->hi,
                           f->hi == 1 && d > 1 && d <= 100 ? ": a fraction, not a percentage" : "");
    *v = d;
    return SCV_OK;
}

/* The error of a required field lacking (absent, or null where a number is required). */
static int lacks(size_t t, const char *field, int was_null, int strict, const char *path, int lineno, scv_err *err)
{
    char list[512];
    required_list(t, strict, list, sizeof list);
    if (was_null)
        return scv_err_set(err, SCV_EPARSE, "%s:%d: field '%s' is null, but %s %s line needs a number there (%s; "
                           "docs/TRAINER-CONTRACT.md, \"Metrics lines\")", path, lineno, field,
                           strchr("aeiou", types[t].called[0]) ? "an" : "a", types[t].called, list);
    return scv_err_set(err, SCV_EPARSE, "%s:%d: %s line lacks field '%s' (%s): write it on every %s line "
                       "(docs/TRAINER-CONTRACT.md, \"Metrics lines\")", path, lineno, types[t].called, field, list,
                       types[t].called);
}

/* The first of the line's own keys (its type's fields and "type") that the object holds
 * more than once (NULL: none). The trainer's extra keys may repeat: they are not read. A
 * count per known name, so a line of many keys costs their number times the schema's. */
static const char *given_twice(const cJSON *o, size_t t)
{
    size_t n = types[t].n_nums + types[t].n_strs + 1;
    for (size_t i = 0; i < n; i++) {
        const char *name = i < types[t].n_nums                     ? types[t].nums[i].name
                           : i < types[t].n_nums + types[t].n_strs ? types[t].strs[i - types[t].n_nums].name
                                                                   : "type";
        int seen = 0;
        for (const cJSON *x = o->child; x; x = x->next)
            if (x->string && !strcmp(x->string, name) && ++seen > 1) return name;
    }
    return NULL;
}

static int parse(const char *text, const char *path, int lineno, int strict, scv_metrics_line *out, scv_err *err)
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
    while (t < N_TYPES && !(cJSON_IsString(ty) && !strcmp(ty->valuestring, types[t].name))) t++;
    if (t == N_TYPES) { /* the contract: unknown types are skipped */
        cJSON_Delete(o);
        return SCV_OK;
    }
    out->type = types[t].type;
    const char *twice = given_twice(o, t);
    if (twice) { /* cJSON keeps both: which one the trainer meant is unknown (its numbers read NaN) */
        for (size_t i = 0; i < types[t].n_nums; i++) *(double *)((char *)&out->u + types[t].nums[i].off) = NAN;
        cJSON_Delete(o);
        return scv_err_set(err, SCV_EPARSE, "%s:%d: field '%s' is given twice in the line (a JSON object's keys are "
                           "unique: write it once)", path, lineno, twice);
    }
    char *base = (char *)&out->u;
    int rc = SCV_OK, was_null = 0;
    const char *lacking = NULL;
    for (size_t i = 0; i < types[t].n_nums; i++) { /* every field is read; the first error is kept */
        const num_field *f = &types[t].nums[i];
        int r = read_num(o, f, strict, (double *)(base + f->off), &lacking, &was_null, quoted, out, path, lineno,
                         rc ? NULL : err);
        if (!rc) rc = r;
    }
    for (size_t i = 0; i < types[t].n_strs; i++) {
        const str_field *f = &types[t].strs[i];
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, f->name);
        if (cJSON_IsString(x)) {
            snprintf(base + f->off, f->cap, "%s", x->valuestring);
            size_t len = strlen(x->valuestring);
            const char *v = f->values;
            while (v && !(!strncmp(v, x->valuestring, len) && (v[len] == '|' || !v[len])))
                v = strchr(v, '|'), v = v ? v + 1 : NULL;
            if (f->values && !v && !rc) {
                rc = scv_err_set(err, SCV_EPARSE, "%s:%d: field '%s' = '%.40s': expected one of %s", path, lineno,
                                 f->name, x->valuestring, f->values);
                ((char *)(base + f->off))[0] = 0;
            }
        } else if (x && !cJSON_IsNull(x) && !rc)
            rc = scv_err_set(err, SCV_EPARSE, "%s:%d: field '%s' is not a string", path, lineno, f->name);
    }
    if (!rc && lacking) rc = lacks(t, lacking, was_null, strict, path, lineno, err);
    cJSON_Delete(o);
    return rc;
}

int scv_metrics_line_parse(const char *text, const char *path, int lineno, scv_metrics_line *out, scv_err *err)
{
    return parse(text, path, lineno, 0, out, err);
}

int scv_ml_schema_markdown(char *buf, size_t cap)
{
    size_t o = 0;
#define PUT(...) (o += (size_t)snprintf(buf + (o < cap ? o : cap), o < cap ? cap - o : 0, __VA_ARGS__))
    PUT("| line | field | type | required | meaning |\n|---|---|---|---|---|\n");
    static const char *const req_words[] = {"no", "yes, may be null", "yes"};
    for (size_t t = 0; t < N_TYPES; t++) {
        for (size_t i = 0; i < types[t].n_nums; i++) {
            const num_field *f = &types[t].nums[i];
            int r = required(f, 0), rs = required(f, 1);
            PUT("| `%s` | `%s` | %s %.15g..%.15g | %s | %s |\n", types[t].name, f->name,
                f->flags & INTEGRAL ? "integer" : "number", f->lo, f->hi,
                r == rs ? req_words[r] : "yes (of a trainer)", f->means);
        }
        for (size_t i = 0; i < types[t].n_strs; i++) {
            const str_field *f = &types[t].strs[i];
            char vals[64] = "";
            if (f->values) {
                snprintf(vals, sizeof vals, " `%s`", f->values);
                for (char *c = vals; *c; c++)
                    if (*c == '|') *c = '/';
            }
            PUT("| `%s` | `%s` | string%s | no | %s |\n", types[t].name, f->name, vals, f->means);
        }
    }
#undef PUT
    return (int)o;
}

void scv_ml_reader_init(scv_ml_reader *r, int workers)
{
    memset(r, 0, sizeof *r);
    r->workers = workers;
    r->iter = r->samples_seen = r->ts = r->start_iter = r->n_train = NAN;
}

/* 1 when an iteration of `batch` samples that took the samples seen to `seen` ends an epoch
 * of n_train samples (its last batch may be short), or when that cannot be told (either
 * unknown). */
static int ends_epoch(double seen, double batch, double n_train)
{
    if (!(n_train > 0) || !isfinite(seen)) return 1;
    double k = floor(seen / n_train); /* the last epoch boundary at or before `seen` */
    return k >= 1 && k * n_train > seen - batch;
}

/* The checks of an iteration line against the segment (K, B) and the lines before it. */
static int iter_checks(const scv_ml_reader *r, const scv_ml_iter *x, const char *path, int lineno, scv_err *err)
{
    if (r->workers > 0 && x->workers != r->workers)
        return scv_err_set(err, SCV_EPARSE, "%s:%d: field 'workers' = %.0f is not the segment's K = %d", path, lineno,
                           x->workers, r->workers);
    if (r->batch > 0 && (x->batch > r->batch || (x->batch < r->batch && !ends_epoch(x->samples_seen, x->batch, r->n_train))))
        return scv_err_set(err, SCV_EPARSE, "%s:%d: field 'batch' = %.0f is not the segment's B = %d (SCV_BATCH, the "
                           "global batch over the K workers; less only in the iteration that ends an epoch)", path,
                           lineno, x->batch, r->batch);
    if (!isnan(x->iter) && x->iter <= r->iter) /* false while r->iter is NaN */
        return scv_err_set(err, SCV_EPARSE,
                           "%s:%d: field 'iter' = %.0f does not follow line %d's %.0f (iterations must increase)", path,
                           lineno, x->iter, r->iter_line, r->iter);
    if (r->strict && !isnan(x->iter) && x->iter > r->iter + 1)
        return scv_err_set(err, SCV_EPARSE, "%s:%d: field 'iter' = %.0f jumps from line %d's %.0f (one iter line per "
                           "iteration: %.0f expected)", path, lineno, x->iter, r->iter_line, r->iter, r->iter + 1);
    if (r->strict && !isnan(x->iter) && isnan(r->iter) && x->iter <= r->start_iter)
        return scv_err_set(err, SCV_EPARSE, "%s:%d: field 'iter' = %.0f is not past the checkpoint's iteration %.0f "
                           "(scavenger-state.json): with SCV_RESUME=1 the trainer continues from its checkpoint, "
                           "counting the iterations of earlier invocations", path, lineno, x->iter, r->start_iter);
    if (!isnan(x->samples_seen) && x->samples_seen < r->samples_seen)
        return scv_err_set(err, SCV_EPARSE, "%s:%d: field 'samples_seen' = %.0f is below line %d's %.0f (it must not "
                           "decrease)", path, lineno, x->samples_seen, r->samples_line, r->samples_seen);
    if (r->strict && !isnan(x->samples_seen) && x->samples_seen - r->samples_seen > x->batch)
        return scv_err_set(err, SCV_EPARSE, "%s:%d: field 'samples_seen' = %.0f grows by %.0f from line %d's %.0f, "
                           "more than the line's batch %.0f (samples seen in all, after this iteration)", path,
                           lineno, x->samples_seen, x->samples_seen - r->samples_seen, r->samples_line,
                           r->samples_seen, x->batch);
    if (!isnan(x->ts) && x->ts < r->ts - SCV_ML_TS_SLACK_S)
        return scv_err_set(err, SCV_EPARSE, "%s:%d: field 'ts' = %.3f is before line %d's %.3f (it must not decrease)",
                           path, lineno, x->ts, r->ts_line, r->ts);
    return SCV_OK;
}

int scv_metrics_line_next(scv_ml_reader *r, const char *text, const char *path, int lineno, scv_metrics_line *out,
                          scv_err *err)
{
    int rc = parse(text, path, lineno, r->strict, out, err);
    if (out->type == SCV_ML_BLANK) return rc;
    /* a trainer's segment starts with its job line: its first line of another known type is
     * refused at once (not when the segment ends) */
    if (r->strict && !r->job_line && out->type != SCV_ML_JOB && out->type != SCV_ML_OTHER)
        return scv_err_set(err, SCV_EPARSE, "%s:%d: a '%s' line before the job line: every invocation writes its "
                           "job line first (docs/TRAINER-CONTRACT.md, \"Metrics lines\")", path, lineno,
                           out->type == SCV_ML_ITER ? "iter" : out->type == SCV_ML_EVAL ? "eval" : "latency");
    if (rc) return rc;
    if (out->type == SCV_ML_JOB) { /* a new stream (a profile's files one after the other): the
                                      segment's settings stay */
        scv_ml_reader keep = *r;
        scv_ml_reader_init(r, keep.workers);
        r->batch = keep.batch, r->strict = keep.strict, r->start_iter = keep.start_iter, r->job_line = lineno;
        r->n_train = out->u.job.n_train;
        return SCV_OK;
    }
    if (out->type != SCV_ML_ITER) return SCV_OK;
    const scv_ml_iter *x = &out->u.iter;
    if ((rc = iter_checks(r, x, path, lineno, err))) return rc;
    if (!isnan(x->iter)) r->iter = x->iter, r->iter_line = lineno;
    if (!isnan(x->samples_seen)) r->samples_seen = x->samples_seen, r->samples_line = lineno;
    if (!isnan(x->ts) && !(x->ts < r->ts)) r->ts = x->ts, r->ts_line = lineno; /* the latest stamp */
    return SCV_OK;
}

int scv_metrics_line_next_n(scv_ml_reader *r, const char *text, size_t len, const char *path, int lineno,
                            scv_metrics_line *out, scv_err *err)
{
    const char *nul = memchr(text, 0, len);
    if (nul && (size_t)(nul - text) < len) {
        memset(out, 0, sizeof *out);
        out->type = SCV_ML_OTHER;
        return scv_err_set(err, SCV_EPARSE, "%s:%d: a NUL byte at byte %zu of the line: a metrics line is one JSON "
                           "object in text, without NUL bytes", path, lineno, (size_t)(nul - text) + 1);
    }
    return scv_metrics_line_next(r, text, path, lineno, out, err);
}
