/*
 * fuzz_metrics.c - the one strict metrics-line reader (src/io/metrics_line.c) and the
 * drivers' reading of a running segment (src/drivers/trainjob.c). The input is a metrics
 * file: its first byte picks the segment's K (0: any), the rest is split at '\n' and each
 * line goes through scv_metrics_line_next (the codes and the line's type checked, every
 * read number in range or NaN, a refused line naming the file); then the whole file is
 * tailed as a running segment is (tj_tail_start/tick/stop, tj_tail_verdict) and recovered
 * as a killed run's segment is (tj_recover: overlong lines, counters).
 */
#include "fuzz_util.h"
#include "scv.h"
#include "io/metrics_line.h"
#include "drivers/trainjob.h"

#include <math.h>

static int in(double v, double lo, double hi) { return isnan(v) || (v >= lo && v <= hi); }

static void on_iter(void *ctx, const scv_iter_sample *s) { (void)ctx, (void)s; }
static void on_eval(void *ctx, const scv_eval_sample *e)
{
    (void)ctx;
    if (!(e->accuracy >= 0 && e->accuracy <= 1) && !isnan(e->accuracy)) abort(); /* out of range passed on */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size) return 0;
    int K = data[0] % 5; /* 0: any K */
    data++, size--;
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    scv_ml_reader rd;
    scv_ml_reader_init(&rd, K);
    rd.batch = K ? 64 : 0, rd.strict = K > 2, rd.start_iter = K > 3 ? 5 : NAN; /* a trainer's segment, or a profile */
    int lineno = 0;
    for (char *p = text, *nl; p; p = nl ? nl + 1 : NULL) {
        nl = memchr(p, '\n', (size_t)(text + size - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(text + size - p); /* NUL bytes included */
        if (nl) *nl = 0;
        scv_metrics_line m;
        scv_err err = {0};
        int rc = scv_metrics_line_next_n(&rd, p, len, "f.jsonl", ++lineno, &m, &err);
        if (rc != SCV_OK && rc != SCV_EPARSE) abort();
        if (rc && strncmp(err.msg, "f.jsonl:", 8)) abort(); /* names the file and the line */
        if ((unsigned)m.type > SCV_ML_LATENCY) abort();
        if (m.nonfinite && !memchr(m.nonfinite_as, 0, sizeof m.nonfinite_as)) abort();
        if (m.type == SCV_ML_ITER) {
            const scv_ml_iter *x = &m.u.iter;
            if (!in(x->workers, 1, 65536) || !in(x->batch, 1, 1073741824.0) || !in(x->t_iter, 0, 1e7)) abort();
            if (!rc && K && x->workers != K) abort();
            if (!rc && rd.batch && x->batch > rd.batch) abort(); /* never more than the segment's B */
        } else if (m.type == SCV_ML_EVAL && !rc) {
            if (!in(m.u.eval.test_accuracy, 0, 1)) abort();
            if (!memchr(m.u.eval.role, 0, sizeof m.u.eval.role)) abort();
        } else if (m.type == SCV_ML_JOB) {
            if (!memchr(m.u.job.model, 0, sizeof m.u.job.model) || !memchr(m.u.job.vm, 0, sizeof m.u.job.vm)) abort();
        }
    }
    free(text);

    /* the same bytes as a running segment's file, then as a killed run's segment */
    const char *path = fuzz_write("seg-000-train-k2-b64.jsonl", data, size);
    static trainjob t;
    memset(&t, 0, sizeof t);
    t.K = 2, t.B = 64;
    snprintf(t.run_dir, sizeof t.run_dir, "%s", fuzz_dir());
    snprintf(t.ckpt_dir, sizeof t.ckpt_dir, "%s/ckpt", fuzz_dir());
    scv_measure_sink sink = {.on_iter = on_iter, .on_eval = on_eval};
    scv_segment_result res;
    memset(&res, 0, sizeof res);
    tj_tail_start(&t, path, &sink, &res);
    tj_tail_tick(&t);
    tj_tail_stop(&t);
    scv_err err = {0};
    int rc = tj_tail_verdict(&t, &err);
    if (rc != SCV_OK && rc != SCV_EINVAL) abort();
    char phase[32];
    int workers = 0, batch = 0;
    rc = tj_recover(&t, 0, &res, phase, sizeof phase, &workers, &batch, &err);
    if (rc == SCV_OK && (workers != 2 || batch != 64 || strcmp(phase, "train"))) abort();
    tj_free(&t);
    return 0;
}
