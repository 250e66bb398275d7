/*
 * fuzz_ckpt.c - the checkpoint reader (scv_ckpt_load): each input is read as given and
 * again with its last four bytes replaced by the CRC-32 of the rest, so the header checks
 * behind the checksum are reached too.
 */
#include "fuzz_util.h"
#include "scv.h"
#include "train/train.h"
#include "train/ckpt.h"

#include <math.h>
#include <zlib.h>

static void load(const uint8_t *data, size_t size)
{
    fuzz_write(SCV_CKPT_FILE, data, size);
    scv_ckpt_state st;
    float *p = NULL, *m = NULL;
    size_t n = 0;
    scv_err err = {0};
    int rc = scv_ckpt_load(fuzz_dir(), &st, &p, &m, &n, &err);
    if ((rc == SCV_OK) != (p != NULL && m != NULL)) abort();
    if (rc == SCV_OK) {
        /* what a trainer relies on */
        if (n == 0 || n > SCV_NET_MAX_PARAMS || st.pos > st.n_train ||
            st.samples_seen != st.epoch * st.n_train + st.pos || !isfinite(st.wall_seconds) ||
            st.workers < 1 || st.batch < 1 || !memchr(st.arch, 0, sizeof st.arch))
            abort();
        volatile float s = p[n - 1] + m[n - 1];
        (void)s;
    } else if (!err.msg[0]) {
        abort();
    }
    free(p);
    free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load(data, size);
    if (size >= 4) {
        uint8_t *c = malloc(size);
        if (!c) return 0;
        memcpy(c, data, size);
        uint32_t crc = (uint32_t)crc32(0L, c, (uInt)(size - 4));
        for (int i = 0; i < 4; i++) c[size - 4 + i] = (uint8_t)(crc >> (8 * i));
        load(c, size);
        free(c);
    }
    return 0;
}
