/*
 * stream.c - the streaming model of ScaDLES (Tyagi & Swany, IEEE BigData 2022; see
 * stream.h). Units: seconds (stream time tau, from the stream's start), samples, samples/s.
 *
 * Arrivals. Worker k's rate S_k(tau) is piecewise constant: S_k = r_ik on [t_i, t_(i+1))
 * (t_0 = 0; a constant rate is one piece), so its arrivals
 *     arrived_k(tau) = integral_0^tau S_k = a_ik + r_ik (tau - t_i),  a_ik = arrived_k(t_i),
 * of which floor(arrived_k) are whole samples.
 * Buffers. With C_k the samples worker k has consumed and D_k those its buffer dropped,
 *     buffer_k(tau) = floor(arrived_k(tau)) - C_k - D_k(tau).
 * Truncation keeps at most cap_k = b_max_k samples (the newest): between two steps the
 * buffer only grows, so D_k(tau) = max(D_k(last step), floor(arrived_k(tau)) - C_k - cap_k)
 * is exact at any tau after the last step, however seldom it is looked at (memory O(b_max),
 * i.e. O(S_k) per step interval). Persistence keeps everything (cap = infinity, D = 0;
 * memory O(S_k T) after T seconds of surplus).
 * A step at tau takes b_k = min(buffer_k(tau'), b_max_k) from every worker, where
 * tau' = tau when every buffer_k(tau) >= b_min_k, else
 *     tau' = max over the short k of arrived_k^-1(C_k + D_k + b_min_k)
 * (a short buffer drops nothing while it fills, as b_min <= cap), the earliest time every
 * buffer holds b_min: the workers wait tau' - tau. The full-batch baseline (conventional
 * synchronous SGD) is b_min_k = b_max_k = worker k's even share of B: every step waits for
 * the slowest stream to deliver a full share.
 * Everything is a deterministic function of (rates, policy, the consume history, tau), so
 * ranks that see the same tau compute the same batches.
 */
#define _POSIX_C_SOURCE 200809L /* getline */
#include "stream.h"
#include "sched.h"
#include "train.h"
#include "../core/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest rate accepted (samples/s) and the longest stream time planned (s, 31 years):
 * far above any real stream and run, and together they keep every sample count under 1e18,
 * inside int64. */
#define MAX_RATE 1e9
#define MAX_TAU 1e9
/* Whole samples of a real count, saturated (a count past 2^62 is not a run's). */
static int64_t whole(double x) { return x < 4.0e18 ? (int64_t)floor(x) : (int64_t)4000000000000000000LL; }

struct scv_stream_rates {
    int K;          /* workers */
    int n;          /* pieces */
    double *t;      /* n start times: t[0] = 0 < t[1] < ... */
    double *r;      /* n x K rates: r[i K + k] on [t_i, t_(i+1)) */
    double *a;      /* n x K: arrived_k(t_i) */
};

scv_stream_policy scv_stream_policy_default(void)
{
    return (scv_stream_policy){.b_min = 8, .b_max = 1024, .buffer = SCV_STREAM_TRUNCATE, .full_batch = 0};
}

void scv_stream_rates_free(scv_stream_rates *r)
{
    if (!r) return;
    free(r->t);
    free(r->r);
    free(r->a);
    free(r);
}

int scv_stream_rates_workers(const scv_stream_rates *r) { return r ? r->K : 0; }

/* The piece holding tau: the last i with t_i <= tau (0 before 0). */
static int piece(const scv_stream_rates *r, double tau)
{
    int lo = 0, hi = r->n - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (r->t[mid] <= tau) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

double scv_stream_rate(const scv_stream_rates *r, int k, double tau)
{
    if (!(tau >= 0) || k < 0 || k >= r->K) return 0;
    return r->r[(size_t)piece(r, tau) * (size_t)r->K + (size_t)k];
}

double scv_stream_arrived(const scv_stream_rates *r, int k, double tau)
{
    if (!(tau > 0) || k < 0 || k >= r->K) return 0;
    size_t i = (size_t)piece(r, tau), j = i * (size_t)r->K + (size_t)k;
    return r->a[j] + r->r[j] * (tau - r->t[i]);
}

double scv_stream_reach(const scv_stream_rates *r, int k, double tau0, double n)
{
    if (tau0 < 0) tau0 = 0;
    if (scv_stream_arrived(r, k, tau0) >= n) return tau0;
    const size_t K = (size_t)r->K;
    for (int i = piece(r, tau0); i < r->n; i++) {
        const int last = i + 1 == r->n;
        if (!last && r->a[(size_t)(i + 1) * K + (size_t)k] < n) continue; /* not within this piece */
        double rate = r->r[(size_t)i * K + (size_t)k];
        if (!(rate > 0)) return INFINITY; /* only the last piece can get here with rate 0 */
        double s = r->t[i] > tau0 ? r->t[i] : tau0;
        double tau = s + (n - scv_stream_arrived(r, k, s)) / rate;
        if (!last && tau > r->t[i + 1]) tau = r->t[i + 1];
        /* rounding may leave arrived(tau) a hair under n, or tau an ulp late: move to the
         * first double that delivers n (arrived is monotone in tau, in floating point too;
         * a few ulps at most, the bounds keep it finite whatever happens) */
        for (int step = 0; step < 1000 && scv_stream_arrived(r, k, tau) < n; step++) tau = nextafter(tau, INFINITY);
        for (int step = 0; step < 1000 && tau > s && scv_stream_arrived(r, k, nextafter(tau, 0)) >= n; step++)
            tau = nextafter(tau, 0);
        return tau;
    }
    return INFINITY;
}

/* ---- parsing ---- */

/* Appends a piece (time t, K rates); 0 or SCV_ENOMEM. */
static int add_piece(scv_stream_rates *r, int *cap, double t, const double *rates)
{
    if (r->n == *cap) {
        int nc = *cap ? 2 * *cap : 16;
        double *nt = realloc(r->t, sizeof(double) * (size_t)nc);
        if (nt) r->t = nt;
        double *nr = nt ? realloc(r->r, sizeof(double) * (size_t)nc * (size_t)r->K) : NULL;
        if (nr) r->r = nr;
        double *na = nr ? realloc(r->a, sizeof(double) * (size_t)nc * (size_t)r->K) : NULL;
        if (na) r->a = na;
        if (!na) return SCV_ENOMEM;
        *cap = nc;
    }
    const size_t K = (size_t)r->K, i = (size_t)r->n;
    r->t[i] = t;
    for (size_t k = 0; k < K; k++) {
        r->r[i * K + k] = rates[k];
        r->a[i * K + k] = i ? r->a[(i - 1) * K + k] + r->r[(i - 1) * K + k] * (t - r->t[i - 1]) : 0;
    }
    r->n++;
    return SCV_OK;
}

/* A number token [s, e) (strtod over all of it, finite); 0 when it is not one. */
static int number(const char *s, const char *e, double *v)
{
    char buf[64];
    size_t n = (size_t)(e - s);
    if (n == 0 || n >= sizeof buf) return 0;
    memcpy(buf, s, n);
    buf[n] = 0;
    return scv_parse_f64(buf, v) == SCV_OK; /* finite and decimal: never hex */
}

/* 1 when spec reads as a list of numbers (digits, signs, points, exponents, commas). */
static int looks_like_list(const char *spec)
{
    if (!*spec) return 0;
    for (const char *p = spec; *p; p++)
        if (!strchr("0123456789.,eE+- ", *p)) return 0;
    return 1;
}

static int parse_list(const char *spec, int K, scv_stream_rates *r, scv_err *err)
{
    int n = 1;
    for (const char *p = spec; *p; p++) n += *p == ',';
    if (K > 0 && n != K)
        return scv_err_set(err, SCV_EINVAL, "--stream-rate '%s': %d rate%s for --workers %d (one per worker, "
                                            "samples/s)", spec, n, n == 1 ? "" : "s", K);
    if (n > SCV_MAX_WORKERS)
        return scv_err_set(err, SCV_EINVAL, "--stream-rate '%s': %d rates, at most %d workers", spec, n,
                           SCV_MAX_WORKERS);
    double *v = malloc(sizeof(double) * (size_t)n);
    if (!v) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    const char *s = spec;
    for (int k = 0; k < n; k++) {
        const char *e = strchr(s, ',');
        if (!e) e = s + strlen(s);
        while (s < e && *s == ' ') s++;
        const char *te = e;
        while (te > s && te[-1] == ' ') te--;
        if (!number(s, te, &v[k]) || !(v[k] > 0) || v[k] > MAX_RATE) {
            int rc = scv_err_set(err, SCV_EINVAL,
                                 "--stream-rate '%s': rate %d ('%.*s') must be a positive number of samples/s, "
                                 "at most %g (a worker whose stream never fills its batch would stall every "
                                 "step)", spec, k + 1, (int)(te - s), s, MAX_RATE);
            free(v);
            return rc;
        }
        s = *e ? e + 1 : e;
    }
    r->K = n;
    int cap = 0, rc = add_piece(r, &cap, 0, v);
    free(v);
    return rc ? scv_err_set(err, rc, "out of memory") : SCV_OK;
}

static int parse_trace(const char *path, int K, scv_stream_rates *r, scv_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return scv_err_set(err, errno == ENOENT ? SCV_EINVAL : SCV_EIO,
                           "--stream-rate '%s': neither rates r1,r2,... (samples/s) nor a readable rate "
                           "trace file: %s", path, strerror(errno));
    char *line = NULL;
    size_t lcap = 0;
    int rc = SCV_OK, lineno = 0, cap = 0, last_line = 0;
    double *v = NULL;
    int nv = K > 0 ? K : 0; /* rates per line: K, or the first line's count */
    while (!rc && getline(&line, &lcap, f) >= 0) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        /* tokens: SECONDS r1 r2 ... separated by blanks */
        int nt = 0;
        double t = 0;
        const char *p = line;
        for (;;) {
            while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
            if (!*p) break;
            const char *e = p;
            while (*e && *e != ' ' && *e != '\t' && *e != '\r' && *e != '\n') e++;
            double x;
            if (!number(p, e, &x)) {
                rc = scv_err_set(err, SCV_EINVAL, "--stream-rate %s:%d: '%.*s' is not a number (a line is "
                                                  "SECONDS r1 r2 ...: a time, then one rate per worker in "
                                                  "samples/s)", path, lineno, (int)(e - p), p);
                break;
            }
            if (nt == 0) {
                t = x;
            } else {
                if (nt > SCV_MAX_WORKERS) {
                    rc = scv_err_set(err, SCV_EINVAL, "--stream-rate %s:%d: more than %d rates", path, lineno,
                                     SCV_MAX_WORKERS);
                    break;
                }
                if (!v && !(v = malloc(sizeof(double) * SCV_MAX_WORKERS))) {
                    rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
                    break;
                }
                if (!(x >= 0 && x <= MAX_RATE)) {
                    rc = scv_err_set(err, SCV_EINVAL, "--stream-rate %s:%d: rate %d ('%.*s') must be in [0, %g] "
                                                      "samples/s", path, lineno, nt, (int)(e - p), p, MAX_RATE);
                    break;
                }
                v[nt - 1] = x;
            }
            nt++;
            p = e;
        }
        if (rc || nt == 0) continue; /* an error, or a blank or comment line */
        if (nt == 1) {
            rc = scv_err_set(err, SCV_EINVAL, "--stream-rate %s:%d: a time and no rates (a line is SECONDS "
                                              "r1 r2 ...: one rate per worker in samples/s)", path, lineno);
            break;
        }
        if (nv && nt - 1 != nv) {
            char why[64];
            if (K > 0) snprintf(why, sizeof why, "one per worker: --workers %d", K);
            else snprintf(why, sizeof why, "as many as the first line");
            rc = scv_err_set(err, SCV_EINVAL, "--stream-rate %s:%d: %d rate%s, expected %d (%s; a line is "
                                              "SECONDS r1 r2 ...)", path, lineno, nt - 1, nt == 2 ? "" : "s",
                             nv, why);
            break;
        }
        if (!nv) nv = nt - 1;
        if (r->n == 0 && t != 0) {
            rc = scv_err_set(err, SCV_EINVAL, "--stream-rate %s:%d: the first time is %g s; the trace must "
                                              "start at 0 (the stream's start)", path, lineno, t);
            break;
        }
        if (!(t <= MAX_TAU)) {
            rc = scv_err_set(err, SCV_EINVAL, "--stream-rate %s:%d: time %g s is past %g s", path, lineno, t,
                             MAX_TAU);
            break;
        }
        if (r->n > 0 && !(t > r->t[r->n - 1])) {
            rc = scv_err_set(err, SCV_EINVAL, "--stream-rate %s:%d: time %g s is not after the previous "
                                              "line's %g s (times must increase)", path, lineno, t,
                             r->t[r->n - 1]);
            break;
        }
        r->K = nv;
        if ((rc = add_piece(r, &cap, t, v))) rc = scv_err_set(err, rc, "out of memory");
        last_line = lineno;
    }
    if (!rc && ferror(f)) rc = scv_err_set(err, SCV_EIO, "--stream-rate %s: read error: %s", path, strerror(errno));
    if (!rc && r->n == 0)
        rc = scv_err_set(err, SCV_EINVAL, "--stream-rate %s: no rate lines (expected lines SECONDS r1 r2 ..., "
                                          "the first at 0)", path);
    for (int k = 0; !rc && k < r->K; k++)
        if (!(r->r[(size_t)(r->n - 1) * (size_t)r->K + (size_t)k] > 0))
            rc = scv_err_set(err, SCV_EINVAL, "--stream-rate %s:%d: worker %d's rate is 0 on the last line: "
                                              "its stream would end and every step after would wait forever",
                             path, last_line, k);
    free(line);
    free(v);
    fclose(f);
    return rc;
}

int scv_stream_rates_parse(const char *spec, int K, scv_stream_rates **out, scv_err *err)
{
    *out = NULL;
    if (!spec || !*spec)
        return scv_err_set(err, SCV_EINVAL, "--stream-rate: expected rates r1,r2,... (samples/s) or a rate trace file");
    scv_stream_rates *r = calloc(1, sizeof *r);
    if (!r) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    int rc = looks_like_list(spec) ? parse_list(spec, K, r, err) : parse_trace(spec, K, r, err);
    if (rc) {
        scv_stream_rates_free(r);
        return rc;
    }
    *out = r;
    return SCV_OK;
}

/* ---- buffers and steps ---- */

void scv_stream_init(scv_stream_state *s, const scv_stream_rates *r, const scv_stream_policy *pol, int64_t B)
{
    memset(s, 0, sizeof *s);
    s->rates = r;
    s->K = r->K < SCV_MAX_WORKERS ? r->K : SCV_MAX_WORKERS;
    s->mode = pol->buffer;
    int64_t share[SCV_MAX_WORKERS], off[SCV_MAX_WORKERS];
    if (pol->full_batch) scv_split_batch(B, s->K, NULL, share, off);
    for (int k = 0; k < s->K; k++) {
        s->b_min[k] = pol->full_batch ? share[k] : pol->b_min;
        s->b_max[k] = pol->full_batch ? share[k] : pol->b_max;
    }
}

int64_t scv_stream_level(const scv_stream_state *s, int k, double tau, int64_t *dropped)
{
    if (tau < s->tau) tau = s->tau;
    int64_t a = whole(scv_stream_arrived(s->rates, k, tau)), d = s->dropped[k];
    if (s->mode == SCV_STREAM_TRUNCATE && a - s->consumed[k] - d > s->b_max[k]) d = a - s->consumed[k] - s->b_max[k];
    if (dropped) *dropped = d;
    return a - s->consumed[k] - d;
}

double scv_stream_plan(const scv_stream_state *s, double tau, int64_t *b)
{
    if (tau < s->tau) tau = s->tau;
    double start = tau;
    for (int k = 0; k < s->K; k++) {
        int64_t d;
        if (scv_stream_level(s, k, tau, &d) >= s->b_min[k]) continue;
        double need = (double)(s->consumed[k] + d + s->b_min[k]);
        double tk = scv_stream_reach(s->rates, k, tau, need);
        if (tk > start) start = tk;
    }
    if (!(start <= MAX_TAU)) return INFINITY; /* a stream too slow ever to deliver b_min */
    for (int k = 0; k < s->K; k++) {
        int64_t l = scv_stream_level(s, k, start, NULL);
        b[k] = l < s->b_max[k] ? l : s->b_max[k];
    }
    return start;
}

void scv_stream_consume(scv_stream_state *s, double tau, const int64_t *c)
{
    if (tau < s->tau) tau = s->tau;
    for (int k = 0; k < s->K; k++) {
        int64_t d, l = scv_stream_level(s, k, tau, &d), take = c[k] < 0 ? 0 : c[k] > l ? l : c[k];
        s->dropped[k] = d;
        s->consumed[k] += take;
    }
    s->tau = tau;
}
