/*
 * test_plan_io.c - the planner's inputs read strictly: the VM catalog (its columns, prices
 * and the errors naming file, line and field) and profiles (metrics files made into
 * configurations, and their errors).
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "model/model.h"
#include "io/io.h"
#include "scv_test.h"
#include "core/util.h"
#include "plan_fixtures.h"

#include <unistd.h>

static void t_catalog(void)
{
    scv_catalog *c = load_cat();
    if (!c) return;
    CHECK_EQ_INT(c->n, 74);
    CHECK_EQ_INT(c->skipped, 3); /* the three GCP GPU attachments (no vCPUs of their own) */
    const scv_vm_type *v = scv_catalog_find(c, "c5.xlarge");
    CHECK(v && v->vcpus == 4 && v->mem_gib == 8 && v->ondemand == 0.17 && v->line == 2);
    CHECK(v && v->spot_min == 0.0639 && v->net_gbps == 1.25);
    v = scv_catalog_find(c, "Standard_NC40ads_H100_v5");
    CHECK(v && isnan(v->spot_min) && v->gpus == 1);
    double rc = 0, rg = 0;
    CHECK(scv_memory_rates(c, "gcp", &rc, &rg, NULL) == SCV_OK);
    CHECK(rc > 0.01 && rc < 0.1 && rg >= 0 && rg < 0.02);
    scv_catalog_free(c);
    /* malformed catalogs: the error names the line and field */
    char path[64];
    snprintf(path, sizeof path, "/tmp/scv-cat-%ld.csv", (long)getpid());
    const char *bad[][2] = {
        {"provider,instance_type,vcpus,memory_gib,ondemand_usd_per_hr,extra\naws,a,4,8,0.1,x\naws,b,four,8,0.2,y\n",
         ":3: field 'vcpus' is not a number: 'four'"},
        {"provider,instance_type,vcpus,ondemand_usd_per_hr\naws,a,4,0.1\n", ":1: header has no 'memory_gib' column"},
        {"provider,instance_type,vcpus,memory_gib,ondemand_usd_per_hr\naws,a,4,8\n", ":2: 4 fields, the header has 5"},
        {"provider,instance_type,vcpus,memory_gib,ondemand_usd_per_hr\naws,\"a,4,8,1\n", ":2: unterminated quote"},
        {"", "empty catalog"},
        /* out of range: (int)1e10 was undefined and gave negative times and costs */
        {"provider,instance_type,vcpus,memory_gib,ondemand_usd_per_hr\naws,a,1e10,8,0.1\n",
         ":2: field 'vcpus' = '1e10' is out of range"},
        {"provider,instance_type,vcpus,memory_gib,ondemand_usd_per_hr\naws,a,-4,8,0.1\n",
         ":2: field 'vcpus' = '-4' is out of range"},
        {"provider,instance_type,vcpus,memory_gib,ondemand_usd_per_hr\naws,a,4.5,8,0.1\n",
         ":2: field 'vcpus' = '4.5' is out of range"},
        {"provider,instance_type,vcpus,memory_gib,ondemand_usd_per_hr,gpu_count\naws,a,4,8,0.1,1e10\n",
         ":2: field 'gpu_count' = '1e10' is out of range"},
        {"provider,instance_type,vcpus,memory_gib,ondemand_usd_per_hr\naws,a,4,1e300,0.1\n",
         ":2: field 'memory_gib' = '1e300' is out of range"},
        {"provider,instance_type,vcpus,memory_gib,ondemand_usd_per_hr\naws,a,4,8,-0.1\n",
         ":2: field 'ondemand_usd_per_hr' = '-0.1' is out of range"},
        {"provider,instance_type,vcpus,memory_gib,ondemand_usd_per_hr,spot_usd_per_hr_min,spot_usd_per_hr_max\naws,a,4,"
         "8,0.1,0.2,0.1\n",
         ":2: field 'spot_usd_per_hr_min' (0.2) exceeds"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FILE *f = fopen(path, "w");
        fputs(bad[i][0], f);
        fclose(f);
        scv_err err = {0};
        CHECK(scv_catalog_load(path, &c, &err) == SCV_EPARSE && c == NULL);
        CHECK_MSG(strstr(err.msg, bad[i][1]) != NULL, "'%s' lacks '%s'", err.msg, bad[i][1]);
    }
    /* quoted fields and unknown columns */
    FILE *f = fopen(path, "w");
    fputs("zz,provider,instance_type,vcpus,memory_gib,ondemand_usd_per_hr\n\"q, r\",aws,\"big \"\"one\"\"\",4,8,0.5\n",
          f);
    fclose(f);
    CHECK(scv_catalog_load(path, &c, NULL) == SCV_OK && c && c->n == 1 && !strcmp(c->vms[0].name, "big \"one\""));
    scv_catalog_free(c);
    unlink(path);
}

static void t_profile(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/scv-prof-%ld.jsonl", (long)getpid());
    FILE *f = fopen(path, "w");
    fprintf(f, "{\"type\":\"job\",\"model\":\"mlp\",\"arch\":\"mlp:784-10\",\"params\":7850,"
               "\"act_bytes\":40,\"input_floats\":784,\"n_train\":1000,\"vm\":\"c5.xlarge\"}\n");
    /* 30 iterations of (2, 64): the first 3 are slow warm-up */
    for (int i = 1; i <= 30; i++)
        fprintf(f,
                "{\"type\":\"iter\",\"iter\":%d,\"workers\":2,\"batch\":64,\"t_compute\":%g,"
                "\"t_comm\":0.001,\"t_iter\":%g,\"grad_sqnorm_local_mean\":2.0,"
                "\"grad_sqnorm_global\":1.0,\"epoch_progress\":%g}\n",
                i, i <= 3 ? 1.0 : 0.01 + 0.001 * (i % 3), i <= 3 ? 1.0 : 0.011 + 0.001 * (i % 3), i * 0.064);
    fprintf(f, "{\"type\":\"eval\",\"iter\":30,\"epoch_progress\":1.92,\"test_accuracy\":0.8}\n");
    for (int i = 31; i <= 40; i++)
        fprintf(f,
                "{\"type\":\"iter\",\"iter\":%d,\"workers\":1,\"batch\":32,\"t_compute\":0.02,"
                "\"t_comm\":0,\"t_iter\":0.021,\"grad_sqnorm_local_mean\":null,"
                "\"grad_sqnorm_global\":null,\"epoch_progress\":%g}\n",
                i, 1.92 + (i - 30) * 0.032);
    fprintf(f, "{\"type\":\"eval\",\"iter\":40,\"epoch_progress\":2.24,\"test_accuracy\":0.9}\n");
    fclose(f);
    scv_profile *p = NULL;
    scv_err err = {0};
    CHECK_MSG(scv_profile_load(path, &p, &err) == SCV_OK, "%s", err.msg);
    if (p) {
        CHECK_EQ_INT(p->n, 2);
        CHECK(p->has_job && !strcmp(p->job.vm, "c5.xlarge") && p->job.n_params == 7850);
        /* in the canonical order, by (K, B), not the order of the lines */
        CHECK(p->configs[0].workers == 1 && p->configs[0].batch == 32);
        CHECK(p->configs[1].workers == 2 && p->configs[1].batch == 64);
        CHECK_EQ_INT(p->configs[1].n_iters, 27);
        CHECK_NEAR(p->configs[1].t_compute, 0.011, 1e-9, 0); /* mean, warm-up left out */
        CHECK_NEAR(p->configs[1].g_local, 2.0, 1e-12, 0);
        CHECK_EQ_INT(p->configs[0].n_iters, 7);
        CHECK(p->configs[0].g_local == 0); /* statistics off: not measured */
        /* what a segment's file stands for: its configuration of the most iterations */
        CHECK(scv_profile_main(p) == &p->configs[1]);
        scv_profile_free(p);
    }
    double ep;
    int b;
    CHECK(scv_profile_target(path, 0.85, &ep, &b, &err) == SCV_OK && ep == 2.24 && b == 32);
    CHECK(scv_profile_target(path, 0.95, &ep, &b, &err) == SCV_ENOTFOUND);
    CHECK(strstr(err.msg, "never reached accuracy 0.9500 (best 0.9000)") != NULL);
    /* numbers out of range, 1e400 (read as infinity) included, name file, line and field */
    static const char *const bad[][2] = {
        {"{\"type\":\"iter\",\"workers\":1e10,\"batch\":32,\"t_compute\":0.1,\"t_comm\":0,\"t_iter\":0.1}",
         ":44: field 'workers' = 1e+10 is out of range"},
        {"{\"type\":\"iter\",\"workers\":2,\"batch\":-32,\"t_compute\":0.1,\"t_comm\":0,\"t_iter\":0.1}",
         ":44: field 'batch' = -32 is out of range"},
        {"{\"type\":\"iter\",\"workers\":2,\"batch\":32,\"t_compute\":0.1,\"t_comm\":0,\"t_iter\":1e400}",
         ":44: field 't_iter' = inf is out of range"},
        {"{\"type\":\"iter\",\"workers\":2,\"batch\":32,\"t_compute\":0.1,\"t_comm\":0,\"t_iter\":0.1,"
         "\"grad_sqnorm_global\":-1e400}",
         ":44: field 'grad_sqnorm_global' = -inf is out of range"},
        {"{\"type\":\"job\",\"params\":1e400,\"act_bytes\":1,\"n_train\":10,\"input_floats\":1}",
         ":44: field 'params' = inf is out of range"},
        {"{\"type\":\"job\",\"params\":10,\"act_bytes\":1,\"n_train\":10,\"input_floats\":1,\"threads\":1e10}",
         ":44: field 'threads' = 1e+10 is out of range"},
    };
    char saved[600];
    snprintf(saved, sizeof saved, "%s.orig", path);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[1400];
        snprintf(cmd, sizeof cmd, "cp %s %s", path, saved);
        CHECK(system(cmd) == 0);
        f = fopen(path, "a");
        fprintf(f, "%s\n", bad[i][0]);
        fclose(f);
        CHECK(scv_profile_load(path, &p, &err) == SCV_EPARSE && !p);
        CHECK_MSG(strstr(err.msg, bad[i][1]) != NULL, "'%s' lacks '%s'", err.msg, bad[i][1]);
        rename(saved, path);
    }
    f = fopen(path, "a");
    fprintf(f, "{\"type\":\"eval\",\"test_accuracy\":1e400,\"epoch_progress\":1}\n");
    fclose(f);
    CHECK(scv_profile_target(path, 0.99, &ep, &b, &err) == SCV_EPARSE);
    CHECK_MSG(strstr(err.msg, ":44: field 'test_accuracy' = inf is out of range"), "%s", err.msg);
    snprintf(saved, sizeof saved, "sed -i '$d' %s", path);
    CHECK(system(saved) == 0);
    f = fopen(path, "a");
    fprintf(f, "{\"type\":\"iter\",\"workers\":\"two\"}\n");
    fclose(f);
    CHECK(scv_profile_load(path, &p, &err) == SCV_EPARSE && !p);
    CHECK_MSG(strstr(err.msg, ":44: field 'workers' is not a number") != NULL, "%s", err.msg);
    snprintf(saved, sizeof saved, "sed -i '$d' %s", path);
    CHECK(system(saved) == 0);
    f = fopen(path, "a"); /* a field missing: the line says what it lacks */
    fprintf(f, "{\"type\":\"iter\",\"batch\":64}\n");
    fclose(f);
    CHECK(scv_profile_load(path, &p, &err) == SCV_EPARSE && !p);
    CHECK_MSG(strstr(err.msg, ":44: iteration line lacks") != NULL, "%s", err.msg);
    f = fopen(path, "a");
    fprintf(f, "not json\n");
    fclose(f);
    unlink(path);
    CHECK(scv_profile_load(path, &p, &err) == SCV_ENOTFOUND);
}

static const scv_test tests[] = {
    {"catalog", t_catalog},
    {"profile", t_profile},
};
SCV_TEST_MAIN(tests)
