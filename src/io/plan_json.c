/*
 * plan_json.c - scv_plan_json(): `scavenger plan --json` as one library call, for bindings
 * (python/scavenger/planner.py) and services. The request, a JSON object whose fields are
 * the command's options with '_' for '-', is read field by field (each value checked
 * against the ranges the command line applies, an error naming the field), becomes
 * scv_plan_args and runs the pipeline of plan_job.c, whose report is written into a
 * string (open_memstream): the same bytes `plan --json` prints, less the newline. The
 * request's space and report are bounded (scv_plan_limits, io.h): a caller trusted by its
 * own word may raise the points with "max_points"; the service passes its own limits and
 * refuses that field (scv_plan_json_limited).
 */
#define _POSIX_C_SOURCE 200809L
#include "io.h"
#include "plan_job.h"
#include "../core/util.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every field of a request; anything else is refused (a typo must not pass unnoticed). */
static const char *const FIELDS[] = {
    "profile", "metrics", "catalog", "measured_on", "target_epochs", "base_batch", "target_run",
    "target_accuracy", "vm", "workers", "batch", "b_min", "b_max", "comm", "overlap", "stat",
    "pricing", "assume_gpu_speedup", "objective", "value_per_hour", "deadline", "budget", "all", "mix",
    "compress", "compress_iterations", "max_points", "preempt_rate", "spot_risk", "spot_recovery",
    "spot_restart_s", "spot_idle_s", "spot_replace_s", NULL};

/* What a request holds, and owns, once read. */
typedef struct request {
    scv_plan_args a;
    char *profile, *vms, *mixes, *compress; /* joined lists (malloc'ed) */
    const char **metrics;           /* pointers into the cJSON tree */
    int *workers, *batches;
    char rate[32];                  /* "preempt_rate" given as a number */
    scv_spot_policy pol;            /* the spot policy with "spot_*_s" (a.spot_pol points here) */
} request;

static void request_free(request *r)
{
    free(r->profile), free(r->vms), free(r->mixes), free(r->compress), free(r->metrics), free(r->workers),
        free(r->batches);
}

static int bad(scv_err *err, const char *field, const char *expected)
{
    return scv_err_set(err, SCV_EINVAL, "field \"%s\": expected %s", field, expected);
}

/* A number field in [lo, hi] (lo excluded when open_lo); absent leaves *out. */
static int get_num(const cJSON *o, const char *k, double lo, double hi, int open_lo, const char *expected,
                   double *out, scv_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!v) return SCV_OK;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi ||
        (open_lo && v->valuedouble == lo))
        return bad(err, k, expected);
    *out = v->valuedouble;
    return SCV_OK;
}

/* An integer field in [1, 2^24]. */
static int get_int(const cJSON *o, const char *k, int *out, scv_err *err)
{
    double d = 0;
    int rc = get_num(o, k, 1, 1 << 24, 0, "an integer in 1..16777216", &d, err);
    if (!rc && d != floor(d)) rc = bad(err, k, "an integer in 1..16777216");
    if (!rc && d) *out = (int)d;
    return rc;
}

/* A non-empty string field. */
static int get_str(const cJSON *o, const char *k, const char **out, scv_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!v) return SCV_OK;
    if (!cJSON_IsString(v) || !v->valuestring[0]) return bad(err, k, "a non-empty string");
    *out = v->valuestring;
    return SCV_OK;
}

/* A choice by name (objective, comm, ...): the string, checked by the library's parser. */
static int get_name(const cJSON *o, const char *k, const char **out, scv_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!v) return SCV_OK;
    if (!cJSON_IsString(v)) return bad(err, k, "a string");
    *out = v->valuestring;
    return SCV_OK;
}

/* The parser's message e (for field k) into err. */
static int named(scv_err *err, const char *k, int rc, const scv_err *e)
{
    return scv_err_set(err, rc, "field \"%s\": %s", k, e->msg);
}

/* A string or an array of non-empty strings, joined with sep into *out (malloc'ed); an
 * element may not hold forbid (0: any character; what: the field's form, for the error). */
static int get_joined(const cJSON *o, const char *k, char sep, char forbid, const char *what, char **out,
                      scv_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!v) return SCV_OK;
    size_t len = 1;
    if (cJSON_IsString(v) && v->valuestring[0]) {
        len += strlen(v->valuestring);
    } else if (cJSON_IsArray(v) && v->child) {
        for (const cJSON *e = v->child; e; e = e->next) {
            if (!cJSON_IsString(e) || !e->valuestring[0] || (forbid && strchr(e->valuestring, forbid)))
                return bad(err, k, what);
            len += strlen(e->valuestring) + 1;
        }
    } else
        return bad(err, k, what);
    if (!(*out = malloc(len))) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    if (cJSON_IsString(v)) {
        memcpy(*out, v->valuestring, len);
        return SCV_OK;
    }
    size_t at = 0;
    for (const cJSON *e = v->child; e; e = e->next) {
        size_t n = strlen(e->valuestring);
        memcpy(*out + at, e->valuestring, n);
        at += n;
        (*out)[at++] = e->next ? sep : 0;
    }
    return SCV_OK;
}

/* A list of names, "a,b" or ["a", "b"], joined with commas. */
static int get_list(const cJSON *o, const char *k, char **out, scv_err *err)
{
    return get_joined(o, k, ',', ',', "a string or an array of non-empty strings without commas", out, err);
}

/* The mixed clusters, "a:2,b:1;c:3" or ["a:2,b:1", "c:3"] (an element may hold several),
 * joined with ';'; each mix is checked against the catalog later (plan_job.c). */
static int get_mixes(const cJSON *o, const char *k, char **out, scv_err *err)
{
    return get_joined(o, k, ';', 0, "a mix \"TYPE:COUNT[,TYPE:COUNT...]\" (mixes separated by ';') or an array of them",
                      out, err);
}

/* The metrics texts: a string (one file's lines) or an array of strings. */
static int get_texts(const cJSON *o, const char *k, const char ***out, size_t *n, scv_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!v) return SCV_OK;
    const char *what = "a string of metrics JSON lines or an array of them";
    size_t m = cJSON_IsString(v) ? 1 : cJSON_IsArray(v) ? (size_t)cJSON_GetArraySize(v) : 0;
    if (!m) return bad(err, k, what);
    if (!(*out = malloc(m * sizeof **out))) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    *n = 0;
    if (cJSON_IsString(v)) (*out)[(*n)++] = v->valuestring;
    else
        for (const cJSON *e = v->child; e; e = e->next) {
            if (!cJSON_IsString(e)) return bad(err, k, what);
            (*out)[(*n)++] = e->valuestring;
        }
    return SCV_OK;
}

/* A set of integers: a spec ("1..64", "32..4096", "1,2,8"), a number or an array of numbers,
 * parsed as the command line parses its spec (the array as the list "a,b,..."). */
static int get_set(const cJSON *o, const char *k, const char *dflt, int pow2, long hi, int **out, size_t *n,
                   scv_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    const char *what = "a range like \"1..64\", a list \"1,2,8\", an integer or an array of integers";
    char *spec = NULL;
    if (v && cJSON_IsArray(v) && v->child) {
        size_t cap = 24 * (size_t)cJSON_GetArraySize(v) + 1, at = 0;
        if (!(spec = malloc(cap))) return scv_err_set(err, SCV_ENOMEM, "out of memory");
        for (const cJSON *e = v->child; e; e = e->next) {
            if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || fabs(e->valuedouble) > 1e15) {
                free(spec);
                return bad(err, k, what);
            }
            at += (size_t)snprintf(spec + at, cap - at, "%s%.0f", at ? "," : "", e->valuedouble);
        }
    } else if (v && cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) <= 1e15) {
        if (!(spec = malloc(24))) return scv_err_set(err, SCV_ENOMEM, "out of memory");
        snprintf(spec, 24, "%.0f", v->valuedouble);
    } else if (v && !cJSON_IsString(v))
        return bad(err, k, what);
    scv_err e = {0};
    long m = scv_parse_int_set(spec ? spec : v ? v->valuestring : dflt, pow2, 1, hi, out, &e);
    free(spec);
    if (m < 0) return named(err, k, SCV_EINVAL, &e);
    *n = (size_t)m;
    return SCV_OK;
}

/* Refuses fields not in FIELDS (with a hint for '-' written for '_') and repeated ones. */
static int check_names(const cJSON *o, scv_err *err)
{
    for (const cJSON *it = o->child; it; it = it->next) {
        size_t i = 0;
        while (FIELDS[i] && strcmp(FIELDS[i], it->string)) i++;
        if (!FIELDS[i]) {
            char alt[64];
            snprintf(alt, sizeof alt, "%s", it->string);
            for (char *p = alt; *p; p++)
                if (*p == '-') *p = '_';
            for (i = 0; FIELDS[i] && strcmp(FIELDS[i], alt); i++) {}
            if (FIELDS[i] && strlen(it->string) < sizeof alt)
                return scv_err_set(err, SCV_EINVAL, "unknown field \"%s\" (did you mean \"%s\"?)", it->string, alt);
            return scv_err_set(err, SCV_EINVAL, "unknown field \"%s\" (a plan request takes: profile or metrics, "
                               "target_epochs or target_run, and options named as `scavenger plan`'s with '_' for '-')",
                               it->string);
        }
        for (const cJSON *q = o->child; q != it; q = q->next)
            if (!strcmp(q->string, it->string))
                return scv_err_set(err, SCV_EINVAL, "field \"%s\" is given twice", it->string);
    }
    return SCV_OK;
}

/* Reads a request object into r (r zeroed, its args' defaults as the command line's); the
 * points limit from lim, raised by "max_points" when allow_raise. */
static int read_request(const cJSON *o, const scv_plan_limits *lim, int allow_raise, request *r, scv_err *err)
{
    scv_plan_args *a = &r->a;
    const char *comm = NULL, *stat = NULL, *pricing = NULL, *obj = NULL;
    int rc;
    a->topology = SCV_TOPO_RING, a->stat = SCV_STAT_GNS, a->pricing = SCV_PRICE_ONDEMAND, a->objective = SCV_OBJ_KNEE;
    if ((rc = check_names(o, err)) || (rc = get_list(o, "profile", &r->profile, err)) ||
        (rc = get_texts(o, "metrics", &r->metrics, &a->n_metrics, err)) ||
        (rc = get_str(o, "catalog", &a->catalog, err)) || (rc = get_str(o, "measured_on", &a->measured_on, err)) ||
        (rc = get_num(o, "target_epochs", 0, 1e9, 1, "a positive number", &a->target_epochs, err)) ||
        (rc = get_int(o, "base_batch", &a->base_batch, err)) || (rc = get_str(o, "target_run", &a->target_run, err)) ||
        (rc = get_num(o, "target_accuracy", 0, 1, 1, "a number in (0,1]", &a->target_accuracy, err)) ||
        (rc = get_list(o, "vm", &r->vms, err)) || (rc = get_mixes(o, "mix", &r->mixes, err)) ||
        (rc = get_set(o, "workers", "1..64", 0, 100000, &r->workers, &a->n_workers, err)) ||
        (rc = get_set(o, "batch", "32..4096", 1, 1 << 24, &r->batches, &a->n_batches, err)) ||
        (rc = get_int(o, "b_min", &a->b_min, err)) || (rc = get_int(o, "b_max", &a->b_max, err)) ||
        (rc = get_name(o, "comm", &comm, err)) ||
        (rc = get_num(o, "overlap", 0, 1, 0, "a number in [0,1]", &a->overlap, err)) ||
        (rc = get_name(o, "stat", &stat, err)) || (rc = get_name(o, "pricing", &pricing, err)) ||
        (rc = get_num(o, "assume_gpu_speedup", 0, 1e12, 1, "a positive factor", &a->gpu_speedup, err)) ||
        (rc = get_name(o, "objective", &obj, err)) ||
        (rc = get_num(o, "value_per_hour", 0, 1e12, 1, "a positive number of dollars", &a->value_per_hour, err)) ||
        (rc = get_num(o, "budget", 0, 1e12, 1, "a positive number of dollars", &a->budget, err)) ||
        (rc = get_list(o, "compress", &r->compress, err)) ||
        (rc = get_num(o, "compress_iterations", 0, 1e12, 1, "a factor > 0 (iterations relative to dense)",
                      &a->compress_iterations, err)))
        return rc;
    r->a.max_points = lim->max_points;
    const cJSON *mp = cJSON_GetObjectItemCaseSensitive(o, "max_points");
    if (mp && !allow_raise)
        return scv_err_set(err, SCV_EINVAL, "field \"max_points\": the limit is set by the service's operator "
                           "(serve --max-plan-points), not by a request");
    double d = 0;
    if (mp && ((rc = get_num(o, "max_points", 1, 1e15, 0, "an integer >= 1", &d, err)) || d != floor(d)))
        return rc ? rc : bad(err, "max_points", "an integer >= 1");
    if (mp) r->a.max_points = (long)d;
    scv_err e = {0};
    if (comm && (rc = scv_topology_from_name(comm, &a->topology, &e))) return named(err, "comm", rc, &e);
    if (stat && (rc = scv_stat_from_name(stat, &a->stat, &e))) return named(err, "stat", rc, &e);
    if (pricing && (rc = scv_pricing_from_name(pricing, &a->pricing, &e))) return named(err, "pricing", rc, &e);
    if (obj && (rc = scv_objective_from_name(obj, &a->objective, &e))) return named(err, "objective", rc, &e);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "deadline");
    if (v) {
        const char *what = "seconds (a number >= 0), or a string with s, m or h (\"45m\")";
        if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= 0) a->deadline_s = v->valuedouble;
        else if (!cJSON_IsString(v) || (a->deadline_s = scv_parse_duration(v->valuestring)) < 0) return bad(err, "deadline", what);
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(o, "all"))) {
        if (!cJSON_IsBool(v)) return bad(err, "all", "true or false");
        a->all_points = cJSON_IsTrue(v);
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(o, "spot_risk"))) {
        if (!cJSON_IsBool(v)) return bad(err, "spot_risk", "true or false");
        a->spot_risk = cJSON_IsTrue(v);
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(o, "spot_recovery"))) {
        if (!cJSON_IsString(v) || (strcmp(v->valuestring, "restart") && strcmp(v->valuestring, "inplace")))
            return bad(err, "spot_recovery", "\"restart\" or \"inplace\"");
        a->spot_inplace = !strcmp(v->valuestring, "inplace");
    }
    /* the spot policy's times, each replacing the default (plan's --spot-restart etc.) */
    r->pol = scv_spot_policy_default();
    const char *const SECS = "seconds: a number in [0, 1e6]";
    if ((rc = get_num(o, "spot_restart_s", 0, 1e6, 0, SECS, &r->pol.restart_s, err)) ||
        (rc = get_num(o, "spot_idle_s", 0, 1e6, 0, SECS, &r->pol.inplace_idle_s, err)) ||
        (rc = get_num(o, "spot_replace_s", 0, 1e6, 0, SECS, &r->pol.replace_s, err)))
        return rc;
    a->spot_pol = &r->pol;
    /* preemptions per VM-hour: a number (every type) or "R" / "TYPE=R[,TYPE=R...]", read
     * against the catalog in plan_job.c */
    if ((v = cJSON_GetObjectItemCaseSensitive(o, "preempt_rate"))) {
        if (cJSON_IsNumber(v) && isfinite(v->valuedouble)) snprintf(r->rate, sizeof r->rate, "%.17g", v->valuedouble);
        else if (!cJSON_IsString(v) || !v->valuestring[0])
            return bad(err, "preempt_rate", "preemptions per VM-hour: a number, or \"TYPE=R[,TYPE=R...]\"");
        a->preempt_rate = cJSON_IsNumber(v) ? r->rate : v->valuestring;
    }
    a->profile = r->profile;
    a->metrics = r->metrics;
    a->vms = r->vms;
    a->mixes = r->mixes;
    a->compress = r->compress;
    a->workers = r->workers;
    a->batches = r->batches;
    /* what the command line checks across options */
    if (!a->profile == !a->metrics)
        return scv_err_set(err, SCV_EINVAL, a->profile ? "fields \"profile\" and \"metrics\": give one, not both"
                                                       : "field \"profile\" (metrics files) or \"metrics\" (their "
                                                         "text) is required");
    if (!a->target_epochs && !a->target_run)
        return scv_err_set(err, SCV_EINVAL, "field \"target_epochs\" (with \"base_batch\") or \"target_run\" (with "
                           "\"target_accuracy\") is required: the target");
    if (a->target_run && !a->target_accuracy)
        return scv_err_set(err, SCV_EINVAL, "field \"target_run\" needs \"target_accuracy\"");
    if (a->b_min && a->b_max && a->b_min > a->b_max)
        return scv_err_set(err, SCV_EINVAL, "field \"b_min\" is larger than \"b_max\"");
    if (a->objective == SCV_OBJ_UTILITY && !a->value_per_hour)
        return scv_err_set(err, SCV_EINVAL, "field \"objective\" utility needs \"value_per_hour\"");
    if (a->compress_iterations && !a->compress)
        return scv_err_set(err, SCV_EINVAL, "field \"compress_iterations\" needs \"compress\"");
    return SCV_OK;
}

int scv_plan_json(const char *request_json, char **result_json, scv_err *err)
{
    return scv_plan_json_limited(request_json, NULL, 1, result_json, err);
}

int scv_plan_json_limited(const char *request_json, const scv_plan_limits *lim, int allow_raise, char **result_json,
                          scv_err *err)
{
    static const scv_plan_limits dflt = SCV_PLAN_LIMITS_DEFAULT;
    if (!lim) lim = &dflt;
    if (!result_json) return scv_err_set(err, SCV_EINVAL, "scv_plan_json: result_json is NULL");
    *result_json = NULL;
    if (!request_json) return scv_err_set(err, SCV_EINVAL, "request: NULL");
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithOpts(request_json, &end, 1);
    if (!o) {
        size_t at = end && end >= request_json ? (size_t)(end - request_json) : 0;
        return scv_err_set(err, SCV_EPARSE, "request: not valid JSON (at byte %zu: \"%.20s\")", at,
                           request_json + at);
    }
    request r = {0};
    int rc = cJSON_IsObject(o) ? read_request(o, lim, allow_raise, &r, err)
                               : scv_err_set(err, SCV_EPARSE, "request: expected a JSON object");
    scv_plan_job job = {0};
    if (!rc) rc = scv_plan_job_run(&r.a, &job, err);
    if (!rc) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f) rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
        else {
            scv_plan_job_json(f, &r.a, &job);
            int bad_write = ferror(f);
            if (fclose(f) || bad_write || !buf) {
                free(buf);
                rc = scv_err_set(err, SCV_ENOMEM, "out of memory (the report)");
            } else if (lim->max_response && len > lim->max_response) {
                free(buf);
                rc = scv_err_set(err, SCV_ERANGE, "the report is %zu bytes, over the limit max_response = %zu bytes: "
                                 "narrow \"vm\", \"workers\" or \"batch\", or leave out \"all\"", len,
                                 lim->max_response);
            } else
                *result_json = buf;
        }
    }
    scv_plan_job_free(&job);
    request_free(&r);
    cJSON_Delete(o);
    return rc;
}

void scv_json_free(char *json)
{
    free(json);
}
