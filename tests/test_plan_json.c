/*
 * test_plan_json.c - scv_plan_json(), the JSON entry point of the planner: its report is
 * byte for byte what `scavenger plan --json` prints for the same inputs (metrics files or
 * their text), the request's options reach the planner, and every bad request (not JSON,
 * a missing, unknown, repeated or mistyped field, a value out of range, a missing file) is
 * refused with the field or file named; mixed clusters (--mix, "mix") in the table and the
 * report; communication options (--compress, "compress") in the table, the points, the
 * front without compression and the errors. Also scv_profile_load_texts and scv_data_file.
 * Metrics are synthetic (a job line and iterations of two configurations); the command
 * line is $SCV_BIN (default build/scavenger). Run from the repository root.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "io/io.h"
#include "model/model.h"
#include "scv_test.h"
#include "scv_test_proc.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

static const char *bin;
static char tmp[256], f1[300], f2[300];
static char *m1, *m2; /* the metrics texts of f1 and f2 */

/* The metrics of n iterations at (K, B) as `train --metrics` writes them: compute affine in
 * b = B/K, a ring allreduce for K > 1, squared norms of a noise scale of 100 (+-1%). */
static char *metrics(int K, int B, int n)
{
    size_t cap = 400 + (size_t)n * 400, at = 0;
    char *s = malloc(cap);
    if (!s) return NULL;
    at += (size_t)snprintf(s + at, cap - at,
                           "{\"type\":\"job\",\"model\":\"mlp\",\"arch\":\"mlp:784-32-10\",\"params\":25450,"
                           "\"act_bytes\":296,\"input_floats\":784,\"n_train\":2000,\"vm\":\"c5.xlarge\","
                           "\"threads\":1,\"workers\":%d,\"batch\":%d}\n", K, B);
    double b = (double)B / K;
    for (int i = 1; i <= n; i++) {
        double jit = 1 + 0.01 * ((i * 7919) % 13 - 6) / 6.0;
        double tc = (1e-3 + 2e-5 * b) * jit, tm = K > 1 ? 2e-4 * jit : 1e-5, ti = tc + tm + 1e-5;
        double gl = (1 + 100 / b) * jit, gg = (1 + 100.0 / B) * jit;
        at += (size_t)snprintf(s + at, cap - at,
                               "{\"type\":\"iter\",\"iter\":%d,\"epoch_progress\":%.6f,\"workers\":%d,\"batch\":%d,"
                               "\"t_compute\":%.6e,\"t_comm\":%.6e,\"t_iter\":%.6e,\"loss\":1.5,"
                               "\"grad_sqnorm_local_mean\":%.6e,\"grad_sqnorm_global\":%.6e}\n",
                               i, (double)i * B / 2000, K, B, tc, tm, ti, gl, gg);
    }
    return s;
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    size_t n = strlen(text);
    int bad = fwrite(text, 1, n, f) != n;
    return (fclose(f) || bad) ? -1 : 0;
}

/* scv_plan_json on req: its status, the report (malloc'ed, or NULL) in *out, the message in err */
static int plan(const char *req, char **out, scv_err *err)
{
    *out = (char *)"not set";
    memset(err, 0, sizeof *err);
    return scv_plan_json(req, out, err);
}

/* The output of `scavenger plan ARGS --json` without its newline (static buffer). */
static const char *cli_json(const char *args)
{
    static char out[1 << 20];
    int rc = run(out, sizeof out, "%s plan %s --json", bin, args);
    size_t n = strlen(out);
    if (n && out[n - 1] == '\n') out[n - 1] = 0;
    if (rc) printf("#   plan %s: exit %d: %s\n", args, rc, out);
    return out;
}

static void t_same_as_cli(void)
{
    struct {
        const char *args, *fields;
    } cases[] = {
        {"--target-epochs 5", "\"target_epochs\":5"},
        {"--target-epochs 5 --base-batch 64 --workers 1..8 --batch 32..512 --vm c5.xlarge,c5.2xlarge --all",
         "\"target_epochs\":5,\"base_batch\":64,\"workers\":[1,2,3,4,5,6,7,8],\"batch\":\"32..512\","
         "\"vm\":[\"c5.xlarge\",\"c5.2xlarge\"],\"all\":true"},
        {"--target-epochs 3 --objective cost --comm ps --stat scavenger --pricing spot --overlap 0.5 --vm all",
         "\"target_epochs\":3,\"objective\":\"cost\",\"comm\":\"ps\",\"stat\":\"scavenger\",\"pricing\":\"spot\","
         "\"overlap\":0.5,\"vm\":\"all\""},
        {"--target-epochs 5 --objective utility --value-per-hour 2 --deadline 2h --budget 50 --b-min 8 --b-max 256 "
         "--pricing memory --workers 2,4,8",
         "\"target_epochs\":5,\"objective\":\"utility\",\"value_per_hour\":2,\"deadline\":\"2h\",\"budget\":50,"
         "\"b_min\":8,\"b_max\":256,\"pricing\":\"memory\",\"workers\":\"2,4,8\""},
        {"--target-epochs 5 --measured-on c5.2xlarge --vm c5.2xlarge,g5.xlarge --assume-gpu-speedup 4 --catalog "
         "data/vm-catalog.csv",
         "\"target_epochs\":5,\"measured_on\":\"c5.2xlarge\",\"vm\":\"c5.2xlarge,g5.xlarge\","
         "\"assume_gpu_speedup\":4,\"catalog\":\"data/vm-catalog.csv\""},
        {"--target-epochs 5 --workers 1..4 --batch 64..256 --mix c5.xlarge:2,c6i.4xlarge:1 "
         "--mix 'c5.xlarge:1,c5.2xlarge:1;c6i.xlarge:3' --all",
         "\"target_epochs\":5,\"workers\":\"1..4\",\"batch\":\"64..256\","
         "\"mix\":[\"c5.xlarge:2,c6i.4xlarge:1\",\"c5.xlarge:1,c5.2xlarge:1;c6i.xlarge:3\"],\"all\":true"},
        {"--target-epochs 5 --workers 1..4 --batch 64..256 --compress none,topk:10,topk:100:artopk,selsync:0.5 "
         "--compress-iterations 1.2 --mix c5.xlarge:2,c6i.4xlarge:1 --all",
         "\"target_epochs\":5,\"workers\":\"1..4\",\"batch\":\"64..256\","
         "\"compress\":[\"none\",\"topk:10\",\"topk:100:artopk\",\"selsync:0.5\"],\"compress_iterations\":1.2,"
         "\"mix\":\"c5.xlarge:2,c6i.4xlarge:1\",\"all\":true"},
        {"--target-epochs 5 --compress selsync:0.9 --objective cost", "\"target_epochs\":5,\"compress\":\"selsync:0.9\","
         "\"objective\":\"cost\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[1024], req[4096];
        snprintf(args, sizeof args, "--profile %s,%s %s", f1, f2, cases[i].args);
        const char *want = cli_json(args);
        CHECK_MSG(!strncmp(want, "{\"chosen\":", 10), "case %zu: %.200s", i, want);
        /* the files, as a list and as an array; the texts */
        for (int form = 0; form < 3; form++) {
            if (form == 2) {
                cJSON *o = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(o, "metrics");
                cJSON_AddItemToArray(a, cJSON_CreateString(m1));
                cJSON_AddItemToArray(a, cJSON_CreateString(m2));
                char *p = cJSON_PrintUnformatted(o);
                size_t n = p ? strlen(p) : 0;
                char *big = malloc(n + strlen(cases[i].fields) + 4);
                if (p && big) sprintf(big, "%.*s,%s}", (int)(n - 1), p, cases[i].fields);
                char *out;
                scv_err err;
                int rc = big ? plan(big, &out, &err) : -1;
                CHECK_MSG(rc == SCV_OK, "case %zu texts: %s", i, err.msg);
                CHECK_MSG(rc == SCV_OK && out && !strcmp(out, want), "case %zu texts differ:\n#   %.300s\n#   %.300s", i,
                          rc ? "" : out, want);
                if (rc == SCV_OK) scv_json_free(out);
                free(big);
                free(p);
                cJSON_Delete(o);
                continue;
            }
            if (form == 0) snprintf(req, sizeof req, "{\"profile\":\"%s,%s\",%s}", f1, f2, cases[i].fields);
            else snprintf(req, sizeof req, "{\"profile\":[\"%s\",\"%s\"],%s}", f1, f2, cases[i].fields);
            char *out;
            scv_err err;
            int rc = plan(req, &out, &err);
            CHECK_MSG(rc == SCV_OK, "case %zu form %d: %s", i, form, err.msg);
            CHECK_MSG(rc == SCV_OK && out && !strcmp(out, want), "case %zu form %d differs:\n#   %.300s\n#   %.300s", i,
                      form, rc ? "" : out, want);
            if (rc == SCV_OK) scv_json_free(out);
        }
    }
}

/* The request's options reach the planner: the report says what was asked. */
static void t_fields_used(void)
{
    char req[2048], *out;
    scv_err err;
    snprintf(req, sizeof req, "{\"profile\":\"%s,%s\",\"target_epochs\":5,\"comm\":\"ps\",\"stat\":\"scavenger\","
                              "\"workers\":4,\"batch\":[256],\"objective\":\"time\"}", f1, f2);
    CHECK_EQ_INT(plan(req, &out, &err), SCV_OK);
    cJSON *o = cJSON_Parse(out);
    CHECK(o != NULL);
    const cJSON *ch = cJSON_GetObjectItem(o, "chosen"), *perf = cJSON_GetObjectItem(o, "perf"),
                *st = cJSON_GetObjectItem(o, "stat");
    CHECK(cJSON_GetObjectItem(ch, "workers") && cJSON_GetObjectItem(ch, "workers")->valueint == 4);
    CHECK(cJSON_GetObjectItem(ch, "batch") && cJSON_GetObjectItem(ch, "batch")->valueint == 256);
    CHECK(cJSON_GetObjectItem(o, "n_configs") && cJSON_GetObjectItem(o, "n_configs")->valueint == 1);
    CHECK(cJSON_IsString(cJSON_GetObjectItem(perf, "comm")) && !strcmp(cJSON_GetObjectItem(perf, "comm")->valuestring, "ps"));
    CHECK(cJSON_IsString(cJSON_GetObjectItem(st, "model")) &&
          !strcmp(cJSON_GetObjectItem(st, "model")->valuestring, "scavenger"));
    CHECK(cJSON_GetObjectItem(o, "points") == NULL); /* only with "all" */
    cJSON_Delete(o);
    scv_json_free(out);
    /* an impossible deadline: no configuration, and the bound named */
    snprintf(req, sizeof req, "{\"profile\":\"%s,%s\",\"target_epochs\":5,\"deadline\":0.001}", f1, f2);
    CHECK_EQ_INT(plan(req, &out, &err), SCV_EINFEASIBLE);
    CHECK(out == NULL);
    CHECK_MSG(strstr(err.msg, "deadline") != NULL, "%s", err.msg);
}

/* Every bad request names what is wrong; the result stays NULL. */
static void t_errors(void)
{
    char p[700];
    snprintf(p, sizeof p, "\"profile\":\"%s,%s\"", f1, f2);
    struct {
        const char *req; /* %s: the profile field */
        int code;
        const char *want;
    } cases[] = {
        {"", SCV_EPARSE, "not valid JSON"},
        {"{\"profile\":", SCV_EPARSE, "not valid JSON"},
        {"{%s,\"target_epochs\":5} x", SCV_EPARSE, "not valid JSON"},
        {"[1,2]", SCV_EPARSE, "expected a JSON object"},
        {"{}", SCV_EINVAL, "\"profile\""},
        {"{\"target_epochs\":5}", SCV_EINVAL, "field \"profile\" (metrics files) or \"metrics\""},
        {"{%s}", SCV_EINVAL, "field \"target_epochs\""},
        {"{\"profile\":5,\"target_epochs\":5}", SCV_EINVAL, "field \"profile\": expected"},
        {"{\"profile\":[\"a,b\"],\"target_epochs\":5}", SCV_EINVAL, "field \"profile\": expected"},
        {"{\"metrics\":3,\"target_epochs\":5}", SCV_EINVAL, "field \"metrics\": expected"},
        {"{\"metrics\":[\"x\",4],\"target_epochs\":5}", SCV_EINVAL, "field \"metrics\": expected"},
        {"{%s,\"metrics\":\"\",\"target_epochs\":5}", SCV_EINVAL, "\"profile\" and \"metrics\": give one"},
        {"{%s,\"target_epochs\":\"5\"}", SCV_EINVAL, "field \"target_epochs\": expected a positive number"},
        {"{%s,\"target_epochs\":0}", SCV_EINVAL, "field \"target_epochs\""},
        {"{%s,\"target_epochs\":-2}", SCV_EINVAL, "field \"target_epochs\""},
        {"{%s,\"target_epochs\":5,\"base_batch\":1.5}", SCV_EINVAL, "field \"base_batch\""},
        {"{%s,\"target_epochs\":5,\"workers\":\"8..2\"}", SCV_EINVAL, "field \"workers\""},
        {"{%s,\"target_epochs\":5,\"workers\":[1,\"2\"]}", SCV_EINVAL, "field \"workers\": expected"},
        {"{%s,\"target_epochs\":5,\"workers\":true}", SCV_EINVAL, "field \"workers\": expected"},
        {"{%s,\"target_epochs\":5,\"workers\":0}", SCV_EINVAL, "field \"workers\""},
        {"{%s,\"target_epochs\":5,\"batch\":[]}", SCV_EINVAL, "field \"batch\": expected"},
        {"{%s,\"target_epochs\":5,\"workers\":[2,4,2]}", SCV_EINVAL, "field \"workers\": '2,4,2': the value 2 is repeated"},
        {"{%s,\"target_epochs\":5,\"batch\":\"32..512,64\"}", SCV_EINVAL, "field \"batch\": '32..512,64': the value 64"},
        {"{%s,\"target_epochs\":5,\"vm\":7}", SCV_EINVAL, "field \"vm\": expected"},
        {"{%s,\"target_epochs\":5,\"vm\":\"m9.huge\"}", SCV_ENOTFOUND, "field \"vm\": 'm9.huge' is not a VM type"},
        {"{%s,\"target_epochs\":5,\"vm\":\"c5.xlarge,c5.xlarg\"}", SCV_ENOTFOUND, "'c5.xlarg' is not a VM type of data/vm-catalog.csv (did you mean 'c5.xlarge'?)"},
        {"{%s,\"target_epochs\":5,\"objective\":\"fast\"}", SCV_EINVAL, "field \"objective\": "},
        {"{%s,\"target_epochs\":5,\"comm\":1}", SCV_EINVAL, "field \"comm\": expected a string"},
        {"{%s,\"target_epochs\":5,\"stat\":\"x\"}", SCV_EINVAL, "field \"stat\""},
        {"{%s,\"target_epochs\":5,\"pricing\":\"free\"}", SCV_EINVAL, "field \"pricing\""},
        {"{%s,\"target_epochs\":5,\"overlap\":2}", SCV_EINVAL, "field \"overlap\""},
        {"{%s,\"target_epochs\":5,\"deadline\":\"soon\"}", SCV_EINVAL, "field \"deadline\""},
        {"{%s,\"target_epochs\":5,\"deadline\":-1}", SCV_EINVAL, "field \"deadline\""},
        {"{%s,\"target_epochs\":5,\"budget\":0}", SCV_EINVAL, "field \"budget\""},
        {"{%s,\"target_epochs\":5,\"all\":\"yes\"}", SCV_EINVAL, "field \"all\": expected true or false"},
        {"{%s,\"target_epochs\":5,\"assume_gpu_speedup\":-1}", SCV_EINVAL, "field \"assume_gpu_speedup\""},
        {"{%s,\"target-epochs\":5}", SCV_EINVAL, "unknown field \"target-epochs\" (did you mean \"target_epochs\"?)"},
        {"{%s,\"target_epochs\":5,\"svg\":\"x.svg\"}", SCV_EINVAL, "unknown field \"svg\""},
        {"{%s,\"target_epochs\":5,\"target_epochs\":6}", SCV_EINVAL, "field \"target_epochs\" is given twice"},
        {"{%s,\"target_run\":\"r.jsonl\"}", SCV_EINVAL, "field \"target_run\" needs \"target_accuracy\""},
        {"{%s,\"target_epochs\":5,\"b_min\":64,\"b_max\":8}", SCV_EINVAL, "\"b_min\" is larger than \"b_max\""},
        {"{%s,\"target_epochs\":5,\"objective\":\"utility\"}", SCV_EINVAL, "\"value_per_hour\""},
        {"{%s,\"target_epochs\":5,\"measured_on\":\"nope\"}", SCV_ENOTFOUND, "field \"measured_on\": 'nope'"},
        {"{%s,\"target_epochs\":5,\"catalog\":\"/no/cat.csv\"}", SCV_ENOTFOUND, "/no/cat.csv"},
        {"{\"profile\":\"/no/file.jsonl\",\"target_epochs\":5}", SCV_ENOTFOUND, "/no/file.jsonl"},
        {"{\"metrics\":[\"{\\\"type\\\":\\\"iter\\\",\\\"workers\\\":\\\"x\\\"}\"],\"target_epochs\":5}", SCV_EPARSE,
         "metrics[0]:1: "},
        {"{\"metrics\":\"{\\\"type\\\":\\\"iter\\\",\\\"workers\\\":1,\\\"batch\\\":8,\\\"t_compute\\\":1,"
         "\\\"t_comm\\\":0,\\\"t_iter\\\":1,\\\"grad_sqnorm_local_mean\\\":null,"
         "\\\"grad_sqnorm_global\\\":null,\\\"epoch_progress\\\":0}\\n\",\"target_epochs\":5}",
         SCV_EINVAL, "metrics: too few iterations"},
        {"{\"metrics\":[],\"target_epochs\":5}", SCV_EINVAL, "field \"metrics\": expected"},
        {"{%s,\"target_run\":\"/no/run.jsonl\",\"target_accuracy\":0.5}", SCV_ENOTFOUND, "/no/run.jsonl"},
        {"{%s,\"target_run\":\"x\",\"target_accuracy\":1.5}", SCV_EINVAL, "field \"target_accuracy\""},
        {"{%s,\"target_epochs\":5,\"mix\":5}", SCV_EINVAL, "field \"mix\": expected"},
        {"{%s,\"target_epochs\":5,\"mix\":[\"c5.xlarge:1\",\"\"]}", SCV_EINVAL, "field \"mix\": expected"},
        {"{%s,\"target_epochs\":5,\"mix\":\"c5.xlarge:x\"}", SCV_EINVAL,
         "field \"mix\": mix 'c5.xlarge:x': count 'x' of c5.xlarge"},
        {"{%s,\"target_epochs\":5,\"mix\":[\"c5.xlarge:1\",\"nope:1\"]}", SCV_ENOTFOUND,
         "field \"mix\": mix 'nope:1': 'nope' is not a VM type"},
        {"{%s,\"target_epochs\":5,\"mix\":\";\"}", SCV_EINVAL, "field \"mix\": no mix in ';'"},
        {"{%s,\"target_epochs\":5,\"compress\":\"topk:1\"}", SCV_EINVAL,
         "field \"compress\": 'topk:1': the factor must be > 1"},
        {"{%s,\"target_epochs\":5,\"compress\":[\"topk:10\",\"selsync:2\"]}", SCV_EINVAL,
         "field \"compress\": 'selsync:2': the share of local steps must be in [0, 1)"},
        {"{%s,\"target_epochs\":5,\"compress\":5}", SCV_EINVAL, "field \"compress\": expected"},
        {"{%s,\"target_epochs\":5,\"compress\":\"topk:10\",\"compress_iterations\":0}", SCV_EINVAL,
         "field \"compress_iterations\": expected a factor > 0"},
        {"{%s,\"target_epochs\":5,\"compress_iterations\":2}", SCV_EINVAL,
         "field \"compress_iterations\" needs \"compress\""},
        {"{%s,\"target_epochs\":5,\"comm\":\"ps\",\"compress\":\"topk:10\"}", SCV_EINVAL,
         "field \"compress\": 'topk:10': Top-k is priced with the ring model"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char req[2048], *out;
        scv_err err;
        snprintf(req, sizeof req, cases[i].req, p);
        int rc = plan(req, &out, &err);
        CHECK_MSG(rc == cases[i].code, "case %zu %s: status %d (%s), expected %d", i, req, rc, err.msg, cases[i].code);
        CHECK_MSG(err.code == rc, "case %zu: err.code %d", i, err.code);
        CHECK_MSG(out == NULL, "case %zu: a result after a failure", i);
        CHECK_MSG(strstr(err.msg, cases[i].want) != NULL, "case %zu %s: '%s' lacks '%s'", i, req, err.msg, cases[i].want);
    }
    /* NULLs: no crash, a status */
    char *out = (char *)"x";
    CHECK_EQ_INT(scv_plan_json(NULL, &out, NULL), SCV_EINVAL);
    CHECK(out == NULL);
    CHECK_EQ_INT(scv_plan_json("{}", NULL, NULL), SCV_EINVAL);
    CHECK_EQ_INT(scv_plan_json("{\"profile\":5}", &out, NULL), SCV_EINVAL);
    scv_json_free(NULL);
}

/* Mixed clusters: rows named by their mix with the per-type batches, the report's "mix"
 * array; a bad --mix is a usage error that names the part at fault. */
static void t_mix(void)
{
    static char out[1 << 16];
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile %s,%s --target-epochs 5 --workers 1..4 --batch 64,256 "
                     "--mix c5.xlarge:2,c6i.4xlarge:1 --all --top 100", bin, f1, f2), 0);
    CHECK_MSG(strstr(out, "   c5.xlarge:2+c6i.4xlarge:1     3     64 ") && strstr(out, "(b per type 21.3/21.3)"), "%s",
              out);
    char req[1024], *rep;
    scv_err err;
    snprintf(req, sizeof req, "{\"profile\":\"%s,%s\",\"target_epochs\":5,\"batch\":[256],"
                              "\"mix\":\"c5.xlarge:2,c6i.4xlarge:1\",\"all\":true}", f1, f2);
    CHECK_EQ_INT(plan(req, &rep, &err), SCV_OK);
    cJSON *o = cJSON_Parse(rep);
    const cJSON *pts = cJSON_GetObjectItem(o, "points"), *pt;
    int mixes = 0;
    cJSON_ArrayForEach(pt, pts)
    {
        const cJSON *mx = cJSON_GetObjectItem(pt, "mix");
        if (!mx) continue;
        mixes++;
        CHECK(!strcmp(cJSON_GetObjectItem(pt, "vm")->valuestring, "c5.xlarge:2+c6i.4xlarge:1"));
        CHECK(cJSON_GetObjectItem(pt, "workers")->valueint == 3 && cJSON_GetArraySize(mx) == 2);
        double sum = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, mx) sum += cJSON_GetObjectItem(e, "count")->valuedouble *
                                         cJSON_GetObjectItem(e, "batch")->valuedouble;
        CHECK_NEAR(sum, 256, 1e-5, 0);
        CHECK(!strcmp(cJSON_GetObjectItem(cJSON_GetArrayItem(mx, 1), "vm")->valuestring, "c6i.4xlarge"));
    }
    CHECK_EQ_INT(mixes, 1);
    CHECK(cJSON_GetObjectItem(o, "excluded_mixes") && cJSON_GetObjectItem(o, "excluded_mixes")->valueint == 0);
    cJSON_Delete(o);
    if (rep) scv_json_free(rep);
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile %s,%s --target-epochs 5 --mix c5.xlarge:0", bin, f1, f2), 2);
    CHECK_MSG(strstr(out, "--mix: mix 'c5.xlarge:0': count '0' of c5.xlarge") != NULL, "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile %s,%s --target-epochs 5 --mix c5.xlarge,m9.huge:2", bin, f1,
                     f2), 2);
    CHECK_MSG(strstr(out, "'m9.huge' is not a VM type of the catalog (data/vm-catalog.csv)") != NULL, "%s", out);
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --help", bin), 0);
    CHECK(strstr(out, "--mix SPEC") != NULL);
}

/* Communication options: the "comm" column and the line without compression in the table,
 * the points' "comm" (assumed iterations said so), the dense front in the report; a bad
 * --compress is a usage error that names the part at fault. */
static void t_compress(void)
{
    static char out[1 << 16];
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile %s,%s --target-epochs 5 --workers 1..4 --batch 64,256 "
                     "--compress topk:10,selsync:0.5 --all --top 100", bin, f1, f2), 0);
    CHECK_MSG(strstr(out, "   vm                         comm                K ") &&
                  strstr(out, "c5.xlarge                  topk:10             4    256 ") &&
                  strstr(out, "c5.xlarge                  dense               4    256 ") &&
                  strstr(out, "c5.xlarge                  selsync:0.5         4    256 ") &&
                  strstr(out, "compression: iterations assumed x1.0 of dense: not measured (topk:10, selsync:0.5); "
                              "compression kernel time not included (none measured)") &&
                  strstr(out, "without compression (") && strstr(out, "the fastest is c5.xlarge K=") &&
                  strstr(out, "; the knee is c5.xlarge K="),
              "%s", out);
    char req[1024], *rep;
    scv_err err;
    snprintf(req, sizeof req, "{\"profile\":\"%s,%s\",\"target_epochs\":5,\"workers\":\"1..4\",\"batch\":[256],"
                              "\"compress\":\"topk:10,selsync:0.5\",\"compress_iterations\":2,\"all\":true}", f1, f2);
    CHECK_EQ_INT(plan(req, &rep, &err), SCV_OK);
    cJSON *o = cJSON_Parse(rep);
    const cJSON *pts = cJSON_GetObjectItem(o, "points"), *fd = cJSON_GetObjectItem(o, "front_dense"), *pt;
    CHECK(cJSON_GetArraySize(pts) == 12 && cJSON_GetArraySize(fd) >= 1);
    CHECK(cJSON_IsObject(cJSON_GetObjectItem(o, "chosen_dense")));
    const cJSON *note = cJSON_GetObjectItem(o, "comm_note");
    CHECK_MSG(cJSON_IsString(note) && strstr(note->valuestring, "iterations assumed x2.0 of dense: not measured"), "%s",
              rep ? rep : "");
    int kinds[3] = {0, 0, 0};
    double dense_iters[5] = {0}, other_iters[5] = {0};
    cJSON_ArrayForEach(pt, pts)
    {
        const cJSON *cm = cJSON_GetObjectItem(pt, "comm");
        CHECK(cJSON_IsObject(cm));
        if (!cm) continue;
        const char *kind = cJSON_GetObjectItem(cm, "kind")->valuestring;
        int K = cJSON_GetObjectItem(pt, "workers")->valueint;
        double it = cJSON_GetObjectItem(pt, "iterations")->valuedouble;
        if (!strcmp(kind, "dense")) {
            kinds[0]++;
            dense_iters[K] = it;
            CHECK(cJSON_IsFalse(cJSON_GetObjectItem(cm, "assumed")) && !cJSON_GetObjectItem(cm, "note"));
        } else {
            kinds[strcmp(kind, "topk") ? 2 : 1]++;
            other_iters[K] = it;
            CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cm, "assumed")));
            CHECK(cJSON_GetObjectItem(cm, "iter_factor")->valuedouble == 2);
            CHECK(!strcmp(cJSON_GetObjectItem(cm, "note")->valuestring, "iterations assumed x2.0 of dense: not measured"));
        }
        if (!strcmp(kind, "topk"))
            CHECK(cJSON_GetObjectItem(cm, "cf")->valuedouble == 10 &&
                  !strcmp(cJSON_GetObjectItem(cm, "collective_asked")->valuestring, "auto"));
        if (!strcmp(kind, "selsync")) CHECK(cJSON_GetObjectItem(cm, "lssr")->valuedouble == 0.5);
    }
    CHECK(kinds[0] == 4 && kinds[1] == 4 && kinds[2] == 4);
    for (int K = 1; K <= 4; K++) CHECK_NEAR(other_iters[K], 2 * dense_iters[K], 1e-5, 0);
    for (const cJSON *e = fd ? fd->child : NULL; e; e = e->next)
        CHECK(!strcmp(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "comm"), "kind")->valuestring, "dense"));
    cJSON_Delete(o);
    if (rep) scv_json_free(rep);
    /* a latency probe in the K = 2 profile (as the trainer writes it): the perf model's
     * alpha_msg, and Top-k priced with it (the synthetic profile's dense fit has alpha 0:
     * one K > 1, so the probed latency makes Top-k dearer) */
    {
        char f3[320], *m3 = malloc(strlen(m2) + 128);
        snprintf(f3, sizeof f3, "%s/lat.jsonl", tmp);
        const char *nl = strchr(m2, '\n');
        if (m3 && nl) {
            sprintf(m3, "%.*s{\"type\":\"latency\",\"iter\":0,\"workers\":2,\"seconds\":5e-4}%s", (int)(nl - m2 + 1),
                    m2, nl);
            CHECK(write_file(f3, m3) == 0);
        }
        double tk[2] = {0, 0};
        for (int i = 0; i < 2; i++) {
            snprintf(req, sizeof req, "{\"profile\":\"%s,%s\",\"target_epochs\":5,\"workers\":[2],\"batch\":[256],"
                                      "\"compress\":\"topk:10:allgather\",\"all\":true}", f1, i ? f3 : f2);
            CHECK_EQ_INT(plan(req, &rep, &err), SCV_OK);
            o = cJSON_Parse(rep);
            const cJSON *am = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "perf"), "alpha_msg");
            CHECK(cJSON_IsNumber(am) && am->valuedouble == (i ? 5e-4 : 0));
            cJSON_ArrayForEach(pt, cJSON_GetObjectItem(o, "points"))
            {
                const cJSON *cm = cJSON_GetObjectItem(pt, "comm"), *t = cJSON_GetObjectItem(cm, "t_comm");
                if (!strcmp(cJSON_GetObjectItem(cm, "kind")->valuestring, "topk")) tk[i] = cJSON_IsNumber(t) ? t->valuedouble : NAN;
            }
            cJSON_Delete(o);
            if (rep) scv_json_free(rep);
        }
        CHECK_MSG(tk[1] - tk[0] > 4.9e-4 && tk[1] - tk[0] < 5.1e-4, "Top-k t_comm %g s unprobed, %g s probed", tk[0], tk[1]);
        free(m3);
        unlink(f3);
    }
    /* without --compress: no "comm" anywhere, no dense front (the report as before) */
    snprintf(req, sizeof req, "{\"profile\":\"%s,%s\",\"target_epochs\":5,\"all\":true}", f1, f2);
    CHECK_EQ_INT(plan(req, &rep, &err), SCV_OK);
    CHECK(rep && !strstr(rep, "\"comm\":{") && !strstr(rep, "front_dense") && !strstr(rep, "comm_note"));
    if (rep) scv_json_free(rep);
    static const struct {
        const char *args, *want;
    } bad[] = {
        {"--compress topk:1", "--compress 'topk:1': the factor must be > 1"},
        {"--compress topk:10,foo", "--compress 'foo': expected none, topk:CF[:auto|allgather|artopk] or selsync:LSSR"},
        {"--compress selsync:1", "--compress 'selsync:1': the share of local steps must be in [0, 1)"},
        {"--compress topk:10 --compress-iterations 0", "--compress-iterations '0': expected a factor > 0"},
        {"--compress-iterations 2", "--compress-iterations needs --compress"},
        {"--comm ps --compress topk:10", "--compress 'topk:10': Top-k is priced with the ring model"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = run(out, sizeof out, "%s plan --profile %s,%s --target-epochs 5 %s", bin, f1, f2, bad[i].args);
        CHECK_MSG(rc == 2, "%s: exit %d", bad[i].args, rc);
        CHECK_MSG(strstr(out, bad[i].want) != NULL, "%s: '%s' lacks '%s'", bad[i].args, out, bad[i].want);
    }
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --help", bin), 0);
    CHECK(strstr(out, "--compress LIST") && strstr(out, "--compress-iterations R"));
}

static void t_profile_texts(void)
{
    const char *texts[2] = {m1, m2};
    scv_profile *a = NULL, *b = NULL;
    scv_err err = {0};
    char paths[700];
    snprintf(paths, sizeof paths, "%s,%s", f1, f2);
    CHECK_EQ_INT(scv_profile_load_texts(texts, 2, NULL, &a, &err), SCV_OK);
    CHECK_EQ_INT(scv_profile_load(paths, &b, &err), SCV_OK);
    CHECK(a && b && a->n == 2 && b->n == 2 && a->has_job);
    if (a && b && a->n == b->n)
        for (size_t i = 0; i < a->n; i++)
            CHECK(!memcmp(&a->configs[i], &b->configs[i], sizeof a->configs[i]));
    scv_profile_free(a);
    scv_profile_free(b);
    const char *bad[2] = {m1, "{\"type\":\"iter\"\n"};
    a = (scv_profile *)1;
    CHECK_EQ_INT(scv_profile_load_texts(bad, 2, "runs", &a, &err), SCV_EPARSE);
    CHECK(a == NULL);
    CHECK_MSG(strstr(err.msg, "runs[1]:1: not a JSON object") != NULL, "%s", err.msg);
    const char *empty[1] = {""};
    CHECK_EQ_INT(scv_profile_load_texts(empty, 1, NULL, &a, &err), SCV_EINVAL);
    CHECK_MSG(strstr(err.msg, "metrics: no iteration lines") != NULL, "%s", err.msg);
    CHECK_EQ_INT(scv_profile_load_texts(NULL, 1, NULL, &a, &err), SCV_EINVAL);
}

/* A metrics text of one job line (VM type vm, architecture arch, thread count threads)
 * followed by the segments of seg (K, B, iterations each), with an evaluation every 10
 * iterations; phase shifts the jitter, so that two files of one configuration differ. */
static char *metrics_of(const char *vm, const char *arch, int threads, int phase, const int (*seg)[3], size_t nseg)
{
    size_t cap = 400, at = 0;
    for (size_t k = 0; k < nseg; k++) cap += (size_t)seg[k][2] * 520;
    char *s = malloc(cap);
    if (!s) return NULL;
    at += (size_t)snprintf(s + at, cap - at,
                           "{\"type\":\"job\",\"model\":\"mlp\",\"arch\":\"%s\",\"params\":25450,"
                           "\"act_bytes\":296,\"input_floats\":784,\"n_train\":2000,\"vm\":\"%s\","
                           "\"threads\":%d,\"workers\":%d,\"batch\":%d}\n", arch, vm, threads, seg[0][0], seg[0][1]);
    int it = 0;
    double ep = 0;
    for (size_t k = 0; k < nseg; k++) {
        int K = seg[k][0], B = seg[k][1];
        double b = (double)B / K;
        for (int i = 1; i <= seg[k][2]; i++) {
            it++, ep += (double)B / 2000;
            double jit = 1 + 0.01 * (((i + phase) * 7919) % 13 - 6) / 6.0 + 1e-7 * (it % 3);
            double tc = (1e-3 + 2e-5 * b) * jit, tm = K > 1 ? 2e-4 * jit : 1e-5, ti = tc + tm + 1e-5;
            double gl = (1 + 100 / b) * jit, gg = (1 + 100.0 / B) * jit;
            at += (size_t)snprintf(s + at, cap - at,
                                   "{\"type\":\"iter\",\"iter\":%d,\"epoch_progress\":%.6f,\"workers\":%d,"
                                   "\"batch\":%d,\"t_compute\":%.9e,\"t_comm\":%.9e,\"t_iter\":%.9e,\"loss\":1.5,"
                                   "\"grad_sqnorm_local_mean\":%.9e,\"grad_sqnorm_global\":%.9e}\n",
                                   it, ep, K, B, tc, tm, ti, gl, gg);
            if (it % 10 == 0)
                at += (size_t)snprintf(s + at, cap - at,
                                       "{\"type\":\"eval\",\"iter\":%d,\"epoch_progress\":%.6f,"
                                       "\"test_accuracy\":%.4f,\"test_loss\":%.4f,\"set\":\"full\"}\n",
                                       it, ep, 0.5 + 0.4 * (1 - exp(-ep)), 1.5 * exp(-ep));
        }
    }
    return s;
}

/* The plan does not depend on the order of the profile's files: every permutation of three
 * (two of which hold the same configuration, K=2 B=128, with different iterations) gives
 * the same report byte for byte, as texts and as files, with the base batch left to the
 * planner and given, and with either statistical model. Before, the configurations came in
 * the order of the files (the report's "profile", the fits' order of points), the default
 * base batch was the first file's first batch (a 4x different time to target) and the
 * models' thread count the first file's. */
static void t_file_order(void)
{
    static const int sx[][3] = {{1, 32, 40}}, sy[][3] = {{2, 128, 40}}, sz[][3] = {{2, 128, 30}, {4, 512, 30}};
    char *txt[3] = {metrics_of("c5.xlarge", "mlp:784-32-10", 1, 0, sx, 1),
                    metrics_of("c5.xlarge", "mlp:784-32-10", 1, 3, sy, 1),
                    metrics_of("c5.xlarge", "mlp:784-32-10", 1, 5, sz, 2)};
    char path[3][300];
    for (int i = 0; i < 3; i++) {
        snprintf(path[i], sizeof path[i], "%s/order%d.jsonl", tmp, i);
        CHECK(txt[i] && !write_file(path[i], txt[i]));
    }
    static const char *const opts[] = {
        "\"target_epochs\":5",
        "\"target_epochs\":5,\"base_batch\":64,\"vm\":\"all\",\"all\":true,\"workers\":\"1..8\"",
        "\"target_epochs\":5,\"stat\":\"scavenger\",\"all\":true",
    };
    static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (size_t o = 0; o < sizeof opts / sizeof opts[0]; o++) {
        char *first = NULL;
        for (int form = 0; form < 2; form++)
            for (int p = 0; p < 6; p++) {
                const int *q = perms[p];
                char *req = NULL, *out = NULL;
                scv_err err;
                if (form == 0) { /* the texts */
                    cJSON *js = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(js, "metrics");
                    for (int i = 0; i < 3; i++) cJSON_AddItemToArray(a, cJSON_CreateString(txt[q[i]]));
                    char *pr = cJSON_PrintUnformatted(js);
                    size_t n = pr ? strlen(pr) : 0;
                    req = n ? malloc(n + strlen(opts[o]) + 4) : NULL;
                    if (req) sprintf(req, "%.*s,%s}", (int)(n - 1), pr, opts[o]);
                    free(pr);
                    cJSON_Delete(js);
                } else if ((req = malloc(1200 + strlen(opts[o]))))
                    sprintf(req, "{\"profile\":\"%s,%s,%s\",%s}", path[q[0]], path[q[1]], path[q[2]], opts[o]);
                int rc = req ? plan(req, &out, &err) : -1;
                CHECK_MSG(rc == SCV_OK, "options %zu form %d order %d%d%d: %s", o, form, q[0], q[1], q[2],
                          rc ? err.msg : "");
                if (rc == SCV_OK && !first) first = out;
                else if (rc == SCV_OK) {
                    CHECK_MSG(!strcmp(out, first), "options %zu form %d: order %d%d%d gives another report:\n#   %.400s\n"
                              "#   %.400s", o, form, q[0], q[1], q[2], out, first);
                    scv_json_free(out);
                }
                free(req);
            }
        if (first) {
            CHECK_MSG(strstr(first, "\"profile\":[{\"workers\":1,\"batch\":32,") != NULL, "%.300s", first);
            if (o == 0) CHECK_MSG(strstr(first, "\"target_batch\":32,") != NULL, "%.300s", first);
            scv_json_free(first);
        }
    }
    /* the pooled configuration: every file's iterations of K=2 B=128 (after each one's warm-up) */
    scv_profile *pa = NULL, *pb = NULL;
    scv_err err = {0};
    const char *ab[2] = {txt[1], txt[2]}, *ba[2] = {txt[2], txt[1]};
    CHECK_EQ_INT(scv_profile_load_texts(ab, 2, NULL, &pa, &err), SCV_OK);
    CHECK_EQ_INT(scv_profile_load_texts(ba, 2, NULL, &pb, &err), SCV_OK);
    CHECK(pa && pb && pa->n == 2 && pb->n == 2);
    if (pa && pb && pa->n == 2 && pb->n == 2) {
        CHECK(pa->configs[0].workers == 2 && pa->configs[0].batch == 128 && pa->configs[0].n_iters == 36 + 27);
        CHECK(pa->configs[1].workers == 4 && pa->configs[1].batch == 512);
        CHECK(!memcmp(pa->configs, pb->configs, 2 * sizeof *pa->configs));
    }
    scv_profile_free(pa);
    scv_profile_free(pb);
    for (int i = 0; i < 3; i++) free(txt[i]);
}

/* Files of different jobs (or of one job on different VM types) are refused, naming both
 * files and the field, in either order; a file of the same job at another thread count is
 * not a different job. */
static void t_file_jobs_differ(void)
{
    static const int sx[][3] = {{1, 32, 40}}, sy[][3] = {{2, 128, 40}};
    char *a = metrics_of("c5.xlarge", "mlp:784-32-10", 1, 0, sx, 1),
         *b = metrics_of("c5.2xlarge", "mlp:784-32-10", 1, 0, sy, 1),
         *c = metrics_of("c5.xlarge", "mlp:784-64-10", 1, 0, sy, 1),
         *d = metrics_of("c5.xlarge", "mlp:784-32-10", 2, 0, sy, 1);
    char pa[300], pb[300], pc[300], paths[1000];
    snprintf(pa, sizeof pa, "%s/job-a.jsonl", tmp);
    snprintf(pb, sizeof pb, "%s/job-b.jsonl", tmp);
    snprintf(pc, sizeof pc, "%s/job-c.jsonl", tmp);
    CHECK(a && b && c && d && !write_file(pa, a) && !write_file(pb, b) && !write_file(pc, c));
    scv_profile *p = NULL;
    scv_err err = {0};
    for (int order = 0; order < 2; order++) {
        snprintf(paths, sizeof paths, "%s,%s", order ? pb : pa, order ? pa : pb);
        CHECK_EQ_INT(scv_profile_load(paths, &p, &err), SCV_EINVAL);
        CHECK(p == NULL);
        CHECK_MSG(strstr(err.msg, pa) && strstr(err.msg, pb) && strstr(err.msg, "field 'vm'") &&
                  strstr(err.msg, "'c5.xlarge'") && strstr(err.msg, "'c5.2xlarge'"), "%s", err.msg);
        snprintf(paths, sizeof paths, "%s,%s", order ? pc : pa, order ? pa : pc);
        CHECK_EQ_INT(scv_profile_load(paths, &p, &err), SCV_EINVAL);
        CHECK_MSG(strstr(err.msg, pa) && strstr(err.msg, pc) && strstr(err.msg, "field 'arch'"), "%s", err.msg);
    }
    /* through scv_plan_json: the texts named metrics[i] */
    cJSON *js = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(js, "metrics");
    cJSON_AddItemToArray(arr, cJSON_CreateString(a));
    cJSON_AddItemToArray(arr, cJSON_CreateString(b));
    cJSON_AddNumberToObject(js, "target_epochs", 5);
    char *req = cJSON_PrintUnformatted(js), *out = NULL;
    CHECK_EQ_INT(req ? plan(req, &out, &err) : -1, SCV_EINVAL);
    CHECK_MSG(strstr(err.msg, "metrics[0]:1 and metrics[1]:1: the job lines disagree on field 'vm'"), "%s", err.msg);
    free(req);
    cJSON_Delete(js);
    const char *same[2] = {a, d};
    CHECK_EQ_INT(scv_profile_load_texts(same, 2, NULL, &p, &err), SCV_OK);
    CHECK(p && p->n == 2 && p->job.threads == 1);
    scv_profile_free(p);
    free(a), free(b), free(c), free(d);
}

/* A file recorded at another thread count than the models' (issue 24 item 18): its
 * configuration is left out of the fit, and the report says which file, how many and why
 * ("left_out"), as files and as texts; with one thread count there is no note. */
static void t_threads_left_out(void)
{
    static const int sx[][3] = {{1, 32, 40}}, sy[][3] = {{2, 128, 40}}, sz[][3] = {{4, 256, 40}};
    char *t[3] = {metrics_of("c5.xlarge", "mlp:784-32-10", 1, 0, sx, 1),
                  metrics_of("c5.xlarge", "mlp:784-32-10", 1, 1, sy, 1),
                  metrics_of("c5.xlarge", "mlp:784-32-10", 2, 2, sz, 1)};
    char path[3][300], req[1200];
    for (int i = 0; i < 3; i++) {
        snprintf(path[i], sizeof path[i], "%s/thr%d.jsonl", tmp, i);
        CHECK(t[i] && !write_file(path[i], t[i]));
    }
    snprintf(req, sizeof req, "{\"profile\":\"%s,%s,%s\",\"target_epochs\":5}", path[0], path[1], path[2]);
    char *out = NULL, want[600];
    scv_err err = {0};
    CHECK_EQ_INT(plan(req, &out, &err), SCV_OK);
    snprintf(want, sizeof want, "\"left_out\":\"%s: 1 configuration at 2 threads left out of the fit (the models use 1 "
             "thread)\"", path[2]);
    CHECK_MSG(out && strstr(out, want), "%.2000s", out ? out : err.msg);
    CHECK_MSG(out && strstr(out, "\"n_configs\":") && !strstr(out, "\"workers\":4,\"batch\":256,\"iterations\""),
              "%.600s", out ? out : "");
    scv_json_free(out);
    cJSON *js = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(js, "metrics");
    for (int i = 0; i < 3; i++) cJSON_AddItemToArray(arr, cJSON_CreateString(t[i]));
    cJSON_AddNumberToObject(js, "target_epochs", 5);
    char *r2 = cJSON_PrintUnformatted(js);
    out = NULL;
    CHECK_EQ_INT(r2 ? plan(r2, &out, &err) : -1, SCV_OK);
    CHECK_MSG(out && strstr(out, "\"left_out\":\"metrics[2]: 1 configuration at 2 threads left out"), "%.300s",
              out ? out : err.msg);
    scv_json_free(out);
    free(r2);
    cJSON_Delete(js);
    /* one rule for the job's threads (the profile's) and the models' (was: the smallest
     * thread count for the profile, the most common for the models: 1 and 2 here) */
    char *t4 = metrics_of("c5.xlarge", "mlp:784-32-10", 2, 3, sx, 1), p4[300];
    snprintf(p4, sizeof p4, "%s/thr3.jsonl", tmp);
    CHECK(t4 && !write_file(p4, t4));
    scv_profile *prof = NULL;
    snprintf(req, sizeof req, "%s,%s,%s", path[0], path[2], p4);
    CHECK_EQ_INT(scv_profile_load(req, &prof, &err), SCV_OK);
    CHECK_MSG(prof && prof->n == 3 && prof->job.threads == 2 && scv_profile_models_threads(prof) == 2,
              "the profile's threads %d, the models' %d", prof ? prof->job.threads : -1,
              prof ? scv_profile_models_threads(prof) : -1);
    scv_profile_free(prof);
    snprintf(req, sizeof req, "{\"profile\":\"%s,%s,%s\",\"target_epochs\":5}", path[0], path[2], p4);
    out = NULL;
    CHECK_EQ_INT(plan(req, &out, &err), SCV_OK);
    snprintf(want, sizeof want, "\"left_out\":\"%s: 1 configuration at 1 thread left out of the fit (the models use 2 "
             "threads)\"", path[0]);
    CHECK_MSG(out && strstr(out, want), "%.600s", out ? out : err.msg);
    scv_json_free(out);
    free(t4);
    snprintf(req, sizeof req, "{\"profile\":\"%s,%s\",\"target_epochs\":5}", path[0], path[1]);
    out = NULL;
    CHECK_EQ_INT(plan(req, &out, &err), SCV_OK);
    CHECK_MSG(out && strstr(out, "\"left_out\":null"), "%.300s", out ? out : err.msg);
    scv_json_free(out);
    for (int i = 0; i < 3; i++) free(t[i]);
}

/* The catalog from the working directory of a checkout; elsewhere beside the executable
 * when it is a checkout's build/tests/ (the asan build's is one level deeper: not found
 * beside it, and then "data/NAME"). */
static void t_data_file(void)
{
    char buf[4200], cwd[4096], exe[4096], beside[4300];
    CHECK(!strcmp(scv_data_file("vm-catalog.csv", buf, sizeof buf), "data/vm-catalog.csv"));
    CHECK(!strcmp(scv_data_file("no-such-file.csv", buf, sizeof buf), "data/no-such-file.csv"));
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    CHECK(n > 0 && getcwd(cwd, sizeof cwd));
    if (n <= 0) return;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    snprintf(beside, sizeof beside, "%s/../../data/vm-catalog.csv", exe);
    int expect = access(beside, R_OK) == 0;
    CHECK(chdir(tmp) == 0);
    const char *p = scv_data_file("vm-catalog.csv", buf, sizeof buf);
    if (expect) CHECK_MSG(!strcmp(p, beside), "%s, expected %s", p, beside);
    else CHECK_MSG(access(p, R_OK) == 0 || !strcmp(p, "data/vm-catalog.csv"), "%s", p);
    CHECK(chdir(cwd) == 0);
}

/* The version macros and the library's at run time agree: "MAJOR.MINOR.PATCH" and
 * MAJOR * 10000 + MINOR * 100 + PATCH (the soname's major is SCV_VERSION_MAJOR). */
static void t_version(void)
{
    char v[64];
    snprintf(v, sizeof v, "%d.%d.%d", SCV_VERSION_MAJOR, SCV_VERSION_MINOR, SCV_VERSION_PATCH);
    CHECK_MSG(!strcmp(v, SCV_VERSION), "%s vs %s", v, SCV_VERSION);
    CHECK_MSG(!strcmp(scv_version(), SCV_VERSION), "%s", scv_version());
    CHECK_EQ_INT(scv_version_number(), SCV_VERSION_NUMBER);
    CHECK_EQ_INT(SCV_VERSION_NUMBER, SCV_VERSION_MAJOR * 10000 + SCV_VERSION_MINOR * 100 + SCV_VERSION_PATCH);
#if SCV_VERSION_NUMBER < 100
    CHECK_MSG(0, "SCV_VERSION_NUMBER %d is not usable in #if", SCV_VERSION_NUMBER);
#endif
}

/* The request's space is bounded before planning (SCV_PLAN_LIMITS_DEFAULT: 100,000 points):
 * every VM type x 1..1024 workers x 8 batch sizes is refused with SCV_ERANGE naming the
 * limit and the product; "max_points" raises it (a trusted caller) and must be an integer;
 * scv_plan_json_limited without allow_raise refuses the field (the service). */
static void t_limits(void)
{
    char p[700], req[1200], *out;
    scv_err err;
    snprintf(p, sizeof p, "\"profile\":\"%s,%s\"", f1, f2);
    snprintf(req, sizeof req, "{%s,\"target_epochs\":5,\"vm\":\"all\",\"workers\":\"1..1024\"}", p);
    CHECK_EQ_INT(plan(req, &out, &err), SCV_ERANGE);
    CHECK(out == NULL);
    CHECK_MSG(strstr(err.msg, "max_points = 100000") && strstr(err.msg, "x 1024 worker count(s) x 8 batch size(s)"),
              "%s", err.msg);
    snprintf(req, sizeof req, "{%s,\"target_epochs\":5,\"vm\":\"all\",\"workers\":\"1..1024\",\"max_points\":1000000}", p);
    CHECK_EQ_INT(plan(req, &out, &err), SCV_OK);
    CHECK_MSG(out && strstr(out, "\"chosen\":"), "%s", err.msg);
    if (err.code == SCV_OK) scv_json_free(out);
    snprintf(req, sizeof req, "{%s,\"target_epochs\":5,\"max_points\":1.5}", p);
    CHECK_EQ_INT(plan(req, &out, &err), SCV_EINVAL);
    CHECK_MSG(strstr(err.msg, "field \"max_points\""), "%s", err.msg);
    snprintf(req, sizeof req, "{%s,\"target_epochs\":5,\"vm\":\"c5.xlarge\",\"workers\":\"1..4\",\"batch\":\"32..64\"}", p);
    scv_plan_limits lim = {8, 1 << 20};
    out = NULL;
    CHECK_EQ_INT(scv_plan_json_limited(req, &lim, 0, &out, &err), SCV_OK); /* 1 x 4 x 2 = 8 points: within */
    scv_json_free(out);
    lim.max_points = 7;
    CHECK_EQ_INT(scv_plan_json_limited(req, &lim, 0, &out, &err), SCV_ERANGE);
    lim.max_response = 100;
    lim.max_points = 8;
    CHECK_EQ_INT(scv_plan_json_limited(req, &lim, 0, &out, &err), SCV_ERANGE);
    CHECK_MSG(strstr(err.msg, "max_response = 100 bytes"), "%s", err.msg);
    snprintf(req, sizeof req, "{%s,\"target_epochs\":5,\"max_points\":9}", p);
    CHECK_EQ_INT(scv_plan_json_limited(req, NULL, 0, &out, &err), SCV_EINVAL);
    CHECK_MSG(strstr(err.msg, "field \"max_points\"") && strstr(err.msg, "--max-plan-points"), "%s", err.msg);
}

/* Spot with the risk of preemption (--preempt-rate, --spot-risk, --spot-recovery; the fields
 * "preempt_rate", "spot_risk", "spot_recovery"): the table's section and the report's "spot"
 * (the same bytes from both), the choice moving from spot to on-demand as the rate grows,
 * the fallback time against its equation, and the errors naming the option or field. */
static void t_spot(void)
{
    static char out[1 << 16];
    const char *base = "--target-epochs 1000000 --workers 1..4 --batch 64,256";
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile %s,%s %s --preempt-rate c5.xlarge=0.05 --spot-recovery inplace",
                     bin, f1, f2, base), 0);
    CHECK_MSG(strstr(out, "spot with the risk of preemption") && strstr(out, "recovery in place: 1 s idle") &&
                  strstr(out, "preemptions per VM-hour: c5.xlarge 0.05 (--preempt-rate)") &&
                  strstr(out, "CONFIGURATION                PRICING        OD+SPOT  E[PREEMPT]  TIME       COST") &&
                  strstr(out, "the front, each configuration's best pricing:"),
              "%s", out);
    char args[1024], req[1024], *rep;
    scv_err err;
    /* a low rate: spot; a high one: on-demand (each point's best); the same report both ways */
    const char *rates[2] = {"0.05", "50"}, *want[2] = {"spot", "ondemand"};
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args, "--profile %s,%s %s --preempt-rate %s", f1, f2, base, rates[i]);
        snprintf(req, sizeof req, "{\"profile\":\"%s,%s\",\"target_epochs\":1000000,\"workers\":\"1..4\","
                                  "\"batch\":[64,256],\"preempt_rate\":%s}", f1, f2, rates[i]);
        CHECK_EQ_INT(plan(req, &rep, &err), SCV_OK);
        CHECK_MSG(rep && !strcmp(rep, cli_json(args)), "%s", rep ? rep : err.msg);
        cJSON *o = cJSON_Parse(rep);
        const cJSON *sp = cJSON_GetObjectItem(o, "spot"), *ch = cJSON_GetObjectItem(sp, "chosen");
        const cJSON *best = cJSON_GetObjectItem(ch, "best");
        CHECK_MSG(cJSON_IsString(best) && !strcmp(best->valuestring, want[i]), "rate %s: %s", rates[i], rep);
        const cJSON *r0 = cJSON_GetArrayItem(cJSON_GetObjectItem(sp, "rates"), 0);
        CHECK(r0 && !strcmp(cJSON_GetObjectItem(r0, "source")->valuestring, "user") &&
              cJSON_GetObjectItem(r0, "per_vm_hour")->valuedouble == atof(rates[i]));
        CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(sp, "front")) == cJSON_GetArraySize(cJSON_GetObjectItem(o, "front")));
        cJSON_Delete(o);
        if (rep) scv_json_free(rep);
    }
    /* a deadline: the latest switch to on-demand t* = (D - T0 - M) / rho, from the report's own
     * figures (T0 the on-demand time, rho spot's lost share, M the margin) */
    snprintf(req, sizeof req, "{\"profile\":\"%s,%s\",\"target_epochs\":1000000,\"workers\":[2],\"batch\":[256],"
                              "\"preempt_rate\":\"c5.xlarge=2\",\"deadline\":\"25h\"}", f1, f2);
    CHECK_EQ_INT(plan(req, &rep, &err), SCV_OK);
    cJSON *o = cJSON_Parse(rep);
    const cJSON *ch = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "spot"), "chosen"), *m;
    double t0 = NAN, rho = NAN;
    cJSON_ArrayForEach(m, cJSON_GetObjectItem(ch, "modes"))
    {
        const char *k = cJSON_GetObjectItem(m, "pricing")->valuestring;
        if (!strcmp(k, "ondemand")) t0 = cJSON_GetObjectItem(m, "time_s")->valuedouble;
        if (!strcmp(k, "spot")) rho = cJSON_GetObjectItem(m, "lost_share")->valuedouble;
    }
    const cJSON *fb = cJSON_GetObjectItem(ch, "fallback_at_s"), *mg = cJSON_GetObjectItem(ch, "fallback_margin_s");
    CHECK_MSG(cJSON_IsNumber(fb) && cJSON_IsNumber(mg) && t0 > 0 && rho > 0, "%s", rep ? rep : "");
    if (cJSON_IsNumber(fb) && cJSON_IsNumber(mg))
        CHECK_NEAR(fb->valuedouble, fmax(0, (90000 - t0 - mg->valuedouble) / rho), 1e-4, 0);
    cJSON_Delete(o);
    if (rep) scv_json_free(rep);
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile %s,%s --target-epochs 1000000 --workers 2 --batch 256 "
                     "--preempt-rate c5.xlarge=2 --deadline 25h", bin, f1, f2), 0);
    CHECK_MSG(strstr(out, "fallback (Can't Be Late): ") && strstr(out, "minus the work left (on-demand seconds) falls to"),
              "%s", out);
    /* without the options: no "spot" (the report as before) */
    snprintf(req, sizeof req, "{\"profile\":\"%s,%s\",\"target_epochs\":5}", f1, f2);
    CHECK_EQ_INT(plan(req, &rep, &err), SCV_OK);
    CHECK(rep && !strstr(rep, "\"spot\":"));
    if (rep) scv_json_free(rep);
    snprintf(req, sizeof req, "{\"profile\":\"%s,%s\",\"target_epochs\":5,\"spot_risk\":true}", f1, f2);
    CHECK_EQ_INT(plan(req, &rep, &err), SCV_OK);
    CHECK_MSG(rep && strstr(rep, "\"spot\":{\"recovery\":\"restart\"") && strstr(rep, "\"source\":\"provider default\""),
              "%s", rep ? rep : err.msg);
    if (rep) scv_json_free(rep);
    /* the policy's times given (what a benchmark's trace knows): the report states them, and
     * the same bytes from both; in place, d = idle + replace_s c */
    snprintf(args, sizeof args, "--profile %s,%s %s --preempt-rate 2 --spot-recovery inplace --spot-restart 7 "
                                "--spot-idle 0.25 --spot-replace 1.5m", f1, f2, base);
    snprintf(req, sizeof req, "{\"profile\":\"%s,%s\",\"target_epochs\":1000000,\"workers\":\"1..4\","
                              "\"batch\":[64,256],\"preempt_rate\":2,\"spot_recovery\":\"inplace\",\"spot_restart_s\":7,"
                              "\"spot_idle_s\":0.25,\"spot_replace_s\":90}", f1, f2);
    CHECK_EQ_INT(plan(req, &rep, &err), SCV_OK);
    CHECK_MSG(rep && !strcmp(rep, cli_json(args)), "%s", rep ? rep : err.msg);
    o = rep ? cJSON_Parse(rep) : NULL;
    const cJSON *sp = cJSON_GetObjectItem(o, "spot"), *pol = cJSON_GetObjectItem(sp, "policy");
    ch = cJSON_GetObjectItem(sp, "chosen");
    CHECK(cJSON_GetObjectItem(pol, "restart_s")->valuedouble == 7 &&
          cJSON_GetObjectItem(pol, "inplace_idle_s")->valuedouble == 0.25 &&
          cJSON_GetObjectItem(pol, "replace_s")->valuedouble == 90);
    const cJSON *cl = cJSON_GetObjectItem(ch, "capacity_lost_share");
    CHECK_MSG(cJSON_IsNumber(cl) && cl->valuedouble >= 0 && cl->valuedouble <= 1, "%s", rep);
    if (cJSON_IsNumber(cl))
        CHECK_NEAR(cJSON_GetObjectItem(ch, "delay_s_per_preemption")->valuedouble, 0.25 + 90 * cl->valuedouble, 1e-5, 0);
    cJSON_Delete(o);
    if (rep) scv_json_free(rep);
    /* no idle at all (in place measured 0.00 s per preemption on bench spot) */
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --profile %s,%s %s --preempt-rate 2 --spot-recovery inplace --spot-idle 0",
                     bin, f1, f2, base), 0);
    CHECK_MSG(strstr(out, "recovery in place: 0 s idle"), "%s", out);
    static const struct {
        const char *args, *want;
    } bad[] = {
        {"--preempt-rate fast", "--preempt-rate 'fast': expected a rate in [0, 3600] preemptions per VM-hour"},
        {"--preempt-rate c5.xlarge=-1", "--preempt-rate c5.xlarge='-1': expected a rate"},
        {"--preempt-rate nosuch=0.1", "--preempt-rate 'nosuch': not a VM type of the catalog"},
        {"--spot-recovery maybe", "--spot-recovery 'maybe': expected restart or inplace"},
        {"--spot-replace soon", "--spot-replace 'soon': expected seconds in [0, 1e6]"},
        {"--spot-idle -1", "--spot-idle '-1': expected seconds"},
        {"--spot-restart 2d", "--spot-restart '2d': expected seconds"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = run(out, sizeof out, "%s plan --profile %s,%s --target-epochs 5 %s", bin, f1, f2, bad[i].args);
        CHECK_MSG(rc == 2, "%s: exit %d", bad[i].args, rc);
        CHECK_MSG(strstr(out, bad[i].want) != NULL, "%s: '%s' lacks '%s'", bad[i].args, out, bad[i].want);
    }
    static const struct {
        const char *field, *want;
    } badj[] = {
        {"\"preempt_rate\":\"nosuch=1\"", "field \"preempt_rate\": 'nosuch': not a VM type"},
        {"\"preempt_rate\":true", "field \"preempt_rate\": expected preemptions per VM-hour"},
        {"\"preempt_rate\":-2", "field \"preempt_rate\": '-2': expected a rate"},
        {"\"spot_recovery\":\"later\"", "field \"spot_recovery\": expected \"restart\" or \"inplace\""},
        {"\"spot_risk\":1", "field \"spot_risk\": expected true or false"},
        {"\"spot_replace_s\":\"90\"", "field \"spot_replace_s\": expected seconds"},
    };
    for (size_t i = 0; i < sizeof badj / sizeof badj[0]; i++) {
        snprintf(req, sizeof req, "{\"profile\":\"%s,%s\",\"target_epochs\":5,%s}", f1, f2, badj[i].field);
        CHECK_EQ_INT(plan(req, &rep, &err) != SCV_OK, 1);
        CHECK_MSG(strstr(err.msg, badj[i].want), "%s: %s", badj[i].field, err.msg);
    }
    CHECK_EQ_INT(run(out, sizeof out, "%s plan --help", bin), 0);
    CHECK(strstr(out, "--preempt-rate R|TYPE=R,..") && strstr(out, "--spot-risk") && strstr(out, "--spot-recovery"));
}

/* The planner prices the target's band (issue 36 item 4): with epochs from a target run, each
 * point's time and cost carry the band `run` states for a stored run's epochs (the corpus's
 * reruns' spread: scv_estimate_rerun_band, carried by the job's carry: here none, the job line
 * has no learning rate, so the same ratios at every batch); the CLI prints the same; given
 * epochs have none. */
static void t_band_priced(void)
{
    char runf[300], req[2048], *rep = NULL;
    scv_err err;
    snprintf(runf, sizeof runf, "%s/target-run.jsonl", tmp);
    FILE *f = fopen(runf, "w");
    CHECK(f != NULL);
    if (!f) return;
    fprintf(f, "{\"type\":\"iter\",\"iter\":1,\"workers\":1,\"batch\":64,\"t_compute\":0.01,\"t_comm\":0,"
               "\"t_iter\":0.01,\"grad_sqnorm_local_mean\":null,\"grad_sqnorm_global\":null,\"epoch_progress\":0.01}\n");
    for (int i = 1; i <= 8; i++) /* 0.5 epochs apart: 0.8 at 2.5 epochs */
        fprintf(f, "{\"type\":\"eval\",\"iter\":%d,\"test_accuracy\":%.3f,\"epoch_progress\":%.2f}\n", 100 * i,
                0.5 + 0.06 * i, 0.5 * i);
    CHECK(fclose(f) == 0);
    snprintf(req, sizeof req, "{\"profile\":[\"%s\",\"%s\"],\"target_run\":\"%s\",\"target_accuracy\":0.8,"
             "\"all\":true}", f1, f2, runf);
    CHECK_MSG(plan(req, &rep, &err) == SCV_OK, "%s", err.msg);
    if (!rep) return;
    /* the band the loop's rule gives a stored run's 2.5 epochs */
    char buf[4096];
    scv_lcurve_set set = {0};
    scv_calib cal = {0};
    scv_calib_policy cp = scv_calib_policy_default();
    CHECK_EQ_INT(scv_lcurves_load(scv_data_file("curves.jsonl", buf, sizeof buf), &set, NULL), SCV_OK);
    CHECK_EQ_INT(scv_calib_build(&set, &cp, &cal, NULL), SCV_OK);
    scv_estimate e = scv_estimate_none();
    e.source = SCV_TARGET_LEARNT, e.epochs = 2.5, e.batch = 64;
    CHECK(scv_estimate_rerun_band(&e, &cal, SCV_METRIC_ACCURACY) > 0);
    scv_calib_free(&cal);
    scv_lcurve_set_free(&set);
    cJSON *o = cJSON_Parse(rep), *pts = cJSON_GetObjectItem(o, "points");
    int n = 0;
    cJSON *pt;
    cJSON_ArrayForEach(pt, pts) {
        double t = cJSON_GetObjectItem(pt, "time_s")->valuedouble, c = cJSON_GetObjectItem(pt, "cost")->valuedouble;
        cJSON *lo = cJSON_GetObjectItem(pt, "time_lo_s"), *hi = cJSON_GetObjectItem(pt, "time_hi_s");
        cJSON *clo = cJSON_GetObjectItem(pt, "cost_lo"), *chi = cJSON_GetObjectItem(pt, "cost_hi");
        CHECK(lo && hi && clo && chi);
        if (!(lo && hi && clo && chi)) break;
        CHECK(lo->valuedouble <= t && t <= hi->valuedouble && lo->valuedouble < hi->valuedouble);
        CHECK_NEAR(lo->valuedouble / t, exp(e.band.lo), 1e-4, 0);
        CHECK_NEAR(hi->valuedouble / t, exp(e.band.hi), 1e-4, 0);
        CHECK_NEAR(clo->valuedouble / c, exp(e.band.lo), 1e-4, 0);
        CHECK_NEAR(chi->valuedouble / c, exp(e.band.hi), 1e-4, 0);
        n++;
    }
    CHECK(n >= 2);
    /* the command line gives the same report */
    char args[1024];
    snprintf(args, sizeof args, "--profile %s,%s --target-run %s --target-accuracy 0.8 --all", f1, f2, runf);
    CHECK_MSG(!strcmp(cli_json(args), rep), "plan --json differs from scv_plan_json");
    cJSON_Delete(o);
    scv_json_free(rep);
    /* given epochs: no band */
    snprintf(req, sizeof req, "{\"profile\":[\"%s\",\"%s\"],\"target_epochs\":5}", f1, f2);
    CHECK_EQ_INT(plan(req, &rep, &err), SCV_OK);
    if (rep) CHECK(!strstr(rep, "time_lo_s"));
    scv_json_free(rep);
}

static const scv_test tests[] = {
    {"same_as_cli", t_same_as_cli},
    {"fields_used", t_fields_used},
    {"errors", t_errors},
    {"limits", t_limits},
    {"mix", t_mix},
    {"compress", t_compress},
    {"spot", t_spot},
    {"profile_texts", t_profile_texts},
    {"file_order", t_file_order},
    {"file_jobs_differ", t_file_jobs_differ}, {"threads_left_out", t_threads_left_out},
    {"data_file", t_data_file},
    {"version", t_version},
    {"band_priced", t_band_priced},
};

int main(int argc, char **argv)
{
    (void)spawn_group; /* scv_test_proc.h's other helper */
    bin = getenv("SCV_BIN") ? getenv("SCV_BIN") : "build/scavenger";
    snprintf(tmp, sizeof tmp, "/tmp/scv-plan-json.XXXXXX");
    if (!mkdtemp(tmp)) {
        printf("not ok - mkdtemp\n0 passed, 1 failed\n");
        return 1;
    }
    snprintf(f1, sizeof f1, "%s/k1.jsonl", tmp);
    snprintf(f2, sizeof f2, "%s/k2.jsonl", tmp);
    m1 = metrics(1, 32, 40);
    m2 = metrics(2, 128, 40);
    if (!m1 || !m2 || write_file(f1, m1) || write_file(f2, m2)) {
        printf("not ok - writing the metrics in %s\n0 passed, 1 failed\n", tmp);
        return 1;
    }
    int rc = scv_test_main(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
    free(m1);
    free(m2);
    run(NULL, 0, "rm -rf %s", tmp);
    return rc;
}
