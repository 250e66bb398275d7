/*
 * curves.c - reads the learning-curve corpus (data/curves.jsonl, made by `bench/bench.py
 * corpus`; docs/CURVES.md) into an scv_lcurve_set: one JSON object per line per curve, its
 * job, model, dataset, batch and learning-rate rule, the command that measured it, and its
 * points [samples seen, test accuracy | null, period-mean training loss | null]. The reader
 * is strict: every field is required and typed, unknown and repeated fields are refused,
 * sizes are bounded (SCV_LCURVE_MAX_*), and the first fault is reported as
 * "FILE:LINE: field 'NAME': what is wrong" (SCV_EPARSE; SCV_ENOTFOUND when the file cannot
 * be opened, SCV_EIO on a read error, SCV_ENOMEM). On any error the set is left empty.
 * Blank lines are allowed; nothing else.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "io.h"
#include "../model/model.h"
#include "../train/sched.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the fields of a curve's line, in the order bench.py writes them */
enum {
    F_JOB,
    F_MODEL,
    F_DATASET,
    F_BATCH,
    F_BASE_BATCH,
    F_LR_SCALING,
    F_LR,
    F_WORKERS,
    F_SEED,
    F_N_TRAIN,
    F_EPOCHS,
    F_COMMAND,
    F_DATE,
    F_MACHINE,
    F_POINTS,
    F_ARCH,
    F_NOISE_SCALE,
    F_MOMENTUM,
    F_WEIGHT_DECAY,
    F_COUNT
};
static const char *const field_names[F_COUNT] = {"job",        "model",       "dataset",  "batch",       "base_batch",
                                                 "lr_scaling", "lr",          "workers",  "seed",        "n_train",
                                                 "epochs",     "command",     "date",     "machine",     "points",
                                                 "arch",       "noise_scale", "momentum", "weight_decay"};
/* the optional fields: the network's architecture as the trainer's job line states it
 * ("mlp:784-256-128-10"; a curve without it informs no estimate of one job's own curves),
 * an AdaScale run's gradient noise scale as its warm-up would measure it (carry.c), and the
 * optimiser's momentum and weight decay (absent: train's defaults; part of the recipe) */
#define F_OPTIONAL(k) ((k) == F_ARCH || (k) == F_NOISE_SCALE || (k) == F_MOMENTUM || (k) == F_WEIGHT_DECAY)
/* the models a curve may be of (model.h: scv_lcurve.model) */
static const char *const known_models[] = {"logreg", "mlp", "lenet", "resnet", "exec"};

typedef struct {
    const char *path;
    long line;
    scv_err *err;
} where;

static int fail(const where *w, const char *field, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(const where *w, const char *field, const char *fmt, ...)
{
    char what[SCV_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (field) return scv_err_set(w->err, SCV_EPARSE, "%s:%ld: field '%s': %s", w->path, w->line, field, what);
    return scv_err_set(w->err, SCV_EPARSE, "%s:%ld: %s", w->path, w->line, what);
}

/* A string field that fits cap bytes (with its NUL), not empty; copied to out if out. */
static int get_text(const where *w, const cJSON *x, const char *name, char *out, size_t cap)
{
    if (!cJSON_IsString(x)) return fail(w, name, "expected a string");
    size_t len = strlen(x->valuestring);
    if (len == 0) return fail(w, name, "empty");
    if (len >= cap) return fail(w, name, "longer than %zu characters", cap - 1);
    if (out) memcpy(out, x->valuestring, len + 1);
    return SCV_OK;
}

/* An integer field in [lo, INT_MAX]. */
static int get_int(const where *w, const cJSON *x, const char *name, int lo, int *out)
{
    if (!cJSON_IsNumber(x)) return fail(w, name, "expected an integer");
    double v = x->valuedouble;
    if (!isfinite(v) || v != floor(v) || v < lo || v > INT_MAX)
        return fail(w, name, "expected an integer in %d..%d, got %.17g", lo, INT_MAX, v);
    *out = (int)v;
    return SCV_OK;
}

/* A finite number > 0. */
static int get_positive(const where *w, const cJSON *x, const char *name, double *out)
{
    if (!cJSON_IsNumber(x)) return fail(w, name, "expected a number");
    if (!isfinite(x->valuedouble) || !(x->valuedouble > 0))
        return fail(w, name, "expected a finite number > 0, got %.17g", x->valuedouble);
    *out = x->valuedouble;
    return SCV_OK;
}

/* A number >= 0 into out; absent (x NULL): dflt. */
static int get_nonneg(const where *w, const cJSON *x, const char *name, double dflt, double *out)
{
    *out = dflt;
    if (!x) return SCV_OK;
    if (!cJSON_IsNumber(x)) return fail(w, name, "expected a number");
    if (!isfinite(x->valuedouble) || x->valuedouble < 0)
        return fail(w, name, "expected a finite number >= 0, got %.17g", x->valuedouble);
    *out = x->valuedouble;
    return SCV_OK;
}

/* Point i's samples, accuracy and loss into c (NaN where null). */
static int get_point(const where *w, const cJSON *p, size_t i, scv_lcurve *c)
{
    char name[48];
    snprintf(name, sizeof name, "points[%zu]", i);
    if (!cJSON_IsArray(p) || cJSON_GetArraySize(p) != 3)
        return fail(w, name, "expected [samples, accuracy|null, loss|null]");
    const cJSON *s = p->child, *a = s->next, *l = a->next;
    if (!cJSON_IsNumber(s) || !isfinite(s->valuedouble) || s->valuedouble < 0)
        return fail(w, name, "samples: expected a finite number >= 0");
    if (i > 0 && s->valuedouble < c->samples[i - 1])
        return fail(w, name, "samples %.17g below the previous point's %.17g (they must not decrease)",
                    s->valuedouble, c->samples[i - 1]);
    c->samples[i] = s->valuedouble;
    c->accuracy[i] = c->loss[i] = NAN;
    if (cJSON_IsNumber(a) && isfinite(a->valuedouble) && a->valuedouble >= 0 && a->valuedouble <= 1)
        c->accuracy[i] = a->valuedouble;
    else if (!cJSON_IsNull(a))
        return fail(w, name, "accuracy: expected a number in [0, 1] or null");
    if (cJSON_IsNumber(l) && isfinite(l->valuedouble) && l->valuedouble >= 0)
        c->loss[i] = l->valuedouble;
    else if (!cJSON_IsNull(l))
        return fail(w, name, "loss: expected a finite number >= 0 or null");
    if (isnan(c->accuracy[i]) && isnan(c->loss[i])) return fail(w, name, "neither accuracy nor loss measured");
    return SCV_OK;
}

static int get_points(const where *w, const cJSON *x, scv_lcurve *c)
{
    if (!cJSON_IsArray(x)) return fail(w, "points", "expected an array of [samples, accuracy, loss]");
    int n = cJSON_GetArraySize(x);
    if (n <= 0) return fail(w, "points", "empty");
    if (n > SCV_LCURVE_MAX_POINTS) return fail(w, "points", "%d points, more than %d", n, SCV_LCURVE_MAX_POINTS);
    c->samples = malloc(sizeof(double) * (size_t)n);
    c->accuracy = malloc(sizeof(double) * (size_t)n);
    c->loss = malloc(sizeof(double) * (size_t)n);
    if (!c->samples || !c->accuracy || !c->loss)
        return scv_err_set(w->err, SCV_ENOMEM, "%s:%ld: out of memory for %d points", w->path, w->line, n);
    size_t i = 0;
    for (const cJSON *p = x->child; p; p = p->next, i++) {
        int rc = get_point(w, p, i, c);
        if (rc) return rc;
    }
    c->n = i;
    return SCV_OK;
}

static int get_scaling(const where *w, const cJSON *x, scv_lr_scaling *out)
{
    scv_err e = {0};
    if (!cJSON_IsString(x)) return fail(w, "lr_scaling", "expected a string");
    if (scv_lr_scaling_from_name(x->valuestring, out, &e)) return fail(w, "lr_scaling", "%s", e.msg);
    return SCV_OK;
}

/* The line's object into c; c's arrays are c's own even on error (the caller frees them). */
static int parse_curve(const where *w, const cJSON *o, scv_lcurve *c)
{
    const cJSON *f[F_COUNT] = {0};
    for (const cJSON *x = o->child; x; x = x->next) {
        int k = 0;
        while (k < F_COUNT && strcmp(x->string, field_names[k])) k++;
        if (k == F_COUNT) return fail(w, NULL, "unknown field '%.40s'", x->string);
        if (f[k]) return fail(w, field_names[k], "given twice");
        f[k] = x;
    }
    for (int k = 0; k < F_COUNT; k++)
        if (!f[k] && !F_OPTIONAL(k)) return fail(w, field_names[k], "missing");
    int rc;
    double epochs;
    if ((rc = get_text(w, f[F_JOB], "job", c->job, sizeof c->job)) ||
        (rc = get_text(w, f[F_MODEL], "model", c->model, sizeof c->model)) ||
        (rc = get_text(w, f[F_DATASET], "dataset", c->dataset, sizeof c->dataset)) ||
        (rc = get_int(w, f[F_BATCH], "batch", 1, &c->batch)) ||
        (rc = get_int(w, f[F_BASE_BATCH], "base_batch", 1, &c->base_batch)) ||
        (rc = get_scaling(w, f[F_LR_SCALING], &c->lr_scaling)) || (rc = get_positive(w, f[F_LR], "lr", &c->lr)) ||
        (rc = get_int(w, f[F_WORKERS], "workers", 1, &c->workers)) ||
        (rc = get_int(w, f[F_SEED], "seed", 0, &c->seed)) ||
        (rc = get_positive(w, f[F_N_TRAIN], "n_train", &c->n_train)) ||
        (rc = get_positive(w, f[F_EPOCHS], "epochs", &epochs)) ||
        (rc = get_text(w, f[F_COMMAND], "command", NULL, SCV_LCURVE_MAX_LINE)) ||
        (rc = get_text(w, f[F_DATE], "date", NULL, SCV_LCURVE_MAX_LINE)) ||
        (rc = get_text(w, f[F_MACHINE], "machine", NULL, SCV_LCURVE_MAX_LINE)) ||
        (f[F_ARCH] && (rc = get_text(w, f[F_ARCH], "arch", c->arch, sizeof c->arch))) ||
        (f[F_NOISE_SCALE] && (rc = get_positive(w, f[F_NOISE_SCALE], "noise_scale", &c->noise_scale))) ||
        (rc = get_nonneg(w, f[F_MOMENTUM], "momentum", SCV_RECIPE_MOMENTUM, &c->momentum)) ||
        (rc = get_nonneg(w, f[F_WEIGHT_DECAY], "weight_decay", SCV_RECIPE_WEIGHT_DECAY, &c->weight_decay)))
        return rc;
    if (!f[F_NOISE_SCALE]) c->noise_scale = NAN;
    size_t m = 0;
    while (m < sizeof known_models / sizeof known_models[0] && strcmp(c->model, known_models[m])) m++;
    if (m == sizeof known_models / sizeof known_models[0])
        return fail(w, "model", "'%s': expected logreg, mlp, lenet, resnet or exec", c->model);
    return get_points(w, f[F_POINTS], c);
}

/* Curves of one job are of one model, dataset and recipe; a (job, workers, batch, rule,
 * seed) is measured once. */
static int check_against(const where *w, const scv_lcurve *c, const scv_lcurve *before, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const scv_lcurve *o = &before[i];
        if (strcmp(o->job, c->job)) continue;
        if (strcmp(o->model, c->model) || strcmp(o->dataset, c->dataset) || o->lr != c->lr ||
            o->base_batch != c->base_batch || o->momentum != c->momentum || o->weight_decay != c->weight_decay)
            return fail(w, "job",
                        "'%s': its curve %zu has another model, dataset, lr, base_batch, momentum or "
                        "weight_decay",
                        c->job, i + 1);
        if (o->workers == c->workers && o->batch == c->batch && o->lr_scaling == c->lr_scaling &&
            o->seed == c->seed)
            return fail(w, "job", "'%s': the same workers, batch, lr_scaling and seed as its curve %zu", c->job,
                        i + 1);
    }
    return SCV_OK;
}

/* One line (its newline left out) into buf, NUL-terminated, its length in *len; *got 0 at
 * the end of the file. SCV_EPARSE for a line over SCV_LCURVE_MAX_LINE bytes or with a NUL
 * byte, SCV_EIO for a read error. */
static int read_line(FILE *f, const where *w, char *buf, size_t *len, int *got)
{
    int ch;
    *len = 0;
    *got = 0;
    while ((ch = getc(f)) != EOF) {
        *got = 1;
        if (ch == '\n') break;
        if (ch == 0) return fail(w, NULL, "a NUL byte in the line");
        if (*len == (size_t)SCV_LCURVE_MAX_LINE) return fail(w, NULL, "line longer than %d bytes", SCV_LCURVE_MAX_LINE);
        buf[(*len)++] = (char)ch;
    }
    if (ch == EOF && ferror(f)) return scv_err_set(w->err, SCV_EIO, "%s:%ld: read error", w->path, w->line);
    buf[*len] = 0;
    return SCV_OK;
}

/* Appends line w's curve, parsed from text, to s. */
static int add_curve(const where *w, const char *text, scv_lcurve_set *s, size_t *cap, size_t *points)
{
    cJSON *o = cJSON_ParseWithOpts(text, NULL, 1);
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return fail(w, NULL, "not a JSON object on one line");
    }
    int rc = SCV_OK;
    if (s->n == (size_t)SCV_LCURVE_MAX_CURVES) rc = fail(w, NULL, "more than %d curves", SCV_LCURVE_MAX_CURVES);
    if (!rc && s->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        scv_lcurve *g = realloc(s->c, nc * sizeof *g);
        if (!g) rc = scv_err_set(w->err, SCV_ENOMEM, "%s:%ld: out of memory for %zu curves", w->path, w->line, nc);
        else s->c = g, *cap = nc;
    }
    if (rc) {
        cJSON_Delete(o);
        return rc;
    }
    scv_lcurve *c = &s->c[s->n++]; /* its arrays are freed with the set, whatever happens next */
    memset(c, 0, sizeof *c);
    rc = parse_curve(w, o, c);
    cJSON_Delete(o);
    if (!rc) rc = check_against(w, c, s->c, s->n - 1);
    if (!rc && (*points += c->n) > (size_t)SCV_LCURVE_MAX_TOTAL_POINTS)
        rc = fail(w, "points", "more than %d points in the corpus", SCV_LCURVE_MAX_TOTAL_POINTS);
    return rc;
}

static int load_stream(FILE *f, const char *path, scv_lcurve_set *s, char *buf, scv_err *err)
{
    where w = {path, 0, err};
    size_t len, cap = 0, points = 0;
    for (;;) {
        int got, rc;
        w.line++;
        if ((rc = read_line(f, &w, buf, &len, &got))) return rc;
        if (!got) break;
        if (strspn(buf, " \t\r") == len) continue; /* a blank line */
        if ((rc = add_curve(&w, buf, s, &cap, &points))) return rc;
    }
    if (s->n == 0) return scv_err_set(err, SCV_EPARSE, "%s: no curves", path);
    return SCV_OK;
}

int scv_lcurves_load(const char *path, scv_lcurve_set *out, scv_err *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) return scv_err_set(err, SCV_ENOTFOUND, "%s: cannot open: %s", path, strerror(errno));
    char *buf = malloc((size_t)SCV_LCURVE_MAX_LINE + 1);
    int rc = buf ? load_stream(f, path, out, buf, err)
                 : scv_err_set(err, SCV_ENOMEM, "%s: out of memory for a line buffer", path);
    free(buf);
    fclose(f);
    if (rc) scv_lcurve_set_free(out);
    return rc;
}
