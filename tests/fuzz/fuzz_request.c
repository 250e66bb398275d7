/*
 * fuzz_request.c - the service's check of a submitted job (svc_job_check,
 * src/service/jobs.c), the whole of what POST /api/runs does with a body before it queues
 * it: JSON, every field's type, length and value, the service's own settings refused,
 * paths inside the data directory, then the run's own setup (scv_job_setup_init: the
 * catalog, the VM type, the cluster). External trainers and hostfiles stay off (they would
 * resolve host names here); paths are confined to the harness's directory. A refused body
 * names its field and is not queued (*out NULL); an accepted one comes back as JSON.
 */
#include "fuzz_util.h"
#include "scv.h"
#include "service/service.h"

#include <cjson/cJSON.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)fuzz_write; /* fuzz_util.h's file helper: unused here */
    static svc_config cfg;
    if (!cfg.data_dir[0]) {
        snprintf(cfg.data_dir, sizeof cfg.data_dir, "%s", fuzz_dir());
        snprintf(cfg.db, sizeof cfg.db, "%s/runs.db", fuzz_dir());
    }
    char *body = malloc(size + 1);
    if (!body) return 0;
    memcpy(body, data, size);
    body[size] = 0;
    char *out = NULL, field[64];
    scv_err err = {0};
    int rc = svc_job_check(&cfg, (scv_store *)&cfg /* not read by the checks */, body, &out, field, sizeof field,
                           &err);
    if (rc) {
        if (out || !err.msg[0]) abort(); /* field may be "": a key "" is named as it is */
    } else {
        cJSON *o = out ? cJSON_Parse(out) : NULL;
        if (!cJSON_IsObject(o)) abort();
        cJSON_Delete(o);
    }
    free(out);
    free(body);
    return 0;
}
