/*
 * profile.c - reads the trainer's metrics files (JSON lines, parsed with cJSON), or the
 * same text in memory, into per-configuration summaries for the models: means of the times
 * and of the two squared gradient norms, after leaving out each run's warm-up iterations.
 * Iterations of a compressed exchange (optional "cf" > 1) also give the mean of their
 * compression kernel time (optional "t_compress"): the planner's Top-k options add it.
 * The result does not depend on the order of the files: a configuration measured in several
 * is one configuration of all their iterations (summed in an order of their values), the
 * configurations come sorted by (K, B, threads, VM type), and files whose job lines
 * describe different jobs (model, arch, dataset, VM type, sizes) are refused, naming both.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "io.h"
#include "metrics_line.h"

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

/* A job line's description into j (the VM type also into vm). */
static void take_job(const scv_ml_job *m, scv_job_info *j, char *vm, size_t vcap, int set_vm)
{
    if (m->model[0]) snprintf(j->model, sizeof j->model, "%s", m->model);
    if (m->arch[0]) snprintf(j->arch, sizeof j->arch, "%s", m->arch);
    if (m->vm[0]) snprintf(vm, vcap, "%s", m->vm);
    if (m->dataset[0]) snprintf(j->dataset, sizeof j->dataset, "%s", m->dataset);
    if (set_vm) snprintf(j->vm, sizeof j->vm, "%s", vm);
    j->n_params = m->params, j->n_train = m->n_train;
    j->input_floats = isfinite(m->input_floats) ? m->input_floats : 0; /* absent: unknown (the contract) */
    j->act_bytes = isfinite(m->act_bytes) ? m->act_bytes : 0;
    j->threads = isnan(m->threads) ? 0 : (int)m->threads;
}

/* The first job line a profile read (of any of its files) and where it was: every later
 * one must describe the same job, whatever the order of the files (the threads may differ:
 * a configuration at several thread counts measures the thread scaling). */
typedef struct {
    int seen;
    scv_ml_job job;
    char where[320];            /* "path:line" */
} job_ref;

static int num_same(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

/* SCV_OK when m (path:lineno) describes the job of r (recording it when r has none); else
 * an error naming both places and the first field they disagree on. */
static int job_check(job_ref *r, const scv_ml_job *m, const char *path, int lineno, scv_err *err)
{
    if (!r->seen) {
        r->seen = 1, r->job = *m;
        snprintf(r->where, sizeof r->where, "%s:%d", path, lineno);
        return SCV_OK;
    }
    const scv_ml_job *a = &r->job;
    const char *field = NULL;
    char va[96] = "", vb[96] = "";
    const struct {
        const char *name, *x, *y;
    } strs[] = {{"model", a->model, m->model}, {"arch", a->arch, m->arch}, {"dataset", a->dataset, m->dataset},
                {"vm", a->vm, m->vm}};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0] && !field; i++)
        if (strcmp(strs[i].x, strs[i].y))
            field = strs[i].name, snprintf(va, sizeof va, "'%s'", strs[i].x), snprintf(vb, sizeof vb, "'%s'", strs[i].y);
    const struct {
        const char *name;
        double x, y;
    } nums[] = {{"params", a->params, m->params}, {"n_train", a->n_train, m->n_train},
                {"input_floats", a->input_floats, m->input_floats}, {"act_bytes", a->act_bytes, m->act_bytes}};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0] && !field; i++)
        if (!num_same(nums[i].x, nums[i].y))
            field = nums[i].name, snprintf(va, sizeof va, "%.17g", nums[i].x), snprintf(vb, sizeof vb, "%.17g", nums[i].y);
    if (!field) return SCV_OK;
    return scv_err_set(err, SCV_EINVAL,
                       "%s and %s:%d: the job lines disagree on field '%s' (%s against %s): the files measure "
                       "different jobs or VM types; give the files of one job on one VM type", r->where, path,
                       lineno, field, va, vb);
}

int scv_job_load(const char *path, scv_job_info *job, scv_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f) return scv_err_set(err, SCV_ENOTFOUND, "%s: cannot open: %s", path, strerror(errno));
    char *line = NULL, vm[64] = "";
    size_t cap = 0;
    int rc = scv_err_set(err, SCV_EPARSE, "%s: no job line", path), lineno = 0;
    scv_metrics_line m;
    while (rc && getline(&line, &cap, f) > 0) {
        lineno++;
        scv_err le = {0};
        int lrc = scv_metrics_line_parse(line, path, lineno, &m, &le);
        if (m.type != SCV_ML_JOB) continue; /* only the job line is read here */
        memset(job, 0, sizeof *job);
        if (lrc) rc = scv_err_set(err, lrc, "%s", le.msg);
        else take_job(&m.u.job, job, vm, sizeof vm, 1), rc = SCV_OK;
    }
    free(line);
    fclose(f);
    return rc;
}

/* Reads one metrics stream (a file or a text in memory; path names it in errors),
 * appending iteration records; fills job from its "job" line. Every line goes through the
 * strict reader (io/metrics_line.c): the first bad one stops it. */
static int read_stream(FILE *f, const char *path, rec **rs, size_t *n, size_t *cap, int *seg,
                       scv_profile *prof, job_ref *ref, scv_err *err)
{
    char *line = NULL, vm[64] = "";
    size_t lcap = 0;
    int lineno = 0, rc = SCV_OK, lastK = -1, lastB = -1, threads = 0;
    scv_ml_reader rd; /* iter increases, samples_seen and ts do not decrease (since the job line) */
    scv_ml_reader_init(&rd, 0);
    double lat = NAN, lat_K = 0; /* the last "latency" line's seconds and workers */
    scv_metrics_line m;
    (*seg)++;
    ssize_t got;
    while (!rc && (got = getline(&line, &lcap, f)) > 0) {
        lineno++;
        if ((rc = scv_metrics_line_next_n(&rd, line, (size_t)got, path, lineno, &m, err))) break;
        if (m.type == SCV_ML_JOB) {
            if ((rc = job_check(ref, &m.u.job, path, lineno, err))) break;
            take_job(&m.u.job, &prof->job, vm, sizeof vm, !prof->has_job);
            prof->has_job = 1;
            threads = isnan(m.u.job.threads) ? 0 : (int)m.u.job.threads;
            lat = NAN;
        } else if (m.type == SCV_ML_LATENCY) { /* the trainer's probe at a segment's start */
            lat_K = m.u.latency.workers, lat = m.u.latency.seconds;
        } else if (m.type == SCV_ML_ITER) {
            const scv_ml_iter *x = &m.u.iter;
            rec r = {.tc = x->t_compute, .tm = x->t_comm, .ti = x->t_iter, .gl = x->g_local, .gg = x->g_global,
                     .ep = isnan(x->epoch_progress) ? 0 : x->epoch_progress, .cf = x->cf, .tz = x->t_compress,
                     .threads = threads, .K = (int)x->workers, .B = (int)x->batch};
            snprintf(r.vm, sizeof r.vm, "%s", vm);
            r.tl = x->workers == lat_K ? lat : NAN;
            if (r.K != lastK || r.B != lastB) (*seg)++;
            lastK = r.K, lastB = r.B;
            r.seg = *seg;
            if (*n == *cap) {
                *cap = *cap ? 2 * *cap : 1024;
                rec *nr = realloc(*rs, *cap * sizeof(rec));
                if (!nr) {
                    rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
                    break;
                }
                *rs = nr;
            }
            (*rs)[(*n)++] = r;
        }
    }
    free(line);
    if (!rc && ferror(f)) rc = scv_err_set(err, SCV_EIO, "%s: read error", path);
    return rc;
}

static int read_file(const char *path, rec **rs, size_t *n, size_t *cap, int *seg,
                     scv_profile *prof, job_ref *ref, scv_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f) return scv_err_set(err, SCV_ENOTFOUND, "%s: cannot open: %s", path, strerror(errno));
    int rc = read_stream(f, path, rs, n, cap, seg, prof, ref, err);
    fclose(f);
    return rc;
}

/* Reads text i of a profile given in memory, named label[i] in errors. */
static int read_text(const char *text, const char *label, size_t i, rec **rs, size_t *n, size_t *cap,
                     int *seg, scv_profile *prof, job_ref *ref, scv_err *err)
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
    int rc = read_stream(f, name, rs, n, cap, seg, prof, ref, err);
    fclose(f);
    return rc;
}

/* A total order on numbers with NaN last (equal to NaN). */
static int cmp_num(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) - isnan(b);
    return (a > b) - (a < b);
}

/* Records by their values: a configuration's sums taken in this order do not depend on the
 * order of the files or of their lines (floating-point addition is not associative). */
static int cmp_rec(const void *pa, const void *pb)
{
    const rec *a = *(const rec *const *)pa, *b = *(const rec *const *)pb;
    const double x[] = {a->ti, a->tc, a->tm, a->gl, a->gg, a->ep, a->cf, a->tz, a->tl};
    const double y[] = {b->ti, b->tc, b->tm, b->gl, b->gg, b->ep, b->cf, b->tz, b->tl};
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) {
        int c = cmp_num(x[i], y[i]);
        if (c) return c;
    }
    return 0;
}

int scv_profile_models_threads(const scv_profile *p)
{
    int best = 0;
    size_t best_n = 0;
    for (size_t i = 0; i < p->n; i++) {
        int t = p->configs[i].threads;
        size_t n = 0;
        if (t <= 0) continue;
        for (size_t k = 0; k < p->n; k++) n += p->configs[k].threads == t;
        if (n > best_n || (n == best_n && t < best)) best = t, best_n = n;
    }
    return best;
}

/* Configurations in their canonical order: by K, B, threads, VM type. */
static int cmp_config(const void *pa, const void *pb)
{
    const scv_config_stats *a = pa, *b = pb;
    if (a->workers != b->workers) return a->workers < b->workers ? -1 : 1;
    if (a->batch != b->batch) return a->batch < b->batch ? -1 : 1;
    if (a->threads != b->threads) return a->threads < b->threads ? -1 : 1;
    return strcmp(a->vm, b->vm);
}

/* Summarises the kept records of one configuration (x, m of them, sorted by cmp_rec):
 * mean times (total time over iterations is what the time to target depends on; a CPU
 * quota's throttling stalls are systematic, not outliers) and mean squared norms. */
static void summarise(const rec *const *r, size_t m, scv_config_stats *c)
{
    double tc = 0, tm = 0, ti = 0, sl = 0, sg = 0, tz = 0, tl = 0;
    size_t ng = 0, nz = 0, nl = 0;
    for (size_t i = 0; i < m; i++) {
        const rec *x = r[i];
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
    job_ref ref = {0};
    if (!p || !list) {
        free(p), free(list);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    char *save = NULL;
    if (texts)
        for (size_t i = 0; i < n_texts && !rc; i++) rc = read_text(texts[i], label, i, &rs, &n, &cap, &seg, p, &ref, err);
    else
        for (char *tok = strtok_r(list, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save))
            rc = read_file(tok, &rs, &n, &cap, &seg, p, &ref, err);
    if (texts) paths = label; /* what the errors below name */
    if (!rc && n == 0) rc = scv_err_set(err, SCV_EINVAL, "%s: no iteration lines", paths);
    const rec **keep = rc ? NULL : malloc(sizeof(rec *) * n);
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
    /* group the rest by (vm, K, B, threads): all records of a configuration, from every file
     * that measured it, pooled (in an order of their values, not of the files) */
    char *done = warm ? calloc(n, 1) : NULL;
    for (size_t i = 0; done && i < n && !rc; i++) {
        if (done[i] || warm[i]) continue;
        size_t m = 0;
        for (size_t j = i; j < n; j++)
            if (!warm[j] && !done[j] && rs[j].K == rs[i].K && rs[j].B == rs[i].B &&
                rs[j].threads == rs[i].threads && !strcmp(rs[j].vm, rs[i].vm))
                keep[m++] = &rs[j], done[j] = 1;
        qsort(keep, m, sizeof *keep, cmp_rec);
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
        summarise(keep, m, c);
    }
    /* in a canonical order, whatever the order of the files; the job's threads: the models'
     * (scv_profile_models_threads; the configurations carry each their own) */
    if (!rc && p->n) {
        qsort(p->configs, p->n, sizeof *p->configs, cmp_config);
        p->job.threads = scv_profile_models_threads(p);
    }
    if (!rc && p->n == 0)
        rc = scv_err_set(err, SCV_EINVAL, "%s: too few iterations (all are warm-up)", paths);
    free(keep), free(warm), free(done), free(rs), free(list);
    if (rc) scv_profile_free(p);
    else *out = p;
    return rc;
}

const scv_config_stats *scv_profile_main(const scv_profile *p)
{
    const scv_config_stats *best = NULL;
    for (size_t i = 0; p && i < p->n; i++)
        if (!best || p->configs[i].n_iters > best->n_iters) best = &p->configs[i];
    return best;
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
    scv_metrics_line m;
    while (rc == SCV_ENOTFOUND && getline(&line, &lcap, f) > 0) {
        lineno++;
        int bad = scv_metrics_line_parse(line, path, lineno, &m, err);
        if (bad) {
            rc = bad;
            break;
        }
        if (m.type == SCV_ML_ITER) {
            if (!isnan(m.u.iter.batch)) B = (int)m.u.iter.batch;
        } else if (m.type == SCV_ML_EVAL && strcmp(m.u.eval.set, "subset")) { /* subset evaluations are not
                                                                                  the target's measure */
            double acc = m.u.eval.test_accuracy, ep = m.u.eval.epoch_progress;
            if (!isnan(acc)) best = fmax(best, acc);
            if (acc >= accuracy && B > 0 && !isnan(ep)) {
                *epochs = ep;
                *batch = B;
                rc = SCV_OK;
            }
        }
    }
    free(line);
    fclose(f);
    if (rc == SCV_ENOTFOUND)
        scv_err_set(err, SCV_ENOTFOUND, "%s: the run never reached accuracy %.4f (best %.4f)",
                    path, accuracy, best);
    return rc;
}
