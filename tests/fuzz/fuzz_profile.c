/*
 * fuzz_profile.c - the metrics/profile reader (scv_profile_load, scv_job_load,
 * scv_profile_target), then the models and the planner on what it loaded: scv_perf_fit,
 * scv_stat_fit (both kinds) and scv_plan over a small built-in catalog.
 */
#include "fuzz_util.h"
#include "scv.h"
#include "model/model.h"
#include "io/io.h"

#include <math.h>

static scv_catalog *cat;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!cat) {
        static const char csv[] =
            "provider,instance_type,vcpus,memory_gib,ondemand_usd_per_hr,gpu_count,"
            "spot_usd_per_hr_min,spot_usd_per_hr_max\n"
            "aws,c5.xlarge,4,8,0.17,0,0.06,0.08\naws,c5.4xlarge,16,32,0.68,0,0.25,0.3\n"
            "aws,g4dn.xlarge,4,16,0.526,1,,\n";
        const char *path = fuzz_write("catalog.csv", (const uint8_t *)csv, sizeof csv - 1);
        if (scv_catalog_load(path, &cat, NULL) != SCV_OK) abort();
    }
    const char *path = fuzz_write("metrics.jsonl", data, size);
    scv_err err = {0};
    scv_job_info job;
    (void)scv_job_load(path, &job, &err);
    double ep = 0;
    int tb = 0;
    (void)scv_profile_target(path, 0.5, &ep, &tb, &err);
    scv_profile *prof = NULL;
    int rc = scv_profile_load(path, &prof, &err);
    if ((rc == SCV_OK) != (prof != NULL)) abort();
    if (!prof) return 0;
    for (size_t i = 0; i < prof->n; i++) {
        const scv_config_stats *c = &prof->configs[i];
        if (c->workers < 1 || c->batch < 1 || c->n_iters < 1 || !isfinite(c->t_iter) ||
            !isfinite(c->t_compute) || !isfinite(c->t_comm))
            abort();
    }
    double mb = prof->has_job ? 4.0 * prof->job.n_params : 4e6;
    double n_train = prof->has_job ? prof->job.n_train : 60000;
    for (int comm = SCV_TOPO_RING; comm <= SCV_TOPO_PS; comm++) {
        scv_perf_model perf = {0};
        if (scv_perf_fit(prof->configs, prof->n, (scv_topology)comm, mb, &perf, &err)) continue;
        if (!isfinite(perf.c0) || !isfinite(perf.c1) || !isfinite(perf.alpha) || !isfinite(perf.beta))
            abort();
        for (int sk = SCV_STAT_GNS; sk <= SCV_STAT_SCAVENGER; sk++) {
            scv_stat_model sm;
            if (scv_stat_fit((scv_stat_kind)sk, prof->configs, prof->n, n_train, 5,
                             prof->configs[0].batch, &sm, &err))
                continue;
            static const int workers[] = {1, 2, 4, 8}, batches[] = {32, 64, 256, 1024};
            static const int vms[] = {0, 1, 2};
            scv_job_info j = prof->job;
            if (!prof->has_job) memset(&j, 0, sizeof j), j.n_params = 1e6, j.n_train = n_train;
            for (int obj = SCV_OBJ_TIME; obj <= SCV_OBJ_KNEE; obj++) {
                scv_plan_request req = {.catalog = cat, .vms = vms, .n_vms = 3, .measured_vm = 0,
                                        .workers = workers, .n_workers = 4, .batches = batches,
                                        .n_batches = 4, .pricing = SCV_PRICE_ONDEMAND,
                                        .perf = &perf, .stat = &sm, .job = &j,
                                        .objective = (scv_objective)obj,
                                        .measured_threads = j.threads, .worker_threads = j.threads,
                                        .parallel_fraction = -1, .gpu_speedup = 2,
                                        .measured = prof->configs, .n_measured = prof->n};
                scv_plan_result *res = NULL;
                if (scv_plan(&req, &res, &err) == SCV_OK) {
                    if (!res || res->chosen < 0 || (size_t)res->chosen >= res->n_points) abort();
                    for (size_t i = 0; i < res->n_points; i++)
                        if (res->points[i].time_s < 0 || res->points[i].cost < 0) abort();
                }
                scv_plan_result_free(res);
            }
        }
    }
    scv_profile_free(prof);
    return 0;
}
