/*
 * recipe.c - a job's learning recipe, its statistical identity: what decides its learning
 * curve besides the network and the data (the job key's model, sizes and dataset). Two runs
 * of one model on one dataset under another learning rate, momentum, weight decay, rule or
 * schedule learn other curves, so a stored run informs a target only under the same recipe
 * (src/search/est_stored.c). Read from a job's settings as the store keeps them (a JSON
 * object of option names to their text), each recipe option given or the built-in
 * trainer's default, numbers normalised: "lr=0.05;momentum=0.9;...".
 */
#include "io.h"
#include "../train/sched.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int scv_job_recipe(const char *job_json, char *buf, size_t cap)
{
    char dflt[10][32] = {"", "", "", "none", "", "0", "none", "0", "", "0"}; /* (warm-up, step, horizon: none) */
    snprintf(dflt[0], sizeof dflt[0], "%.6g", SCV_RECIPE_LR);
    snprintf(dflt[1], sizeof dflt[1], "%.6g", SCV_RECIPE_MOMENTUM);
    snprintf(dflt[2], sizeof dflt[2], "%.6g", SCV_RECIPE_WEIGHT_DECAY);
    snprintf(dflt[4], sizeof dflt[4], "%d", SCV_RECIPE_BASE_BATCH);
    snprintf(dflt[8], sizeof dflt[8], "%.6g", SCV_RECIPE_LR_GAMMA);
    static const char *const keys[10] = {"lr",            "momentum", "weight-decay",   "lr-scaling", "base-batch",
                                         "warmup-epochs", "lr-decay", "lr-step-epochs", "lr-gamma",   "lr-horizon"};
    static const int numeric[10] = {1, 1, 1, 0, 1, 1, 0, 1, 1, 1};
    cJSON *o = job_json ? cJSON_Parse(job_json) : NULL;
    size_t len = 0;
    buf[0] = 0;
    for (int k = 0; k < 10; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, keys[k]);
        char val[64];
        snprintf(val, sizeof val, "%s", dflt[k]);
        if (cJSON_IsString(v) && v->valuestring[0]) {
            char *end;
            double x = strtod(v->valuestring, &end);
            if (numeric[k] && end != v->valuestring && !*end) snprintf(val, sizeof val, "%.6g", x);
            else snprintf(val, sizeof val, "%.60s", v->valuestring);
        } else if (cJSON_IsNumber(v)) {
            snprintf(val, sizeof val, "%.6g", v->valuedouble);
        }
        int w = snprintf(buf + len, len < cap ? cap - len : 0, "%s%s=%s", k ? ";" : "", keys[k], val);
        if (w > 0) len += (size_t)w;
    }
    cJSON_Delete(o);
    return len < cap ? SCV_OK : SCV_ERANGE;
}
