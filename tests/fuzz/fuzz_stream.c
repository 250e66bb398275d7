/*
 * fuzz_stream.c - the streaming rate-trace reader (scv_stream_rates_parse on a file), then
 * what the trainer does with a trace: the arrivals (monotone, 0 at 0), the first time a
 * count arrives, and a few dozen steps of the stream buffers under both buffer modes
 * (batches within the bounds, a truncated buffer within b_max, every sample accounted for).
 */
#include "fuzz_util.h"
#include "scv.h"
#include "train/train.h"
#include "train/stream.h"

#include <math.h>

static scv_stream_state st;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("trace.txt", data, size);
    scv_stream_rates *r = NULL;
    scv_err err = {0};
    int rc = scv_stream_rates_parse(path, 0, &r, &err);
    if ((rc == SCV_OK) != (r != NULL)) abort();
    if (!r) {
        if (!err.msg[0]) abort();
        return 0;
    }
    const int K = scv_stream_rates_workers(r);
    if (K < 1 || K > SCV_MAX_WORKERS) abort();
    for (int k = 0; k < K && k < 8; k++) {
        if (scv_stream_arrived(r, k, 0) != 0) abort();
        double prev = 0;
        for (double tau = 0.37; tau < 5000; tau *= 1.9) {
            double a = scv_stream_arrived(r, k, tau);
            if (!(a >= prev)) abort();
            prev = a;
            double t = scv_stream_reach(r, k, 0, floor(a) + 1);
            if (!(t > 0) || (isfinite(t) && scv_stream_arrived(r, k, t) < floor(a) + 1)) abort();
        }
    }
    for (int mode = 0; mode < 2 && K <= 64; mode++) {
        scv_stream_policy pol = scv_stream_policy_default();
        pol.b_min = 2, pol.b_max = 40, pol.buffer = mode ? SCV_STREAM_PERSIST : SCV_STREAM_TRUNCATE;
        scv_stream_init(&st, r, &pol, 0);
        int64_t b[64];
        double tau = 0;
        for (int i = 0; i < 40; i++) {
            double start = scv_stream_plan(&st, tau, b);
            if (!(start >= tau)) abort();
            if (!isfinite(start)) break; /* a rate so small the wait overflows the clock */
            for (int k = 0; k < K; k++)
                if (b[k] < 2 || b[k] > 40) abort();
            scv_stream_consume(&st, start, b);
            for (int k = 0; k < K; k++) {
                int64_t lvl = scv_stream_level(&st, k, start, NULL);
                if (lvl < 0 || (!mode && lvl > 40) || (mode && st.dropped[k] != 0)) abort();
                double a = scv_stream_arrived(r, k, start);
                if (a < 4e18 && st.consumed[k] + st.dropped[k] + lvl != (int64_t)floor(a)) abort();
            }
            tau = start + 0.01 * (i % 7);
        }
    }
    scv_stream_rates_free(r);
    return 0;
}
