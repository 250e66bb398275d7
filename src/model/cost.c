/*
 * cost.c - prices and memory: the cost model C = K * T * p (p = price per VM-hour), the
 * pricing policies' rates, and the per-worker memory model that bounds the batch (B_max).
 *
 * Memory-proportional pricing (the Scavenger paper's second policy): a worker VM is priced
 * per vCPU and per GiB, p = vcpus * r_cpu + mem * r_gib, with the VM's memory sized to the
 * batch (the memory model, rounded up to a whole GiB). r_cpu and r_gib are fitted by
 * non-negative least squares on the provider's CPU-only on-demand catalog prices.
 */
#include "scv.h"
#include "model.h"
#include "linfit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUNTIME_OVERHEAD_BYTES (256.0 * 1024 * 1024) /* process, MPI, libraries */

double scv_cost_usd(int workers, double seconds, double price_hr)
{
    return workers * seconds / 3600.0 * price_hr;
}

/* Dollars for people, the one money format (tables, messages, the planner's errors): cents
 * from $1, else three significant digits in fixed point ($0.00262, $0.00000420), so that a
 * small budget or cost never reads "$0.00". */
void scv_fmt_usd(double usd, char *b, size_t cap)
{
    if (!isfinite(usd)) snprintf(b, cap, "-");
    else if (fabs(usd) >= 1 || usd == 0) snprintf(b, cap, "$%.2f", usd);
    else {
        int decimals = 2 - (int)floor(log10(fabs(usd)));
        if (decimals > 12) snprintf(b, cap, "$%.3g", usd); /* below a billionth: $1.5e-13 */
        else snprintf(b, cap, "$%.*f", decimals, usd);
    }
}

double scv_vm_price(const scv_vm_type *v, scv_pricing pricing, double mem_bytes, double rate_cpu,
                    double rate_gib)
{
    switch (pricing) {
    case SCV_PRICE_SPOT:
        if (isfinite(v->spot_min) && isfinite(v->spot_max)) return 0.5 * (v->spot_min + v->spot_max);
        return isfinite(v->spot_min) ? v->spot_min : NAN;
    case SCV_PRICE_MEMORY: {
        double gib = ceil(mem_bytes / (1024.0 * 1024 * 1024));
        return v->vcpus * rate_cpu + gib * rate_gib;
    }
    default: return v->ondemand;
    }
}

double scv_worker_mem_bytes(const scv_job_info *job, double b)
{
    return RUNTIME_OVERHEAD_BYTES + 3.0 * 4.0 * job->n_params +
           b * (2.0 * job->act_bytes + 4.0 * job->input_floats);
}

int scv_memory_rates(const scv_catalog *c, const char *provider, double *per_cpu, double *per_gib,
                     scv_err *err)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) n += !strcmp(c->vms[i].provider, provider);
    double *x = malloc(sizeof(double) * 2 * (n + 1)), *y = malloc(sizeof(double) * (n + 1)),
           *w = malloc(sizeof(double) * (n + 1));
    if (!x || !y || !w) {
        free(x), free(y), free(w);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    size_t m = 0;
    for (size_t i = 0; i < c->n; i++) {
        const scv_vm_type *v = &c->vms[i];
        if (strcmp(v->provider, provider) || v->gpus > 0 || !(v->ondemand > 0)) continue;
        x[2 * m] = v->vcpus;
        x[2 * m + 1] = v->mem_gib;
        y[m] = v->ondemand;
        w[m] = 1 / (y[m] * y[m]);
        m++;
    }
    double coef[2] = {0, 0};
    int rc = m >= 2 ? scv_nnls(x, y, w, m, 2, 0, coef) : -1;
    free(x), free(y), free(w);
    if (rc != 0 || !(coef[0] + coef[1] > 0))
        return scv_err_set(err, SCV_EINVAL,
                           "memory pricing: the catalog has too few CPU-only %s types to fit "
                           "per-vCPU and per-GiB rates", provider);
    *per_cpu = coef[0];
    *per_gib = coef[1];
    return SCV_OK;
}
