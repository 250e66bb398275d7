/*
 * fuzz_job.c - the job-file path of the library: a JSON object whose every string or
 * finite number is given to scv_run_params_set as the text a job file gives (as
 * `scavenger run job.json` does), then scv_run_params_check on the whole.
 */
#include "fuzz_util.h"
#include "scv.h"

#include <cjson/cJSON.h>
#include <math.h>

static scv_catalog *cat;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!cat) {
        static const char csv[] = "provider,instance_type,vcpus,memory_gib,ondemand_usd_per_hr\n"
                                  "aws,c5.xlarge,4,8,0.17\naws,c5.2xlarge,8,16,0.34\n";
        const char *path = fuzz_write("catalog.csv", (const uint8_t *)csv, sizeof csv - 1);
        if (scv_catalog_load(path, &cat, NULL) != SCV_OK) abort();
    }
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    cJSON *o = cJSON_Parse(text);
    free(text);
    if (!o || !cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return 0;
    }
    scv_run_params p = scv_run_params_default();
    p.catalog = cat;
    p.store = (scv_store *)&p; /* never dereferenced by the check */
    p.state_dir = fuzz_dir();
    int failed = 0; /* like `scavenger run`, the first bad setting ends the job file */
    for (cJSON *it = o->child; it && !failed; it = it->next) {
        char val[512];
        if (cJSON_IsString(it)) snprintf(val, sizeof val, "%s", it->valuestring);
        else if (cJSON_IsNumber(it) && isfinite(it->valuedouble))
            snprintf(val, sizeof val, "%.17g", it->valuedouble);
        else continue;
        scv_err err = {0};
        int rc = scv_run_params_set(&p, it->string ? it->string : "", val, &err);
        if (rc != SCV_OK && rc != SCV_ENOTFOUND && !err.msg[0]) {
            fprintf(stderr, "scv_run_params_set(\"%s\", \"%s\"): %s without a message\n",
                    it->string ? it->string : "", val, scv_errname(rc));
            abort();
        }
        failed = rc != SCV_OK && rc != SCV_ENOTFOUND;
    }
    scv_err err = {0};
    if (!failed && scv_run_params_check(&p, &err) == SCV_OK) {
        /* what the loop relies on */
        if (p.n_workers < 1 || p.n_workers > SCV_MAX_SPACE || p.n_batches < 1 ||
            p.n_batches > SCV_MAX_SPACE)
            abort();
        for (size_t i = 0; i < p.n_workers; i++)
            if (p.workers[i] < 1 || (i && p.workers[i] <= p.workers[i - 1])) abort();
        for (size_t i = 0; i < p.n_batches; i++)
            if (p.batches[i] < 1 || (i && p.batches[i] <= p.batches[i - 1])) abort();
        int acc = p.target_accuracy > 0 && p.target_accuracy <= 1 && p.target_loss == 0;
        int loss = p.target_loss > 0 && isfinite(p.target_loss) && p.target_accuracy == 0;
        if (acc == loss || (p.objective == SCV_OBJ_UTILITY && !(p.value_per_hour > 0)) || !(p.max_epochs > 0) ||
            !(p.deadline_s >= 0) || !isfinite(p.deadline_s) || !(p.budget >= 0) ||
            !isfinite(p.budget))
            abort();
    }
    cJSON_Delete(o);
    return 0;
}
