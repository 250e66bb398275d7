/*
 * fuzz_idx.c - the IDX dataset reader (scv_dataset_load on a directory): the input is split
 * at each "\n--\n" into the four files train-images, train-labels, t10k-images,
 * t10k-labels (a missing part: the file is absent); both splits are loaded. Plain or gzip
 * (gzread passes plain data through).
 */
#include "fuzz_util.h"
#include "scv.h"
#include "train/train.h"

static const char *const names[4] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                     "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *p = data, *end = data + size;
    for (int i = 0; i < 4; i++) {
        if (!p) {
            fuzz_write(names[i], NULL, (size_t)-1);
            continue;
        }
        const uint8_t *q = NULL;
        for (const uint8_t *s = p; s + 4 <= end; s++)
            if (!memcmp(s, "\n--\n", 4)) {
                q = s;
                break;
            }
        fuzz_write(names[i], p, (size_t)((q ? q : end) - p));
        p = q ? q + 4 : NULL;
    }
    for (int split = 0; split < 2; split++) {
        scv_dataset *ds = NULL;
        scv_err err = {0};
        int rc = scv_dataset_load(fuzz_dir(), split, &ds, &err);
        if ((rc == SCV_OK) != (ds != NULL)) abort();
        if (ds) {
            /* touch every sample: the sizes must be what was allocated */
            size_t d = (size_t)ds->c * ds->h * ds->w;
            float sum = 0;
            for (int64_t j = 0; j < ds->n; j++) sum += ds->x[(size_t)j * d + d - 1] + ds->y[j];
            if (sum != sum && ds->n < 0) abort();
            for (int64_t j = 0; j < ds->n; j++)
                if (ds->y[j] >= ds->n_classes) abort();
        } else if (!err.msg[0]) {
            abort(); /* every refusal says why */
        }
        scv_dataset_free(ds);
    }
    return 0;
}
