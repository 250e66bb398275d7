/*
 * fuzz_catalog.c - the VM catalog reader (scv_catalog_load), then what the planner does with
 * each row: its prices under every policy and the memory-proportional rates.
 */
#include "fuzz_util.h"
#include "scv.h"
#include "model/model.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("catalog.csv", data, size);
    scv_catalog *c = NULL;
    scv_err err = {0};
    int rc = scv_catalog_load(path, &c, &err);
    if ((rc == SCV_OK) != (c != NULL)) abort();
    if (!c) {
        if (!err.msg[0]) abort();
        return 0;
    }
    for (size_t i = 0; i < c->n; i++) {
        const scv_vm_type *v = &c->vms[i];
        if (v->vcpus < 1 || !(v->mem_gib > 0) || !(v->ondemand > 0) || v->gpus < 0) abort();
        if (scv_catalog_find(c, v->name) == NULL) abort();
        double rcpu = 0, rgib = 0;
        scv_memory_rates(c, v->provider, &rcpu, &rgib, NULL);
        for (int pr = SCV_PRICE_ONDEMAND; pr <= SCV_PRICE_MEMORY; pr++) {
            double price = scv_vm_price(v, (scv_pricing)pr, 1e9, rcpu, rgib);
            if (price < 0) abort(); /* NaN (no such price) is allowed */
            double cost = scv_cost_usd(4, 3600, price);
            if (cost < 0) abort();
        }
    }
    scv_catalog_free(c);
    return 0;
}
