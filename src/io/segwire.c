/*
 * segwire.c - see segwire.h. One table, `fields`, names every field of scv_segwire in each
 * format (JSON member, environment variable, `scavenger train` option; NULL: that format
 * does not carry it), with its type, its range (checked on every decode) and how it is
 * written; the encoders and decoders below are loops over it. A value that arrives as text
 * (a variable, an option) is read by the options' one reader (core/option.c) with the
 * field's range, so `scavenger train` reading its segment options here and the trainer
 * contract's variables refuse a bad value in the same words. The few fields a format
 * writes in a shape of its own (two values in one option, a prefix, an object) are marked
 * by a flag and handled where the loop meets them.
 */
#define _POSIX_C_SOURCE 200809L
#include "segwire.h"
#include "json_out.h"
#include "../core/invariant.h"
#include "core/option.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum { T_INT, T_I64, T_U64, T_DBL, T_FLAG, T_STR, T_LIST, T_COLL, T_STRAG };

/* How a field is written and read (besides "a zero field is left out"). */
#define J_ALWAYS 0x1u    /* JSON: written even when zero or empty */
#define E_ALWAYS 0x2u    /* environment: the same */
#define REQUIRED 0x4u    /* decoding JSON: it must be there */
#define E_REQUIRED 0x1000u /* decoding the environment: it must be there (SCV_WORKERS is not: 1) */
#define OPEN_LO 0x8u     /* the range excludes lo */
#define OPEN_HI 0x10u    /* ... and hi */
#define A_NEG 0x20u      /* argv: a flag whose option says "off" (--no-final-eval) */
#define A_PAIR 0x40u     /* argv: "THIS:NEXT", this field and the next row's in one option */
#define J_MIN1 0x80u     /* JSON: written as max(1, value) (the target window) */
#define A_WINDOW 0x100u  /* argv: written only with a target window (W > 1) */
#define W_TOPK 0x200u    /* written only with compression on (compress_cf > 1) */
#define W_SELSYNC 0x400u /* written only with SelSync on; present means on */
#define A_K2 0x800u      /* argv: written only when K > 1 (the split) */
#define Z_OFF 0x2000u    /* 0 (off) is taken besides the range from JSON and the environment; on
                            the command line the option is left out instead, so 0 is refused */
#define Z_ALL 0x4000u    /* 0 is taken besides the range in every format (a pair's second value) */
#define A_OPT2 0x8000u   /* argv, A_PAIR: ":NEXT" may be left out (NEXT's dflt then) */

typedef struct field {
    const char *json, *env, *argv; /* its names (NULL: not carried) */
    int type;
    size_t off;                    /* the value (lists: the first element) */
    size_t n_off, cap;             /* lists: the count and the capacity */
    double lo, hi;                 /* the range of a number (of a list's elements) */
    unsigned flags;
    const char *prefix;            /* argv: the value's prefix ("topk:") */
    const char *form;              /* argv: the shape of a value of its own, for messages */
    double dflt;                   /* A_OPT2: the second value when it is left out */
} field;

#define OFF(m) offsetof(scv_segwire, m)
#define NUM(j, e, a, t, m, lo, hi, fl) {j, e, a, t, OFF(m), 0, 0, lo, hi, fl, NULL, NULL, 0}
#define LIST(j, e, a, m, n, lo, hi, fl) \
    {j, e, a, T_LIST, OFF(m), OFF(n), sizeof(((scv_segwire *)0)->m) / sizeof(double), lo, hi, fl, NULL, NULL, 0}

/* The ranges (beyond: a damaged or hostile message). */
#define MAX_BATCH (1 << 24)
#define MAX_COUNT 1e15          /* iterations */
#define MAX_EPOCHS 1e9
#define MAX_VALUE 1e30          /* a loss, a weight */
#define MAX_CF 1e6              /* Top-k's compression factor */

static const field fields[] = {
    NUM("workers", "SCV_WORKERS", "--workers", T_INT, workers, 1, SCV_MAX_WORKERS, J_ALWAYS | E_ALWAYS | REQUIRED),
    NUM("batch", "SCV_BATCH", "--batch", T_INT, batch, 1, MAX_BATCH, J_ALWAYS | E_ALWAYS | REQUIRED | E_REQUIRED),
    LIST("split", "SCV_SPLIT", "--batch-split", split, n_split, 0, MAX_VALUE, OPEN_LO | A_K2),
    NUM(NULL, "SCV_MASTER_ADDR", NULL, T_STR, master_addr, 0, 0, E_ALWAYS),
    NUM(NULL, "SCV_MASTER_PORT", NULL, T_INT, master_port, 1, 65535, E_ALWAYS),
    NUM(NULL, "SCV_CHECKPOINT_DIR", "--checkpoint", T_STR, checkpoint_dir, 0, 0, E_ALWAYS),
    NUM(NULL, "SCV_RESUME", "--resume", T_FLAG, resume, 0, 1, E_ALWAYS),
    NUM("metrics", "SCV_METRICS", "--metrics", T_STR, metrics, 0, 0, J_ALWAYS | E_ALWAYS),
    NUM("until_iterations", "SCV_UNTIL_ITERATIONS", "--iterations", T_I64, until_iterations, 1, MAX_COUNT,
        J_ALWAYS | E_ALWAYS | Z_OFF),
    NUM("epochs", "SCV_MAX_EPOCHS", "--epochs", T_DBL, epochs, 0, MAX_EPOCHS, J_ALWAYS | E_ALWAYS),
    NUM("eval_every_epochs", "SCV_EVAL_EVERY_EPOCHS", "--eval-every-epochs", T_DBL, eval_every_epochs, 0,
        MAX_EPOCHS, J_ALWAYS | E_ALWAYS | OPEN_LO | Z_OFF),
    NUM(NULL, "SCV_SEED", NULL, T_U64, seed, 0, 18446744073709551615.0, E_ALWAYS),
    NUM(NULL, "SCV_PROBE", NULL, T_FLAG, probe, 0, 1, E_ALWAYS),
    NUM("target_accuracy", NULL, "--target-accuracy", T_DBL, target_accuracy, 0, 1, J_ALWAYS),
    NUM("target_loss", NULL, "--target-loss", T_DBL, target_loss, 0, MAX_VALUE, J_ALWAYS),
    NUM("eval_subset", "SCV_EVAL_SUBSET", "--eval-subset", T_INT, eval_subset, 0, 2147483647.0, J_ALWAYS | E_ALWAYS),
    NUM(NULL, "SCV_EVAL_MAX_SHARE", NULL, T_DBL, eval_max_share, 0, 1, 0),
    NUM("target_window", NULL, "--target-window", T_INT, target_window, 1, SCV_TARGET_WINDOW_MAX, J_ALWAYS | J_MIN1 | A_WINDOW),
    LIST(SCV_SEGWIRE_HISTORY_KEY, NULL, "--target-history", history, n_history, 0, MAX_VALUE, J_ALWAYS | A_WINDOW),
    {"noise_window", NULL, "--stop-noise-stable", T_INT, OFF(noise_window), 0, 0, 2, 1e9, J_ALWAYS | A_PAIR | Z_OFF,
     NULL, "W:TOL, e.g. 40:0.25", 0},
    NUM("noise_tol", NULL, NULL, T_DBL, noise_tol, 0, MAX_VALUE, J_ALWAYS | OPEN_LO | Z_ALL),
    {"time_rse", NULL, "--stop-time-stable", T_DBL, OFF(time_rse), 0, 0, 0, MAX_VALUE,
     J_ALWAYS | A_PAIR | A_OPT2 | OPEN_LO | Z_OFF, NULL, "R[:M], e.g. 0.02:10", 0},
    {"time_min", NULL, NULL, T_INT, OFF(time_min), 0, 0, 2, 1e9, J_ALWAYS | Z_ALL, NULL, NULL,
     SCV_SEGWIRE_TIME_MIN_DEFAULT},
    NUM("final_eval", "SCV_FINAL_EVAL", "--no-final-eval", T_FLAG, final_eval, 0, 1, J_ALWAYS | A_NEG | E_ALWAYS),
    NUM("checkpoint_every", NULL, "--checkpoint-every", T_I64, checkpoint_every, 1, MAX_COUNT, J_ALWAYS | Z_OFF),
    NUM("checkpoint_end", NULL, NULL, T_FLAG, checkpoint_end, 0, 1, J_ALWAYS),
    NUM("dynamic_batching", NULL, "--dynamic-batching", T_FLAG, dynamic_batching, 0, 1, 0),
    {"selsync_lssr", NULL, "--selsync", T_DBL, OFF(selsync_lssr), 0, 0, 0, 1, OPEN_LO | OPEN_HI | W_SELSYNC | Z_OFF,
     "lssr:", "lssr:R (0 < R < 1) or 0", 0},
    {"compress_cf", NULL, "--compress", T_DBL, OFF(compress_cf), 0, 0, 1, MAX_CF, OPEN_LO, "topk:", "topk:CF", 0},
    NUM("collective", NULL, "--collective", T_COLL, collective, 0, 0, W_TOPK),
    NUM("straggler", NULL, NULL, T_STRAG, straggler, 0, 0, 0),
};
#define N_FIELDS (sizeof fields / sizeof fields[0])

/* The straggler rule's members (JSON: an object). */
static const struct {
    const char *name;
    size_t off;
    int type;
    double lo, hi;
} strag_fields[] = {
    {"fraction", offsetof(scv_straggler_rule, fraction), T_DBL, 0, 1},
    {"alpha", offsetof(scv_straggler_rule, alpha), T_DBL, 0, 1},
    {"window_s", offsetof(scv_straggler_rule, window_s), T_DBL, 0, 1e9},
    {"min_iterations", offsetof(scv_straggler_rule, min_iterations), T_INT, 0, 1e9},
    {"by_model", offsetof(scv_straggler_rule, by_model), T_INT, 0, 1},
    {"drop_below", offsetof(scv_straggler_rule, drop_below), T_DBL, 0, 1},
    {"replace_below", offsetof(scv_straggler_rule, replace_below), T_DBL, 0, 1},
};

static const char *const coll_names[] = {[SCV_COLL_AUTO] = "auto", [SCV_COLL_ALLGATHER] = "allgather",
                                         [SCV_COLL_ARTOPK] = "artopk"};

const char *scv_segwire_coll_name(scv_coll_pref c)
{
    return (unsigned)c < sizeof coll_names / sizeof coll_names[0] ? coll_names[c] : "auto";
}

int scv_segwire_coll_parse(const char *s)
{
    for (size_t i = 0; s && i < sizeof coll_names / sizeof coll_names[0]; i++)
        if (!strcmp(s, coll_names[i])) return (int)i;
    return -1;
}

void scv_segwire_set_split(scv_segwire *w, int K, const double *split)
{
    w->n_split = split && K > 0 ? (K < SCV_SEGWIRE_MAX_SPLIT ? K : SCV_SEGWIRE_MAX_SPLIT) : 0;
    for (int k = 0; k < w->n_split; k++) w->split[k] = split[k];
}

void scv_segwire_from_spec(scv_segwire *w, const scv_segment_spec *s, int K, int B, const double *split)
{
    w->workers = K, w->batch = B;
    scv_segwire_set_split(w, K, split);
    w->until_iterations = s->until_iterations;
    w->epochs = s->max_epochs;
    w->target_accuracy = s->target_accuracy, w->target_loss = s->target_loss;
    w->eval_every_epochs = s->eval_every_epochs;
    w->eval_subset = s->eval_subset;
    w->target_window = s->target_window;
    w->n_history = s->n_history < SCV_SEGWIRE_MAX_HISTORY ? s->n_history : SCV_SEGWIRE_MAX_HISTORY;
    for (int i = 0; i < w->n_history; i++) w->history[i] = s->history[i];
    w->noise_window = s->noise_window, w->noise_tol = s->noise_tol;
    w->time_rse = s->time_rse, w->time_min = s->time_min_iters;
    w->final_eval = s->final_eval ? 1 : 0;
    w->checkpoint_every = s->checkpoint_every;
    /* a training segment ends with a checkpoint (a failure later resumes from its end); the
     * short warm-up and search segments do not (their switches stay fast) */
    w->checkpoint_end = s->phase && !strcmp(s->phase, "train");
    w->dynamic_batching = s->dynamic_batching ? 1 : 0;
    w->selsync = s->comm && s->comm->kind == SCV_PLAN_SELSYNC;
    w->selsync_lssr = w->selsync ? s->comm->lssr : 0;
    w->compress_cf = s->comm && s->comm->kind == SCV_PLAN_TOPK ? s->comm->cf : 0;
    w->collective = s->comm_collective;
    w->straggler = s->straggler && s->straggler->fraction > 0 ? *s->straggler : (scv_straggler_rule){0};
}

/* ---- the fields' values ---- */

#define AT(w, f, T) ((T *)((char *)(w) + (f)->off))
#define CAT(w, f, T) ((const T *)((const char *)(w) + (f)->off))

static int list_n(const scv_segwire *w, const field *f) { return *(const int *)((const char *)w + f->n_off); }

/* 1 when the field holds something to write (zero fields are left out). */
static int is_set(const scv_segwire *w, const field *f)
{
    if ((f->flags & W_TOPK) && !(w->compress_cf > 1)) return 0;
    if (f->flags & W_SELSYNC) return w->selsync;
    switch (f->type) {
    case T_INT: case T_FLAG: return *CAT(w, f, int) != 0;
    case T_I64: return *CAT(w, f, int64_t) != 0;
    case T_U64: return *CAT(w, f, uint64_t) != 0;
    case T_DBL: return *CAT(w, f, double) != 0;
    case T_STR: return CAT(w, f, char)[0] != 0;
    case T_LIST: return list_n(w, f) > 0;
    case T_COLL: return 1;
    case T_STRAG: return w->straggler.fraction > 0;
    }
    return 0;
}

/* A scalar's value as text: numbers exactly ("%.17g"), a list's elements as "%.9g" (the
 * shares and accuracies every format has carried so). */
static void scalar_text(const scv_segwire *w, const field *f, char *buf, size_t cap)
{
    switch (f->type) {
    case T_INT: case T_FLAG: snprintf(buf, cap, "%d", *CAT(w, f, int)); break;
    case T_I64: snprintf(buf, cap, "%lld", (long long)*CAT(w, f, int64_t)); break;
    case T_U64: snprintf(buf, cap, "%llu", (unsigned long long)*CAT(w, f, uint64_t)); break;
    case T_DBL: snprintf(buf, cap, "%.17g", *CAT(w, f, double)); break;
    case T_STR: snprintf(buf, cap, "%s", CAT(w, f, char)); break;
    case T_COLL: snprintf(buf, cap, "%s", scv_segwire_coll_name(*CAT(w, f, scv_coll_pref))); break;
    default: buf[0] = 0;
    }
}

static void list_text(const scv_segwire *w, const field *f, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < list_n(w, f) && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%.9g", i ? "," : "", CAT(w, f, double)[i]);
}

/* The field's value as the options' reader takes it (core/option.h); argv: as the command
 * line takes it (Z_OFF's 0 refused there). */
static scv_value value_of(const field *f, int argv)
{
    static const int vt[] = {[T_INT] = SCV_VT_INT, [T_I64] = SCV_VT_I64, [T_U64] = SCV_VT_U64, [T_DBL] = SCV_VT_DBL,
                             [T_FLAG] = SCV_VT_INT, [T_STR] = SCV_VT_BUF, [T_LIST] = SCV_VT_DBLS,
                             [T_COLL] = SCV_VT_ENUM, [T_STRAG] = SCV_VT_NONE};
    scv_value v = {.type = vt[f->type], .lo = f->lo, .hi = f->hi, .off = f->off, .n_off = f->n_off, .cap = f->cap};
    if (f->flags & OPEN_LO) v.bounds |= SCV_VB_OPEN_LO;
    if (f->flags & OPEN_HI) v.bounds |= SCV_VB_OPEN_HI;
    if ((f->flags & Z_ALL) || ((f->flags & Z_OFF) && !argv)) v.bounds |= SCV_VB_ZERO;
    if (f->type == T_STR) v.lo = 0, v.cap = f->off == OFF(master_addr) ? sizeof(((scv_segwire *)0)->master_addr)
                                                                      : SCV_SEGWIRE_PATH;
    return v;
}

#define COLL_WORDS "auto|allgather|artopk"

/* A number read from JSON, checked against the field's range: SCV_OK, or SCV_EINVAL naming
 * `what` and the field. */
static int check_num(const char *what, const char *name, double v, const scv_value *val, scv_err *err)
{
    if (scv_value_in_range(val, v)) return SCV_OK;
    char expect[160];
    scv_value_expect(val, NULL, expect, sizeof expect);
    return scv_err_set(err, SCV_EINVAL, "%s: field '%s' = %.17g is out of range (%s)", what, name, v, expect);
}

/* Stores the number v (checked) in the scalar field f of w. */
static int store_num(scv_segwire *w, const field *f, const char *what, const char *name, double v, scv_err *err)
{
    /* a number field this stores: a T_U64 (the seed, environment-only) or a string given here
     * would be dropped in silence */
    SCV_ASSERT(f->type == T_INT || f->type == T_I64 || f->type == T_FLAG || f->type == T_DBL);
    scv_value val = value_of(f, 0);
    int rc = check_num(what, name, v, &val, err);
    if (rc) return rc;
    switch (f->type) {
    case T_INT: case T_FLAG: *AT(w, f, int) = (int)v; break;
    case T_I64: *AT(w, f, int64_t) = (int64_t)v; break;
    case T_DBL: *AT(w, f, double) = v; break;
    default: break;
    }
    if (f->flags & W_SELSYNC) w->selsync = 1;
    return SCV_OK;
}

/* A JSON string into the field f (a path, or the collective's name). */
static int store_string(scv_segwire *w, const field *f, const char *what, const char *name, const char *s,
                        scv_err *err)
{
    if (f->type == T_COLL) {
        int c = scv_segwire_coll_parse(s);
        if (c < 0) return scv_err_set(err, SCV_EINVAL, "%s: field '%s' = '%s': expected auto, allgather or artopk",
                                      what, name, s);
        *AT(w, f, scv_coll_pref) = (scv_coll_pref)c;
        return SCV_OK;
    }
    scv_value val = value_of(f, 0);
    if (strlen(s) >= val.cap) return scv_err_set(err, SCV_EINVAL, "%s: field '%s' is too long", what, name);
    memcpy(AT(w, f, char), s, strlen(s) + 1);
    return SCV_OK;
}

/* Text (a variable's or an option's value) into the field f: the options' reader, label
 * naming it ("environment: SCV_BATCH", "--batch"). */
static int store_text(scv_segwire *w, const field *f, const char *label, const char *s, int argv, scv_err *err)
{
    scv_value val = value_of(f, argv);
    int rc = scv_value_read(&val, COLL_WORDS, label, w, s, err);
    if (!rc && (f->flags & W_SELSYNC)) w->selsync = 1;
    return rc;
}

/* ---- JSON ---- */

void scv_segwire_json_write(FILE *f, const scv_segwire *w)
{
    int first = 1;
    char buf[128];
    for (size_t i = 0; i < N_FIELDS; i++) {
        const field *d = &fields[i];
        if (!d->json || (!(d->flags & J_ALWAYS) && !is_set(w, d))) continue;
        fprintf(f, "%s\"%s\":", first ? "" : ",", d->json);
        first = 0;
        if (d->type == T_LIST) {
            fputc('[', f);
            for (int k = 0; k < list_n(w, d); k++) fprintf(f, "%s%.9g", k ? "," : "", CAT(w, d, double)[k]);
            fputc(']', f);
        } else if (d->type == T_STRAG) {
            fputc('{', f);
            for (size_t k = 0; k < sizeof strag_fields / sizeof strag_fields[0]; k++) {
                const char *p = (const char *)&w->straggler + strag_fields[k].off;
                if (strag_fields[k].type == T_INT) fprintf(f, "%s\"%s\":%d", k ? "," : "", strag_fields[k].name, *(const int *)p);
                else fprintf(f, "%s\"%s\":%.17g", k ? "," : "", strag_fields[k].name, *(const double *)p);
            }
            fputc('}', f);
        } else if (d->type == T_STR || d->type == T_COLL) {
            if (d->type == T_STR) scv_json_str(f, CAT(w, d, char));
            else scv_json_str(f, scv_segwire_coll_name(*CAT(w, d, scv_coll_pref)));
        } else if ((d->flags & J_MIN1) && *CAT(w, d, int) < 1) {
            fputs("1", f);
        } else {
            scalar_text(w, d, buf, sizeof buf);
            fputs(buf, f);
        }
    }
}

int scv_segwire_json_read(scv_segwire *w, const void *obj, const char *what, scv_err *err)
{
    const cJSON *o = obj;
    if (!cJSON_IsObject(o)) return scv_err_set(err, SCV_EINVAL, "%s: not a JSON object", what);
    for (size_t i = 0; i < N_FIELDS; i++) {
        const field *d = &fields[i];
        if (!d->json) continue;
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, d->json);
        int rc = SCV_OK;
        if (!v) {
            if (d->flags & REQUIRED) return scv_err_set(err, SCV_EINVAL, "%s: field '%s' is missing", what, d->json);
            continue;
        }
        switch (d->type) {
        case T_STR: case T_COLL:
            if (!cJSON_IsString(v)) return scv_err_set(err, SCV_EINVAL, "%s: field '%s' is not a string", what, d->json);
            rc = store_string(w, d, what, d->json, v->valuestring, err);
            break;
        case T_LIST: {
            if (!cJSON_IsArray(v)) return scv_err_set(err, SCV_EINVAL, "%s: field '%s' is not an array", what, d->json);
            int n = 0;
            const cJSON *x;
            scv_value item = value_of(d, 0);
            item.type = SCV_VT_DBL;
            cJSON_ArrayForEach(x, v) {
                char el[96];
                snprintf(el, sizeof el, "%s[%d]", d->json, n);
                if ((size_t)n == d->cap) return scv_err_set(err, SCV_EINVAL, "%s: field '%s': more than %zu values", what, d->json, d->cap);
                if (!cJSON_IsNumber(x)) return scv_err_set(err, SCV_EINVAL, "%s: field '%s' is not a number", what, el);
                if ((rc = check_num(what, el, x->valuedouble, &item, err))) return rc;
                AT(w, d, double)[n++] = x->valuedouble;
            }
            *(int *)((char *)w + d->n_off) = n;
            break;
        }
        case T_STRAG: {
            if (!cJSON_IsObject(v)) return scv_err_set(err, SCV_EINVAL, "%s: field '%s' is not an object", what, d->json);
            w->straggler = scv_straggler_rule_default(); /* a member left out keeps its default */
            for (size_t k = 0; k < sizeof strag_fields / sizeof strag_fields[0]; k++) {
                const cJSON *x = cJSON_GetObjectItemCaseSensitive(v, strag_fields[k].name);
                char el[96];
                snprintf(el, sizeof el, "%s.%s", d->json, strag_fields[k].name);
                if (!x) continue;
                if (!cJSON_IsNumber(x)) return scv_err_set(err, SCV_EINVAL, "%s: field '%s' is not a number", what, el);
                int integral = strag_fields[k].type == T_INT;
                scv_value sv = {.type = integral ? SCV_VT_INT : SCV_VT_DBL, .lo = strag_fields[k].lo,
                                .hi = strag_fields[k].hi};
                if ((rc = check_num(what, el, x->valuedouble, &sv, err))) return rc;
                char *p = (char *)&w->straggler + strag_fields[k].off;
                if (integral) *(int *)p = (int)x->valuedouble;
                else *(double *)p = x->valuedouble;
            }
            break;
        }
        default:
            if (!cJSON_IsNumber(v)) return scv_err_set(err, SCV_EINVAL, "%s: field '%s' is not a number", what, d->json);
            rc = store_num(w, d, what, d->json, v->valuedouble, err);
        }
        if (rc) return rc;
    }
    if (w->n_split && w->n_split != w->workers)
        return scv_err_set(err, SCV_EINVAL, "%s: field 'split' needs %d shares, has %d", what, w->workers, w->n_split);
    return SCV_OK;
}

/* ---- the environment ---- */

void scv_segwire_env_free(char **env)
{
    for (int i = 0; env && env[i]; i++) free(env[i]);
    free(env);
}

int scv_segwire_env(const scv_segwire *w, char ***out, scv_err *err)
{
    char **env = calloc(N_FIELDS + 1, sizeof *env);
    int n = 0, bad = !env;
    char *val = bad ? NULL : malloc(SCV_SEGWIRE_PATH + 64);
    bad |= !val;
    for (size_t i = 0; i < N_FIELDS && !bad; i++) {
        const field *d = &fields[i];
        if (!d->env || (!(d->flags & E_ALWAYS) && !is_set(w, d))) continue;
        if (d->type == T_LIST) list_text(w, d, val, SCV_SEGWIRE_PATH + 64);
        else scalar_text(w, d, val, SCV_SEGWIRE_PATH + 64);
        bad = !(env[n] = malloc(strlen(d->env) + strlen(val) + 2));
        if (!bad) sprintf(env[n++], "%s=%s", d->env, val);
    }
    free(val);
    if (bad) {
        scv_segwire_env_free(env);
        *out = NULL;
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    *out = env;
    return SCV_OK;
}

int scv_segwire_env_read(scv_segwire *w, const char *(*get)(const char *name, void *ctx), void *ctx, scv_err *err)
{
    for (size_t i = 0; i < N_FIELDS; i++) {
        const field *d = &fields[i];
        if (!d->env) continue;
        const char *s = get(d->env, ctx);
        if (!s) {
            if (d->flags & E_REQUIRED) return scv_err_set(err, SCV_EINVAL, "environment: %s is not set", d->env);
            continue;
        }
        char label[64];
        snprintf(label, sizeof label, "environment: %s", d->env);
        int rc = store_text(w, d, label, s, 0, err);
        if (rc) return rc;
    }
    if (w->n_split && w->n_split != w->workers)
        return scv_err_set(err, SCV_EINVAL, "environment: SCV_SPLIT needs %d weights (SCV_WORKERS), has %d", w->workers,
                           w->n_split);
    return SCV_OK;
}

/* ---- argv ---- */

void scv_argv_add(scv_argv *a, const char *s)
{
    if (a->oom) return;
    if (a->n + 2 > a->cap) {
        int cap = a->cap ? 2 * a->cap : 32;
        char **v = realloc(a->v, sizeof(char *) * (size_t)cap);
        if (!v) {
            a->oom = 1;
            return;
        }
        a->v = v, a->cap = cap;
    }
    if (!(a->v[a->n] = strdup(s))) {
        a->oom = 1;
        return;
    }
    a->v[++a->n] = NULL;
}

void scv_argv_addf(scv_argv *a, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    scv_argv_add(a, buf);
}

void scv_argv_free(scv_argv *a)
{
    for (int i = 0; i < a->n; i++) free(a->v[i]);
    free(a->v);
    memset(a, 0, sizeof *a);
}

void scv_segwire_argv(scv_argv *a, const scv_segwire *w)
{
    char *buf = malloc(SCV_SEGWIRE_PATH + 64), *two = malloc(128);
    if (!buf || !two) {
        free(buf), free(two);
        a->oom = 1;
        return;
    }
    for (size_t i = 0; i < N_FIELDS; i++) {
        const field *d = &fields[i];
        if (!d->argv) continue;
        if ((d->flags & A_WINDOW) && !(w->target_window > 1)) continue;
        if ((d->flags & A_K2) && !(w->workers > 1)) continue;
        if (d->type == T_FLAG) { /* an option alone */
            int on = *CAT(w, d, int) != 0;
            if (d->flags & A_NEG ? !on : on) scv_argv_add(a, d->argv);
            continue;
        }
        if (!is_set(w, d)) continue;
        if (d->type == T_LIST) list_text(w, d, buf, SCV_SEGWIRE_PATH + 64);
        else if (d->flags & W_SELSYNC) /* "lssr:R", or "0": synchronous */
            snprintf(buf, SCV_SEGWIRE_PATH + 64, w->selsync_lssr > 0 ? "lssr:%.17g" : "0", w->selsync_lssr);
        else {
            scalar_text(w, d, buf, SCV_SEGWIRE_PATH + 64);
            if (d->flags & A_PAIR) { /* THIS:NEXT */
                scalar_text(w, d + 1, two, 128);
                size_t len = strlen(buf);
                snprintf(buf + len, SCV_SEGWIRE_PATH + 64 - len, ":%s", two);
            }
            if (d->prefix) {
                snprintf(two, 128, "%s", buf);
                snprintf(buf, SCV_SEGWIRE_PATH + 64, "%s%s", d->prefix, two);
            }
        }
        scv_argv_add(a, d->argv);
        scv_argv_add(a, buf);
    }
    free(buf), free(two);
}

static const field *argv_field(const char *opt)
{
    for (size_t k = 0; opt && k < N_FIELDS; k++)
        if (fields[k].argv && !strcmp(fields[k].argv, opt)) return &fields[k];
    return NULL;
}

int scv_segwire_arg_kind(const char *opt)
{
    const field *d = argv_field(opt);
    return !d ? -1 : d->type != T_FLAG;
}

/* "THIS:NEXT" of an A_PAIR option into d and d + 1, each read with its field's range and
 * named as the option's form names it ("W:TOL": W, TOL) */
static int read_pair(scv_segwire *w, const field *d, const char *s, scv_err *err)
{
    const char *colon = strchr(s, ':');
    char first[128], sub[200];
    if ((!colon && !(d->flags & A_OPT2)) || (colon ? (size_t)(colon - s) : strlen(s)) >= sizeof first)
        return scv_err_set(err, SCV_EINVAL, "%s '%s': expected %s", d->argv, s, d->form);
    snprintf(first, sizeof first, "%.*s", (int)(colon ? (size_t)(colon - s) : strlen(s)), s);
    scv_err e = {0};
    int n1 = (int)strcspn(d->form, "[:"), at2 = n1 + (int)strspn(d->form + n1, "[:");
    snprintf(sub, sizeof sub, "%s '%.100s': %.*s", d->argv, s, n1, d->form);
    int rc = store_text(w, d, sub, first, 1, &e);
    if (!rc && colon) {
        snprintf(sub, sizeof sub, "%s '%.100s': %.*s", d->argv, s, (int)strcspn(d->form + at2, "], "), d->form + at2);
        rc = store_text(w, d + 1, sub, colon + 1, 1, &e);
    } else if (!rc) {
        store_num(w, d + 1, "argv", d[1].json, d[1].dflt, NULL);
    }
    return rc ? scv_err_set(err, rc, "%s", e.msg) : SCV_OK;
}

int scv_segwire_arg(scv_segwire *w, const char *opt, const char *s, scv_err *err)
{
    const field *d = argv_field(opt);
    if (!d) return scv_err_set(err, SCV_ENOTFOUND, "'%s' is not a segment option", opt ? opt : "");
    if (d->type == T_FLAG) {
        *AT(w, d, int) = !(d->flags & A_NEG);
        return SCV_OK;
    }
    if (!s) return scv_err_set(err, SCV_EINVAL, "%s needs a value", d->argv);
    size_t n = d->prefix ? strlen(d->prefix) : 0;
    if ((d->flags & W_SELSYNC) && !strcmp(s, "0")) { /* synchronous: SelSync at a share of 0 */
        w->selsync = 1, w->selsync_lssr = 0;
        return SCV_OK;
    }
    if (d->prefix && strncmp(s, d->prefix, n))
        return scv_err_set(err, SCV_EINVAL, "%s '%s': expected %s", d->argv, s, d->form);
    if (d->prefix) { /* the value after it, named with the whole */
        char label[200];
        snprintf(label, sizeof label, "%s '%.100s': %.*s", d->argv, s, (int)strcspn(d->form + n, " "), d->form + n);
        return store_text(w, d, label, s + n, 1, err);
    }
    if (d->flags & A_PAIR) return read_pair(w, d, s, err);
    return store_text(w, d, d->argv, s, 1, err);
}

int scv_segwire_argv_read(scv_segwire *w, int argc, char *const *argv, scv_err *err)
{
    for (int i = 0; i < argc; i++) {
        int kind = scv_segwire_arg_kind(argv[i]);
        if (kind < 0) return scv_err_set(err, SCV_EINVAL, "argv: '%s' is not a segment option", argv[i]);
        if (kind && i + 1 == argc) return scv_err_set(err, SCV_EINVAL, "argv: %s needs a value", argv[i]);
        scv_err e = {0};
        int rc = scv_segwire_arg(w, argv[i], kind ? argv[i + 1] : NULL, &e);
        if (rc) return scv_err_set(err, SCV_EINVAL, "argv: %s", e.msg);
        i += kind;
    }
    return SCV_OK;
}
