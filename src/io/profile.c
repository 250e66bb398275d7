/*
 * profile.c - reads the trainer's metrics files (JSON lines, parsed with cJSON), or the
 * same text in memory, into per-configuration summaries for the models: means of the times
 * and of the two squared gradient norms, after leaving out each run's warm-up iterations.
 * Iterations of a compressed exchange (optional "cf" > 1) also give the mean of their
 * compression kernel time (optional "t_compress"): the planner's Top-k options add it.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "io.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int seg, K, B, threads;
    char vm[64];
    double tc, tm, ti, gl, gg, ep;
    double cf, tz;              /* the exchange's factor and compression seconds (NaN: none) */
    double tl;                  /* the segment's latency probe at this K (NaN: none) */
} rec;

void scv_profile_free(scv_profile *p)
{
    if (!p) return;
    free(p->configs);
    free(p);
}

static double num_field(const cJSON *o, const char *k, int *ok)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (cJSON_IsNumber(v)) return v->valuedouble;
    if (cJSON_IsNull(v)) return NAN;
    *ok = 0;
    return NAN;
}

/* A number field of o checked against [lo, hi] (and integral when asked): absent or null
 * gives NaN, and absent clears *ok (the caller says what the line lacks); a field of another
 * type, or a number out of range (1e400 reads as infinity), is an error naming the file,
 * line and field. */
static int num_in(const cJSON *o, const char *k, double lo, double hi, int integral, double *v,
                  int *ok, const char *path, int lineno, scv_err *err)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, k);
    if (f && !cJSON_IsNumber(f) && !cJSON_IsNull(f))
        return scv_err_set(err, SCV_EPARSE, "%s:%d: field '%s' is not a number (%s%g..%g, or null)", path, lineno,
                           k, integral ? "an integer in " : "", lo, hi);
    *v = num_field(o, k, ok);
    if (isnan(*v)) return SCV_OK;
    if (!(*v >= lo && *v <= hi) || (integral && *v != floor(*v)))
        return scv_err_set(err, SCV_EPARSE, "%s:%d: field '%s' = %g is out of range (%s%g..%g)",
                           path, lineno, k, *v, integral ? "an integer in " : "", lo, hi);
    return SCV_OK;
}

/* Ranges of the metrics' numbers (anything beyond is a damaged or hostile file). */
#define MAX_WORKERS 65536.0
#define MAX_BATCH 1073741824.0  /* 2^30 */
#define MAX_SECONDS 1e7         /* one iteration or evaluation */
#define MAX_COUNT 1e15          /* parameters, bytes, samples */
#define MAX_SQNORM 1e300
#define MAX_EPOCHS 1e9

static void str_field(const cJSON *o, const char *k, char *dst, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (cJSON_IsString(v) && v->valuestring) snprintf(dst, cap, "%s", v->valuestring);
}

/* Fills j from a "job" line; the VM type also goes to vm. Returns SCV_EPARSE naming the
 * file and line when fields lack or lie out of range. */
static int parse_job(const cJSON *o, scv_job_info *j, char *vm, size_t vcap, int set_vm,
                     const char *path, int lineno, scv_err *err)
{
    int ok = 1, opt = 1, rc;
    double th;
    str_field(o, "model", j->model, sizeof j->model);
    str_field(o, "arch", j->arch, sizeof j->arch);
    str_field(o, "vm", vm, vcap);
    str_field(o, "dataset", j->dataset, sizeof j->dataset);
    if (set_vm) snprintf(j->vm, sizeof j->vm, "%s", vm);
    if ((rc = num_in(o, "params", 1, MAX_COUNT, 0, &j->n_params, &ok, path, lineno, err)) ||
        (rc = num_in(o, "act_bytes", 0, MAX_COUNT, 0, &j->act_bytes, &ok, path, lineno, err)) ||
        (rc = num_in(o, "n_train", 1, MAX_COUNT, 0, &j->n_train, &ok, path, lineno, err)) ||
        (rc = num_in(o, "input_floats", 0, MAX_COUNT, 0, &j->input_floats, &ok, path, lineno, err)) ||
        (rc = num_in(o, "threads", 0, 4096, 1, &th, &opt, path, lineno, err))) /* optional */
        return rc;
    j->threads = isnan(th) ? 0 : (int)th;
    if (!isfinite(j->act_bytes)) j->act_bytes = 0;
    if (!ok || !(j->n_params > 0) || !(j->n_train > 0))
        return scv_err_set(err, SCV_EPARSE, "%s:%d: job line lacks params, act_bytes or n_train",
                           path, lineno);
    return SCV_OK;
}

int scv_job_load(const char *path, scv_job_info *job, scv_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f) return scv_err_set(err, SCV_ENOTFOUND, "%s: cannot open: %s", path, strerror(errno));
    char *line = NULL, vm[64] = "";
    size_t cap = 0;
    int rc = scv_err_set(err, SCV_EPARSE, "%s: no job line", path), lineno = 0;
    while (rc && getline(&line, &cap, f) > 0) {
        lineno++;
        cJSON *o = cJSON_Parse(line);
        char type[16] = "";
        if (o) str_field(o, "type", type, sizeof type);
        if (o && !strcmp(type, "job")) {
            memset(job, 0, sizeof *job);
            rc = parse_job(o, job, vm, sizeof vm, 1, path, lineno, err);
        }
        cJSON_Delete(o);
    }
    free(line);
    fclose(f);
    return rc;
}

/* Reads one metrics stream (a file or a text in memory; path names it in errors),
 * appending iteration records; fills job from its "job" line. */
static int read_stream(FILE *f, const char *path, rec **rs, size_t *n, size_t *cap, int *seg,
                       scv_profile *prof, scv_err *err)
{
    char *line = NULL, vm[64] = "";
    size_t lcap = 0;
    int lineno = 0, rc = SCV_OK, lastK = -1, lastB = -1, threads = 0;
    double last_iter = -1, last_iter_line = 0; /* the previous iter line's "iter" since the job line */
    double lat = NAN, lat_K = 0; /* the last "latency" line's seconds and workers */
    (*seg)++;
    while (getline(&line, &lcap, f) > 0) {
        lineno++;
        if (strspn(line, " \t\r\n") == strlen(line)) continue;
        cJSON *o = cJSON_Parse(line);
        if (!o) {
            rc = scv_err_set(err, SCV_EPARSE, "%s:%d: not a JSON object", path, lineno);
            break;
        }
        char type[16] = "";
        str_field(o, "type", type, sizeof type);
        int ok = 1;
        if (!strcmp(type, "job")) {
            rc = parse_job(o, &prof->job, vm, sizeof vm, !prof->has_job, path, lineno, err);
            prof->has_job = 1;
            const cJSON *th = cJSON_GetObjectItemCaseSensitive(o, "threads"); /* ranged by parse_job, */
            threads = !rc && cJSON_IsNumber(th) ? (int)th->valuedouble : 0; /* which failed otherwise */
            last_iter = -1, lat = NAN;
        } else if (!strcmp(type, "latency")) { /* the trainer's probe at a segment's start */
            (void)((rc = num_in(o, "workers", 1, MAX_WORKERS, 1, &lat_K, &ok, path, lineno, err)) ||
                   (rc = num_in(o, "seconds", 0, MAX_SECONDS, 0, &lat, &ok, path, lineno, err)));
            if (!rc && !ok)
                rc = scv_err_set(err, SCV_EPARSE, "%s:%d: latency line lacks field '%s' (required: workers, seconds)",
                                 path, lineno, isnan(lat_K) ? "workers" : "seconds");
        } else if (!strcmp(type, "iter")) {
            rec r = {0};
            double K, B, it;
            int it_ok = 1; /* "iter" is optional here (hand-written metrics); when given it must grow */
            (void)((rc = num_in(o, "iter", 0, MAX_COUNT, 1, &it, &it_ok, path, lineno, err)) ||
                   (rc = num_in(o, "workers", 1, MAX_WORKERS, 1, &K, &ok, path, lineno, err)) ||
                   (rc = num_in(o, "batch", 1, MAX_BATCH, 1, &B, &ok, path, lineno, err)) ||
                   (rc = num_in(o, "t_compute", 0, MAX_SECONDS, 0, &r.tc, &ok, path, lineno, err)) ||
                   (rc = num_in(o, "t_comm", 0, MAX_SECONDS, 0, &r.tm, &ok, path, lineno, err)) ||
                   (rc = num_in(o, "t_iter", 0, MAX_SECONDS, 0, &r.ti, &ok, path, lineno, err)) ||
                   (rc = num_in(o, "grad_sqnorm_local_mean", 0, MAX_SQNORM, 0, &r.gl, &ok, path,
                                lineno, err)) ||
                   (rc = num_in(o, "grad_sqnorm_global", 0, MAX_SQNORM, 0, &r.gg, &ok, path,
                                lineno, err)) ||
                   (rc = num_in(o, "epoch_progress", 0, MAX_EPOCHS, 0, &r.ep, &ok, path, lineno,
                                err)));
            int opt = 1; /* optional: the exchange's, with communication efficiency on */
            (void)(!rc && ((rc = num_in(o, "cf", 0, 1e12, 0, &r.cf, &opt, path, lineno, err)) ||
                           (rc = num_in(o, "t_compress", 0, MAX_SECONDS, 0, &r.tz, &opt, path, lineno, err))));
            snprintf(r.vm, sizeof r.vm, "%s", vm);
            r.threads = threads;
            r.tl = K == lat_K ? lat : NAN;
            if (!rc && (!ok || isnan(K) || isnan(B) || isnan(r.tc) || isnan(r.tm) || isnan(r.ti))) {
                const double got[] = {K, B, r.tc, r.tm, r.ti};
                const char *need[] = {"workers", "batch", "t_compute", "t_comm", "t_iter"};
                int miss = 0;
                while (miss < 4 && !isnan(got[miss])) miss++;
                rc = scv_err_set(err, SCV_EPARSE, "%s:%d: iteration line lacks field '%s' (required: workers, batch, "
                                 "t_compute, t_comm, t_iter)", path, lineno, need[miss]);
            }
            if (!rc && !isnan(it)) {
                if (it <= last_iter)
                    rc = scv_err_set(err, SCV_EPARSE,
                                     "%s:%d: field 'iter' = %.0f does not follow line %.0f's %.0f (iterations must "
                                     "increase)", path, lineno, it, last_iter_line, last_iter);
                last_iter = it, last_iter_line = lineno;
            }
            r.K = rc ? 0 : (int)K;
            r.B = rc ? 0 : (int)B;
            if (isnan(r.ep)) r.ep = 0;
            if (r.K != lastK || r.B != lastB) (*seg)++;
            lastK = r.K, lastB = r.B;
            r.seg = *seg;
            if (!rc) {
                if (*n == *cap) {
                    *cap = *cap ? 2 * *cap : 1024;
                    rec *nr = realloc(*rs, *cap * sizeof(rec));
                    if (!nr) rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
                    else *rs = nr;
                }
                if (!rc) (*rs)[(*n)++] = r;
            }
        }
        cJSON_Delete(o);
        if (rc) break;
    }
    free(line);
    if (!rc && ferror(f)) rc = scv_err_set(err, SCV_EIO, "%s: read error", path);
    return rc;
}

static int read_file(const char *path, rec **rs, size_t *n, size_t *cap, int *seg,
                     scv_profile *prof, scv_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f) return scv_err_set(err, SCV_ENOTFOUND, "%s: cannot open: %s", path, strerror(errno));
    int rc = read_stream(f, path, rs, n, cap, seg, prof, err);
    fclose(f);
    return rc;
}

/* Reads text i of a profile given in memory, named label[i] in errors. */
static int read_text(const char *text, const char *label, size_t i, rec **rs, size_t *n, size_t *cap,
                     int *seg, scv_profile *prof, scv_err *err)
{
    char name[160];
    snprintf(name, sizeof name, "%s[%zu]", label, i);
    if (!text) return scv_err_set(err, SCV_EINVAL, "%s: no text", name);
    size_t len = strlen(text);
    if (!len) { /* fmemopen refuses an empty buffer; no lines */
        (*seg)++;
        return SCV_OK;
    }
    FILE *f = fmemopen((void *)text, len, "r");
    if (!f) return scv_err_set(err, SCV_ENOMEM, "%s: cannot read: %s", name, strerror(errno));
    int rc = read_stream(f, name, rs, n, cap, seg, prof, err);
    fclose(f);
    return rc;
}

/* Summarises the kept records of one configuration: mean times (total time over
 * iterations is what the time to target depends on; a CPU quota's throttling stalls are
 * systematic, not outliers) and mean squared norms. */
static void summarise(const rec *r, const size_t *keep, size_t m, scv_config_stats *c)
{
    double tc = 0, tm = 0, ti = 0, sl = 0, sg = 0, tz = 0, tl = 0;
    size_t ng = 0, nz = 0, nl = 0;
    for (size_t i = 0; i < m; i++) {
        const rec *x = &r[keep[i]];
        tc += x->tc, tm += x->tm, ti += x->ti;
        if (isfinite(x->gl) && isfinite(x->gg)) sl += x->gl, sg += x->gg, ng++;
        if (x->cf > 1 && isfinite(x->tz)) tz += x->tz, nz++;
        if (isfinite(x->tl)) tl += x->tl, nl++;
        c->epoch_progress = fmax(c->epoch_progress, x->ep);
    }
    c->t_compute = tc / (double)m;
    c->t_comm = tm / (double)m;
    c->t_iter = ti / (double)m;
    c->g_local = ng ? sl / (double)ng : 0;
    c->g_global = ng ? sg / (double)ng : 0;
    c->n_iters = (int)m;
    c->t_compress = nz ? tz / (double)nz : 0;
    c->n_compressed = (int)nz;
    c->t_latency = nl ? tl / (double)nl : 0;
}

/* The files of paths (comma-separated), or else the n texts named label[i]. */
static int profile_load(const char *paths, const char *const *texts, size_t n_texts, const char *label,
                        scv_profile **out, scv_err *err)
{
    *out = NULL;
    scv_profile *p = calloc(1, sizeof *p);
    char *list = strdup(paths ? paths : "");
    rec *rs = NULL;
    size_t n = 0, cap = 0;
    int seg = 0, rc = SCV_OK;
    if (!p || !list) {
        free(p), free(list);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    char *save = NULL;
    if (texts)
        for (size_t i = 0; i < n_texts && !rc; i++) rc = read_text(texts[i], label, i, &rs, &n, &cap, &seg, p, err);
    else
        for (char *tok = strtok_r(list, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save))
            rc = read_file(tok, &rs, &n, &cap, &seg, p, err);
    if (texts) paths = label; /* what the errors below name */
    if (!rc && n == 0) rc = scv_err_set(err, SCV_EINVAL, "%s: no iteration lines", paths);
    size_t *keep = rc ? NULL : malloc(sizeof(size_t) * n);
    if (!rc && !keep) rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
    /* mark warm-up records: the first max(3, 10%) of each segment */
    char *warm = rc ? NULL : calloc(n, 1);
    for (size_t i = 0; warm && i < n;) {
        size_t j = i;
        while (j < n && rs[j].seg == rs[i].seg) j++;
        size_t w = (j - i) / 10 > 3 ? (j - i) / 10 : 3;
        for (size_t k = i; k < j && k < i + w; k++) warm[k] = 1;
        i = j;
    }
    /* group the rest by (vm, K, B) in order of first appearance */
    char *done = warm ? calloc(n, 1) : NULL;
    for (size_t i = 0; done && i < n && !rc; i++) {
        if (done[i] || warm[i]) continue;
        size_t m = 0;
        for (size_t j = i; j < n; j++)
            if (!warm[j] && !done[j] && rs[j].K == rs[i].K && rs[j].B == rs[i].B &&
                rs[j].threads == rs[i].threads && !strcmp(rs[j].vm, rs[i].vm))
                keep[m++] = j, done[j] = 1;
        scv_config_stats *nc = realloc(p->configs, (p->n + 1) * sizeof *nc);
        if (!nc) {
            rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
            break;
        }
        p->configs = nc;
        scv_config_stats *c = &p->configs[p->n++];
        memset(c, 0, sizeof *c);
        snprintf(c->vm, sizeof c->vm, "%s", rs[i].vm);
        c->workers = rs[i].K;
        c->batch = rs[i].B;
        c->threads = rs[i].threads;
        summarise(rs, keep, m, c);
    }
    if (!rc && p->n == 0)
        rc = scv_err_set(err, SCV_EINVAL, "%s: too few iterations (all are warm-up)", paths);
    free(keep), free(warm), free(done), free(rs), free(list);
    if (rc) scv_profile_free(p);
    else *out = p;
    return rc;
}

int scv_profile_load(const char *paths, scv_profile **out, scv_err *err)
{
    return profile_load(paths, NULL, 0, NULL, out, err);
}

int scv_profile_load_texts(const char *const *texts, size_t n, const char *label, scv_profile **out,
                           scv_err *err)
{
    if (!texts && n) {
        *out = NULL;
        return scv_err_set(err, SCV_EINVAL, "%s: no texts", label ? label : "metrics");
    }
    static const char *const none[1] = {NULL};
    return profile_load(NULL, texts ? texts : none, n, label ? label : "metrics", out, err);
}

int scv_profile_target(const char *path, double accuracy, double *epochs, int *batch, scv_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f) return scv_err_set(err, SCV_ENOTFOUND, "%s: cannot open: %s", path, strerror(errno));
    char *line = NULL;
    size_t lcap = 0;
    int lineno = 0, rc = SCV_ENOTFOUND, B = 0;
    double best = 0;
    while (rc == SCV_ENOTFOUND && getline(&line, &lcap, f) > 0) {
        lineno++;
        cJSON *o = cJSON_Parse(line);
        if (!o) {
            if (strspn(line, " \t\r\n") != strlen(line))
                rc = scv_err_set(err, SCV_EPARSE, "%s:%d: not a JSON object", path, lineno);
            continue;
        }
        char type[16] = "";
        str_field(o, "type", type, sizeof type);
        int ok = 1, bad = SCV_OK;
        double b = NAN, acc = NAN, ep = NAN;
        char set[16] = "";
        str_field(o, "set", set, sizeof set); /* subset evaluations are not the target's measure */
        if (!strcmp(type, "iter")) {
            bad = num_in(o, "batch", 1, MAX_BATCH, 1, &b, &ok, path, lineno, err);
            if (!bad && !isnan(b)) B = (int)b;
        } else if (!strcmp(type, "eval") && strcmp(set, "subset")) {
            (void)((bad = num_in(o, "test_accuracy", 0, 1, 0, &acc, &ok, path, lineno, err)) ||
                   (bad = num_in(o, "epoch_progress", 0, MAX_EPOCHS, 0, &ep, &ok, path, lineno, err)));
            if (!bad && !isnan(acc)) best = fmax(best, acc);
            if (!bad && ok && acc >= accuracy && B > 0 && !isnan(ep)) {
                *epochs = ep;
                *batch = B;
                rc = SCV_OK;
            }
        }
        if (bad) rc = bad;
        cJSON_Delete(o);
    }
    free(line);
    fclose(f);
    if (rc == SCV_ENOTFOUND)
        scv_err_set(err, SCV_ENOTFOUND, "%s: the run never reached accuracy %.4f (best %.4f)",
                    path, accuracy, best);
    return rc;
}
