/*
 * cmd_profile.c - `scavenger profile METRICS...`: what a profile holds, one line per
 * measured configuration (mean times after warm-up, the noise statistics), as the models see it.
 */
#include "cli.h"
#include "cli/opt.h"
#include "../io/json_out.h"
#include "scv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROFILE_USAGE "usage: scavenger profile METRICS... [--json]\n"

enum { P_JSON = 1 };
/* profile's options (--help, the completion, the man page); the other arguments are files */
const scv_option PROFILE_OPTIONS[] = {
    {"json", NULL, "a JSON summary instead of the table", P_JSON, 0, NULL, {0}},
    {NULL, NULL, NULL, 0, 0, NULL, {0}},
};

int cmd_profile(int argc, char **argv)
{
    int json = 0;
    size_t len = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf(PROFILE_USAGE "\n"
                   "Summarises the trainer's metrics per configuration (K, B): mean times\n"
                   "after warm-up, the gradient-noise statistics and B_simple.\n"
                   "METRICS: metrics files that `scavenger train` wrote, as separate arguments or\n"
                   "comma-separated (a.jsonl b.jsonl, or a.jsonl,b.jsonl).\n");
            cli_opt_help(stdout, PROFILE_OPTIONS, 24, 0);
            return EXIT_OK;
        }
        const scv_option *o = !strncmp(argv[i], "--", 2) ? cli_opt_find(PROFILE_OPTIONS, argv[i] + 2) : NULL;
        if (o && o->id == P_JSON) json = 1;
        else if (argv[i][0] == '-' || !argv[i][0])
            return cli_usage_error("profile", PROFILE_USAGE, "unexpected argument '%s'", argv[i]);
        else len += strlen(argv[i]) + 1;
    }
    if (!len) return cli_usage_error("profile", PROFILE_USAGE, "%s", "give at least one metrics file");
    /* the loader takes one comma-separated list: join the arguments */
    char *paths = malloc(len);
    if (!paths) {
        fprintf(stderr, "scavenger profile: out of memory\n");
        return EXIT_FAIL;
    }
    paths[0] = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-') continue;
        if (paths[0]) strcat(paths, ",");
        strcat(paths, argv[i]);
    }
    scv_profile *p = NULL;
    scv_err err = {0};
    int lrc = scv_profile_load(paths, &p, &err);
    free(paths);
    if (lrc) {
        fprintf(stderr, "scavenger profile: %s\n", err.msg);
        return EXIT_FAIL;
    }
    if (json) {
        fputs("{\"job\":{\"arch\":", stdout);
        scv_json_str(stdout, p->job.arch);
        fputs(",\"vm\":", stdout);
        scv_json_str(stdout, p->job.vm);
        printf(",\"params\":%.0f,\"n_train\":%.0f},\"configs\":[", p->job.n_params, p->job.n_train);
    }
    else printf("%s on %s\n%4s %6s %6s %11s %9s %9s %10s\n", p->job.arch,
                p->job.vm[0] ? p->job.vm : "(vm not named)", "K", "B", "iters", "t_compute", "t_comm",
                "t_iter", "B_simple");
    for (size_t i = 0; i < p->n; i++) {
        const scv_config_stats *c = &p->configs[i];
        double bs = scv_gns_b_simple(c->workers, c->batch, c->g_local, c->g_global);
        char bsj[32] = "null";
        if (isfinite(bs)) snprintf(bsj, sizeof bsj, "%.6g", bs);
        if (json)
            printf("%s{\"workers\":%d,\"batch\":%d,\"threads\":%d,\"iterations\":%d,\"t_compute\":%.6g,\"t_comm\":%.6g,"
                   "\"t_iter\":%.6g,\"g_local\":%.6g,\"g_global\":%.6g,\"b_simple\":%s}",
                   i ? "," : "", c->workers, c->batch, c->threads, c->n_iters, c->t_compute, c->t_comm, c->t_iter,
                   c->g_local, c->g_global, bsj);
        else
            printf("%4d %6d %6d %9.3fms %7.3fms %7.3fms %10s\n", c->workers, c->batch, c->n_iters,
                   1e3 * c->t_compute, 1e3 * c->t_comm, 1e3 * c->t_iter, isfinite(bs) ? bsj : "-");
    }
    if (json) printf("]}\n");
    /* configurations at several thread counts: `plan` fits its models on one of them and
     * leaves the others out (it names them); say so here too */
    int t0 = 0, several = 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->configs[i].threads > 0) {
            if (t0 && p->configs[i].threads != t0) several = 1;
            if (!t0) t0 = p->configs[i].threads;
        }
    if (several && !json) {
        printf("note: measured at several thread counts:");
        for (size_t i = 0; i < p->n; i++)
            printf(" K=%d B=%d at %d thread%s%s", p->configs[i].workers, p->configs[i].batch, p->configs[i].threads,
                   p->configs[i].threads == 1 ? "" : "s", i + 1 < p->n ? "," : "");
        printf("; plan fits its models on the thread count with the most configurations and leaves the others "
               "out\n");
    }
    scv_profile_free(p);
    return EXIT_OK;
}
