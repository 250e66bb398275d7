/*
 * jobs_check.c - the service's checks of what a request asks it to run. A job arrives as
 * the JSON object `scavenger run JOB.json` reads; svc_job_check() refuses what the service
 * must not run (errors name the field): settings that are not a job's keys
 * (src/search/jobopts.c), wrong types, bad values (read as their rows say, as `scavenger
 * run` and train read them: scv_job_value_read), the service's own settings (db, report),
 * paths outside the data directory (dataset, catalog) and an external trainer's command
 * (exec, hosts) unless the operator allowed them; then the run's own setup on this machine
 * (422 for a well-formed job that cannot run here). svc_resume_check() applies the same to
 * a stored run's job before a resume, svc_resume_body() reads a resume's body (its budget).
 * The queue that runs the jobs is jobs.c's.
 */
#define _GNU_SOURCE
#include "service.h"
#include "../core/util.h"
#include "../core/rundir.h"
#include "job/jobsetup.h"
#include "search/jobopts.h"
#include "../train/train.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int field_err(char *field, size_t fcap, const char *name, scv_err *err, int code, const char *fmt,
                     const char *a)
{
    snprintf(field, fcap, "%s", name);
    char m[1024];
    snprintf(m, sizeof m, fmt, a);
    return scv_err_set(err, code, "field '%s': %s", name, m);
}

/* path must resolve inside dir (both made absolute and free of links first) */
static int path_inside(const char *dir, const char *path)
{
    char rd[PATH_MAX], rp[PATH_MAX];
    if (!realpath(dir, rd) || !realpath(path, rp)) return 0;
    size_t n = strlen(rd);
    return !strncmp(rd, rp, n) && (rp[n] == '/' || rp[n] == 0 || (n == 1 && rd[0] == '/'));
}

/* The field a job setup error names: its first "--NAME" that is a job's key, else the key
 * it starts with ("workers: ..."), else "job". */
static void setup_field(const char *msg, char *field, size_t fcap)
{
    size_t lead = strspn(msg, "abcdefghijklmnopqrstuvwxyz0123456789-");
    char first[64];
    snprintf(first, sizeof first, "%.*s", (int)(lead < sizeof first ? lead : 0), msg);
    int named = lead && (msg[lead] == ':' || msg[lead] == ' ') && scv_job_option_find(first);
    snprintf(field, fcap, "%s", named ? first : "job");
    for (const char *p = strstr(msg, "--"); p; p = strstr(p + 2, "--")) {
        char name[64];
        size_t n = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz0123456789-");
        if (!n || n >= sizeof name) continue;
        snprintf(name, sizeof name, "%.*s", (int)n, p + 2);
        if (scv_job_option_find(name)) {
            snprintf(field, fcap, "%s", name);
            return;
        }
    }
}

/* A job whose every field is well formed, checked against this machine as `scavenger run`
 * checks it before training, by the run's own setup (scv_job_setup_init: the catalog, the
 * VM type in it, the cluster among the existing ones, the whole job; it reads the catalog
 * and the cluster and starts nothing): one check for both. SCV_EINFEASIBLE (422) naming the
 * field its message names (setup_field): the job is well formed but cannot run here. */
static int job_runnable(const svc_config *cfg, const cJSON *o, scv_store *store, char *field, size_t fcap,
                        scv_err *err)
{
    /* the run's own setup on the job's settings, as strings (a number as the job file reads it) */
    enum { MAXF = 128 };
    char *names[MAXF], *values[MAXF], vals[MAXF][512];
    int n = 0;
    for (const cJSON *it = o->child; it && n < MAXF - 1; it = it->next, n++) {
        names[n] = it->string;
        if (cJSON_IsString(it)) snprintf(vals[n], sizeof vals[n], "%s", it->valuestring);
        else snprintf(vals[n], sizeof vals[n], "%.17g", it->valuedouble);
        values[n] = vals[n];
    }
    if (cfg->host_limits[0]) { /* the operator's bound of what a run takes of this host, as the child gets it */
        names[n] = "host-limits", values[n] = (char *)cfg->host_limits;
        n++;
    }
    scv_job_setup js;
    scv_err e = {0};
    char state_dir[1100]; /* the run's, as `scavenger run --db DB` names it (only kept here) */
    int rc = scv_runs_dir_path(cfg->db, state_dir, sizeof state_dir, err);
    if (rc) return rc;
    rc = scv_job_setup_init(&js, names, values, n, store, state_dir, &e);
    scv_job_setup_free(&js);
    if (rc == SCV_ENOMEM) return scv_err_set(err, rc, "out of memory");
    if (rc) {
        setup_field(e.msg, field, fcap);
        return scv_err_set(err, SCV_EINFEASIBLE, "field '%s': %s", field, e.msg);
    }
    return SCV_OK;
}

int svc_job_check(const svc_config *cfg, scv_store *store, const char *body, char **out, char *field, size_t fcap,
                  scv_err *err)
{
    *out = NULL;
    field[0] = 0;
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithOpts(body, &end, 1);
    if (!o || !cJSON_IsObject(o)) {
        cJSON_Delete(o);
        snprintf(field, fcap, "body");
        return scv_err_set(err, SCV_EPARSE, "body: not a JSON object%s", end && *end ? " (or something follows it)" : "");
    }
    scv_run_params p = scv_run_params_default();
    scv_train_params t = scv_train_params_default();
    int rc = SCV_OK, has_target = 0;
    for (cJSON *it = o->child; it && !rc; it = it->next) {
        const char *name = it->string;
        const scv_option *key = scv_job_option_find(name); /* a job's keys: search/jobopts.c */
        char val[512];
        int len = 0;
        for (const cJSON *q = o->child; q != it; q = q->next)
            if (!strcmp(q->string, name)) {
                rc = field_err(field, fcap, name, err, SCV_EINVAL, "given twice%s", "");
                break;
            }
        if (rc) break;
        if (cJSON_IsString(it)) len = snprintf(val, sizeof val, "%s", it->valuestring);
        else if (cJSON_IsNumber(it) && isfinite(it->valuedouble)) len = snprintf(val, sizeof val, "%.17g", it->valuedouble);
        else {
            rc = field_err(field, fcap, name, err, SCV_EINVAL, "must be a string or a finite number%s", "");
            break;
        }
        if (len >= (int)sizeof val) {
            rc = field_err(field, fcap, name, err, SCV_EINVAL, "the value is longer than 511 characters%s", "");
            break;
        }
        if (!key) {
            rc = field_err(field, fcap, name, err, SCV_EINVAL, "unknown setting%s", "");
        } else if (!strcmp(name, "db") || !strcmp(name, "report")) {
            rc = field_err(field, fcap, name, err, SCV_EINVAL, "set by the service, not by a job%s", "");
        } else if (!strcmp(name, "host-limits")) { /* the operator's: a job would lift its own bound */
            rc = field_err(field, fcap, name, err, SCV_EINVAL,
                           "what a run may take of this host is the operator's (serve --host-limits), not a job's%s", "");
        } else if (!strcmp(name, "exec") || !strcmp(name, "hosts")) {
            if (!cfg->allow_exec)
                rc = field_err(field, fcap, name, err, SCV_EINVAL,
                               "external trainers and hostfiles are off in this service (serve --allow-exec)%s", "");
        } else if (!strcmp(name, "driver")) {
            if (strcmp(val, "elastic") && strcmp(val, "relaunch") && (strcmp(val, "exec") || !cfg->allow_exec))
                rc = field_err(field, fcap, name, err, SCV_EINVAL, "'%s': expected elastic or relaunch", val);
        } else if (!strcmp(name, "cluster")) {
            if (!val[0] || strlen(val) > 31 || strspn(val, "abcdefghijklmnopqrstuvwxyz0123456789-_") != strlen(val))
                rc = field_err(field, fcap, name, err, SCV_EINVAL, "'%s': expected a cluster name", val);
        } else if (!strcmp(name, "vm")) { /* the types: the run's own setup checks them against the catalog */
            if (!val[0])
                rc = field_err(field, fcap, name, err, SCV_EINVAL, "'%s': expected VM types a,b,... or all", val);
        } else if ((key->flags & SCV_OPT_PATH) && !(!strcmp(name, "dataset") && (!strcmp(val, "fashion-mnist") ||
                                                                               !strncmp(val, "synthetic:", 10)))) {
            if (!cfg->allow_paths && !path_inside(cfg->data_dir, val))
                rc = field_err(field, fcap, name, err, SCV_EINVAL,
                               "'%s' is not an existing path inside the service's data directory", val);
        } else if (!strcmp(name, "dataset")) {
            int64_t nsamp;
            if (strncmp(val, "synthetic:", 10) == 0 &&
                (scv_parse_i64(val + 10, &nsamp) || nsamp < 10 || nsamp > SCV_SYNTHETIC_MAX_N)) {
                char m[200]; /* the one bound of the trainer's parser (train.h), named */
                snprintf(m, sizeof m, "'%%s': expected synthetic:N with 10 <= N <= %lld (the limit "
                         "SCV_SYNTHETIC_MAX_N: its samples within %lld MiB per rank)",
                         (long long)SCV_SYNTHETIC_MAX_N, (long long)(SCV_SYNTHETIC_MAX_BYTES >> 20));
                rc = field_err(field, fcap, name, err, SCV_EINVAL, m, val);
            }
        } else if (!strcmp(name, "model")) {
            if (!scv_option_value_ok(key, val)) {
                char words[128], *q; /* the table's words, '|' read as ", " */
                snprintf(words, sizeof words, "'%%s': expected one of %s", key->values);
                for (q = words; (q = strchr(q, '|'));) *q = ',';
                rc = field_err(field, fcap, name, err, SCV_EINVAL, words, val);
            }
        } else if (!strcmp(name, "hidden")) {
            scv_net_spec spec = {.name = "mlp"};
            if (scv_net_parse_hidden(val, &spec, NULL))
                rc = field_err(field, fcap, name, err, SCV_EINVAL, "'%s': expected layer sizes such as 256,128", val);
        } else { /* the value as its row says: `scavenger run` and train read it so (search/jobopts.c) */
            scv_err e = {0};
            union { double d; int i; } shell; /* a shell key's own value (stall-timeout) */
            int st = scv_job_value_read(key, &p, &t, &shell, val, &e);
            if (st) rc = field_err(field, fcap, name, err, SCV_EINVAL, "%s", e.msg);
            if (!strcmp(name, "target-accuracy") || !strcmp(name, "target-loss")) has_target = 1;
        }
    }
    if (!rc && !has_target)
        rc = field_err(field, fcap, "target-accuracy", err, SCV_EINVAL,
                       "a job needs a target: target-accuracy (0 < A <= 1) or target-loss%s", "");
    if (!rc) rc = job_runnable(cfg, o, store, field, fcap, err);
    if (!rc && !(*out = cJSON_PrintUnformatted(o))) rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
    cJSON_Delete(o);
    return rc;
}

int svc_resume_check(const svc_config *cfg, scv_store *store, long long run, const char *stored, char *field,
                     size_t fcap, scv_err *err)
{
    field[0] = 0;
    cJSON *o = cJSON_Parse(stored ? stored : "");
    if (!o || !cJSON_IsObject(o)) {
        cJSON_Delete(o);
        snprintf(field, fcap, "job");
        return scv_err_set(err, SCV_EINFEASIBLE, "run %lld's stored job: not a JSON object", run);
    }
    /* the report directory: the service's own (WORK_DIR/reports/TAG) only; a CLI run's
     * --report is a path the service would write to */
    const cJSON *rep = cJSON_GetObjectItemCaseSensitive(o, "report");
    int rc = SCV_OK;
    if (rep) {
        char own[1200];
        int n = snprintf(own, sizeof own, "%s/reports/", cfg->work_dir);
        const char *v = cJSON_IsString(rep) ? rep->valuestring : "";
        const char *tag = !strncmp(v, own, (size_t)n) ? v + n : "";
        if (!tag[0] || strspn(tag, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != strlen(tag)) {
            snprintf(field, fcap, "report");
            rc = scv_err_set(err, SCV_EINFEASIBLE, "run %lld's stored job: field 'report': '%.300s' is not this "
                             "service's report directory (%s): resume it with `scavenger run --resume %lld`", run, v,
                             own, run);
        } else {
            cJSON_DeleteItemFromObjectCaseSensitive(o, "report");
        }
    }
    /* the host's bound is this service's (serve --host-limits), whatever the run stored */
    cJSON_DeleteItemFromObjectCaseSensitive(o, "host-limits");
    char *job = NULL, *rest = !rc ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (rc) return rc;
    if (!rest) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    scv_err e = {0};
    rc = svc_job_check(cfg, store, rest, &job, field, fcap, &e);
    free(rest);
    free(job);
    if (rc == SCV_ENOMEM) return scv_err_set(err, rc, "%s", e.msg);
    /* every refusal is of the stored run, not of the request: 422 */
    if (rc) return scv_err_set(err, SCV_EINFEASIBLE, "run %lld's stored job: %s (the same checks as a submitted job)",
                               run, e.msg);
    return SCV_OK;
}

int svc_resume_body(const char *body, double spent, char *budget, size_t cap, char *field, size_t fcap, scv_err *err)
{
    budget[0] = field[0] = 0;
    if (!body || strspn(body, " \t\r\n") == strlen(body)) return SCV_OK; /* no body: the stored job as it is */
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithOpts(body, &end, 1);
    int rc = SCV_OK;
    if (!cJSON_IsObject(o)) {
        snprintf(field, fcap, "body");
        rc = scv_err_set(err, SCV_EINVAL, "body: not a JSON object (a resume takes {} or {\"budget\": USD})");
    }
    for (const cJSON *it = rc ? NULL : o->child; it && !rc; it = it->next)
        if (strcmp(it->string, "budget"))
            rc = field_err(field, fcap, it->string, err, SCV_EINVAL,
                           "not a setting of a resume (it continues the stored job; only \"budget\" may change)%s", "");
    const cJSON *b = rc ? NULL : cJSON_GetObjectItemCaseSensitive(o, "budget");
    int n = 0;
    for (const cJSON *it = b ? o->child : NULL; it; it = it->next) n += !strcmp(it->string, "budget");
    if (!rc && n > 1) rc = field_err(field, fcap, "budget", err, SCV_EINVAL, "given twice%s", "");
    if (!rc && b && !(cJSON_IsNumber(b) && isfinite(b->valuedouble) && b->valuedouble > 0))
        rc = field_err(field, fcap, "budget", err, SCV_EINVAL, "expected a number of dollars above 0%s", "");
    if (!rc && b && isfinite(spent) && b->valuedouble <= spent) {
        char have[32], want[32], m[200];
        scv_fmt_usd(spent, have, sizeof have);
        scv_fmt_usd(b->valuedouble, want, sizeof want);
        snprintf(m, sizeof m, "%s is not above the %s the run has spent: it would stop again at once%%s", want, have);
        rc = field_err(field, fcap, "budget", err, SCV_EINFEASIBLE, m, "");
    }
    if (!rc && b && snprintf(budget, cap, "%.17g", b->valuedouble) >= (int)cap) budget[0] = 0;
    cJSON_Delete(o);
    return rc;
}
